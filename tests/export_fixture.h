/* export_fixture.h - a fixed snapshot with a stack table for the export
 * tests: two threads of two processes, a stack seen in both threads, an
 * "[other stacks]" node and a frame name with the characters a format
 * must escape (';', a newline, '<', '&', '"').
 *
 *   node 2  main (app.py:10)                                    own 10
 *   node 3  main > work;er\nx<&"> (app.py:20)                  own 10
 *   node 4  main > work... > leaf (lib.py:5)      tid 11: 50, tid 21: 30
 *   node 5  main > leaf (lib.py:5)                              own 7
 *   node 1  [other stacks]                                      own 3
 * samples: 110, leaf own 87 (the hottest).
 */
#ifndef PYTOP_TESTS_EXPORT_FIXTURE_H
#define PYTOP_TESTS_EXPORT_FIXTURE_H

#include "profile/snapshot.h"

#define FIX_SAMPLES 110
#define FIX_WORK_NAME "work;er\nx<&\">"

/* The snapshot (free with snapshot_free). */
struct snapshot fix_snapshot(void);

/* A snapshot of n distinct stacks (for timing): n leaves under one root
 * frame, each its own function, one thread. */
struct snapshot fix_many_stacks(size_t n);

#endif
