#include "fake_mem.h"

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#define MAX_REGIONS 256

struct region {
	uintptr_t addr;
	size_t len;
	uint8_t *data;
};

static struct region regions[MAX_REGIONS];
static size_t nregions;
static uintptr_t next_addr = 0x10000;

static int fake_read(void *ctx, uintptr_t addr, void *buf, size_t len)
{
	(void)ctx;
	for (size_t i = 0; i < nregions; i++)
		if (addr >= regions[i].addr && len <= regions[i].len &&
		    addr - regions[i].addr <= regions[i].len - len) {
			memcpy(buf, regions[i].data + (addr - regions[i].addr), len);
			return 0;
		}
	return -1;
}

const struct py_mem fake_mem = { fake_read, NULL };

void fake_reset(void)
{
	for (size_t i = 0; i < nregions; i++)
		free(regions[i].data);
	nregions = 0;
	next_addr = 0x10000;
}

uintptr_t fake_alloc(size_t len)
{
	struct region *r;

	cr_assert_lt(nregions, MAX_REGIONS);
	r = &regions[nregions++];
	r->addr = next_addr;
	r->len = len;
	r->data = calloc(1, len);
	cr_assert_not_null(r->data);
	next_addr += (len + 0x1000) & ~(uintptr_t)0xfff; /* a gap after each */
	return r->addr;
}

uint8_t *fake_at(uintptr_t addr)
{
	for (size_t i = 0; i < nregions; i++)
		if (addr >= regions[i].addr && addr < regions[i].addr + regions[i].len)
			return regions[i].data + (addr - regions[i].addr);
	cr_assert_fail("no region at %#lx", (unsigned long)addr);
	return NULL;
}

void fake_put64(uintptr_t addr, uint64_t v)
{
	memcpy(fake_at(addr), &v, 8);
}

void fake_put32(uintptr_t addr, uint32_t v)
{
	memcpy(fake_at(addr), &v, 4);
}
