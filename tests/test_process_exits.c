/* -s: whether a followed process has exited reaches the aggregator only as
 * records.  The consumer never looks at the target's processes itself (it
 * used to probe kill(pid, 0) at the end of a run); the sampler's
 * family_end sends the exits no follower scan will report. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <criterion/criterion.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "profile/aggregator.h"
#include "sampler/family_end.h"
#include "transport/record.h"
#include "transport/ring.h"

/* The PID of a child that has exited and been reaped: no such process. */
static pid_t gone_pid(void)
{
	pid_t pid = fork();

	cr_assert_geq(pid, 0);
	if (pid == 0)
		_exit(0);
	cr_assert_eq(waitpid(pid, NULL, 0), pid);
	return pid;
}

static void report(struct aggregator *a, pid_t pid, pid_t ppid, uint8_t state, const char *cmd)
{
	uint64_t buf[32] = { 0 };
	struct rec_process *r = (struct rec_process *)buf;
	size_t len = strlen(cmd), size = REC_ALIGN(sizeof(*r) + len);

	cr_assert_leq(size, sizeof(buf));
	*r = (struct rec_process){ .h = { REC_PROCESS, (uint32_t)size }, .pid = pid, .ppid = ppid,
	                           .state = state, .cmd_len = (uint16_t)len };
	memcpy(r->cmd, cmd, len);
	aggregator_ingest(a, r, size);
}

static const struct snap_process *row(const struct snapshot *s, pid_t pid)
{
	for (size_t i = 0; i < s->nprocesses; i++)
		if (s->processes[i].pid == pid)
			return &s->processes[i];
	return NULL;
}

Test(process_exits, the_aggregator_never_probes_a_process)
{
	struct aggregator *a = aggregator_new(true);
	struct snapshot s = { 0 };
	pid_t pid = gone_pid();

	cr_assert_not_null(a);
	report(a, getpid(), 1, PROC_PYTHON, "python3 app.py");
	report(a, pid, getpid(), PROC_PYTHON, "python3 child.py");
	aggregator_settle(a);
	aggregator_snapshot(a, &s);
	cr_assert_not_null(row(&s, pid));
	cr_expect_eq(row(&s, pid)->state, PROCESS_PYTHON,
	             "process %d marked exited without an exit record", (int)pid);
	snapshot_free(&s);
	aggregator_free(a);
}

Test(process_exits, an_exit_record_marks_it_exited_and_keeps_its_row)
{
	struct aggregator *a = aggregator_new(true);
	struct snapshot s = { 0 };
	pid_t pid = gone_pid();
	const struct snap_process *p;

	cr_assert_not_null(a);
	report(a, getpid(), 1, PROC_PYTHON, "python3 app.py");
	report(a, pid, getpid(), PROC_PYTHON, "python3 child.py");
	report(a, pid, getpid(), PROC_EXITED, ""); /* as family_end sends it */
	aggregator_snapshot(a, &s);
	p = row(&s, pid);
	cr_assert_not_null(p);
	cr_expect_eq(p->state, PROCESS_EXITED);
	cr_expect_str_eq(p->command, "python3 child.py");
	cr_expect_eq(p->ppid, getpid());
	snapshot_free(&s);
	aggregator_free(a);
}

static void note(struct family_end *f, pid_t pid, pid_t ppid, uint8_t state)
{
	struct rec_process r = { .h = { REC_PROCESS, sizeof(r) }, .pid = pid, .ppid = ppid,
	                         .state = state };

	family_end_note(f, &r, sizeof(r));
}

Test(process_exits, family_end_reports_only_the_ended)
{
	struct family_end f;
	struct ring *ring = ring_new(1 << 16);
	pid_t gone = gone_pid(), gone_reported = gone_pid();
	uint64_t buf[64];
	struct rec_process r;

	cr_assert_not_null(ring);
	family_end_init(&f);
	note(&f, getpid(), 1, PROC_PYTHON);              /* alive */
	note(&f, gone, getpid(), PROC_NOT_PYTHON);       /* ended unreported */
	note(&f, gone_reported, getpid(), PROC_PYTHON);  /* ended, reported */
	note(&f, gone_reported, getpid(), PROC_EXITED);
	cr_expect_eq(family_end_report(&f, ring, 42), 1);
	cr_assert_eq(ring_pop(ring, buf, sizeof(buf)), sizeof(r));
	memcpy(&r, buf, sizeof(r));
	cr_expect_eq(r.h.type, REC_PROCESS);
	cr_expect_eq(r.pid, gone);
	cr_expect_eq(r.ppid, getpid());
	cr_expect_eq(r.state, PROC_EXITED);
	cr_expect_eq(r.cmd_len, 0);
	cr_expect_eq(ring_pop(ring, buf, sizeof(buf)), 0, "more than the one ended process");
	family_end_free(&f);
	ring_free(ring);
}
