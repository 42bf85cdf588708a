/* test_json_other_frame.c - --json --stacks names the kind of the
 * "[other]" frame (the one frame that stands for the frames of functions
 * folded into "[other]" once pytop forgot their code objects) "other",
 * as it does "[other stacks]": both are pytop's folds, not a Python
 * function of the target's.  The frame is made the way a live session
 * makes it: rows that aged fold, then their codes go. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <criterion/criterion.h>
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "../ui/json_stacks.h"
#include "profile/aggregator.h"
#include "profile/aggregator_priv.h"
#include "sim_stream.h"
#include "transport/record.h"

#define MAIN 1u
#define HOT 2u
#define RARE 100u /* rare_i is code RARE + i */
#define NRARE 20u

static uint64_t buf[64];

static void sample(struct aggregator *a, uint32_t leaf)
{
	struct rec_sample *s = (struct rec_sample *)buf;
	memset(buf, 0, sizeof buf);
	*s = (struct rec_sample){
		.h = { REC_SAMPLE, (uint32_t)(sizeof *s + 2 * sizeof(struct rec_frame)) },
		.interval_ns = 1000000, .tid = 11, .pid = 7, .nframes = 2,
		.flags = SAMPLE_RUNNING,
	};
	s->frames[0] = (struct rec_frame){ leaf, 0 };
	s->frames[1] = (struct rec_frame){ MAIN, 0 };
	aggregator_ingest(a, s, s->h.size);
}

static void sweep(struct aggregator *a)
{
	a->next_sweep_ns = 0;
	agg_sweep(a);
	a->next_sweep_ns = UINT64_MAX;
}

/* The "kind" of the frame named name; NULL when there is none. */
static const char *kind_of(json_t *frames, const char *name)
{
	size_t i;
	json_t *f;
	json_array_foreach(frames, i, f)
		if (strcmp(json_string_value(json_object_get(f, "name")), name) == 0)
			return json_string_value(json_object_get(f, "kind"));
	return NULL;
}

Test(json_stacks, the_other_frame_is_of_kind_other)
{
	struct aggregator *a = aggregator_new(true);
	struct snapshot s = { 0 };
	char name[32], file[32];
	cr_assert_not_null(a);
	a->next_sweep_ns = UINT64_MAX;
	sim_def_code_as(a, MAIN, "main", "app.py", 1);
	sim_def_code_as(a, HOT, "hot", "app.py", 10);
	for (uint32_t i = 0; i < NRARE; i++) {
		snprintf(name, sizeof name, "rare_%u", i);
		snprintf(file, sizeof file, "<rare-%u>", i);
		sim_def_code_as(a, RARE + i, name, file, 1);
		sample(a, RARE + i);
	}
	/* Past the age (AGG_AGE_SAMPLES and an eighth): the rare rows fold. */
	for (uint32_t i = 0; i < 120000 + 120000 / 4; i++)
		sample(a, HOT);
	cr_assert_eq(a->folded_funcs, NRARE, "the rare rows did not fold: no test");
	/* Unused for the code table's age (10 sweeps): their codes go. */
	for (int e = 0; e < 12; e++) {
		sample(a, HOT);
		sweep(a);
	}
	aggregator_snapshot(a, &s);
	json_t *o = json_object();
	cr_assert_not_null(o);
	cr_assert_eq(json_stacks_add(o, &s), 0);
	json_t *frames = json_object_get(o, "frames");
	const char *other = kind_of(frames, "[other]");
	cr_assert_not_null(other, "no [other] frame: no test");
	cr_expect_str_eq(other, "other");
	cr_expect_str_eq(kind_of(frames, "[other stacks]"), "other");
	cr_expect_str_eq(kind_of(frames, "hot"), "python");
	json_decref(o);
	snapshot_free(&s);
	aggregator_free(a);
}
