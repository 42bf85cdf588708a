/* export_fixture.c - see export_fixture.h. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "export_fixture.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "snapshot_builder.h"

static void *cells(size_t n, size_t size)
{
	void *p = calloc(n + 1, size);

	cr_assert_not_null(p);
	return p;
}

struct snapshot fix_snapshot(void)
{
	struct snapshot s = sb_snapshot(10, "python3 app.py", "3.12.1", FIX_SAMPLES);
	struct snap_frame *f = cells(5, sizeof *f);
	struct snap_stack_node *nd = cells(6, sizeof *nd);
	struct snap_stack *st = cells(6, sizeof *st);

	f[0] = (struct snap_frame){ .name = "", .file = "", .module = "" };
	f[1] = (struct snap_frame){ .name = "[other stacks]", .file = "",
	                            .module = "", .other = true };
	f[2] = (struct snap_frame){ .name = "main", .file = "app.py", .line = 10,
	                            .first_line = 9, .module = "" };
	f[3] = (struct snap_frame){ .name = FIX_WORK_NAME, .file = "app.py",
	                            .line = 20, .first_line = 18, .module = "" };
	f[4] = (struct snap_frame){ .name = "leaf", .file = "lib.py", .line = 5,
	                            .first_line = 4, .module = "" };
	nd[1] = (struct snap_stack_node){ 0, 1, 1 };
	nd[2] = (struct snap_stack_node){ 0, 2, 1 };
	nd[3] = (struct snap_stack_node){ 2, 3, 2 };
	nd[4] = (struct snap_stack_node){ 3, 4, 3 };
	nd[5] = (struct snap_stack_node){ 2, 4, 2 };
	st[0] = (struct snap_stack){ .node = 4, .tid = 11, .pid = 10, .samples = 50, .seconds = 0.050 };
	st[1] = (struct snap_stack){ .node = 4, .tid = 21, .pid = 20, .samples = 30, .seconds = 0.030 };
	st[2] = (struct snap_stack){ .node = 3, .tid = 11, .pid = 10, .samples = 10, .seconds = 0.010 };
	st[3] = (struct snap_stack){ .node = 5, .tid = 21, .pid = 20, .samples = 7, .seconds = 0.007 };
	st[4] = (struct snap_stack){ .node = 1, .tid = 11, .pid = 10, .samples = 3, .seconds = 0.003 };
	st[5] = (struct snap_stack){ .node = 2, .tid = 11, .pid = 10, .samples = 10, .seconds = 0.010 };
	st[0].split.python = 40;
	st[0].split.native = 10;
	s.stack_frames = f;
	s.nstack_frames = 5;
	s.stack_nodes = nd;
	s.nstack_nodes = 6;
	s.stacks = st;
	s.nstacks = 6;
	s.requested_hz = 1000;
	s.elapsed_s = 0.11;
	return s;
}

struct snapshot fix_many_stacks(size_t n)
{
	struct snapshot s = sb_snapshot(10, "python3 many.py", "3.12.1", n);
	struct snap_frame *f = cells(n + 3, sizeof *f);
	struct snap_stack_node *nd = cells(n + 3, sizeof *nd);
	struct snap_stack *st = cells(n, sizeof *st);
	char *names = cells(n, 24);

	f[1] = (struct snap_frame){ .name = "[other stacks]", .other = true };
	f[2] = (struct snap_frame){ .name = "main", .file = "many.py", .line = 1 };
	nd[1] = (struct snap_stack_node){ 0, 1, 1 };
	nd[2] = (struct snap_stack_node){ 0, 2, 1 };
	for (size_t i = 0; i < n; i++) {
		snprintf(names + 24 * i, 24, "f%zu", i);
		f[i + 3] = (struct snap_frame){ .name = names + 24 * i,
		                                .file = "many.py", .line = (int)i + 2 };
		nd[i + 3] = (struct snap_stack_node){ 2, (uint32_t)i + 3, 2 };
		st[i] = (struct snap_stack){ .node = (uint32_t)i + 3, .tid = 11,
		                             .pid = 10, .samples = 1, .seconds = 0.001 };
	}
	for (size_t i = 0; i < n + 3; i++) {
		if (f[i].name == NULL)
			f[i].name = "";
		if (f[i].file == NULL)
			f[i].file = "";
		f[i].module = "";
	}
	s.stack_frames = f;
	s.nstack_frames = n + 3;
	s.stack_nodes = nd;
	s.nstack_nodes = n + 3;
	s.stacks = st;
	s.nstacks = n;
	s.requested_hz = 1000;
	s.elapsed_s = 10;
	s.strings = names; /* freed with the snapshot */
	return s;
}
