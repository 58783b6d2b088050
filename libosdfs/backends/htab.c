/* Intrusive chained hash table for the backends (see htab.h). */
#include <errno.h>
#include <stdlib.h>

#include "backends/htab.h"

#define HTAB_MIN_SLOTS 16

/* splitmix64 finaliser: consecutive ids spread over all slots. */
static size_t slot_of(uint64_t key, size_t nslots)
{
	key ^= key >> 30;
	key *= 0xbf58476d1ce4e5b9ULL;
	key ^= key >> 27;
	key *= 0x94d049bb133111ebULL;
	key ^= key >> 31;
	return (size_t)key & (nslots - 1);
}

struct osdfs__hnode *osdfs__htab_find(const struct osdfs__htab *t, uint64_t key)
{
	struct osdfs__hnode *n;

	if (!t->nslots)
		return NULL;
	for (n = t->slots[slot_of(key, t->nslots)]; n; n = n->next)
		if (n->key == key)
			return n;
	return NULL;
}

static int rehash(struct osdfs__htab *t, size_t nslots)
{
	struct osdfs__hnode **slots = calloc(nslots, sizeof(*slots));

	if (!slots)
		return -ENOMEM;
	for (size_t i = 0; i < t->nslots; i++) {
		struct osdfs__hnode *n = t->slots[i], *next;

		for (; n; n = next) {
			size_t s = slot_of(n->key, nslots);

			next = n->next;
			n->next = slots[s];
			slots[s] = n;
		}
	}
	free(t->slots);
	t->slots = slots;
	t->nslots = nslots;
	return 0;
}

int osdfs__htab_insert(struct osdfs__htab *t, struct osdfs__hnode *n)
{
	size_t s;

	if (!t->nslots) {
		int rc = rehash(t, HTAB_MIN_SLOTS);

		if (rc)
			return rc;
	} else if (t->count >= t->nslots && t->nslots <= SIZE_MAX / 2 / sizeof(*t->slots)) {
		(void)rehash(t, t->nslots * 2); /* longer chains if it fails */
	}
	s = slot_of(n->key, t->nslots);
	n->next = t->slots[s];
	t->slots[s] = n;
	t->count++;
	return 0;
}

void osdfs__htab_remove(struct osdfs__htab *t, struct osdfs__hnode *n)
{
	struct osdfs__hnode **p = &t->slots[slot_of(n->key, t->nslots)];

	while (*p != n)
		p = &(*p)->next;
	*p = n->next;
	t->count--;
}

void osdfs__htab_fini(struct osdfs__htab *t)
{
	free(t->slots);
	t->slots = NULL;
	t->nslots = 0;
	t->count = 0;
}
