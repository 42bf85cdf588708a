/* count_columns.c - descriptors and formatting of the figure columns. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "count_columns.h"

#include <stdio.h>

#include "text.h"

/* ---- formatting -------------------------------------------------------- */

/* One decimal below 100 units ("12.3M"), none above ("123M"); 0 bare. */
void count_format_bytes(uint64_t bytes, char *buf, size_t size)
{
	static const char *const units[] = { "B", "K", "M", "G", "T", "P", "E" };

	if (bytes == 0)
		snprintf(buf, size, "0");
	else
		text_scaled(buf, size, (double)bytes, 1024.0, units,
		            sizeof units / sizeof units[0], 100);
}

/* A negative amount keeps to 5 characters too: its "-" costs the decimal
 * from 10 units up ("-1.5M", "-12M", "-999B"). */
void count_format_signed_bytes(int64_t bytes, char *buf, size_t size)
{
	static const char *const units[] = { "K", "M", "G", "T", "P", "E" };
	uint64_t mag = (uint64_t)0 - (uint64_t)bytes;
	char n[16];

	if (bytes >= 0) {
		count_format_bytes((uint64_t)bytes, buf, size);
		return;
	}
	if (mag < 1000)
		snprintf(n, sizeof n, "%lluB", (unsigned long long)mag);
	else
		text_scaled(n, sizeof n, (double)mag / 1024.0, 1024.0, units,
		            sizeof units / sizeof units[0], 10);
	snprintf(buf, size, "-%s", n);
}

void count_format_number(uint64_t n, char *buf, size_t size)
{
	static const char *const units[] = { "", "k", "M", "G", "T", "P", "E" };

	text_scaled(buf, size, (double)n, 1000.0, units,
	            sizeof units / sizeof units[0], 100);
}

void count_format_seconds(double s, char *buf, size_t size)
{
	if (!(s > 0)) /* also NaN */
		s = 0;
	if (s < 59.995) {
		snprintf(buf, size, "%.2fs", s);
	} else if (s < 3600) {
		long t = (long)s;
		snprintf(buf, size, "%ldm%02lds", t / 60, t % 60);
	} else {
		long m = (long)(s / 60);
		snprintf(buf, size, "%ldh%02ldm", m / 60, m % 60);
	}
}

unsigned long count_hidden(const struct snapshot *s)
{
	unsigned long hidden = s->idle_mode ? 0 : 1UL << COUNT_WAIT;

	/* A machine with CPUs to spare and a program without threads never
	 * wait for either: two columns of zeros would only cost room. */
	if (!(s->split.cpu_wait >= 0.05))
		hidden |= 1UL << COUNT_CPUW;
	if (!(s->split.gil_wait >= 0.05))
		hidden |= 1UL << COUNT_GILW;

	if (s->split_off)
		for (int c = COUNT_PY; c <= COUNT_MAJFLT; c++)
			hidden |= 1UL << c;
	/* A minute's memory kept is not in a recording (its JSON: null). */
	if (s->replay.on)
		hidden |= 1UL << COUNT_KEPT;
	return hidden;
}

uint64_t count_faults(const struct snap_split *s)
{
	return s->minflt + s->majflt;
}

/* ---- cells ------------------------------------------------------------- */

static const struct snap_counts *counts_of(const void *row, const void *ctx)
{
	return ((const struct count_ctx *)ctx)->counts(row);
}

static void format_pct(double count, const void *ctx, char *buf,
                       size_t size)
{
	uint64_t samples = ((const struct count_ctx *)ctx)->samples;
	double pct = samples > 0 ? 100.0 * count / (double)samples : 0;

	if (!(pct > 0)) /* also NaN from a broken split */
		pct = 0;
	snprintf(buf, size, "%.1f", pct);
}

/* The cell functions below share one shape: find the row's counts (none:
 * leave the cell blank), then format one figure of them. */
#define COUNT_CELL(fn, decl, body)                                         \
	static void fn(const void *row, const void *ctx, int width,       \
	               bool utf8, char *buf, size_t size)                  \
	{                                                                  \
		const struct snap_counts *decl = counts_of(row, ctx);      \
		(void)width, (void)utf8;                                   \
		if (decl == NULL) {                                        \
			buf[0] = '\0';                                     \
			return;                                            \
		}                                                          \
		body;                                                      \
	}

COUNT_CELL(fmt_own, c, format_pct((double)c->own, ctx, buf, size))
COUNT_CELL(fmt_total, c, format_pct((double)c->total, ctx, buf, size))
COUNT_CELL(fmt_py, c, format_pct(c->split.python, ctx, buf, size))
COUNT_CELL(fmt_nat, c, format_pct(c->split.native, ctx, buf, size))
COUNT_CELL(fmt_sys, c, format_pct(c->split.system, ctx, buf, size))
COUNT_CELL(fmt_wait, c, format_pct(c->split.waiting, ctx, buf, size))
COUNT_CELL(fmt_cpuw, c, format_pct(c->split.cpu_wait, ctx, buf, size))
COUNT_CELL(fmt_gilw, c, format_pct(c->split.gil_wait, ctx, buf, size))
COUNT_CELL(fmt_mem, c, count_format_bytes(c->split.mem_growth, buf, size))
COUNT_CELL(fmt_net, c, count_format_signed_bytes(snap_mem_net(&c->split), buf, size))
COUNT_CELL(fmt_kept, c, count_format_signed_bytes(c->mem_kept, buf, size))
COUNT_CELL(fmt_majflt, c, count_format_number(c->split.majflt, buf, size))
COUNT_CELL(fmt_own_time, c, count_format_seconds(c->own_s, buf, size))
COUNT_CELL(fmt_total_time, c, count_format_seconds(c->total_s, buf, size))

/* Major faults are rare and each one is a disk read, minor ones are
 * common and cheap: summed, the few that matter would vanish, and a
 * column of zeros costs too much room at 80 columns.  So Faults marks
 * rows that had any with "!", and MajFlt counts them where there is
 * room. */
COUNT_CELL(fmt_faults, c, {
	char n[16];
	count_format_number(count_faults(&c->split), n, sizeof n);
	snprintf(buf, size, "%s%s", n, c->split.majflt > 0 ? "!" : "");
})

/* ---- order ------------------------------------------------------------- */

/* Largest first. */
static int desc_u64(uint64_t a, uint64_t b)
{
	return (a < b) - (a > b);
}

static int desc_i64(int64_t a, int64_t b)
{
	return (a < b) - (a > b);
}

static int desc_double(double a, double b)
{
	return (a < b) - (a > b);
}

/* col's own figure only. */
static int compare_figure(enum count_col col, const struct snap_counts *a,
                          const struct snap_counts *b)
{
	switch (col) {
	case COUNT_OWN:
		return desc_u64(a->own, b->own);
	case COUNT_TOTAL:
		return desc_u64(a->total, b->total);
	case COUNT_PY:
		return desc_double(a->split.python, b->split.python);
	case COUNT_NAT:
		return desc_double(a->split.native, b->split.native);
	case COUNT_SYS:
		return desc_double(a->split.system, b->split.system);
	case COUNT_WAIT:
		return desc_double(a->split.waiting, b->split.waiting);
	case COUNT_CPUW:
		return desc_double(a->split.cpu_wait, b->split.cpu_wait);
	case COUNT_GILW:
		return desc_double(a->split.gil_wait, b->split.gil_wait);
	case COUNT_MEM:
		return desc_u64(a->split.mem_growth, b->split.mem_growth);
	case COUNT_NET:
		return desc_i64(snap_mem_net(&a->split), snap_mem_net(&b->split));
	case COUNT_KEPT:
		return desc_i64(a->mem_kept, b->mem_kept);
	case COUNT_FAULTS:
		return desc_u64(count_faults(&a->split), count_faults(&b->split));
	case COUNT_MAJFLT:
		return desc_u64(a->split.majflt, b->split.majflt);
	case COUNT_OWN_TIME:
		return desc_double(a->own_s, b->own_s);
	case COUNT_TOTAL_TIME:
		return desc_double(a->total_s, b->total_s);
	case COUNT_NCOLS:
		break;
	}
	return 0;
}

int count_compare(enum count_col col, const struct snap_counts *a,
                  const struct snap_counts *b)
{
	static const struct snap_counts none;
	int c;

	a = a != NULL ? a : &none;
	b = b != NULL ? b : &none;
	c = compare_figure(col, a, b);
	if (c != 0)
		return c;
	switch (col) {
	case COUNT_OWN:
		return compare_figure(COUNT_TOTAL, a, b);
	case COUNT_TOTAL:
		return compare_figure(COUNT_OWN, a, b);
	case COUNT_FAULTS:
		return count_compare(COUNT_MAJFLT, a, b);
	case COUNT_KEPT:
		return count_compare(COUNT_NET, a, b);
	case COUNT_TOTAL_TIME:
		return count_compare(COUNT_TOTAL, a, b);
	default:
		return count_compare(COUNT_OWN, a, b);
	}
}

/* The rows are pointers to rows (table_sort's). */
static int compare_rows(const void *pa, const void *pb, const void *ctx,
                        int key)
{
	const struct count_ctx *cc = ctx;

	return count_compare((enum count_col)key,
	                     cc->counts(*(const void *const *)pa),
	                     cc->counts(*(const void *const *)pb));
}

/* ---- descriptors ------------------------------------------------------- */

#define NUM(title_, width_, gap_, drop_, fmt_)                             \
	{ .title = (title_), .width = (width_), .gap = (gap_),            \
	  .right_align = true, .format = (fmt_), .drop = (drop_),        \
	  .compare_ctx = compare_rows }

/* Widths leave room for the sort mark after the title. */
static const struct table_column columns[COUNT_NCOLS] = {
	[COUNT_OWN] = NUM("%Own", 5, 0, 0, fmt_own),
	[COUNT_TOTAL] = NUM("%Total", 7, 1, 5, fmt_total),
	[COUNT_PY] = NUM("%Py", 5, 1, 1, fmt_py),
	[COUNT_NAT] = NUM("%Nat", 5, 1, 2, fmt_nat),
	[COUNT_SYS] = NUM("%Sys", 5, 1, 3, fmt_sys),
	[COUNT_WAIT] = NUM("%Wait", 6, 1, 4, fmt_wait),
	[COUNT_CPUW] = NUM("%CPUw", 6, 1, 4, fmt_cpuw),
	[COUNT_GILW] = NUM("%GILw", 6, 1, 4, fmt_gilw),
	[COUNT_MEM] = NUM("Mem+", 5, 1, 9, fmt_mem),
	[COUNT_NET] = NUM("Net", 5, 1, 8, fmt_net),
	[COUNT_KEPT] = NUM("Kept", 5, 1, 6, fmt_kept),
	[COUNT_FAULTS] = NUM("Faults", 7, 1, 7, fmt_faults),
	[COUNT_MAJFLT] = NUM("MajFlt", 7, 1, 10, fmt_majflt),
	[COUNT_OWN_TIME] = NUM("OwnTime", 8, 1, 11, fmt_own_time),
	[COUNT_TOTAL_TIME] = NUM("TotalTime", 10, 1, 12, fmt_total_time),
};

const char *const count_column_help[] = {
	"%Own %Total  samples with the innermost frame here / anywhere on "
	"the stack",
	"%Py %Nat %Sys %CPUw %GILw %Wait  %Own split: bytecode, native, kernel, "
	"CPU wait, GIL wait, off CPU",
	"Mem+ Net Kept  RSS growth; - shrink; net of last minute  Faults "
	"(! major)",
	"OwnTime TotalTime  sampled time (samples x interval); Heat: "
	"%Total bar",
	"Percentages are of the samples named on the line above the titles.",
	NULL,
};

struct table_column count_column(enum count_col col)
{
	struct table_column c = columns[col < COUNT_NCOLS ? col : COUNT_OWN];

	c.key = (int)(col < COUNT_NCOLS ? col : COUNT_OWN);
	return c;
}

const char *count_col_name(enum count_col col)
{
	return col < COUNT_NCOLS ? columns[col].title : "?";
}
