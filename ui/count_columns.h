/* count_columns.h - the figure columns every profile view shares: shares
 * of the samples (%Own, %Total and the split %Py %Nat %Sys %Wait %CPUw
 * %GILw),
 * sampled times, memory growth and page faults.  This is the one
 * declaration of that column set: the function / line table (and batch
 * text through it) and the lines view take every column of enum
 * count_col, in its order, with these descriptors, so a figure looks and
 * sorts the same wherever it appears.  A new figure column is an entry
 * of the enum, its descriptor, its cell and its order here.
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
	COUNT_NET,        /* snap_mem_net(split): growth - shrink, bytes */
	COUNT_KEPT,       /* mem_kept: net growth over the last minute */
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

/* The descriptor of col: title, width, gap, drop rank, format and order
 * (compare_ctx: count_compare on the rows' counts; the table adds its
 * tie_break).  Drop ranks suit the function table: sampled times go first
 * (they repeat %Own and %Total in seconds), then MajFlt (Faults keeps a
 * "!"), Mem+ (growth that may have come back), Net, Faults, Kept (what a
 * leak hunter looks for first), %Total, %Wait, %Sys, %Nat, %Py; %Own is
 * never dropped. */
struct table_column count_column(enum count_col col);

/* Order two rows' counts by col, largest first, ties by the figures
 * that say most next to it (%Own and %Total each other; Faults MajFlt;
 * TotalTime %Total; the others %Own); NULL counts are zeros. */
int count_compare(enum count_col col, const struct snap_counts *a,
                  const struct snap_counts *b);

/* What the figure columns mean, for the help screen: lines,
 * NULL-terminated. */
extern const char *const count_column_help[];

/* Short name of a column, as in the title row ("%Py"). */
const char *count_col_name(enum count_col col);

/* Bytes as "0", "512B", "1.5K", "12.3M", "123M", "1.2G" (powers of
 * 1024, at most 5 characters). */
void count_format_bytes(uint64_t bytes, char *buf, size_t size);

/* Signed bytes: as count_format_bytes, with "-" before a negative amount
 * (at most 5 characters). */
void count_format_signed_bytes(int64_t bytes, char *buf, size_t size);

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
