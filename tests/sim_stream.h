/* sim_stream.h - what the aggregator's property tests (test_split_adds_up,
 * test_stack_derive) share to feed it seeded random record streams: a
 * generator that gives the same numbers on every libc, code definitions,
 * and threads of two processes (100 and 101) whose CPU and schedstat
 * counters move, stall or go backwards, reported by their processes.
 * Each test keeps its own samples: what it checks decides their shape. */
#ifndef PYTOP_TESTS_SIM_STREAM_H
#define PYTOP_TESTS_SIM_STREAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct aggregator;

/* From now on every record the functions below ingest goes to
 * ingest(ctx, rec, len) too (a test's oracle, sample_oracle.h); NULL:
 * to the aggregator only. */
void sim_tee(void (*ingest)(void *ctx, const void *rec, size_t len), void *ctx);

/* xorshift64: the next number of the stream whose state is *s (not 0). */
uint64_t sim_rng_next(uint64_t *s);

/* A number in [0, n). */
uint32_t sim_below(uint64_t *s, uint32_t n);

/* REC_CODE_DEF of code id: function f<name_id> in m<name_id % 3>.py,
 * first line 10 * id (two ids with one name_id share a function row). */
void sim_def_code(struct aggregator *a, uint32_t id, uint32_t name_id);
/* The same with the name, file and first line given. */
void sim_def_code_as(struct aggregator *a, uint32_t id, const char *name,
                     const char *file, int firstlineno);

/* REC_PROCESS of a Python process pid (parent 1) at now: under a process
 * filter, what 100 % is comes from the process table, which knows a
 * process from this record (-s). */
void sim_def_process(struct aggregator *a, int pid, uint64_t now);

/* What the stream remembers of one thread. */
struct sim_thread {
	int tid, pid;
	bool alive;
	uint64_t user, sys, run, delay; /* cumulative counters, ns */
};

/* A new thread in slot (of process 100 + slot % 2), the next TID. */
void sim_thread_start(struct sim_thread *t, int *next_tid, int slot);

/* One of the threads t[0, n) ends (its process's next report leaves it
 * out), or a new one takes the slot of one that ended. */
void sim_thread_churn(uint64_t *rng, struct sim_thread *t, size_t n,
                      int *next_tid);

/* Counters move (most of the time), stall, or go backwards (the TID now
 * names another thread). */
void sim_thread_advance(uint64_t *rng, struct sim_thread *t);

/* Any combination of the sample flags. */
uint16_t sim_random_flags(uint64_t *rng);

/* Each process reports its live threads of t[0, n) at now; a thread that
 * ended is left out, so the aggregator sees it gone. */
void sim_report(struct aggregator *a, const struct sim_thread *t, size_t n,
                uint64_t now);

#endif
