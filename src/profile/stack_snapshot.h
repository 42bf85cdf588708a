/* stack_snapshot.h - the stack table's frames, nodes and stacks copied
 * into a snapshot (snapshot.h: stack_frames, stack_nodes, stacks). */
#ifndef PYTOP_STACK_SNAPSHOT_H
#define PYTOP_STACK_SNAPSHOT_H

#include <stdbool.h>
#include <stdint.h>

#include "profile/snapshot.h"
#include "profile/stack_table.h"

/* Fill *out with what frame (code_id, line) is: name, file, first line,
 * native, module (strings borrowed: the snapshot copies them).  false
 * when the code is unknown. */
typedef bool (*stack_describe)(void *ctx, uint32_t code_id, int line,
                               struct snap_frame *out);

/* Set out's stack arrays (overwriting them: free them first) and
 * folded_stacks: every frame and node, every stack with samples, its
 * kept memory by the boundaries of clk.  On OOM the three arrays are
 * empty. */
void stack_snapshot_emit(const struct stack_table *t, const struct mem_kept_clock *clk,
                         stack_describe describe, void *ctx, struct snapshot *out);

#endif
