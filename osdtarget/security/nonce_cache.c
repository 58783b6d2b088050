/* Bounded per-partition request-nonce cache: freshness window + replay rejection. */
#include "security/nonce_cache.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "proto/byteorder.h"

#define NONCE_MAX_PARTS 256

struct osd__nonce_part {
	uint64_t partition;
	uint64_t floor;     /* nonces with a timestamp <= floor are stale */
	uint64_t last_used; /* LRU tick */
	uint8_t (*set)[OSD_NONCE_LEN]; /* unordered, count entries used */
	size_t depth, count;
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
		free(c->parts[i].set);
	free(c->parts);
	c->parts = NULL;
	pthread_mutex_destroy(&c->lock);
}

static uint64_t max_u64(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

/* The newest timestamp a partition remembers (its floor if empty). */
static uint64_t part_newest(const struct osd__nonce_part *p)
{
	uint64_t t = p->floor;

	for (size_t i = 0; i < p->count; i++)
		t = max_u64(t, osd__get_be48(p->set[i]));
	return t;
}

/* Index of the entry with the oldest timestamp (count > 0). */
static size_t part_oldest(const struct osd__nonce_part *p)
{
	size_t best = 0;

	for (size_t i = 1; i < p->count; i++)
		if (osd__get_be48(p->set[i]) < osd__get_be48(p->set[best]))
			best = i;
	return best;
}

static struct osd__nonce_part *part_find(struct osd__nonce_cache *c, uint64_t partition)
{
	size_t lru = 0;

	for (size_t i = 0; i < c->nparts; i++) {
		if (c->parts[i].partition == partition)
			return &c->parts[i];
		if (c->parts[i].last_used < c->parts[lru].last_used)
			lru = i;
	}
	if (c->nparts == c->max_parts) {
		/* Dropping a list could reopen replays: raise the global floor. */
		c->global_floor = max_u64(c->global_floor, part_newest(&c->parts[lru]));
		free(c->parts[lru].set);
		c->parts[lru] = c->parts[--c->nparts];
	}
	struct osd__nonce_part *p = &c->parts[c->nparts++];

	memset(p, 0, sizeof(*p));
	p->partition = partition;
	return p;
}

/* Evict the oldest entry, raising the floor to its timestamp. */
static void part_evict(struct osd__nonce_part *p)
{
	size_t i = part_oldest(p);

	p->floor = max_u64(p->floor, osd__get_be48(p->set[i]));
	memcpy(p->set[i], p->set[--p->count], OSD_NONCE_LEN);
}

/* Make the set hold up to @p depth entries, evicting the oldest ones. */
static int part_resize(struct osd__nonce_part *p, size_t depth)
{
	while (p->count > depth)
		part_evict(p);
	uint8_t (*set)[OSD_NONCE_LEN] = realloc(p->set, depth * OSD_NONCE_LEN);

	if (!set)
		return -ENOMEM;
	p->set = set;
	p->depth = depth;
	return 0;
}

static int part_contains(const struct osd__nonce_part *p, const uint8_t *nonce)
{
	for (size_t i = 0; i < p->count; i++)
		if (!memcmp(p->set[i], nonce, OSD_NONCE_LEN))
			return 1;
	return 0;
}

static void part_insert(struct osd__nonce_part *p, const uint8_t *nonce)
{
	if (p->count == p->depth)
		part_evict(p);
	memcpy(p->set[p->count++], nonce, OSD_NONCE_LEN);
}

enum osd__nonce_verdict osd__nonce_check(struct osd__nonce_cache *c, uint64_t partition,
					 const uint8_t nonce[OSD_NONCE_LEN], uint64_t now,
					 uint64_t oldest, uint64_t newest, size_t depth)
{
	uint64_t t = osd__get_be48(nonce);
	uint64_t lo = now > oldest ? now - oldest : 0;
	enum osd__nonce_verdict v = OSD__NONCE_OK;

	if (t < lo || t > now + newest)
		return OSD__NONCE_STALE;
	if (depth == 0)
		depth = 1;
	pthread_mutex_lock(&c->lock);
	struct osd__nonce_part *p = part_find(c, partition);

	p->last_used = ++c->tick;
	if ((p->floor && t <= p->floor) || (c->global_floor && t <= c->global_floor)) {
		v = OSD__NONCE_STALE;
	} else if (part_contains(p, nonce)) {
		v = OSD__NONCE_REPLAY;
	} else if (p->depth != depth && part_resize(p, depth) < 0) {
		v = OSD__NONCE_STALE; /* no memory to remember it: refuse rather than risk replay */
	} else {
		part_insert(p, nonce);
	}
	pthread_mutex_unlock(&c->lock);
	return v;
}
