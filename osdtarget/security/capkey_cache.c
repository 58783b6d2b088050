/* Bounded, set-associative cache of capability keys with check-out/put-back. */
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

/* Not a defence against anything: it only spreads entries over the sets. */
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
	return pthread_mutex_init(&c->lock, NULL) ? -ENOMEM : 0;
}

void osd__capkey_cache_destroy(struct osd__capkey_cache *c)
{
	osd__capkey_invalidate(c);
	pthread_mutex_destroy(&c->lock);
}

struct osd__capkey *osd__capkey_take(struct osd__capkey_cache *c,
				     const struct osd__capkey_id *id, uint64_t *gen)
{
	uint64_t h = id_hash(id);
	struct osd__capkey **set = c->sets[h % OSD__CAPKEY_SETS], *e = NULL;

	pthread_mutex_lock(&c->lock);
	*gen = c->gen;
	for (int w = 0; w < OSD__CAPKEY_WAYS; w++) {
		if (set[w] && set[w]->hash == h && id_equal(&set[w]->id, id)) {
			e = set[w];
			set[w] = NULL;
			break;
		}
	}
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
	struct osd__capkey **set, *victim = NULL;
	int w, slot = -1;

	if (!e)
		return;
	if (!e->verified) {
		entry_free(e); /* never proved useful: forged requests do not fill the cache */
		return;
	}
	set = c->sets[e->hash % OSD__CAPKEY_SETS];
	pthread_mutex_lock(&c->lock);
	if (e->gen != c->gen) {
		victim = e; /* a key changed while it was out */
	} else {
		for (w = 0; w < OSD__CAPKEY_WAYS && !victim; w++) {
			if (!set[w]) {
				if (slot < 0)
					slot = w;
			} else if (set[w]->hash == e->hash && id_equal(&set[w]->id, &e->id)) {
				victim = e; /* a concurrent command put the same key back */
			}
		}
		if (!victim) {
			if (slot < 0) {
				slot = 0;
				for (w = 1; w < OSD__CAPKEY_WAYS; w++)
					if (set[w]->used < set[slot]->used)
						slot = w;
				victim = set[slot];
			}
			e->used = ++c->tick;
			set[slot] = e;
		}
	}
	pthread_mutex_unlock(&c->lock);
	entry_free(victim);
}

void osd__capkey_invalidate(struct osd__capkey_cache *c)
{
	struct osd__capkey *drop[OSD__CAPKEY_SETS * OSD__CAPKEY_WAYS];
	size_t n = 0;

	pthread_mutex_lock(&c->lock);
	c->gen++;
	for (int s = 0; s < OSD__CAPKEY_SETS; s++) {
		for (int w = 0; w < OSD__CAPKEY_WAYS; w++) {
			if (c->sets[s][w])
				drop[n++] = c->sets[s][w];
			c->sets[s][w] = NULL;
		}
	}
	pthread_mutex_unlock(&c->lock);
	while (n)
		entry_free(drop[--n]);
}
