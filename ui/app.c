/* app.c - the two loops (TUI and batch): when to poll, when to take a
 * snapshot, when to stop, and what a key's reaction makes happen. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "app.h"

#include <signal.h>
#include <stdbool.h>
#include <string.h>
#include <time.h>

#include "batch_text.h"
#include "crt.h"
#include "json_out.h"
#include "keys.h"
#include "tui_draw.h"
#include "tui_state.h"

#define POLL_INTERVAL_S 0.05

/* ---- schedule: shared by both loops ------------------------------------ */

struct schedule {
	double start;        /* monotonic seconds */
	double next_poll;
	double next_refresh;
	double delay;        /* seconds between refreshes */
	double duration;     /* 0 = no limit */
	long iterations;     /* 0 = no limit */
	long refreshes;      /* done so far */
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void schedule_init(struct schedule *sc, const struct options *o)
{
	double now = now_s();

	sc->start = now;
	sc->delay = o->delay_s > 0 ? o->delay_s : 1.0;
	sc->duration = o->duration_s > 0 ? o->duration_s : 0;
	sc->iterations = o->iterations > 0 ? o->iterations : 0;
	sc->refreshes = 0;
	sc->next_poll = now;
	sc->next_refresh = now + sc->delay;
}

static bool schedule_poll_due(struct schedule *sc, double now)
{
	if (now < sc->next_poll)
		return false;
	sc->next_poll = now + POLL_INTERVAL_S;
	return true;
}

/* Counts the refresh.  A late loop skips missed refreshes rather than
 * bunching them up. */
static bool schedule_refresh_due(struct schedule *sc, double now)
{
	if (now < sc->next_refresh)
		return false;
	sc->refreshes++;
	sc->next_refresh += sc->delay;
	if (sc->next_refresh <= now)
		sc->next_refresh = now + sc->delay;
	return true;
}

static bool schedule_out_of_iterations(const struct schedule *sc)
{
	return sc->iterations > 0 && sc->refreshes >= sc->iterations;
}

static bool schedule_out_of_time(const struct schedule *sc, double now)
{
	return sc->duration > 0 && now - sc->start >= sc->duration;
}

/* Milliseconds until the next thing to do (at most one poll interval). */
static int schedule_wait_ms(const struct schedule *sc, double now)
{
	double next = sc->next_poll < sc->next_refresh ? sc->next_poll
	                                               : sc->next_refresh;
	double wait;

	if (sc->duration > 0 && sc->start + sc->duration < next)
		next = sc->start + sc->duration;
	wait = next - now;
	if (wait < 0)
		wait = 0;
	if (wait > POLL_INTERVAL_S)
		wait = POLL_INTERVAL_S;
	return (int)(wait * 1000 + 0.5);
}

/* ---- batch ------------------------------------------------------------- */

/* Set by SIGINT/SIGTERM/SIGHUP in batch mode (a closed terminal must stop
 * a launched program as quitting does); a handler can only reach a
 * global. */
static volatile sig_atomic_t batch_stop;

static void on_batch_signal(int sig)
{
	(void)sig;
	batch_stop = 1;
}

static const int batch_signals[] = { SIGINT, SIGTERM, SIGHUP };
#define NBATCH_SIGNALS (sizeof batch_signals / sizeof batch_signals[0])

static void batch_signals_install(struct sigaction *old)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof sa);
	sigemptyset(&sa.sa_mask);
	sa.sa_handler = on_batch_signal; /* no SA_RESTART: wake the sleep */
	batch_stop = 0;
	for (size_t i = 0; i < NBATCH_SIGNALS; i++)
		sigaction(batch_signals[i], &sa, &old[i]);
}

static void batch_signals_restore(const struct sigaction *old)
{
	for (size_t i = 0; i < NBATCH_SIGNALS; i++)
		sigaction(batch_signals[i], &old[i], NULL);
}

static void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	nanosleep(&ts, NULL); /* EINTR is fine: the loop looks again */
}

/* One block; an export asked for meanwhile is written from the same
 * snapshot, so the blocks' windows stay whole. */
static int batch_print(const struct options *o, struct snapshot_source *src,
                       FILE *out, struct export_live *el)
{
	struct snapshot s;
	int rc;

	memset(&s, 0, sizeof s);
	src->take(src->ctx, &s);
	if (o->json)
		rc = o->stacks ? json_out_print_stacks(out, &s)
		               : json_out_print(out, &s);
	else
		rc = o->tree ? batch_text_print_tree(out, &s)
		             : batch_text_print(out, &s);
	if (export_live_due(el, now_s())) {
		export_live_stamped(el, &s);
		fprintf(stderr, "pytop: %s\n", el->said);
	}
	snapshot_free(&s);
	return rc;
}

/* -o's file, from a snapshot of everything counted (after the last
 * block or frame: the same figures). */
static int export_final(struct snapshot_source *src, struct export_live *el)
{
	struct snapshot s;
	int rc;

	if (!export_live_on(el))
		return 0;
	memset(&s, 0, sizeof s);
	src->take(src->ctx, &s);
	rc = export_live_final(el, &s);
	snapshot_free(&s);
	fprintf(stderr, "pytop: %s\n", el->said);
	return rc;
}

int app_run_batch(const struct options *o, struct snapshot_source *src,
                  FILE *out, struct export_live *el)
{
	struct sigaction old[NBATCH_SIGNALS];
	struct schedule sc;
	int rc = 0;

	batch_signals_install(old);
	schedule_init(&sc, o);
	for (;;) {
		double now = now_s();
		bool last = batch_stop != 0 || schedule_out_of_time(&sc, now);

		if (!last && schedule_poll_due(&sc, now))
			last = !src->poll(src->ctx);
		/* The last block is printed even off schedule: it holds the
		 * final figures (and the exit status). */
		if (schedule_refresh_due(&sc, now) || last) {
			rc = batch_print(o, src, out, el);
			if (rc != 0)
				break;
		}
		if (last || schedule_out_of_iterations(&sc))
			break;
		sleep_ms(schedule_wait_ms(&sc, now_s()));
	}
	batch_signals_restore(old);
	if (export_final(src, el) != 0)
		rc = -1;
	return rc;
}

/* ---- TUI --------------------------------------------------------------- */

/* Take a snapshot; show it, and add its gauges to the sparklines, unless
 * paused (sampling never pauses). */
static void take_snapshot(struct tui_state *st, struct snapshot_source *src,
                          bool show)
{
	struct snapshot s;

	memset(&s, 0, sizeof s);
	src->take(src->ctx, &s);
	if (show) {
		if (s.replay.on)
			gauge_history_replay(&st->gauges, &s);
		else
			gauge_history_push(&st->gauges, &s);
		tui_show(st, &s);
	} else {
		snapshot_free(&s);
	}
}

/* e, SIGUSR1 or the period: a time-stamped export of a fresh snapshot,
 * shown unless paused; the status line says where it went. */
static void export_now(struct tui_state *st, struct snapshot_source *src,
                       struct export_live *el)
{
	struct snapshot s;

	if (!export_live_on(el)) {
		st->note = "[no export: start pytop with -o FILE --format FMT]";
		return;
	}
	memset(&s, 0, sizeof s);
	src->take(src->ctx, &s);
	export_live_stamped(el, &s);
	st->note = el->said; /* el outlives the TUI */
	if (st->paused) {
		snapshot_free(&s);
		return;
	}
	gauge_history_push(&st->gauges, &s);
	tui_show(st, &s);
}

/* pytop replay: playing moves one refresh per recorded interval, and
 * stops at the end; paused, the figures on screen stay. */
static unsigned replay_tick(struct tui_state *st, struct schedule *sc,
                            struct snapshot_source *src, double now)
{
	if (!schedule_refresh_due(sc, now) || !st->playing)
		return REACT_NONE;
	if (!src->replay_step(src->ctx, 1)) {
		st->playing = false;
		st->note = "[replay: at the end; Home goes back to the start]";
		return REACT_REDRAW;
	}
	take_snapshot(st, src, true);
	return REACT_REDRAW;
}

/* A step or a window end asked with the replay's keys. */
static void replay_react(struct tui_state *st, struct snapshot_source *src)
{
	if (st->replay_mark >= 0) {
		if (!src->replay_mark(src->ctx, st->replay_mark))
			st->note = "[replay: the window's from must be before its to]";
	} else if (!src->replay_step(src->ctx, st->replay_step)) {
		st->note = st->replay_step < 0 ? "[replay: at the start]"
		                               : "[replay: at the end]";
	}
	st->replay_mark = -1;
	take_snapshot(st, src, true);
}

/* Poll and refresh as the schedule says; returns reaction flags. */
static unsigned tick(struct tui_state *st, struct schedule *sc,
                     struct snapshot_source *src, double now)
{
	unsigned react = REACT_NONE;

	if (st->replay)
		return replay_tick(st, sc, src, now);

	/* The poll schedule keeps running once the target is gone: it is
	 * what the key wait is timed by (else the wait would be 0: a spin). */
	bool poll_due = schedule_poll_due(sc, now);

	if (!st->exited && poll_due && !src->poll(src->ctx)) {
		/* The final figures, shown even when paused. */
		st->exited = true;
		st->paused = false;
		take_snapshot(st, src, true);
		react |= REACT_REDRAW;
	}
	if (schedule_refresh_due(sc, now) && !st->exited) {
		take_snapshot(st, src, !st->paused);
		react |= REACT_REDRAW;
	}
	return react;
}

/* Carry out what a key asked for; returns false to quit. */
static bool react_to(struct tui_state *st, struct snapshot_source *src,
                     const struct crt *crt, struct export_live *el,
                     unsigned react)
{
	if (react & REACT_QUIT)
		return false;
	if ((react & REACT_REPLAY) && st->replay)
		replay_react(st, src);
	if (react & REACT_EXPORT)
		export_now(st, src, el);
	if ((react & REACT_RESET) && !st->exited)
		src->reset(src->ctx);
	if ((react & REACT_NATIVE_ALL) && src->show_native_all != NULL)
		src->show_native_all(src->ctx, st->native_all);
	/* Choosing a thread or a process still works once the target is
	 * gone: the counts are all there, only figures per window stop. */
	if ((react & REACT_PROCESS_FILTER) && src->filter_process != NULL)
		src->filter_process(src->ctx, st->process_filter);
	if ((react & REACT_THREAD_FILTER) && src->filter_thread != NULL)
		src->filter_thread(src->ctx, st->thread_filter);
	if ((react & REACT_WINDOW) && src->set_window != NULL)
		src->set_window(src->ctx, st->window_s);
	if (react & (REACT_THREAD_FILTER | REACT_PROCESS_FILTER | REACT_WINDOW)) {
		take_snapshot(st, src, true);
	} else if ((react & REACT_REFRESH) && !st->exited) {
		take_snapshot(st, src, true);
	}
	if (react & (REACT_REDRAW | REACT_CLEAR))
		tui_draw(st, crt, (react & REACT_CLEAR) != 0);
	return true;
}

int app_run_tui(const struct options *o, struct snapshot_source *src,
                struct export_live *el)
{
	struct tui_state st;
	struct schedule sc;
	struct crt crt;
	unsigned react = REACT_CLEAR | REACT_REDRAW;

	if (crt_init(&crt, !o->no_color) != 0)
		return -1;
	tui_state_init(&st, crt.utf8);
	st.native_all = o->native_all;
	schedule_init(&sc, o);
	/* Something to show at once: the header and an empty table. */
	take_snapshot(&st, src, true);
	/* A replay refreshes at the recorded interval, when playing. */
	if (st.snap.replay.on && src->replay_step != NULL && src->replay_mark != NULL) {
		st.replay = true;
		st.replay_mark = -1;
		sc.delay = st.snap.replay.delay_s > 0 ? st.snap.replay.delay_s : 1.0;
		sc.next_refresh = now_s() + sc.delay;
	}
	while (!crt_quit_requested()) {
		double now = now_s();
		bool stop;
		int key;

		react |= tick(&st, &sc, src, now);
		if (export_live_due(el, now))
			react |= REACT_EXPORT | REACT_REDRAW;
		stop = schedule_out_of_iterations(&sc) ||
		       schedule_out_of_time(&sc, now);
		if (!react_to(&st, src, &crt, el, react) || stop)
			break;
		key = crt_read_key(schedule_wait_ms(&sc, now_s()));
		react = keys_handle(&st, key);
		if (crt_take_continued())
			react |= REACT_CLEAR | REACT_REDRAW; /* after Ctrl-Z, fg */
	}
	tui_state_free(&st);
	crt_done();
	return export_final(src, el) != 0 ? 1 : 0;
}
