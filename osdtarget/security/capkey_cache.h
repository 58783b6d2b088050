/*
 * Capability keys already computed (docs/security.md 2.2 and
 * docs/target.md "Capability key cache").
 *
 * Making a capability key costs a secret load, two HMAC contexts and an
 * HMAC; a client reuses one capability for many commands. The cache maps
 * the exact capability bytes plus the identity of the secret that signs
 * them (kind, partition, working key version) to a keyed osd_key.
 *
 * An osd_key serves one thread at a time, so an entry is checked out for
 * the length of a command (taken out of the table) and put back after; a
 * concurrent command with the same capability simply misses and makes its
 * own. Every change of a key (SET KEY, FORMAT OSD, REMOVE PARTITION, the
 * out-of-band root key) calls osd__capkey_invalidate(): it drops every
 * entry and bumps the generation, so an entry checked out before is freed
 * rather than put back, and a rotated key fails old capabilities at once.
 * Bounded: OSD__CAPKEY_MAX entries in libosd's hash+LRU (lru/lru.h); the
 * least recently put back goes first.
 */
#ifndef OSDTARGET_SECURITY_CAPKEY_CACHE_H
#define OSDTARGET_SECURITY_CAPKEY_CACHE_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <osd/security.h>
#include <osd/types.h>
#include "lru/lru.h"

#define OSD__CAPKEY_MAX 256
#define OSD__CAPKEY_TOKEN_MAX 64 /* longer channel tokens are not remembered */

/* What a capability key is a function of (the system id never changes). */
struct osd__capkey_id {
	uint64_t pid;                /* partition of the secret (0: root key) */
	uint8_t kind;                /* enum osd_key_to_set of the secret */
	uint8_t version;             /* working key version (0 otherwise) */
	uint8_t cap_len;             /* OSD_CAP_V1_LEN or OSD_CAP_V2_LEN */
	uint8_t cap[OSD_CAP_V2_LEN]; /* the capability exactly as in the CDB */
};

struct osd__capkey {
	struct osd__capkey_id id;
	struct osd__lru_node node;   /* in the cache while not checked out */
	uint64_t hash;
	uint64_t gen;                /* cache generation the key was made in */
	int verified;                /* some request signed with it verified */
	osd_key *key;
	/* CAPKEY: the request ICV HMAC(key, token) of the last token seen. */
	int has_tok;
	size_t tok_len;
	uint8_t tok[OSD__CAPKEY_TOKEN_MAX];
	uint8_t tok_icv[OSD_HMAC_LEN];
};

struct osd__capkey_cache {
	pthread_mutex_t lock;
	uint64_t gen;
	struct osd__lru lru;
};

int osd__capkey_cache_init(struct osd__capkey_cache *c);
void osd__capkey_cache_destroy(struct osd__capkey_cache *c);

/*
 * Check out the entry for @p id (NULL on a miss). @p gen receives the
 * current generation: pass it to osd__capkey_new() for a key made now.
 */
struct osd__capkey *osd__capkey_take(struct osd__capkey_cache *c,
				     const struct osd__capkey_id *id, uint64_t *gen);

/* A new, checked-out entry holding capability key @p ck. NULL: no memory. */
struct osd__capkey *osd__capkey_new(const struct osd__capkey_id *id, uint64_t gen,
				    const uint8_t ck[OSD_HMAC_LEN]);

/* Return a checked-out entry: kept if verified and still current, else freed. */
void osd__capkey_put(struct osd__capkey_cache *c, struct osd__capkey *e);

/* Forget every key (a key changed). */
void osd__capkey_invalidate(struct osd__capkey_cache *c);

#endif
