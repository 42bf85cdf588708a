/* count_columns.h - the figure columns every profile view shares: shares
 * of the samples (%Own, %Total and the split %Py %Nat %Sys %Wait %CPUw
 * %GILw),
 * sampled times, memory growth and page faults.  The function / line
 * table and the lines view describe their columns with these, so a
 * figure looks the same wherever it appears.
 *
 * Every percentage is of all the samples the table counts (the line above
 * the titles names them), so a column adds up across rows like %Own, and
 * a row's %Py + %Nat + %Sys + %CPUw + %GILw (+ %Wait) is its %Own. */
#ifndef PYTOP_UI_COUNT_COLUMNS_H
#define PYTOP_UI_COUNT_COLUMNS_H

#include <stddef.h>
#include <stdint.h>

#include "profile/snapshot.h"
#include "table.h"

enum count_col {
	COUNT_OWN,
	COUNT_TOTAL,
	COUNT_PY,         /* split.python */
	COUNT_NAT,        /* split.native */
	COUNT_SYS,        /* split.system */
	COUNT_WAIT,       /* split.waiting: only with --idle */
	COUNT_CPUW,       /* split.cpu_wait: shown once some sample had it */
	COUNT_GILW,       /* split.gil_wait: likewise */
	COUNT_MEM,        /* split.mem_growth, bytes */
	COUNT_FAULTS,     /* minflt + majflt, "!" when some were major */
	COUNT_MAJFLT,
	COUNT_OWN_TIME,
	COUNT_TOTAL_TIME,
	COUNT_NCOLS,
};

/* A table whose columns come from count_column() has a ctx that starts
 * with this. */
struct count_ctx {
	uint64_t samples; /* what 100 % means */
	/* The row's figures; NULL when it has none (its cells stay blank). */
	const struct snap_counts *(*counts)(const void *row);
};

/* The descriptor of col: title, width, gap, drop rank and format (no
 * compare: ordering is the table's business).  Drop ranks suit the
 * function table: sampled times go first (they repeat %Own and %Total in
 * seconds), then MajFlt (Faults keeps a "!"), Faults, Mem+, %Total,
 * %Wait, %Sys, %Nat, %Py; %Own is never dropped. */
struct table_column count_column(enum count_col col);

/* Short name of a column, as in the title row ("%Py"). */
const char *count_col_name(enum count_col col);

/* Bytes as "0", "512B", "1.5K", "12.3M", "123M", "1.2G" (powers of
 * 1024, at most 5 characters). */
void count_format_bytes(uint64_t bytes, char *buf, size_t size);

/* A count as "999", "1.2k", "12.3k", "123k", "1.2M" (powers of 1000,
 * at most 5 characters). */
void count_format_number(uint64_t n, char *buf, size_t size);

/* Seconds as "12.34s", "1m02s" or "3h05m". */
void count_format_seconds(double s, char *buf, size_t size);

/* The columns a snapshot has no figures for, as a table's hidden mask
 * (bit i = enum count_col i): %Wait without --idle; %CPUw and %GILw while
 * no sample had any; the split and memory columns with --no-split. */
unsigned long count_hidden(const struct snapshot *s);

/* All faults of a split (minor + major). */
uint64_t count_faults(const struct snap_split *s);

#endif
