/* record.h - the plain-data records that cross the ring from the sampler
 * thread to the aggregator.  This is the whole contract between the two
 * threads: nothing else is shared except the ring and sampler_stats.
 *
 * Every record starts with struct rec_header; `size` is the total size in
 * bytes including the header and any trailing variable part, rounded up to
 * 8.  A REC_CODE_DEF for a code id is always pushed before the first
 * REC_SAMPLE that uses it (SPSC order guarantees it arrives first).  If the
 * CODE_DEF itself was dropped because the ring was full, the sampler
 * re-sends it: the sampler only marks a code id as "sent" once the push
 * succeeded.
 */
#ifndef PYTOP_RECORD_H
#define PYTOP_RECORD_H

#include <stdint.h>

enum rec_type {
	REC_CODE_DEF = 1, /* a code object seen for the first time */
	REC_SAMPLE = 2,   /* one thread's Python stack at one tick */
	REC_THREAD = 3,   /* a thread appeared or changed its name */
	REC_THREADS = 4,  /* every Python thread's state, ~10 times a second */
	REC_NATIVE = 5,   /* one thread's native stack (--native), just before
	                     the REC_SAMPLE of the same thread and tick */
	REC_PROCESS = 6,  /* a followed process (-s): found, changed, exited */
	REC_MODULE = 7,   /* --native: an object mapped in the target, when the
	                     unwinder first meets it */
	REC_SAMPLE_DELTA = 8, /* a REC_SAMPLE that reuses the outer frames of
	                         the thread's previous sample */
	REC_THREAD_PY_NAME = 9, /* the name the program gave a thread
	                           (threading), when read first or changed */
};

struct rec_header {
	uint32_t type; /* enum rec_type */
	uint32_t size; /* total bytes, header included, multiple of 8 */
};

/* Followed by qualname (qualname_len bytes, UTF-8, no NUL), then filename
 * (filename_len bytes), then the raw co_linetable bytes (linetable_len). */
struct rec_code_def {
	struct rec_header h;
	uint32_t code_id;       /* sampler-assigned, never reused in a session */
	int32_t firstlineno;
	uint16_t qualname_len;
	uint16_t filename_len;
	uint32_t linetable_len; /* 0 if the table was unreadable or too big */
	char data[];
};

/* One Python frame: which code object, and where in it. */
struct rec_frame {
	uint32_t code_id;
	int32_t instr_offset; /* byte offset of the executing instruction
	                         from co_code_adaptive; negative = not started */
};

/* The code id of the marker frame that stands, in a stack deeper than
 * REC_MAX_PY_FRAMES, for the frames left out between its innermost and
 * outermost ones; its instr_offset is how many (>= 1).  Never defined by
 * a REC_CODE_DEF: every reader of frames knows it.  When the walk stopped
 * before the outermost frame (deeper than the sampler walks), the marker
 * is the sample's last frame and counts the frames walked past the kept
 * ones. */
#define REC_MORE_FRAMES 0xffffffffu

enum rec_sample_flags {
	SAMPLE_RUNNING = 1u << 0,   /* thread was on a CPU ("R") */
	SAMPLE_TRUNCATED = 1u << 1, /* stack deeper than the sampler's limit:
	                               one frame is a REC_MORE_FRAMES marker */
	SAMPLE_HAS_GIL = 1u << 2,   /* thread held the GIL */
	SAMPLE_GIL_WAIT = 1u << 3,  /* off CPU, waiting for the GIL */
	SAMPLE_IN_CALL = 1u << 4,   /* the leaf frame's instruction is a call
	                               (CALL family): running native code */
	SAMPLE_GIL_KNOWN = 1u << 5, /* SAMPLE_HAS_GIL was read, not guessed */
};

/* Followed by nframes struct rec_frame, innermost (leaf) first. */
struct rec_sample {
	struct rec_header h;
	uint64_t time_ns;     /* CLOCK_MONOTONIC when the tick started */
	uint32_t interval_ns; /* time since the previous tick: the weight */
	int32_t tid;          /* Linux TID (as seen from pytop) */
	uint16_t nframes;
	uint16_t flags;       /* enum rec_sample_flags */
	int32_t pid;          /* the process the thread belongs to */
	/* The thread's kernel counters from the same /proc read as its state.
	 * CPU times are cumulative (clock-tick resolution: the aggregator
	 * splits system from user time over the samples between changes);
	 * faults are this thread's since its previous read. */
	uint64_t cpu_user_ns;
	uint64_t cpu_sys_ns;
	uint32_t minflt;
	uint32_t majflt;
	/* Bytes of process RSS growth since the previous tick charged to this
	 * sample (the tick's growth is split over its running samples by
	 * their minor faults). */
	uint64_t mem_growth;
	/* Bytes of process RSS shrink since the previous tick charged to this
	 * sample, shared the same way (memory given back: with mem_growth,
	 * what stays). */
	uint64_t mem_shrink;
	/* Running samples (state R): the thread's scheduler run time and
	 * run-queue delay so far (/proc/.../schedstat, ns; both 0 when
	 * unknown).  The aggregator shares a runnable sample between on a
	 * CPU and waiting for one by how these moved. */
	uint64_t run_ns;
	uint64_t delay_ns;
	struct rec_frame frames[];
};

/* REC_SAMPLE_DELTA: a struct rec_sample in every field (nframes is the
 * whole stack's), followed by only its innermost nframes - keep frames,
 * then struct rec_sample_keep.  Its outermost `keep` frames are the
 * outermost `keep` frames of the previous REC_SAMPLE or REC_SAMPLE_DELTA
 * of the same pid and tid, which the sampler sent less than
 * REC_DELTA_MAX_AGE_NS of time_ns before: a deep stack that changes only
 * near its leaf crosses the ring in a few frames.  The consumer turns it
 * back into a REC_SAMPLE where it reads the ring (profile/sample_delta.h),
 * so nothing after that sees this type. */
struct rec_sample_keep {
	uint32_t keep;
	uint32_t pad;
};

#define REC_DELTA_MAX_AGE_NS 500000000ull

/* A thread's OS name (from /proc/PID/task/TID/comm), sent when the sampler
 * first sees the thread. */
struct rec_thread {
	struct rec_header h;
	int32_t tid;
	uint32_t pad;
	char name[16]; /* NUL-terminated */
};

/* The name a Python program gave a thread (threading.Thread's name; the
 * main thread's too), sent when the sampler first reads it and whenever
 * it reads a different one (names are re-read about once a second).
 * Followed by name_len bytes of the name as py_name_text.h makes names
 * (valid UTF-8, control characters escaped), no NUL; at most
 * REC_MAX_THREAD_PY_NAME bytes, and the consumer refuses a record that
 * claims more. */
struct rec_thread_py_name {
	struct rec_header h;
	int32_t tid;
	int32_t pid;
	uint16_t name_len;
	uint16_t pad[3];
	char name[];
};

/* One thread in a REC_THREADS record. */
struct rec_thread_state {
	int32_t tid;
	char state;        /* /proc scheduler state letter: R S D T Z ..., 0 unknown */
	uint8_t flags;     /* SAMPLE_HAS_GIL | SAMPLE_GIL_WAIT | SAMPLE_IN_CALL |
	                      SAMPLE_GIL_KNOWN */
	uint16_t pad;
	uint64_t utime_ns; /* user CPU time since the thread started */
	uint64_t stime_ns; /* system CPU time since the thread started */
};

/* Every Python thread at one tick, followed by nthreads entries.  Sent
 * every ~100 ms, so per-thread CPU and state need no per-sample work on
 * the consumer side. */
struct rec_threads {
	struct rec_header h;
	uint64_t time_ns;
	uint32_t nthreads;
	int32_t pid;       /* the process the threads belong to */
	struct rec_thread_state threads[];
};

/* --native: one thread's native stack at one tick, pushed just before the
 * REC_SAMPLE (same tid and time_ns) whose Python frames it belongs to.
 * With --native a thread sample without a native stack (the thread did
 * not stop in time) is not sent at all, only counted.  Followed by nips
 * uint64_t instruction pointers, leaf first (the
 * leaf's is where the thread was; the others are return addresses), then
 * ngroups uint16_t: how many of the sample's Python frames each
 * interpreter-loop invocation runs, innermost invocation first, so the
 * consumer can put each invocation's Python frames in place of its native
 * frame.  ngroups = 0: no Python frames (or a non-Python target). */
struct rec_native {
	struct rec_header h;
	uint64_t time_ns;
	int32_t tid;
	int32_t pid;
	uint16_t nips;
	uint16_t ngroups;
	uint32_t pad;
	uint64_t ips[];
};

/* --native: one object (the executable, a library, the vDSO) mapped in
 * the target, sent when the sampler's unwinder first meets it (again when
 * the target's maps changed under it), normally before any REC_NATIVE
 * with an address in it; a module whose push failed is sent at a later
 * tick.  The consumer symbolizes from the file it names, opened in the
 * target's root or through /proc/PID/map_files/MAP_START-MAP_END, never
 * from the target's memory nor its /proc/PID/maps.  Followed by path_len
 * bytes of its path as the target's maps show it ("[vdso]" for the
 * kernel's), no NUL. */
struct rec_module {
	struct rec_header h;
	int32_t pid;
	uint16_t path_len;
	uint16_t pad;
	uint64_t lo, hi;             /* its extent: its PT_LOAD segments */
	uint64_t map_start, map_end; /* the mapping that holds its ELF header */
	uint64_t offset;             /* that mapping's file offset */
	char path[];
};

enum rec_process_state {
	PROC_LOOKING = 0, /* found; its Python runtime not (yet) identified */
	PROC_PYTHON,      /* a Python process being sampled */
	PROC_NOT_PYTHON,  /* listed, not sampled: runs another program */
	PROC_UNREADABLE,  /* Python, but unsupported or not permitted */
	PROC_EXITED,      /* gone */
};

/* A process of the followed family (the target and, with -s, its
 * descendants): sent by the follower a few times a second while it lives
 * and once when it exits.  Followed by cmd_len bytes of its command line
 * (arguments joined by spaces, no NUL). */
struct rec_process {
	struct rec_header h;
	uint64_t time_ns;    /* CLOCK_MONOTONIC of the /proc read */
	int32_t pid;
	int32_t ppid;
	uint8_t state;       /* enum rec_process_state */
	char os_state;       /* /proc state letter, 0 unknown */
	uint16_t cmd_len;
	uint32_t pad;
	uint64_t utime_ns;   /* the process's CPU time so far, all threads */
	uint64_t stime_ns;
	uint64_t rss_bytes;
	char version[16];    /* Python version ("3.12.1"), or why not sampled
	                        (NUL-terminated) */
	char cmd[];
};

/* Wire limits: the most frames one record carries.  A deeper Python stack
 * is sent as its innermost and outermost frames around one
 * REC_MORE_FRAMES marker (SAMPLE_TRUNCATED), and the consumer refuses a
 * record that claims more. */
#define REC_MAX_PY_FRAMES 2048    /* rec_sample.nframes, rec_native groups */
#define REC_MAX_NATIVE_FRAMES 128 /* rec_native.nips */
/* rec_thread_py_name.name_len: 256 characters of six bytes each at most
 * (\uNNNN), and the marker of the characters left out */
#define REC_MAX_THREAD_PY_NAME 1600

#define REC_ALIGN(n) (((n) + 7u) & ~7u)

#endif
