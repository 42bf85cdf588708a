/* proc_follow.h - the follower thread behind -s/--subprocesses: keeps the
 * target's family of processes (proc_children), finds the Python runtime
 * of each new member (py_runtime) and tells the sampler which ones to
 * sample.
 *
 * It runs on its own slow clock (FOLLOW_PERIOD_MS) because a /proc scan
 * and a runtime lookup (maps, ELF symbols) take milliseconds, far more than
 * a sampling period.  It never touches the sampler's state: it talks to the
 * sampler through its own SPSC ring (the follower produces, the sampler
 * consumes), carrying FOLLOW_ADD / FOLLOW_DROP orders and REC_PROCESS
 * records that the sampler forwards to the aggregator, in order.
 */
#ifndef PYTOP_PROC_FOLLOW_H
#define PYTOP_PROC_FOLLOW_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "errors.h"
#include "cpython/py_runtime.h"
#include "transport/record.h"
#include "transport/ring.h"

#define FOLLOW_PERIOD_MS 250
#define FOLLOW_MAX_LISTED 256  /* processes listed at once */
#define FOLLOW_MAX_SAMPLED 32  /* Python processes sampled at once, root included */

/* Orders to the sampler; their types never reach the aggregator. */
enum follow_msg_type {
	FOLLOW_ADD = 0x100,  /* start sampling pid with this runtime */
	FOLLOW_DROP = 0x101, /* stop sampling pid (exited, or a new program) */
};

struct follow_msg {
	struct rec_header h;
	int32_t pid;
	uint32_t pad;
	struct py_runtime rt; /* FOLLOW_ADD only; rt.off must be re-pointed */
};

/* Written by the follower alone; read by anyone. */
struct follow_stats {
	atomic_uint_fast64_t scans;
	atomic_uint_fast64_t seen;        /* descendants found since start */
	atomic_uint_fast64_t exited;      /* ... of which have exited */
	atomic_uint_fast64_t not_python;  /* listed, not sampled: another program */
	atomic_uint_fast64_t skipped;     /* not listed: FOLLOW_MAX_LISTED reached */
	atomic_uint_fast64_t unsampled;   /* Python, not sampled: FOLLOW_MAX_SAMPLED */
	atomic_uint_fast64_t lookup_ns;   /* time spent finding runtimes */
	atomic_int listed;                /* processes listed now, root included */
	atomic_int sampled;               /* Python processes sampled now */
};

struct follow_config {
	pid_t root;
	const struct py_runtime *root_rt; /* borrowed: the root is already sampled */
	struct ring *out;                 /* borrowed; the follower produces */
};

struct follower;

struct follower *follower_start(const struct follow_config *cfg, struct pytop_error *err);
void follower_stop(struct follower *f);
const struct follow_stats *follower_stats(const struct follower *f);

#endif
