/* Chained hash table plus a doubly linked LRU list (lru.h). */
#include "lru/lru.h"

#include <errno.h>
#include <stdlib.h>

#define MIN_BUCKETS 16u
#define MAX_BUCKETS ((size_t)1 << 20)

int osd__lru_init(struct osd__lru *l, size_t expected)
{
	size_t n = MIN_BUCKETS;

	while (n < expected && n < MAX_BUCKETS)
		n <<= 1;
	l->tab = calloc(n, sizeof(*l->tab));
	if (!l->tab)
		return -ENOMEM;
	l->mask = n - 1;
	l->count = 0;
	l->head = l->tail = NULL;
	return 0;
}

void osd__lru_destroy(struct osd__lru *l)
{
	free(l->tab);
	l->tab = NULL;
	l->head = l->tail = NULL;
	l->count = 0;
}

/* Spread the caller's hash over the buckets (its low bits may be poor). */
static size_t bucket(const struct osd__lru *l, uint64_t hash)
{
	return (size_t)((hash * 0x9E3779B97F4A7C15ULL) >> 24) & l->mask;
}

struct osd__lru_node *osd__lru_find(const struct osd__lru *l, uint64_t hash,
				    int (*eq)(const struct osd__lru_node *n, const void *key),
				    const void *key)
{
	struct osd__lru_node *n;

	for (n = l->tab[bucket(l, hash)]; n; n = n->hnext)
		if (n->hash == hash && eq(n, key))
			return n;
	return NULL;
}

static void list_append(struct osd__lru *l, struct osd__lru_node *n)
{
	n->lnext = NULL;
	n->lprev = l->tail;
	if (l->tail)
		l->tail->lnext = n;
	else
		l->head = n;
	l->tail = n;
	n->listed = 1;
}

void osd__lru_pin(struct osd__lru *l, struct osd__lru_node *n)
{
	if (!n->listed)
		return;
	if (n->lprev)
		n->lprev->lnext = n->lnext;
	else
		l->head = n->lnext;
	if (n->lnext)
		n->lnext->lprev = n->lprev;
	else
		l->tail = n->lprev;
	n->lprev = n->lnext = NULL;
	n->listed = 0;
}

/* Twice as many buckets once there are two nodes per bucket; without the
 * memory the chains just get longer. */
static void maybe_grow(struct osd__lru *l)
{
	size_t n = (l->mask + 1) * 2;
	struct osd__lru_node **tab, **old = l->tab;
	size_t old_n = l->mask + 1;

	if (l->count < 2 * old_n || n > MAX_BUCKETS)
		return;
	tab = calloc(n, sizeof(*tab));
	if (!tab)
		return;
	l->tab = tab;
	l->mask = n - 1;
	for (size_t i = 0; i < old_n; i++) {
		while (old[i]) {
			struct osd__lru_node *m = old[i];
			size_t b = bucket(l, m->hash);

			old[i] = m->hnext;
			m->hnext = tab[b];
			tab[b] = m;
		}
	}
	free(old);
}

void osd__lru_insert(struct osd__lru *l, struct osd__lru_node *n, uint64_t hash, int pinned)
{
	size_t b;

	maybe_grow(l);
	b = bucket(l, hash);

	n->hash = hash;
	n->hnext = l->tab[b];
	l->tab[b] = n;
	l->count++;
	n->listed = 0;
	n->lprev = n->lnext = NULL;
	if (!pinned)
		list_append(l, n);
}

void osd__lru_remove(struct osd__lru *l, struct osd__lru_node *n)
{
	struct osd__lru_node **pp = &l->tab[bucket(l, n->hash)];

	while (*pp && *pp != n)
		pp = &(*pp)->hnext;
	if (!*pp)
		return;
	*pp = n->hnext;
	l->count--;
	osd__lru_pin(l, n);
}

void osd__lru_touch(struct osd__lru *l, struct osd__lru_node *n)
{
	osd__lru_pin(l, n);
	list_append(l, n);
}

struct osd__lru_node *osd__lru_oldest(const struct osd__lru *l)
{
	return l->head;
}

void osd__lru_foreach(const struct osd__lru *l, void (*fn)(struct osd__lru_node *n, void *arg),
		      void *arg)
{
	for (size_t i = 0; l->count && i <= l->mask; i++)
		for (struct osd__lru_node *n = l->tab[i]; n; n = n->hnext)
			fn(n, arg);
}

struct osd__lru_node *osd__lru_any(const struct osd__lru *l)
{
	if (l->head)
		return l->head;
	for (size_t i = 0; l->count && i <= l->mask; i++)
		if (l->tab[i])
			return l->tab[i];
	return NULL;
}
