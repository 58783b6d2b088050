/*
 * The nonce replay cache (docs/security.md section 4): the target keeps
 * one per partition (osdtarget/security/nonce_cache.c).
 *
 * Up to `depth` accepted nonces live in a slot array, found by an
 * open-addressing hash table (linear probing, backward-shift deletion) and
 * ordered by timestamp in a binary min-heap. Entries only ever leave from the
 * heap's top (the oldest timestamp), either because they aged out of the
 * window or to make room; the floor then rises to that timestamp, which keeps
 * every forgotten nonce unacceptable.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/rand.h>

#include <osd/security.h>

struct osd_nonce_entry {
	uint64_t t; /* the nonce's timestamp */
	uint8_t nonce[OSD_NONCE_LEN];
};

struct osd_nonce_cache {
	pthread_mutex_t lock;
	uint64_t floor;   /* timestamps <= floor are refused */
	uint64_t seed;    /* random hash key: clients cannot aim at one bucket */
	size_t depth, count;
	struct osd_nonce_entry *slots; /* depth entries */
	size_t *heap;     /* slot indices, min-heap by t; count used */
	size_t *free;     /* unused slot indices (a stack) */
	size_t nfree;
	size_t *table;    /* slot index + 1, 0 = empty; mask + 1 buckets */
	size_t mask;
};

static uint64_t osd_nc__hash(const osd_nonce_cache *c, const uint8_t *n)
{
	uint64_t h = c->seed;
	int i;

	for (i = 0; i < OSD_NONCE_LEN; i++) {
		h ^= n[i];
		h *= 0x100000001B3ULL; /* FNV-1a step on a keyed start */
	}
	return h ^ (h >> 29);
}

/* Bucket holding @n, or the empty bucket where it would go. */
static size_t osd_nc__bucket(const osd_nonce_cache *c, const uint8_t *n)
{
	size_t b = (size_t)osd_nc__hash(c, n) & c->mask;

	while (c->table[b] != 0 &&
	       memcmp(c->slots[c->table[b] - 1].nonce, n, OSD_NONCE_LEN) != 0)
		b = (b + 1) & c->mask;
	return b;
}

/* Remove bucket @b, shifting later members of its probe run back. */
static void osd_nc__table_remove(osd_nonce_cache *c, size_t b)
{
	size_t next = (b + 1) & c->mask;

	c->table[b] = 0;
	while (c->table[next] != 0) {
		size_t home = (size_t)osd_nc__hash(c, c->slots[c->table[next] - 1].nonce) & c->mask;

		/* move it into the hole unless its home lies in (b, next] cyclically */
		if (((next - home) & c->mask) >= ((next - b) & c->mask)) {
			c->table[b] = c->table[next];
			c->table[next] = 0;
			b = next;
		}
		next = (next + 1) & c->mask;
	}
}

static int osd_nc__less(const osd_nonce_cache *c, size_t i, size_t j)
{
	return c->slots[c->heap[i]].t < c->slots[c->heap[j]].t;
}

static void osd_nc__swap(osd_nonce_cache *c, size_t i, size_t j)
{
	size_t tmp = c->heap[i];

	c->heap[i] = c->heap[j];
	c->heap[j] = tmp;
}

static void osd_nc__heap_push(osd_nonce_cache *c, size_t slot)
{
	size_t i = c->count++;

	c->heap[i] = slot;
	while (i > 0 && osd_nc__less(c, i, (i - 1) / 2)) {
		osd_nc__swap(c, i, (i - 1) / 2);
		i = (i - 1) / 2;
	}
}

/* Forget the oldest entry and raise the floor to its timestamp. */
static void osd_nc__drop_oldest(osd_nonce_cache *c)
{
	size_t slot = c->heap[0], i = 0;
	struct osd_nonce_entry *e = &c->slots[slot];

	if (e->t > c->floor)
		c->floor = e->t;
	osd_nc__table_remove(c, osd_nc__bucket(c, e->nonce));
	c->free[c->nfree++] = slot;
	c->heap[0] = c->heap[--c->count];
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;

		if (l < c->count && osd_nc__less(c, l, m))
			m = l;
		if (r < c->count && osd_nc__less(c, r, m))
			m = r;
		if (m == i)
			break;
		osd_nc__swap(c, i, m);
		i = m;
	}
}

int osd_nonce_cache_new(osd_nonce_cache **out, size_t depth, uint64_t floor_ms)
{
	osd_nonce_cache *c;
	size_t buckets = 2, i;

	if (out == NULL)
		return -EINVAL;
	*out = NULL;
	if (depth == 0 || depth > SIZE_MAX / 4 / sizeof(size_t))
		return -EINVAL;
	while (buckets < 2 * depth) /* load factor <= 1/2 */
		buckets *= 2;
	c = calloc(1, sizeof(*c));
	if (c == NULL)
		return -ENOMEM;
	c->slots = calloc(depth, sizeof(*c->slots));
	c->heap = calloc(depth, sizeof(*c->heap));
	c->free = calloc(depth, sizeof(*c->free));
	c->table = calloc(buckets, sizeof(*c->table));
	if (c->slots == NULL || c->heap == NULL || c->free == NULL || c->table == NULL ||
	    pthread_mutex_init(&c->lock, NULL) != 0) {
		free(c->slots);
		free(c->heap);
		free(c->free);
		free(c->table);
		free(c);
		return -ENOMEM;
	}
	if (RAND_bytes((uint8_t *)&c->seed, sizeof(c->seed)) != 1)
		c->seed = 0xCBF29CE484222325ULL; /* still correct, only predictable */
	c->depth = depth;
	c->mask = buckets - 1;
	c->floor = floor_ms;
	for (i = 0; i < depth; i++)
		c->free[i] = depth - 1 - i;
	c->nfree = depth;
	*out = c;
	return 0;
}

void osd_nonce_cache_free(osd_nonce_cache *cache)
{
	if (cache == NULL)
		return;
	pthread_mutex_destroy(&cache->lock);
	free(cache->slots);
	free(cache->heap);
	free(cache->free);
	free(cache->table);
	free(cache);
}

static int osd_nc__check_locked(osd_nonce_cache *c, const uint8_t *nonce, uint64_t t,
				uint64_t now_ms, uint64_t oldest_ms, uint64_t newest_ms)
{
	uint64_t low = now_ms > oldest_ms ? now_ms - oldest_ms : 0;
	size_t b, slot;

	if (t <= c->floor || t < low || (t > now_ms && t - now_ms > newest_ms))
		return -ERANGE;
	b = osd_nc__bucket(c, nonce);
	if (c->table[b] != 0)
		return -EEXIST;
	/* Age out what the window no longer admits. */
	while (c->count > 0 && c->slots[c->heap[0]].t < low)
		osd_nc__drop_oldest(c);
	if (c->count == c->depth) {
		/* Full: one strictly older than all would be the first to go;
		 * refuse it instead. One stamped like the oldest (a burst within
		 * a millisecond) is kept: the floor rises to its stamp, and while
		 * it is remembered the table refuses it, after that the floor. */
		if (t < c->slots[c->heap[0]].t)
			return -ERANGE;
		osd_nc__drop_oldest(c);
	}
	slot = c->free[--c->nfree];
	c->slots[slot].t = t;
	memcpy(c->slots[slot].nonce, nonce, OSD_NONCE_LEN);
	/* Removals may have shifted the probe run: find the bucket again. */
	c->table[osd_nc__bucket(c, nonce)] = slot + 1;
	osd_nc__heap_push(c, slot);
	return 0;
}

int osd_nonce_cache_check(osd_nonce_cache *cache, const uint8_t nonce[OSD_NONCE_LEN],
			  uint64_t now_ms, uint64_t oldest_ms, uint64_t newest_ms)
{
	int rc;

	if (cache == NULL || nonce == NULL)
		return -EINVAL;
	pthread_mutex_lock(&cache->lock);
	rc = osd_nc__check_locked(cache, nonce, osd_nonce_time(nonce), now_ms, oldest_ms,
				  newest_ms);
	pthread_mutex_unlock(&cache->lock);
	return rc;
}

uint64_t osd_nonce_cache_horizon(osd_nonce_cache *cache)
{
	uint64_t h;

	pthread_mutex_lock(&cache->lock);
	h = cache->floor;
	/* The newest entry is a leaf of the min-heap: look at them all. */
	for (size_t i = cache->count / 2; i < cache->count; i++)
		if (cache->slots[cache->heap[i]].t > h)
			h = cache->slots[cache->heap[i]].t;
	pthread_mutex_unlock(&cache->lock);
	return h;
}
