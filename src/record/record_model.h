/* record_model.h - the consumer side of a recording: what has been
 * defined in the file so far (strings, frames, stacks, threads, each
 * given a stable id there) and each bucket built from the aggregator's
 * per-bucket figures (profile/aggregator.h).  The stack table's node ids
 * change when it folds; the recording's stack ids never do.  Owned by
 * the recorder, used on the consumer thread only. */
#ifndef PYTOP_RECORD_MODEL_H
#define PYTOP_RECORD_MODEL_H

#include "profile/aggregator.h"
#include "record/record_bucket.h"

struct record_model;

struct record_model *record_model_new(void);
/* The same, forgetting every definition before a bucket once more than
 * `cap` strings or frames (2 cap stacks, cap / 2 threads) are held; the
 * default is for pytop, a small one for tests. */
struct record_model *record_model_new_capped(size_t cap);
void record_model_free(struct record_model *m);

/* Definitions held now, and how many times all were forgotten. */
size_t record_model_held(const struct record_model *m);
uint64_t record_model_forgets(const struct record_model *m);

/* A new bucket (owned by the caller; the aggregator must keep buckets:
 * aggregator_keep_buckets) with the definitions it needs that
 * no earlier bucket carried, and every (stack, thread) whose figures
 * moved since the last bucket; the aggregator's bucket is then closed.
 * NULL on OOM: the model may then know definitions no bucket carried,
 * so it must not be used again (the recorder stops and says why). */
struct rec_bucket *record_model_take(struct record_model *m, struct aggregator *agg);

#endif
