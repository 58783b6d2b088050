/*
 * Per-partition request-nonce replay protection (docs/security.md section
 * 4). Each partition's nonces live in a libosd osd_nonce_cache (hashed, with
 * a timestamp heap: no scan per nonce); this file only keeps which
 * partitions have one, drops the least recently used when there are too
 * many, and keeps the floors that make forgetting never reopen a replay.
 */
#include "security/nonce_cache.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <osd/security.h>

#include "proto/byteorder.h"

#define NONCE_MAX_PARTS 256

struct osd__nonce_part {
	uint64_t partition;
	uint64_t last_used; /* LRU tick */
	size_t depth;       /* the depth its cache was made with */
	osd_nonce_cache *nc;
};

int osd__nonce_cache_init(struct osd__nonce_cache *c, uint64_t start_ms)
{
	memset(c, 0, sizeof(*c));
	c->max_parts = NONCE_MAX_PARTS;
	c->global_floor = start_ms ? start_ms - 1 : 0;
	c->parts = calloc(c->max_parts, sizeof(*c->parts));
	if (!c->parts)
		return -ENOMEM;
	if (pthread_mutex_init(&c->lock, NULL)) {
		free(c->parts);
		c->parts = NULL;
		return -ENOMEM;
	}
	return 0;
}

void osd__nonce_cache_destroy(struct osd__nonce_cache *c)
{
	if (!c->parts)
		return;
	for (size_t i = 0; i < c->nparts; i++)
		osd_nonce_cache_free(c->parts[i].nc);
	free(c->parts);
	c->parts = NULL;
	pthread_mutex_destroy(&c->lock);
}

static uint64_t max_u64(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

/* Forget partition slot @p i; the global floor keeps its nonces refused. */
static void part_drop(struct osd__nonce_cache *c, size_t i)
{
	struct osd__nonce_part *p = &c->parts[i];

	if (p->nc) {
		c->global_floor = max_u64(c->global_floor, osd_nonce_cache_horizon(p->nc));
		osd_nonce_cache_free(p->nc);
	}
	*p = c->parts[--c->nparts];
}

/* The partition's entry, made (dropping the least recently used) if new.
 * At most NONCE_MAX_PARTS entries: the scan is over partitions, never nonces. */
static struct osd__nonce_part *part_find(struct osd__nonce_cache *c, uint64_t partition)
{
	size_t lru = 0;

	for (size_t i = 0; i < c->nparts; i++) {
		if (c->parts[i].partition == partition)
			return &c->parts[i];
		if (c->parts[i].last_used < c->parts[lru].last_used)
			lru = i;
	}
	if (c->nparts == c->max_parts)
		part_drop(c, lru);
	struct osd__nonce_part *p = &c->parts[c->nparts++];

	memset(p, 0, sizeof(*p));
	p->partition = partition;
	return p;
}

/* Give the partition a cache of @p depth; a new depth starts a new cache
 * whose floor is the old one's horizon, so nothing it remembered replays. */
static int part_cache(struct osd__nonce_cache *c, struct osd__nonce_part *p, size_t depth)
{
	uint64_t floor = c->global_floor;
	osd_nonce_cache *nc;

	if (p->nc && p->depth == depth)
		return 0;
	if (p->nc)
		floor = max_u64(floor, osd_nonce_cache_horizon(p->nc));
	if (osd_nonce_cache_new(&nc, depth, floor) < 0)
		return -ENOMEM;
	osd_nonce_cache_free(p->nc);
	p->nc = nc;
	p->depth = depth;
	return 0;
}

enum osd__nonce_verdict osd__nonce_check(struct osd__nonce_cache *c, uint64_t partition,
					 const uint8_t nonce[OSD_NONCE_LEN], uint64_t now,
					 uint64_t oldest, uint64_t newest, size_t depth)
{
	enum osd__nonce_verdict v = OSD__NONCE_STALE;
	uint64_t t = osd__get_be48(nonce);
	struct osd__nonce_part *p;

	if (depth == 0)
		depth = 1;
	pthread_mutex_lock(&c->lock);
	p = part_find(c, partition);
	p->last_used = ++c->tick;
	/* No memory to remember it: refuse rather than risk a replay. */
	if ((!c->global_floor || t > c->global_floor) && part_cache(c, p, depth) == 0) {
		switch (osd_nonce_cache_check(p->nc, nonce, now, oldest, newest)) {
		case 0:
			v = OSD__NONCE_OK;
			break;
		case -EEXIST:
			v = OSD__NONCE_REPLAY;
			break;
		default:
			break;
		}
	}
	pthread_mutex_unlock(&c->lock);
	return v;
}
