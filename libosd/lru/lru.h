/*
 * The one hash table with an LRU list that every bounded cache uses
 * (osdfs directory blocks and inodes, the target's capability keys and
 * its store's open descriptors, libosd's credentials).
 * Intrusive: a cached object embeds a struct osd__lru_node and the cache
 * keeps its own hash function, key comparison, lock and bound. A node can
 * be in the table but off the list ("pinned": in use, never the oldest).
 * Not locked; not for untrusted keys unless the hash is keyed.
 */
#ifndef OSD_LRU_LRU_H
#define OSD_LRU_LRU_H

#include <stddef.h>
#include <stdint.h>

struct osd__lru_node {
	struct osd__lru_node *hnext;        /* bucket chain */
	struct osd__lru_node *lprev, *lnext; /* LRU list, oldest first */
	uint64_t hash;
	int listed;                         /* on the LRU list */
};

struct osd__lru {
	struct osd__lru_node **tab;
	size_t mask;
	size_t count;                       /* nodes in the table */
	struct osd__lru_node *head, *tail;  /* least and most recently used */
};

/* The object holding node @p n as its member @p member. */
#define OSD__LRU_ENTRY(n, type, member) \
	((type *)(void *)((char *)(n) - offsetof(type, member)))

/* A table with about @p expected buckets (a power of two, 16 to 2^20); it
 * doubles as it fills, up to 2^20 buckets. */
int osd__lru_init(struct osd__lru *l, size_t expected);
/* Frees the table; the caller has taken its nodes out (osd__lru_any()). */
void osd__lru_destroy(struct osd__lru *l);

/* The first node with @p hash for which eq(node, key) is true, or NULL. */
struct osd__lru_node *osd__lru_find(const struct osd__lru *l, uint64_t hash,
				    int (*eq)(const struct osd__lru_node *n, const void *key),
				    const void *key);
/* Into the table and, unless @p pinned, at the most recently used end. */
void osd__lru_insert(struct osd__lru *l, struct osd__lru_node *n, uint64_t hash, int pinned);
/* Out of the table and the list. */
void osd__lru_remove(struct osd__lru *l, struct osd__lru_node *n);
/* To the most recently used end (back onto the list if pinned). */
void osd__lru_touch(struct osd__lru *l, struct osd__lru_node *n);
/* Off the list, still in the table: never returned by osd__lru_oldest(). */
void osd__lru_pin(struct osd__lru *l, struct osd__lru_node *n);
/* The least recently used listed node, or NULL. */
struct osd__lru_node *osd__lru_oldest(const struct osd__lru *l);
/* Call @p fn on every node in the table; @p fn must not add or remove. */
void osd__lru_foreach(const struct osd__lru *l, void (*fn)(struct osd__lru_node *n, void *arg),
		      void *arg);
/* Some node in the table (listed or pinned), or NULL when empty. */
struct osd__lru_node *osd__lru_any(const struct osd__lru *l);

#endif
