/* The native symbolizer knows only the modules the sampler announced
 * (REC_MODULE): it never reads the target's /proc/PID/maps or memory
 * itself.  The target here is this test process, its module this test
 * binary, announced the way the sampler does from the maps. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <criterion/criterion.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "profile/native_syms.h"
#include "target/proc_maps.h"
#include "transport/record.h"

__attribute__((noinline)) int walls_marker(int x);
__attribute__((noinline)) int walls_marker(int x)
{
	return x * 3 + 1;
}

static uint64_t marker_ip(void)
{
	return (uint64_t)(uintptr_t)&walls_marker + 4; /* inside, not its start */
}

/* This binary's module, as the sampler would announce it. */
static void own_module(struct rec_module *out, char *path, size_t len)
{
	struct proc_maps maps;
	const struct map_entry *at = NULL, *first;
	struct rec_module r = { .h = { REC_MODULE, 0 }, .pid = getpid() };

	cr_assert_eq(maps_load(getpid(), &maps), 0);
	for (size_t i = 0; i < maps.n && at == NULL; i++)
		if (maps.v[i].start <= marker_ip() && marker_ip() < maps.v[i].end)
			at = &maps.v[i];
	cr_assert_not_null(at, "the test's own code is in no mapping");
	first = maps_first_of(&maps, at->path);
	cr_assert_not_null(first);
	r.lo = first->start;
	r.map_start = first->start;
	r.map_end = first->end;
	r.offset = first->offset;
	for (size_t i = 0; i < maps.n; i++)
		if (strcmp(maps.v[i].path, at->path) == 0 && maps.v[i].end > r.hi)
			r.hi = maps.v[i].end;
	snprintf(path, len, "%s", at->path);
	r.path_len = (uint16_t)strlen(path);
	maps_free(&maps);
	*out = r;
}

Test(native_syms, unannounced_module_is_unknown)
{
	struct native_syms *ns = native_syms_new(getpid());
	struct native_sym s;

	cr_assert_not_null(ns);
	s = native_syms_lookup(ns, marker_ip());
	cr_expect_str_eq(s.name, "[unknown]",
	                 "symbolized %s without its module announced: read the maps itself", s.name);
	native_syms_free(ns);
}

Test(native_syms, announced_module_is_symbolized)
{
	struct native_syms *ns = native_syms_new(getpid());
	char path[4096];
	struct rec_module r;
	struct native_sym s;

	own_module(&r, path, sizeof(path));
	cr_assert_not_null(ns);
	native_syms_add_module(ns, &r, path);
	s = native_syms_lookup(ns, marker_ip());
	cr_expect_str_eq(s.name, "walls_marker");
	cr_expect_str_eq(s.module, "test_native_syms");
	native_syms_free(ns);
}

Test(native_syms, hostile_module_paths_are_refused)
{
	static const char *const bad[] = { "relative/test_native_syms", "/bin/\0sh", "" };
	struct native_syms *ns = native_syms_new(getpid());
	char path[4096];
	struct rec_module r;

	own_module(&r, path, sizeof(path));
	cr_assert_not_null(ns);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct rec_module b = r;

		b.path_len = (uint16_t)(i == 1 ? 8 : strlen(bad[i]));
		native_syms_add_module(ns, &b, bad[i]);
		cr_expect_str_eq(native_syms_lookup(ns, marker_ip()).name, "[unknown]",
		                 "module path %zu taken", i);
	}
	r.hi = r.lo; /* an empty extent */
	native_syms_add_module(ns, &r, path);
	cr_expect_str_eq(native_syms_lookup(ns, marker_ip()).name, "[unknown]");
	native_syms_free(ns);
}

Test(native_syms, remapped_range_replaces_the_old_module)
{
	struct native_syms *ns = native_syms_new(getpid());
	char path[4096];
	struct rec_module r, gone;

	own_module(&r, path, sizeof(path));
	gone = r;
	cr_assert_not_null(ns);
	gone.path_len = (uint16_t)strlen("/nonexistent/libgone.so");
	native_syms_add_module(ns, &gone, "/nonexistent/libgone.so");
	native_syms_add_module(ns, &r, path);
	cr_expect_str_eq(native_syms_lookup(ns, marker_ip()).name, "walls_marker");
	native_syms_free(ns);
}
