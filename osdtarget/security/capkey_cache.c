/* Bounded LRU cache of capability keys with check-out/put-back. */
#include "security/capkey_cache.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <openssl/crypto.h>

#include "proto/byteorder.h"

#define HASH_MUL 0x9E3779B97F4A7C15ull

static uint64_t mix(uint64_t h, uint64_t w)
{
	h = (h ^ w) * HASH_MUL;
	return h ^ (h >> 29);
}

/* Not a defence against anything: it only spreads entries over the buckets. */
static uint64_t id_hash(const struct osd__capkey_id *id)
{
	uint64_t h = mix(id->pid, (uint64_t)id->kind << 16 | (uint64_t)id->version << 8 | id->cap_len);
	size_t i;

	for (i = 0; i + 8 <= id->cap_len; i += 8)
		h = mix(h, osd__get_be64(id->cap + i));
	return h;
}

static int id_equal(const struct osd__capkey_id *a, const struct osd__capkey_id *b)
{
	return a->pid == b->pid && a->kind == b->kind && a->version == b->version &&
	       a->cap_len == b->cap_len && memcmp(a->cap, b->cap, a->cap_len) == 0;
}

static int node_equal(const struct osd__lru_node *n, const void *id)
{
	return id_equal(&OSD__LRU_ENTRY(n, struct osd__capkey, node)->id, id);
}

static struct osd__capkey *lookup(struct osd__capkey_cache *c, const struct osd__capkey_id *id,
				  uint64_t h)
{
	struct osd__lru_node *n = osd__lru_find(&c->lru, h, node_equal, id);

	return n ? OSD__LRU_ENTRY(n, struct osd__capkey, node) : NULL;
}

static void entry_free(struct osd__capkey *e)
{
	if (!e)
		return;
	osd_key_free(e->key);
	OPENSSL_cleanse(e, sizeof(*e));
	free(e);
}

int osd__capkey_cache_init(struct osd__capkey_cache *c)
{
	memset(c, 0, sizeof(*c));
	if (osd__lru_init(&c->lru, OSD__CAPKEY_MAX) < 0)
		return -ENOMEM;
	if (pthread_mutex_init(&c->lock, NULL)) {
		osd__lru_destroy(&c->lru);
		return -ENOMEM;
	}
	return 0;
}

void osd__capkey_cache_destroy(struct osd__capkey_cache *c)
{
	osd__capkey_invalidate(c);
	osd__lru_destroy(&c->lru);
	pthread_mutex_destroy(&c->lock);
}

struct osd__capkey *osd__capkey_take(struct osd__capkey_cache *c,
				     const struct osd__capkey_id *id, uint64_t *gen)
{
	uint64_t h = id_hash(id);
	struct osd__capkey *e;

	pthread_mutex_lock(&c->lock);
	*gen = c->gen;
	e = lookup(c, id, h);
	if (e)
		osd__lru_remove(&c->lru, &e->node);
	pthread_mutex_unlock(&c->lock);
	return e;
}

struct osd__capkey *osd__capkey_new(const struct osd__capkey_id *id, uint64_t gen,
				    const uint8_t ck[OSD_HMAC_LEN])
{
	struct osd__capkey *e = calloc(1, sizeof(*e));

	if (!e)
		return NULL;
	if (osd_key_new(&e->key, ck, OSD_HMAC_LEN) < 0) {
		free(e);
		return NULL;
	}
	e->id = *id;
	e->hash = id_hash(id);
	e->gen = gen;
	return e;
}

void osd__capkey_put(struct osd__capkey_cache *c, struct osd__capkey *e)
{
	struct osd__capkey *victim = NULL;

	if (!e)
		return;
	if (!e->verified) {
		entry_free(e); /* never proved useful: forged requests do not fill the cache */
		return;
	}
	pthread_mutex_lock(&c->lock);
	if (e->gen != c->gen || lookup(c, &e->id, e->hash)) {
		victim = e; /* a key changed while it was out, or a concurrent
			     * command put the same key back */
	} else {
		if (c->lru.count >= OSD__CAPKEY_MAX) {
			victim = OSD__LRU_ENTRY(osd__lru_oldest(&c->lru), struct osd__capkey, node);
			osd__lru_remove(&c->lru, &victim->node);
		}
		osd__lru_insert(&c->lru, &e->node, e->hash, 0);
	}
	pthread_mutex_unlock(&c->lock);
	entry_free(victim);
}

void osd__capkey_invalidate(struct osd__capkey_cache *c)
{
	struct osd__capkey *drop[OSD__CAPKEY_MAX];
	struct osd__lru_node *n;
	size_t k = 0;

	pthread_mutex_lock(&c->lock);
	c->gen++;
	while (k < OSD__CAPKEY_MAX && (n = osd__lru_any(&c->lru))) {
		osd__lru_remove(&c->lru, n);
		drop[k++] = OSD__LRU_ENTRY(n, struct osd__capkey, node);
	}
	pthread_mutex_unlock(&c->lock);
	while (k)
		entry_free(drop[--k]);
}
