/* sample_delta.h - REC_SAMPLE_DELTA records turned back into whole
 * REC_SAMPLEs where the consumer reads the ring, so that nothing after it
 * (the aggregator, the native merge) sees the delta form.
 *
 * It keeps each thread's last sample's frames (outermost first, as the
 * sampler does) and forgets a thread REC_DELTA_MAX_AGE_NS after its last
 * sample, which the sampler never refers back to.  Consumer thread only. */
#ifndef PYTOP_SAMPLE_DELTA_H
#define PYTOP_SAMPLE_DELTA_H

#include <stddef.h>
#include <stdint.h>

struct sample_delta;

/* NULL on out of memory. */
struct sample_delta *sample_delta_new(void);
void sample_delta_free(struct sample_delta *d);

/* rec (len bytes) as popped from the ring.  Returns the record to ingest,
 * *out_len its length: rec itself for every type but REC_SAMPLE_DELTA;
 * for a delta, the whole REC_SAMPLE rebuilt in d's buffer (valid until
 * the next call), or rec unchanged when it cannot be rebuilt (malformed,
 * or its thread's previous sample unknown), so that the aggregator counts
 * it as a bad record. */
const void *sample_delta_expand(struct sample_delta *d, const void *rec, size_t len,
                                size_t *out_len);

/* Threads whose last frames are kept (for tests). */
size_t sample_delta_threads(const struct sample_delta *d);

#endif
