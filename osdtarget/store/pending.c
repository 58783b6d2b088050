/*
 * Log records waiting for their object (docs/target-store.md, "Deferred
 * replay"). The replay of a log after a crash does not load an object on
 * disk to apply a change of its attributes or quota: it notes where the
 * record is in the log, and the record is applied when the object loads
 * (osd__table_obj, for osd__ns_find or a checkpoint writing it). An open after a crash then
 * reads the log once and loads nothing for it, and the objects the log
 * changed do not all sit in memory at once.
 *
 * An object changed by attribute sets alone may leave memory the same way:
 * its records are noted as the replay would have (osd__pend_add_all, Dirty
 * objects leave memory in docs/target-store.md).
 *
 * A hash of objects (open addressing, linear probing; a taken object is a
 * tombstone) with a chain of log offsets each, in log order. Written by the
 * replay (one thread) and by trims (st->ns held for writing), emptied by a
 * checkpoint (the same); loads under st->ns held for reading read and take
 * entries under st->pend_mu. The notes of a taken object are reused: an
 * object that loads and leaves again and again notes its records anew each
 * time.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "store/internal.h"

/* Packed: a log of 109 MiB held 2.6M notes of 1.2M objects of a 10M store,
 * and the notes' memory comes on top of the index's (a slot is 20 bytes, a
 * note 12, where alignment made them 24 and 16). */
struct __attribute__((packed)) osd__pend_obj {
	uint64_t pid, oid;
	uint32_t head;             /* 1-based index of its newest note; 0: taken */
};

struct __attribute__((packed)) osd__pend_off {
	uint64_t off;
	uint32_t next;             /* 1-based: the object's note before; 0: none */
};

static size_t pend_slot(const struct osd_store *st, uint64_t pid, uint64_t oid)
{
	return (size_t)osd__ns_hash(pid, oid) & (st->pend_cap - 1);
}

/* The object's slot, or the empty slot where it would go. */
static struct osd__pend_obj *pend_at(const struct osd_store *st, uint64_t pid, uint64_t oid)
{
	for (size_t i = pend_slot(st, pid, oid);; i = (i + 1) & (st->pend_cap - 1)) {
		struct osd__pend_obj *e = &st->pend[i];
		if ((e->pid == pid && e->oid == oid) || (!e->pid && !e->oid))
			return e;
	}
}

/* The table rebuilt with @p cap slots (a power of two). */
static int pend_resize(struct osd_store *st, size_t cap)
{
	size_t old = st->pend_cap;
	struct osd__pend_obj *was = st->pend, *tab = calloc(cap, sizeof(*tab));
	if (!tab)
		return -ENOMEM;
	st->pend = tab;
	st->pend_cap = cap;
	st->pend_used = 0;
	for (size_t i = 0; i < old; i++)
		if (was[i].head) {
			*pend_at(st, was[i].pid, was[i].oid) = was[i];
			st->pend_used++;
		}
	free(was);
	return 0;
}

/* Twice the slots once three quarters are used (tombstones included). */
static int pend_grow(struct osd_store *st)
{
	if (st->pend_cap && 4 * (st->pend_used + 1) <= 3 * st->pend_cap)
		return 0;
	return pend_resize(st, st->pend_cap ? 2 * st->pend_cap : 1024);
}

/* Room for @p n offsets in all. */
static int offs_room(struct osd_store *st, size_t n)
{
	if (n <= st->pend_offs_cap)
		return 0;
	size_t cap = st->pend_offs_cap ? 2 * st->pend_offs_cap : 4096;
	if (cap < n)
		cap = n;
	struct osd__pend_off *o;
	if (cap > UINT32_MAX || !(o = realloc(st->pend_offs, cap * sizeof(*o))))
		return -ENOMEM;
	st->pend_offs = o;
	st->pend_offs_cap = cap;
	return 0;
}

/* The notes' array is sized once for all the notes the log can hold. The
 * hash is not: a change usually writes two records (the value and the
 * timestamps), so sizing it by records would double it. */
void osd__pend_reserve(struct osd_store *st, size_t n)
{
	(void)offs_room(st, n);
}

void osd__pend_prefetch(const struct osd_store *st, uint64_t pid, uint64_t oid)
{
	if (st->pend_cap)
		__builtin_prefetch(&st->pend[pend_slot(st, pid, oid)]);
}

/* A note (1-based): a taken object's, or a new one (room made by offs_room). */
static uint32_t note_new(struct osd_store *st)
{
	uint32_t k = st->pend_free;
	if (!k)
		return (uint32_t)++st->pend_noffs;
	st->pend_free = st->pend_offs[k - 1].next;
	st->pend_nfree--;
	return k;
}

/* Add a note, room made. */
static void note_add(struct osd_store *st, uint64_t pid, uint64_t oid, uint64_t off)
{
	struct osd__pend_obj *e = pend_at(st, pid, oid);
	uint32_t k = note_new(st);
	st->pend_offs[k - 1] = (struct osd__pend_off){ off, e->head };
	if (!e->head && !e->pid && !e->oid)
		st->pend_used++;
	*e = (struct osd__pend_obj){ pid, oid, k };
}

int osd__pend_add(struct osd_store *st, uint64_t pid, uint64_t oid, uint64_t off)
{
	if (offs_room(st, st->pend_noffs + 1) || pend_grow(st))
		return -ENOMEM;
	note_add(st, pid, oid, off);
	return 0;
}

int osd__pend_add_all(struct osd_store *st, uint64_t pid, uint64_t oid, const uint64_t *offs,
		      size_t n)
{
	pthread_mutex_lock(&st->pend_mu);
	size_t fresh = n > st->pend_nfree ? n - st->pend_nfree : 0;
	int full = st->pend_noffs + fresh > st->pend_max_notes ||
		   (st->pend_cap >= st->pend_max_slots && 4 * (st->pend_used + 1) > 3 * st->pend_cap);
	if (full)
		atomic_store(&st->pend_full, 1);
	int r = full ? -ENOSPC :
		offs_room(st, st->pend_noffs + fresh) || pend_grow(st) ? -ENOMEM : 0;
	for (size_t i = 0; !r && i < n; i++)
		note_add(st, pid, oid, offs[i]);
	pthread_mutex_unlock(&st->pend_mu);
	return r;
}

int osd__pend_has(struct osd_store *st, uint64_t pid, uint64_t oid)
{
	if (!st->pend_cap)
		return 0;
	pthread_mutex_lock(&st->pend_mu);
	int has = pend_at(st, pid, oid)->head != 0;
	pthread_mutex_unlock(&st->pend_mu);
	return has;
}

uint64_t *osd__pend_offsets(struct osd_store *st, uint64_t pid, uint64_t oid, size_t *n,
			    int *err)
{
	uint64_t *offs = NULL;
	*n = 0;
	if (!st->pend_cap)
		return NULL;
	pthread_mutex_lock(&st->pend_mu);
	const struct osd__pend_obj *e = pend_at(st, pid, oid);
	for (uint32_t k = e->head; k; k = st->pend_offs[k - 1].next)
		++*n;
	if (*n && !(offs = malloc(*n * sizeof(*offs))))
		*err = -ENOMEM;
	size_t i = *n;
	for (uint32_t k = e->head; offs && k; k = st->pend_offs[k - 1].next)
		offs[--i] = st->pend_offs[k - 1].off; /* newest first: back to log order */
	pthread_mutex_unlock(&st->pend_mu);
	if (!offs)
		*n = 0;
	return offs;
}

void osd__pend_take(struct osd_store *st, uint64_t pid, uint64_t oid)
{
	if (!st->pend_cap)
		return;
	pthread_mutex_lock(&st->pend_mu);
	struct osd__pend_obj *e = pend_at(st, pid, oid);
	uint32_t k = e->head;
	e->head = 0; /* a tombstone: probing goes past it */
	while (k) {
		uint32_t next = st->pend_offs[k - 1].next;
		st->pend_offs[k - 1].next = st->pend_free;
		st->pend_free = k;
		st->pend_nfree++;
		k = next;
	}
	pthread_mutex_unlock(&st->pend_mu);
}

int osd__pend_open(struct osd_store *st)
{
	if (st->pend_fd >= 0)
		return 0;
	st->pend_fd = openat(st->dirfd, "log", O_RDONLY | O_CLOEXEC);
	return st->pend_fd >= 0 ? 0 : -errno;
}

void osd__pend_clear(struct osd_store *st)
{
	free(st->pend);
	free(st->pend_offs);
	st->pend = NULL;
	st->pend_offs = NULL;
	st->pend_cap = st->pend_used = st->pend_noffs = st->pend_offs_cap = st->pend_nfree = 0;
	st->pend_free = 0;
	st->pend_stale = 0;
	atomic_store(&st->pend_full, 0);
	if (st->pend_fd >= 0)
		close(st->pend_fd);
	st->pend_fd = -1;
}
