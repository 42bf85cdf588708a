/* aggregator_bucket.c - what the recorder (src/record/) reads of the
 * aggregator at each bucket: the stack table's per-bucket figures and
 * the names of their frames (aggregator.h). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "profile/aggregator_priv.h"
#include "profile/code_table.h"
#include "profile/proc_table.h"
#include "profile/stack_table.h"

bool aggregator_keep_buckets(struct aggregator *a)
{
	return stack_table_keep_buckets(&a->stacks);
}

const struct stack_table *aggregator_stack_table(const struct aggregator *a)
{
	return &a->stacks;
}

bool aggregator_describe_frame(const struct aggregator *a, uint32_t code_id, int line,
                               struct snap_frame *out)
{
	const struct code_info *ci = code_table_get(a->codes, code_id);

	if (code_id == STACK_CODE_OTHER) {
		/* Frames of folded rows whose codes went (stack_table.h). */
		*out = (struct snap_frame){ .name = "[other]", .file = "", .line = line,
			.module = "" };
		return true;
	}
	if (ci == NULL)
		return false;
	*out = (struct snap_frame){
		.name = ci->qualname, .file = ci->filename, .line = line,
		.first_line = ci->firstlineno, .native = ci->native,
		.module = ci->module, .marker = ci->marker };
	return true;
}

void aggregator_close_bucket(struct aggregator *a)
{
	stack_table_close_bucket(&a->stacks);
}

const char *aggregator_thread_name(const struct aggregator *a, pid_t tid)
{
	uint64_t name;

	return tid > 0 && hashmap_get(&a->thread_names, (uint32_t)tid, &name)
	       ? (const char *)(uintptr_t)name : "";
}

bool aggregator_process_info(const struct aggregator *a, pid_t pid, pid_t *ppid,
                             const char **command, const char **python)
{
	return a->procs != NULL && proc_table_describe(a->procs, pid, ppid, command, python);
}
