/*
 * mem backend data: sparse 64 KiB chunks per object, each allocated from its
 * start to its highest written byte (see mem.h). Keeps the invariant that no
 * allocated byte lies at or beyond the logical length.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "backends/iov.h"
#include "backends/mem.h"

static struct mem_chunk *chunk_of(struct osdfs__hnode *n)
{
	return (struct mem_chunk *)n; /* node is the first member */
}

static struct mem_chunk *chunk_find(const struct mem_object *obj, uint64_t idx)
{
	struct osdfs__hnode *n = osdfs__htab_find(&obj->chunks, idx);

	return n ? chunk_of(n) : NULL;
}

static void chunk_free(struct mem_chunk *ch)
{
	free(ch->data);
	free(ch);
}

/* Drop allocated bytes [@lo, @hi) of chunk @ch (offsets within the chunk),
 * returning space when the range covers the chunk's allocated tail. */
static void chunk_release(struct osdfs_mem_store *s, struct mem_object *obj,
			  struct mem_chunk *ch, uint32_t lo, uint32_t hi)
{
	if (lo >= ch->len)
		return;
	if (hi < ch->len) {
		memset(ch->data + lo, 0, hi - lo);
		return;
	}
	obj->data_used -= ch->len - lo;
	s->used -= ch->len - lo;
	if (lo == 0) {
		osdfs__htab_remove(&obj->chunks, &ch->node);
		chunk_free(ch);
		return;
	}
	ch->len = lo;
	if (lo <= ch->cap / 4 && ch->cap > CHUNK_MIN_CAP) {
		unsigned char *d = realloc(ch->data, lo); /* failure keeps the larger buffer */

		if (d) {
			ch->data = d;
			ch->cap = lo;
		}
	}
}

void osdfs__mem_release(struct osdfs_mem_store *s, struct mem_object *obj,
			   uint64_t start, uint64_t end)
{
	uint64_t first, last;

	if (start >= end || !obj->chunks.count)
		return;
	first = start >> CHUNK_SHIFT;
	last = (end - 1) >> CHUNK_SHIFT;
	if (last - first >= obj->chunks.count) {
		/* Range wider than the chunk population: walk the table. */
		for (size_t i = 0; i < obj->chunks.nslots; i++) {
			struct osdfs__hnode *n = obj->chunks.slots[i], *next;

			for (; n; n = next) {
				uint64_t cs = n->key << CHUNK_SHIFT;

				next = n->next;
				if (n->key < first || n->key > last)
					continue;
				chunk_release(s, obj, chunk_of(n),
					      (uint32_t)(start > cs ? start - cs : 0),
					      (uint32_t)(end - cs < CHUNK_SIZE ? end - cs : CHUNK_SIZE));
			}
		}
		return;
	}
	for (uint64_t idx = first; idx <= last; idx++) {
		struct mem_chunk *ch = chunk_find(obj, idx);
		uint64_t cs = idx << CHUNK_SHIFT;

		if (ch)
			chunk_release(s, obj, ch, (uint32_t)(start > cs ? start - cs : 0),
				      (uint32_t)(end - cs < CHUNK_SIZE ? end - cs : CHUNK_SIZE));
	}
}

uint64_t osdfs__mem_write_growth(const struct mem_object *obj, uint64_t off, size_t n)
{
	uint64_t growth = 0, pos = off, end = off + n;

	while (pos < end) {
		uint64_t in = pos & CHUNK_MASK;
		uint64_t hi = (end - pos > CHUNK_SIZE - in) ? CHUNK_SIZE : in + (end - pos);
		const struct mem_chunk *ch = chunk_find(obj, pos >> CHUNK_SHIFT);
		uint64_t cur = ch ? ch->len : 0;

		if (hi > cur)
			growth += hi - cur;
		pos += hi - in;
	}
	return growth;
}

/* Make chunk @idx hold at least @hi bytes (new bytes zeroed). */
static int chunk_grow(struct osdfs_mem_store *s, struct mem_object *obj,
		      uint64_t idx, uint32_t hi)
{
	struct mem_chunk *ch = chunk_find(obj, idx);
	uint32_t cap;
	int rc;

	if (ch && ch->len >= hi)
		return 0;
	cap = ch ? ch->cap : 0;
	if (cap < hi) {
		unsigned char *d;

		cap = cap ? cap : CHUNK_MIN_CAP;
		while (cap < hi)
			cap *= 2;
		if (cap > CHUNK_SIZE)
			cap = (uint32_t)CHUNK_SIZE;
		d = realloc(ch ? ch->data : NULL, cap);
		if (!d)
			return -ENOMEM;
		if (!ch) {
			ch = calloc(1, sizeof(*ch));
			if (!ch) {
				free(d);
				return -ENOMEM;
			}
			ch->node.key = idx;
			ch->data = d;
			ch->cap = cap;
			rc = osdfs__htab_insert(&obj->chunks, &ch->node);
			if (rc) {
				chunk_free(ch);
				return rc;
			}
		}
		ch->data = d;
		ch->cap = cap;
	}
	memset(ch->data + ch->len, 0, hi - ch->len);
	obj->data_used += hi - ch->len;
	s->used += hi - ch->len;
	ch->len = hi;
	return 0;
}

void osdfs__mem_truncate(struct osdfs_mem_store *s, struct mem_object *obj, uint64_t size)
{
	if (size < obj->size)
		osdfs__mem_release(s, obj, size, obj->size);
	obj->size = size;
}

ssize_t osdfs__mem_read(const struct mem_object *obj, uint64_t off,
			   const struct iovec *iov, int iovcnt, size_t total)
{
	struct osdfs__iov_cursor cur = { iov, iovcnt, 0, 0 };
	uint64_t n, pos, end;

	if (off >= obj->size)
		return 0;
	n = obj->size - off < total ? obj->size - off : total;
	end = off + n;
	for (pos = off; pos < end;) {
		uint64_t in = pos & CHUNK_MASK;
		uint64_t take = end - pos < CHUNK_SIZE - in ? end - pos : CHUNK_SIZE - in;
		const struct mem_chunk *ch = chunk_find(obj, pos >> CHUNK_SHIFT);
		uint64_t have = ch && ch->len > in ? ch->len - in : 0;

		if (have > take)
			have = take;
		if (have)
			osdfs__iov_copy(&cur, ch->data + in, have, true);
		osdfs__iov_copy(&cur, NULL, take - have, true);
		pos += take;
	}
	return (ssize_t)n;
}

/* Allocate every chunk the write touches; on failure undo the part beyond
 * the logical length so the invariant and the accounting hold. */
int osdfs__mem_write_alloc(struct osdfs_mem_store *s, struct mem_object *obj,
		       uint64_t off, uint64_t end)
{
	for (uint64_t pos = off; pos < end;) {
		uint64_t in = pos & CHUNK_MASK;
		uint64_t hi = end - pos > CHUNK_SIZE - in ? CHUNK_SIZE : in + (end - pos);
		int rc = chunk_grow(s, obj, pos >> CHUNK_SHIFT, (uint32_t)hi);

		if (rc) {
			osdfs__mem_release(s, obj, obj->size, end);
			return rc;
		}
		pos += hi - in;
	}
	return 0;
}

void osdfs__mem_write_copy(struct mem_object *obj, uint64_t off, uint64_t end,
		       const struct iovec *iov, int iovcnt)
{
	struct osdfs__iov_cursor cur = { iov, iovcnt, 0, 0 };

	for (uint64_t pos = off; pos < end;) {
		uint64_t in = pos & CHUNK_MASK;
		uint64_t take = end - pos < CHUNK_SIZE - in ? end - pos : CHUNK_SIZE - in;
		struct mem_chunk *ch = chunk_find(obj, pos >> CHUNK_SHIFT);

		osdfs__iov_copy(&cur, ch->data + in, take, false);
		pos += take;
	}
}

void osdfs__mem_data_free(struct mem_object *obj)
{
	for (size_t i = 0; i < obj->chunks.nslots; i++) {
		struct osdfs__hnode *n = obj->chunks.slots[i], *next;

		for (; n; n = next) {
			next = n->next;
			chunk_free(chunk_of(n));
		}
	}
	osdfs__htab_fini(&obj->chunks);
}
