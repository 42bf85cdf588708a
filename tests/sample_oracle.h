/* sample_oracle.h - the tests' independent count of what a snapshot's
 * functions, lines and callees must show: fed the very records the
 * aggregator gets, it keeps every sample (its thread, process, weight,
 * window and resolved frames) and counts the rows afresh, one sample at a
 * time, when asked.  It shares the aggregator's decoders (code_table,
 * linetable: what a code id and an offset name), never its counting (no
 * row counters, no stack table, no stack_derive).
 *
 * The rules it follows are aggregator.h's: a function is (name, file),
 * its line the smallest first line of its sampled codes (kept across a
 * reset); a line is (file, line), named by the first function seen on
 * it; own is the leaf's function and the innermost frame that has a line
 * (a native frame without a source line and "[N more frames]" have
 * none); total counts every distinct function and line of a sample once;
 * a native leaf is a callee of the line of its innermost Python frame; a
 * sample naming an undefined code is dropped whole, one without frames
 * counts in no row and in no samples; a reset forgets the samples.  The
 * memory charged at once (growth, faults) is the own rows'; memory given
 * back goes to the thread's previous sample (one since the last reset,
 * while its function's row was not folded), else to the sample itself,
 * in the window of the sample that tells it.
 * Rows folded into "[other]" (oracle_fold): the samples before the fold
 * count there (own, and total once per sample however many folded
 * frames it holds); a folded function or line sampled again starts
 * anew.
 *
 * What it cannot replay: the time split (cpu_split.h) and the memory
 * kept over the last minute; the thread table's ageing of gone threads
 * beyond the 64 most recent (a test must stay under it). */
#ifndef PYTOP_TESTS_SAMPLE_ORACLE_H
#define PYTOP_TESTS_SAMPLE_ORACLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "profile/snapshot.h"

struct sample_oracle;

/* split false: as aggregator_new(false), no memory is charged. */
struct sample_oracle *oracle_new(bool split);
void oracle_free(struct sample_oracle *o);

/* REC_CODE_DEF and REC_SAMPLE count; other records are ignored. */
void oracle_ingest(struct sample_oracle *o, const void *rec, size_t len);
/* oracle_ingest for sim_tee (sim_stream.h): ctx is the oracle. */
void oracle_ingest_to(void *ctx, const void *rec, size_t len);
bool oracle_define_native(struct sample_oracle *o, uint32_t code_id, const char *name,
                          const char *file, int line, const char *module);
void oracle_reset(struct sample_oracle *o);
/* A snapshot was taken: its window closed. */
void oracle_close_window(struct sample_oracle *o);

/* Which rows fold now, by key: (name, file) of a function, (file, line)
 * of a line. */
struct oracle_folds {
	bool (*func)(void *ctx, const char *name, const char *file);
	bool (*line)(void *ctx, const char *file, int line);
	void *ctx;
};

/* The rows the predicates name fold into "[other]" now: every sample so
 * far counts there for them (a row folded before and not sampled since
 * changes nothing).  Returns how many rows folded (0 when they had). */
size_t oracle_fold(struct sample_oracle *o, const struct oracle_folds *f);

/* What the snapshot's rows must be under a thread (tid, 0 all) or, when
 * tid is 0, process (pid, 0 all) filter: functions, lines (total > 0) and
 * callees (own > 0), sorted as the aggregator sorts them; each row's
 * split holds only the memory (mem_growth, mem_shrink, minflt, majflt),
 * mem_kept is 0.  Strings are the oracle's (valid while it is). */
struct oracle_rows {
	struct snap_func *funcs; size_t nfuncs;
	struct snap_line *lines; size_t nlines;
	struct snap_callee *callees; size_t ncallees;
	uint64_t samples, samples_win; /* with a Python stack */
};

bool oracle_rows(const struct sample_oracle *o, pid_t tid, pid_t pid, struct oracle_rows *out);
void oracle_rows_free(struct oracle_rows *r);

#endif
