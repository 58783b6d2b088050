/* Request arena: bump allocation from chained blocks, freed in one go. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "request/arena.h"

#define ARENA_MIN_BLOCK 2048
#define ARENA_ALIGN 16

struct osd__arena_block {
	struct osd__arena_block *next;
	size_t used;
	size_t cap;
	_Alignas(ARENA_ALIGN) unsigned char data[];
};

void osd__arena_init(struct osd__arena *a)
{
	a->head = NULL;
	a->inline_used = 0;
}

void *osd__arena_alloc_raw(struct osd__arena *a, size_t n)
{
	struct osd__arena_block *b = a->head;
	size_t need = (n + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1);

	if (need < n)
		return NULL;
	if (need <= sizeof(a->inline_buf) - a->inline_used) {
		void *p = a->inline_buf + a->inline_used;

		a->inline_used += need;
		return p;
	}
	if (!b || b->cap - b->used < need) {
		size_t cap = need > ARENA_MIN_BLOCK ? need : ARENA_MIN_BLOCK;

		if (cap > SIZE_MAX - sizeof(*b))
			return NULL;
		b = malloc(sizeof(*b) + cap);
		if (!b)
			return NULL;
		b->used = 0;
		b->cap = cap;
		/* A block bigger than the minimum is a one-off: keep filling the
		 * current head so small allocations do not waste it. */
		if (a->head && cap > ARENA_MIN_BLOCK) {
			b->next = a->head->next;
			a->head->next = b;
		} else {
			b->next = a->head;
			a->head = b;
		}
	}
	void *p = b->data + b->used;

	b->used += need;
	return p;
}

void *osd__arena_alloc(struct osd__arena *a, size_t n)
{
	void *p = osd__arena_alloc_raw(a, n);

	if (p)
		memset(p, 0, n);
	return p;
}

void *osd__arena_dup(struct osd__arena *a, const void *src, size_t n)
{
	void *p = osd__arena_alloc(a, n ? n : 1);

	if (p && n)
		memcpy(p, src, n);
	return p;
}

void osd__arena_release(struct osd__arena *a)
{
	struct osd__arena_block *b = a->head;

	while (b) {
		struct osd__arena_block *next = b->next;

		free(b);
		b = next;
	}
	a->head = NULL;
	a->inline_used = 0;
}
