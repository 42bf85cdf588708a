/* stack_fixture.c - see stack_fixture.h. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "stack_fixture.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The names live as long as the test: snapshots do not own them. */
static const char *intern(const char *w)
{
	static char names[256][48];
	static size_t n;

	for (size_t i = 0; i < n; i++)
		if (strcmp(names[i], w) == 0)
			return names[i];
	cr_assert_lt(n, 256);
	snprintf(names[n], sizeof names[0], "%s", w);
	return names[n++];
}

static void *grow(void *p, size_t n, size_t size)
{
	p = realloc(p, (n + 2) * size); /* the engine's spare entry */
	cr_assert_not_null(p);
	memset((char *)p + n * size, 0, 2 * size);
	return p;
}

static void start(struct snapshot *s)
{
	if (s->nstack_nodes != 0)
		return;
	s->stack_frames = grow(s->stack_frames, 0, sizeof *s->stack_frames);
	s->stack_frames[0] = (struct snap_frame){ .name = "[other stacks]", .file = "",
	                                          .other = true, .module = "" };
	s->nstack_frames = 1;
	s->stack_nodes = grow(s->stack_nodes, 0, sizeof *s->stack_nodes);
	s->stack_nodes = grow(s->stack_nodes, 1, sizeof *s->stack_nodes);
	s->stack_nodes[1] = (struct snap_stack_node){ 0, 0, 1 };
	s->nstack_nodes = 2;
}

static void add_func(struct snapshot *s, const struct snap_frame *f)
{
	for (size_t i = 0; i < s->nfuncs; i++)
		if (strcmp(s->funcs[i].name, f->name) == 0)
			return;
	s->funcs = grow(s->funcs, s->nfuncs, sizeof *s->funcs);
	s->funcs[s->nfuncs++] = (struct snap_func){ .name = f->name,
		.file = f->file, .line = f->first_line, .module = "" };
}

static uint32_t frame(struct snapshot *s, const char *name, int line)
{
	for (uint32_t i = 1; i < s->nstack_frames; i++)
		if (strcmp(s->stack_frames[i].name, name) == 0 &&
		    s->stack_frames[i].line == line)
			return i;
	s->stack_frames = grow(s->stack_frames, s->nstack_frames,
	                       sizeof *s->stack_frames);
	s->stack_frames[s->nstack_frames] = (struct snap_frame){
		.name = name, .line = line, .first_line = line - line % 10 + 1,
		.file = strncmp(name, "lib_", 4) == 0 ? "/usr/lib/python3/lib.py"
		                                      : "app.py",
		.module = "" };
	add_func(s, &s->stack_frames[s->nstack_frames]);
	return (uint32_t)s->nstack_frames++;
}

static uint32_t node(struct snapshot *s, uint32_t parent, uint32_t fr)
{
	for (uint32_t i = 2; i < s->nstack_nodes; i++)
		if (s->stack_nodes[i].parent == parent &&
		    s->stack_nodes[i].frame == fr)
			return i;
	s->stack_nodes = grow(s->stack_nodes, s->nstack_nodes,
	                      sizeof *s->stack_nodes);
	s->stack_nodes[s->nstack_nodes] = (struct snap_stack_node){ parent, fr,
		parent == 0 ? 1 : s->stack_nodes[parent].depth + 1 };
	return (uint32_t)s->nstack_nodes++;
}

void sf_stack(struct snapshot *s, const char *frames, uint64_t samples,
              pid_t tid, pid_t pid)
{
	char buf[1024], *save = NULL;
	uint32_t at = 1;

	start(s);
	snprintf(buf, sizeof buf, "%s", frames);
	if (strcmp(buf, "!") != 0) {
		at = 0;
		for (char *w = strtok_r(buf, " ", &save); w != NULL;
		     w = strtok_r(NULL, " ", &save)) {
			char *colon = strchr(w, ':');
			cr_assert_not_null(colon, "%s", frames);
			*colon = '\0';
			at = node(s, at, frame(s, intern(w), atoi(colon + 1)));
		}
	}
	s->stacks = grow(s->stacks, s->nstacks, sizeof *s->stacks);
	s->stacks[s->nstacks++] = (struct snap_stack){
		.node = at, .tid = tid, .pid = pid, .samples = samples,
		.samples_win = samples / 2, .seconds = (double)samples / 1000,
		.split = { .python = (double)samples * 0.75,
		           .native = (double)samples * 0.25,
		           .mem_growth = samples * 4096 },
	};
	s->samples += samples;
	s->samples_win += samples / 2;
}
