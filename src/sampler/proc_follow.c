/* proc_follow.c - (-s) the follower thread: the target's family from
 * /proc, each new member's runtime, orders to the sampler (proc_follow.h). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "sampler/proc_follow.h"

#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "target/proc_children.h"

#define LOOKUPS_PER_SCAN 8   /* bounds a scan's length under churn */
#define READY_TRIES 40       /* ~10 s for a new interpreter to start */
#define SKIP_MEMORY 1024     /* skipped processes remembered, to count once */
#define STOP_POLL_NS 20000000ull

/* A listed process. */
struct member {
	struct proc_child now;   /* its facts at the latest scan */
	uint64_t scan;           /* the latest scan that saw it */
	uint8_t state;           /* enum rec_process_state */
	bool sampled;            /* the sampler was told to sample it */
	unsigned tries;          /* runtime lookups that found it not ready */
	char why[16];            /* version, or why it is not sampled */
	char cmd[256];
};

struct follower {
	struct follow_config cfg;
	struct follow_stats stats;
	atomic_bool stop;
	pthread_t thread;

	/* follower-thread-only state */
	struct proc_children *pc;
	struct member *members;  /* FOLLOW_MAX_LISTED; [0] is the root */
	size_t nmembers;
	uint64_t skipped[SKIP_MEMORY]; /* pid << 32 ^ start of skipped ones */
	size_t nskipped;
	uint64_t scan;
	int sampled;             /* processes the sampler samples, root included */
	struct follow_msg msg;
	uint64_t rec[(sizeof(struct rec_process) + 256) / 8 + 1]; /* one REC_PROCESS */
};

static void count(atomic_uint_fast64_t *c, uint64_t n)
{
	atomic_fetch_add_explicit(c, n, memory_order_relaxed);
}

static bool send_order(struct follower *f, uint32_t type, pid_t pid, const struct py_runtime *rt)
{
	size_t size = type == FOLLOW_ADD ? sizeof(f->msg) : offsetof(struct follow_msg, rt);

	f->msg.h = (struct rec_header){ type, (uint32_t)REC_ALIGN(size) };
	f->msg.pid = pid;
	if (rt != NULL)
		f->msg.rt = *rt;
	return ring_push(f->cfg.out, &f->msg, REC_ALIGN(size));
}

static void send_process(struct follower *f, const struct member *m, uint8_t state)
{
	struct rec_process *r = (struct rec_process *)f->rec;
	size_t cmd_len = strlen(m->cmd);
	size_t size = REC_ALIGN(sizeof(*r) + cmd_len);

	memset(f->rec, 0, size);
	*r = (struct rec_process){
		.h = { REC_PROCESS, (uint32_t)size },
		.time_ns = clock_now_ns(),
		.pid = m->now.pid, .ppid = m->now.ppid,
		.state = state, .os_state = state == PROC_EXITED ? 0 : m->now.state,
		.cmd_len = (uint16_t)cmd_len,
		.utime_ns = m->now.utime_ns, .stime_ns = m->now.stime_ns,
		.rss_bytes = m->now.rss_bytes,
	};
	memcpy(r->version, m->why, sizeof(r->version));
	memcpy(r->cmd, m->cmd, cmd_len);
	ring_push(f->cfg.out, r, size); /* a lost one is resent next scan */
}

/* Stop sampling m; false if the order could not be queued (retried). */
static bool unsample(struct follower *f, struct member *m)
{
	if (!m->sampled)
		return true;
	if (!send_order(f, FOLLOW_DROP, m->now.pid, NULL))
		return false;
	m->sampled = false;
	f->sampled--;
	return true;
}

static void set_state(struct member *m, uint8_t state, const char *why)
{
	m->state = state;
	snprintf(m->why, sizeof(m->why), "%s", why);
}

/* Find m's runtime; once Python is up, tell the sampler.  A process that
 * is not Python yet may become Python by exec: proc identity (exec_id)
 * changes then and the lookup runs again. */
static void identify(struct follower *f, struct member *m)
{
	struct py_runtime rt;
	struct pytop_error err;
	uint64_t t0 = clock_now_ns();
	int rc = py_runtime_find(m->now.pid, &rt, &err);

	if (rc == 0 && py_runtime_ready(m->now.pid, &rt) != 0)
		rc = 1;
	count(&f->stats.lookup_ns, clock_now_ns() - t0);
	if (rc == 1) {
		if (++m->tries >= READY_TRIES)
			set_state(m, PROC_UNREADABLE, "not started");
		return;
	}
	if (rc != 0) {
		switch (err.code) {
		case PYTOP_ERR_NOT_PYTHON:
			set_state(m, PROC_NOT_PYTHON, "not Python");
			count(&f->stats.not_python, 1);
			break;
		case PYTOP_ERR_UNSUPPORTED:
			set_state(m, PROC_UNREADABLE, "unsupported");
			break;
		case PYTOP_ERR_PERMISSION:
			set_state(m, PROC_UNREADABLE, "no access");
			break;
		default:
			break; /* exited: the next scan says so */
		}
		return;
	}
	if (f->sampled >= FOLLOW_MAX_SAMPLED) {
		set_state(m, PROC_UNREADABLE, "over limit");
		count(&f->stats.unsampled, 1);
		return;
	}
	if (!send_order(f, FOLLOW_ADD, m->now.pid, &rt))
		return; /* the sampler is behind: try again next scan */
	m->sampled = true;
	f->sampled++;
	set_state(m, PROC_PYTHON, rt.version);
}

static struct member *find_member(struct follower *f, const struct proc_child *c)
{
	for (size_t i = 0; i < f->nmembers; i++)
		if (f->members[i].now.pid == c->pid && f->members[i].now.began == c->began)
			return &f->members[i];
	return NULL;
}

/* Count a process left out for the cap once, however many scans see it. */
static void skip(struct follower *f, const struct proc_child *c)
{
	uint64_t key = (uint64_t)c->pid << 32 ^ c->began;

	for (size_t i = 0; i < f->nskipped && i < SKIP_MEMORY; i++)
		if (f->skipped[i] == key)
			return;
	f->skipped[f->nskipped++ % SKIP_MEMORY] = key;
	count(&f->stats.skipped, 1);
}

static struct member *add_member(struct follower *f, const struct proc_child *c)
{
	struct member *m;

	if (f->nmembers == FOLLOW_MAX_LISTED) {
		skip(f, c);
		return NULL;
	}
	m = &f->members[f->nmembers++];
	*m = (struct member){ .now = *c, .state = PROC_LOOKING };
	proc_children_cmdline(f->pc, c->pid, m->cmd, sizeof(m->cmd));
	count(&f->stats.seen, 1);
	return m;
}

/* Same process, new program: look it up again. */
static void exec_seen(struct follower *f, struct member *m, const struct proc_child *c)
{
	if (!unsample(f, m))
		return;
	m->now = *c;
	m->tries = 0;
	set_state(m, PROC_LOOKING, "");
	proc_children_cmdline(f->pc, c->pid, m->cmd, sizeof(m->cmd));
}

static void update_members(struct follower *f, const struct proc_child *fam, int n, unsigned *lookups)
{
	for (int i = 1; i < n; i++) {
		struct member *m = find_member(f, &fam[i]);

		if (m == NULL && (m = add_member(f, &fam[i])) == NULL)
			continue;
		/* An exiting process has no stack any more (0): not an exec. */
		if (fam[i].exec_id != 0 && m->now.exec_id != fam[i].exec_id)
			exec_seen(f, m, &fam[i]);
		else
			m->now = fam[i];
		m->scan = f->scan;
		if (m->state == PROC_LOOKING && *lookups < LOOKUPS_PER_SCAN) {
			(*lookups)++;
			identify(f, m);
		}
	}
}

/* Members the scan did not see have exited: report them once, forget them. */
static void sweep_members(struct follower *f)
{
	size_t kept = 1;

	for (size_t i = 1; i < f->nmembers; i++) {
		struct member *m = &f->members[i];

		if (m->scan != f->scan && unsample(f, m)) {
			send_process(f, m, PROC_EXITED);
			count(&f->stats.exited, 1);
			continue;
		}
		f->members[kept++] = *m;
	}
	f->nmembers = kept;
}

static void scan_once(struct follower *f)
{
	const struct proc_child *fam;
	int n = proc_children_scan(f->pc, f->cfg.root, &fam);
	unsigned lookups = 0;

	if (n <= 0)
		return; /* the root is gone (the sampler stops) or /proc failed */
	f->scan++;
	f->members[0].now = fam[0];
	f->members[0].scan = f->scan;
	update_members(f, fam, n, &lookups);
	sweep_members(f);
	for (size_t i = 0; i < f->nmembers; i++)
		send_process(f, &f->members[i], f->members[i].state);
	atomic_store_explicit(&f->stats.listed, (int)f->nmembers, memory_order_relaxed);
	atomic_store_explicit(&f->stats.sampled, f->sampled, memory_order_relaxed);
	count(&f->stats.scans, 1);
}

static void *follower_main(void *arg)
{
	struct follower *f = arg;
	uint64_t next = clock_now_ns();

	while (!atomic_load_explicit(&f->stop, memory_order_relaxed)) {
		uint64_t now = clock_now_ns();

		if (now >= next) {
			scan_once(f);
			next = now + FOLLOW_PERIOD_MS * 1000000ull;
		}
		/* Short naps, so that stopping never waits a whole period. */
		clock_sleep_until(now + STOP_POLL_NS < next ? now + STOP_POLL_NS : next);
	}
	return NULL;
}

struct follower *follower_start(const struct follow_config *cfg, struct pytop_error *err)
{
	struct follower *f = calloc(1, sizeof(*f));
	struct member *root;
	int rc;

	if (f == NULL) {
		error_set(err, PYTOP_ERR_INTERNAL, "out of memory starting the process follower");
		return NULL;
	}
	f->cfg = *cfg;
	f->pc = proc_children_new();
	f->members = calloc(FOLLOW_MAX_LISTED, sizeof(*f->members));
	if (f->pc == NULL || f->members == NULL) {
		error_set(err, PYTOP_ERR_INTERNAL, "out of memory starting the process follower");
		goto fail;
	}
	root = &f->members[f->nmembers++];
	*root = (struct member){ .now = { .pid = cfg->root }, .state = PROC_PYTHON };
	snprintf(root->why, sizeof(root->why), "%s", cfg->root_rt->version);
	proc_children_cmdline(f->pc, cfg->root, root->cmd, sizeof(root->cmd));
	f->sampled = 1;
	rc = pthread_create(&f->thread, NULL, follower_main, f);
	if (rc != 0) {
		error_set(err, PYTOP_ERR_INTERNAL, "cannot start the process follower: %s", strerror(rc));
		goto fail;
	}
	return f;
fail:
	proc_children_free(f->pc);
	free(f->members);
	free(f);
	return NULL;
}

void follower_stop(struct follower *f)
{
	if (f == NULL)
		return;
	atomic_store(&f->stop, true);
	pthread_join(f->thread, NULL);
	proc_children_free(f->pc);
	free(f->members);
	free(f);
}

const struct follow_stats *follower_stats(const struct follower *f)
{
	return &f->stats;
}
