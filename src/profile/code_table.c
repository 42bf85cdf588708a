/* code_table.c - the aggregator's code objects: code id -> qualified name,
 * file, first line and decoded line table (code_table.h). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "profile/code_table.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hashmap.h"
#include "transport/record.h"

struct code_table {
	struct strtab *strings;  /* borrowed */
	struct code_info *codes; /* owned, in order of definition */
	size_t ncodes, cap;
	struct hashmap by_id;    /* code_id -> index into codes */
	struct hashmap function_by_key; /* qualname_sid << 32 | filename_sid ->
	                                   its function code's id */
	uint32_t next_function;  /* function codes made so far */
	uint32_t epoch;          /* code_table_age calls so far */
};

struct code_table *code_table_new(struct strtab *strings)
{
	struct code_table *ct = calloc(1, sizeof *ct);
	if (ct == NULL)
		return NULL;
	ct->strings = strings;
	hashmap_init(&ct->by_id);
	hashmap_init(&ct->function_by_key);
	return ct;
}

void code_table_free(struct code_table *ct)
{
	if (ct == NULL)
		return;
	for (size_t i = 0; i < ct->ncodes; i++)
		linetable_free(ct->codes[i].lt);
	free(ct->codes);
	hashmap_destroy(&ct->by_id);
	hashmap_destroy(&ct->function_by_key);
	free(ct);
}

static bool code_table_reserve(struct code_table *ct)
{
	if (ct->ncodes < ct->cap)
		return true;
	size_t ncap = ct->cap ? ct->cap * 2 : 256;
	struct code_info *nc = realloc(ct->codes, ncap * sizeof *nc);
	if (nc == NULL)
		return false;
	ct->codes = nc;
	ct->cap = ncap;
	return true;
}

/* Take ownership of ci->lt (NULL: out of memory) and store *ci. */
static enum code_table_add code_table_insert(struct code_table *ct,
                                             const struct code_info *ci)
{
	if (ci->lt == NULL || ci->module == NULL) {
		linetable_free(ci->lt);
		return CODE_NOMEM;
	}
	if (!code_table_reserve(ct) ||
	    !hashmap_put(&ct->by_id, ci->code_id, ct->ncodes)) {
		linetable_free(ci->lt);
		return CODE_NOMEM;
	}
	ct->codes[ct->ncodes] = *ci;
	ct->codes[ct->ncodes++].used_epoch = ct->epoch;
	return CODE_ADDED;
}

enum code_table_add code_table_add_record(struct code_table *ct,
                                          const void *rec, size_t size)
{
	struct rec_code_def def;
	if (size < sizeof def)
		return CODE_MALFORMED;
	memcpy(&def, rec, sizeof def);
	size_t need = sizeof def + (size_t)def.qualname_len +
	              def.filename_len + (size_t)def.linetable_len;
	if (need > size || def.h.size > size)
		return CODE_MALFORMED;

	uint64_t ignored;
	if (hashmap_get(&ct->by_id, def.code_id, &ignored))
		return CODE_DUPLICATE;

	const char *data = (const char *)rec + sizeof def;
	struct code_info ci = {
		.code_id = def.code_id,
		.firstlineno = def.firstlineno,
	};
	ci.qualname = strtab_intern(ct->strings, data, def.qualname_len,
	                            &ci.qualname_sid);
	ci.filename = strtab_intern(ct->strings, data + def.qualname_len,
	                            def.filename_len, &ci.filename_sid);
	if (ci.qualname == NULL || ci.filename == NULL)
		return CODE_NOMEM;
	const uint8_t *table =
		(const uint8_t *)data + def.qualname_len + def.filename_len;
	ci.module = strtab_intern(ct->strings, "", 0, NULL);
	ci.lt = linetable_decode(table, def.linetable_len, def.firstlineno);
	return code_table_insert(ct, &ci);
}

enum code_table_add code_table_add_native(struct code_table *ct, uint32_t code_id,
                                          const char *name, const char *file,
                                          int line, const char *module)
{
	uint64_t ignored;
	if (hashmap_get(&ct->by_id, code_id, &ignored))
		return CODE_DUPLICATE;
	struct code_info ci = {
		.code_id = code_id,
		.firstlineno = line,
		.native = true,
	};
	ci.qualname = strtab_intern(ct->strings, name, strlen(name), &ci.qualname_sid);
	ci.filename = strtab_intern(ct->strings, file[0] ? file : module,
	                            strlen(file[0] ? file : module), &ci.filename_sid);
	ci.module = strtab_intern(ct->strings, module, strlen(module), NULL);
	if (ci.qualname == NULL || ci.filename == NULL || ci.module == NULL)
		return CODE_NOMEM;
	ci.lt = linetable_decode(NULL, 0, line);
	return code_table_insert(ct, &ci);
}

/* Marker rows' ids: above the sampler's (counting up from 0) and the
 * native functions' (from 0x80000000), one per bucket of N. */
#define MORE_FRAMES_ID_BASE 0xfffe0000u

const struct code_info *code_table_more_frames(struct code_table *ct, int32_t n)
{
	uint32_t d = (uint32_t)n, e = 0, scale = 1;
	char name[48];

	if (n < 1)
		return NULL;
	while (d >= 100) {
		d /= 10;
		e++;
		scale *= 10;
	}
	uint32_t id = MORE_FRAMES_ID_BASE + e * 100 + d;
	const struct code_info *known = code_table_use(ct, id);
	if (known != NULL)
		return known;
	snprintf(name, sizeof name, e == 0 ? "[%u more frames]" : "[%u+ more frames]",
	         d * scale);
	struct code_info ci = { .code_id = id, .marker = true };
	ci.qualname = strtab_intern(ct->strings, name, strlen(name), &ci.qualname_sid);
	ci.filename = strtab_intern(ct->strings, "", 0, &ci.filename_sid);
	ci.module = strtab_intern(ct->strings, "", 0, NULL);
	if (ci.qualname == NULL || ci.filename == NULL)
		return NULL;
	ci.lt = linetable_decode(NULL, 0, 0);
	if (code_table_insert(ct, &ci) != CODE_ADDED)
		return NULL;
	return &ct->codes[ct->ncodes - 1];
}

const struct code_info *code_table_get(const struct code_table *ct,
                                       uint32_t code_id)
{
	uint64_t idx;
	if (!hashmap_get(&ct->by_id, code_id, &idx))
		return NULL;
	return &ct->codes[idx];
}

const struct code_info *code_table_use(struct code_table *ct, uint32_t code_id)
{
	uint64_t idx;
	if (!hashmap_get(&ct->by_id, code_id, &idx))
		return NULL;
	ct->codes[idx].used_epoch = ct->epoch;
	return &ct->codes[idx];
}

/* Function codes' ids: above the native functions' (from 0x80000000),
 * below the markers'; never given twice. */
#define FUNCTION_ID_BASE 0xf0000000u

static uint64_t function_key(const struct code_info *c)
{
	return (uint64_t)c->qualname_sid << 32 | c->filename_sid;
}

/* The function codes by their key again (their sids or places moved). */
static void code_table_index_functions(struct code_table *ct)
{
	hashmap_clear(&ct->function_by_key);
	for (size_t i = 0; i < ct->ncodes; i++)
		if (ct->codes[i].function)
			/* Cannot fail: at most as many keys as a moment ago. */
			(void)hashmap_put(&ct->function_by_key, function_key(&ct->codes[i]),
			                  ct->codes[i].code_id);
}

bool code_table_goes(const struct code_table *ct, uint32_t code_id, uint32_t idle_epochs)
{
	const struct code_info *c = code_table_get(ct, code_id);
	return c != NULL && !c->native && ct->epoch + 1 - c->used_epoch > idle_epochs;
}

const struct code_info *code_table_function(struct code_table *ct, uint32_t code_id)
{
	const struct code_info *c = code_table_get(ct, code_id);
	uint64_t id;
	if (c == NULL || c->native || c->marker || c->function)
		return NULL;
	uint64_t idx;
	if (hashmap_get(&ct->function_by_key, function_key(c), &id) &&
	    hashmap_get(&ct->by_id, id, &idx)) {
		struct code_info *f = &ct->codes[idx];
		if (c->firstlineno < f->firstlineno)
			f->firstlineno = c->firstlineno;
		f->used_epoch = ct->epoch;
		return f;
	}
	if (ct->next_function >= MORE_FRAMES_ID_BASE - FUNCTION_ID_BASE)
		return NULL;
	struct code_info fc = { .code_id = FUNCTION_ID_BASE + ct->next_function,
		.qualname = c->qualname, .filename = c->filename,
		.qualname_sid = c->qualname_sid, .filename_sid = c->filename_sid,
		.firstlineno = c->firstlineno, .module = c->module, .function = true,
		.lt = linetable_decode(NULL, 0, c->firstlineno) };
	uint64_t key = function_key(c);
	if (code_table_insert(ct, &fc) != CODE_ADDED)
		return NULL;
	ct->next_function++;
	if (!hashmap_put(&ct->function_by_key, key, fc.code_id))
		return NULL; /* made, but not found again: made anew next time */
	return &ct->codes[ct->ncodes - 1];
}

size_t code_table_age(struct code_table *ct, uint32_t idle_epochs)
{
	size_t kept = 0, n = ct->ncodes;
	ct->epoch++;
	hashmap_clear(&ct->by_id);
	for (size_t i = 0; i < n; i++) {
		struct code_info *c = &ct->codes[i];
		if (!c->native && ct->epoch - c->used_epoch > idle_epochs) {
			linetable_free(c->lt);
			continue;
		}
		ct->codes[kept] = *c;
		/* Cannot fail: the table held all n keys a moment ago. */
		(void)hashmap_put(&ct->by_id, ct->codes[kept].code_id, kept);
		kept++;
	}
	ct->ncodes = kept;
	code_table_index_functions(ct);
	/* Give back what a burst of definitions left unused. */
	if (kept * 4 < ct->cap && ct->cap > 256) {
		size_t ncap = kept * 2 > 256 ? kept * 2 : 256;
		struct code_info *nc = realloc(ct->codes, ncap * sizeof *nc);
		if (nc != NULL) {
			ct->codes = nc;
			ct->cap = ncap;
		}
	}
	return n - kept;
}

bool code_table_rehome(struct code_table *ct, struct strtab *to)
{
	ct->strings = to;
	for (size_t i = 0; i < ct->ncodes; i++) {
		struct code_info *c = &ct->codes[i];
		uint32_t qsid, fsid;
		const char *q = strtab_intern(to, c->qualname, strlen(c->qualname), &qsid);
		const char *f = strtab_intern(to, c->filename, strlen(c->filename), &fsid);
		const char *m = strtab_intern(to, c->module, strlen(c->module), NULL);
		if (q == NULL || f == NULL || m == NULL)
			return false;
		*c = (struct code_info){ .code_id = c->code_id, .qualname = q,
		                         .filename = f, .qualname_sid = qsid,
		                         .filename_sid = fsid,
		                         .firstlineno = c->firstlineno, .lt = c->lt,
		                         .native = c->native, .marker = c->marker,
		                         .module = m, .function = c->function,
		                         .used_epoch = c->used_epoch };
	}
	/* Keyed by the new table's ids. */
	code_table_index_functions(ct);
	return true;
}

int code_info_line(const struct code_info *ci, int32_t instr_offset)
{
	if (ci->marker)
		return 0;
	if (ci->native)
		return instr_offset > 0 ? instr_offset : 0;
	int line = linetable_line(ci->lt, instr_offset);
	return line >= 0 ? line : ci->firstlineno;
}

size_t code_table_count(const struct code_table *ct)
{
	return ct->ncodes;
}
