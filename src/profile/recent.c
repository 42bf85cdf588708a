/* recent.c - the last N seconds of the profile, as differences of
 * cumulative counts (recent.h). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "profile/recent.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hashmap.h"

/* A refresh a little early (timer jitter) still makes a frame: with -d 1
 * every refresh does. */
#define STEP_SLACK 0.9
/* RECENT_MAX_S / (STEP_SLACK * RECENT_STEP_S) + 2, as a constant. */
#define MAX_FRAMES 70

/* The counts of one kind of row at one refresh, found by row key. */
struct frame_rows {
	struct hashmap at;        /* row key -> index into c */
	struct snap_counts *c;    /* owned */
};

struct frame {
	double t;                 /* the snapshot's elapsed_s */
	uint64_t samples;
	struct snap_split split;
	struct frame_rows funcs, lines;
};

/* What makes counts start again: a snapshot of another filter or view. */
struct counting {
	pid_t thread, process;
	bool native_all;
};

struct recent {
	struct frame frames[MAX_FRAMES]; /* a ring, oldest at first */
	size_t first, n;
	struct counting counting;
};

struct recent *recent_new(void)
{
	return calloc(1, sizeof(struct recent));
}

static void rows_free(struct frame_rows *fr)
{
	hashmap_destroy(&fr->at);
	free(fr->c);
	fr->c = NULL;
}

static void frame_free(struct frame *f)
{
	rows_free(&f->funcs);
	rows_free(&f->lines);
}

static void drop_oldest(struct recent *r)
{
	frame_free(&r->frames[r->first]);
	r->first = (r->first + 1) % MAX_FRAMES;
	r->n--;
}

void recent_free(struct recent *r)
{
	if (r == NULL)
		return;
	while (r->n > 0)
		drop_oldest(r);
	free(r);
}

static struct frame *frame_at(const struct recent *r, size_t i)
{
	return (struct frame *)&r->frames[(r->first + i) % MAX_FRAMES];
}

/* FNV-1a over the row's identity. */
static uint64_t hash_str(uint64_t h, const char *s)
{
	for (const unsigned char *p = (const unsigned char *)(s != NULL ? s : "");
	     ; p++) {
		h = (h ^ *p) * 1099511628211ULL;
		if (*p == '\0')
			return h;
	}
}

static uint64_t row_key(const char *name, const char *file, int line,
                        bool native, bool other)
{
	uint64_t h = 14695981039346656037ULL;

	h = hash_str(h, name);
	h = hash_str(h, file);
	h = (h ^ (uint32_t)line) * 1099511628211ULL;
	return (h ^ (uint64_t)(native | other << 1)) * 1099511628211ULL;
}

static uint64_t func_key(const struct snap_func *f)
{
	return row_key(f->name, f->file, f->line, f->native, f->other);
}

static uint64_t line_key(const struct snap_line *l)
{
	return row_key(l->name, l->file, l->line, l->native, l->other);
}

static bool rows_put(struct frame_rows *fr, size_t i, uint64_t key,
                     const struct snap_counts *c)
{
	fr->c[i] = *c;
	return hashmap_put(&fr->at, key, i);
}

static bool frame_fill(struct frame *f, const struct snapshot *s)
{
	f->t = s->elapsed_s;
	f->samples = s->samples;
	f->split = s->split;
	f->funcs.c = malloc((s->nfuncs + 1) * sizeof(struct snap_counts));
	f->lines.c = malloc((s->nlines + 1) * sizeof(struct snap_counts));
	if (f->funcs.c == NULL || f->lines.c == NULL)
		return false;
	for (size_t i = 0; i < s->nfuncs; i++)
		if (!rows_put(&f->funcs, i, func_key(&s->funcs[i]), &s->funcs[i].c))
			return false;
	for (size_t i = 0; i < s->nlines; i++)
		if (!rows_put(&f->lines, i, line_key(&s->lines[i]), &s->lines[i].c))
			return false;
	return true;
}

static bool restarted(const struct recent *r, const struct snapshot *s)
{
	const struct frame *last = r->n > 0 ? frame_at(r, r->n - 1) : NULL;

	return last != NULL &&
	       (s->samples < last->samples || s->elapsed_s < last->t ||
	        s->thread_filter != r->counting.thread ||
	        s->process_filter != r->counting.process ||
	        s->native_all != r->counting.native_all);
}

bool recent_push(struct recent *r, const struct snapshot *s)
{
	struct frame *f;

	if (restarted(r, s))
		while (r->n > 0)
			drop_oldest(r);
	r->counting = (struct counting){ s->thread_filter, s->process_filter,
	                                 s->native_all };
	if (r->n > 0 &&
	    s->elapsed_s - frame_at(r, r->n - 1)->t < STEP_SLACK * RECENT_STEP_S)
		return true;
	/* Keep one frame at least RECENT_MAX_S old, none older. */
	while (r->n > 1 && s->elapsed_s - frame_at(r, 1)->t >= RECENT_MAX_S)
		drop_oldest(r);
	if (r->n == MAX_FRAMES)
		drop_oldest(r);
	f = frame_at(r, r->n);
	memset(f, 0, sizeof *f);
	hashmap_init(&f->funcs.at);
	hashmap_init(&f->lines.at);
	if (!frame_fill(f, s)) {
		frame_free(f);
		return false;
	}
	r->n++;
	return true;
}

/* ---- the window -------------------------------------------------------- */

static uint64_t minus(uint64_t now, uint64_t then)
{
	return now > then ? now - then : 0;
}

static double minus_d(double now, double then)
{
	return now > then ? now - then : 0;
}

/* now - then, field by field: the splits' fields as snap_split_add adds
 * them (keep the two in step). */
/* A field added to struct snap_split must be subtracted here too, or the
 * window would show it since start. */
_Static_assert(sizeof(struct snap_split) == 6 * sizeof(double) + 4 * sizeof(uint64_t),
               "split_minus lists every field of struct snap_split");

static void split_minus(struct snap_split *now, const struct snap_split *then)
{
	now->python = minus_d(now->python, then->python);
	now->native = minus_d(now->native, then->native);
	now->system = minus_d(now->system, then->system);
	now->waiting = minus_d(now->waiting, then->waiting);
	now->cpu_wait = minus_d(now->cpu_wait, then->cpu_wait);
	now->gil_wait = minus_d(now->gil_wait, then->gil_wait);
	now->mem_growth = minus(now->mem_growth, then->mem_growth);
	now->mem_shrink = minus(now->mem_shrink, then->mem_shrink);
	now->minflt = minus(now->minflt, then->minflt);
	now->majflt = minus(now->majflt, then->majflt);
}

/* The window's counts.  The *_win figures (the last refresh) and
 * mem_kept (the last minute) are windows already and stay. */
static void counts_minus(struct snap_counts *now, const struct snap_counts *then)
{
	now->own = minus(now->own, then->own);
	now->total = minus(now->total, then->total);
	now->own_s = minus_d(now->own_s, then->own_s);
	now->total_s = minus_d(now->total_s, then->total_s);
	split_minus(&now->split, &then->split);
}

static void rows_minus(const struct frame_rows *fr, uint64_t key,
                       struct snap_counts *c)
{
	uint64_t i;

	if (hashmap_get(&fr->at, key, &i))
		counts_minus(c, &fr->c[i]);
}

/* The newest frame at least `seconds` before t, else the oldest. */
static const struct frame *window_start(const struct recent *r, double t,
                                        double seconds)
{
	const struct frame *best = frame_at(r, 0);

	for (size_t i = 1; i < r->n; i++)
		if (t - frame_at(r, i)->t >= seconds)
			best = frame_at(r, i);
	return best;
}

double recent_window(const struct recent *r, struct snapshot *s,
                     double seconds)
{
	const struct frame *from;

	if (r->n == 0 || s->elapsed_s <= frame_at(r, 0)->t)
		return 0;
	from = window_start(r, s->elapsed_s, seconds);
	s->recent_samples = minus(s->samples, from->samples);
	split_minus(&s->split, &from->split);
	for (size_t i = 0; i < s->nfuncs; i++)
		rows_minus(&from->funcs, func_key(&s->funcs[i]), &s->funcs[i].c);
	for (size_t i = 0; i < s->nlines; i++)
		rows_minus(&from->lines, line_key(&s->lines[i]), &s->lines[i].c);
	return s->elapsed_s - from->t;
}
