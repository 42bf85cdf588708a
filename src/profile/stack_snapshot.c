/* stack_snapshot.c - the stack table into a snapshot (stack_snapshot.h). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "profile/stack_snapshot.h"

#include <stdlib.h>

static void emit_frames(const struct stack_table *t, stack_describe describe,
                        void *ctx, struct snap_frame *to)
{
	to[STACK_FRAME_OTHER] = (struct snap_frame){
		.name = "[other stacks]", .file = "", .module = "", .other = true };
	for (size_t i = 1; i < t->nframes; i++) {
		const struct stack_frame *f = &t->frames[i];
		to[i] = (struct snap_frame){ .name = "?", .file = "", .module = "",
		                             .line = f->line };
		/* Unknown only if a code went without its stacks folding:
		 * shown as "?", never as another code's name. */
		if (describe(ctx, f->code_id, f->line, &to[i]))
			to[i].line = f->line;
		unsigned fold = stack_table_frame_fold(t, (uint32_t)i);
		to[i].folded_func = (fold & STACK_FOLD_FUNC) != 0;
		to[i].folded_line = (fold & STACK_FOLD_LINE) != 0;
		to[i].folded_other = f->code_id == STACK_CODE_OTHER;
		/* The "[other]" frame of folded frames that had no line has
		 * none either. */
		to[i].marker |= f->code_id == STACK_CODE_OTHER && (fold & STACK_FOLD_NO_LINE);
	}
}

static size_t emit_stacks(const struct stack_table *t, const struct mem_kept_clock *clk,
                          struct snap_stack *to)
{
	size_t n = 0;
	for (size_t i = 0; i < t->ncells; i++) {
		const struct stack_cell *c = &t->cells[i];
		/* A cell without samples may hold the memory its thread gave
		 * back after a reset. */
		if (c->samples == 0 && c->split.mem_shrink == 0)
			continue;
		to[n++] = (struct snap_stack){
			.node = c->node, .tid = c->tid, .pid = c->pid,
			.samples = c->samples, .samples_win = c->samples_win,
			.seconds = (double)c->ns / 1e9,
			.split = c->split, .split_win = c->split_win,
			.mem_kept = mem_kept_value(&c->kept, clk, snap_mem_net(&c->split)),
		};
	}
	return n;
}

void stack_snapshot_emit(const struct stack_table *t, const struct mem_kept_clock *clk,
                         stack_describe describe, void *ctx, struct snapshot *out)
{
	struct snap_frame *frames = malloc(t->nframes * sizeof *frames);
	struct snap_stack_node *nodes = malloc(t->nnodes * sizeof *nodes);
	struct snap_stack *stacks = malloc((t->ncells ? t->ncells : 1) * sizeof *stacks);

	out->folded_stacks = t->folded;
	out->stack_frames = NULL;
	out->stack_nodes = NULL;
	out->stacks = NULL;
	out->nstack_frames = out->nstack_nodes = out->nstacks = 0;
	if (frames == NULL || nodes == NULL || stacks == NULL) {
		free(frames);
		free(nodes);
		free(stacks);
		return;
	}
	emit_frames(t, describe, ctx, frames);
	for (size_t i = 0; i < t->nnodes; i++)
		nodes[i] = (struct snap_stack_node){ t->nodes[i].parent,
			t->nodes[i].frame, t->nodes[i].depth };
	out->stack_frames = frames;
	out->nstack_frames = t->nframes;
	out->stack_nodes = nodes;
	out->nstack_nodes = t->nnodes;
	out->stacks = stacks;
	out->nstacks = emit_stacks(t, clk, stacks);
}
