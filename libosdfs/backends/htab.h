/*
 * An intrusive chained hash table keyed by 64-bit ids (internal to the
 * backends). The table never owns its nodes; embed struct osdfs__hnode as the
 * first member of the element. Not thread-safe: callers lock.
 */
#ifndef OSDFS_BACKENDS_HTAB_H
#define OSDFS_BACKENDS_HTAB_H

#include <stddef.h>
#include <stdint.h>

struct osdfs__hnode {
	uint64_t key;
	struct osdfs__hnode *next;
};

struct osdfs__htab {
	struct osdfs__hnode **slots; /* nslots is a power of two, or 0 */
	size_t nslots;
	size_t count;
};

/* The node with @key, or NULL. */
struct osdfs__hnode *osdfs__htab_find(const struct osdfs__htab *t, uint64_t key);

/* Insert @n (its key must not be present). Growing is best effort, so this
 * fails (-ENOMEM) only when the first slot array cannot be allocated. */
int osdfs__htab_insert(struct osdfs__htab *t, struct osdfs__hnode *n);

/* Unlink @n, which must be in @t. */
void osdfs__htab_remove(struct osdfs__htab *t, struct osdfs__hnode *n);

/* Free the slot array (not the nodes) and reset @t to empty. */
void osdfs__htab_fini(struct osdfs__htab *t);

#endif
