/* replay_batch.c - pytop replay -b (replay_batch.h). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "replay_batch.h"

#include <string.h>

#include "batch_text.h"
#include "json_out.h"

int replay_run_batch(const struct options *o, struct snapshot_source *src, FILE *out)
{
	int rc = 0;

	while (rc == 0 && src->poll(src->ctx)) {
		struct snapshot s;

		memset(&s, 0, sizeof s);
		src->take(src->ctx, &s);
		if (o->json)
			rc = o->stacks ? json_out_print_stacks(out, &s) : json_out_print(out, &s);
		else
			rc = o->tree ? batch_text_print_tree(out, &s) : batch_text_print(out, &s);
		snapshot_free(&s);
	}
	return rc;
}
