/*
 * The per-device credential cache: one credential per object (or one
 * partition-wide), each with its own osd_key so the HMAC context is set up
 * once per capability key and reused for every request signed with it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <openssl/crypto.h>
#include <osd/capability.h>
#include "proto/command.h"
#include "security/cdb_icv.h"
#include "request/private.h"

#define CACHE_MIN_BUCKETS 64

void osd__cred_cache_init(struct osd__cred_cache *c)
{
	memset(c, 0, sizeof(*c));
}

static struct osd__keyref *keyref_new(const struct osd_credential *cred, int *rc)
{
	struct osd__keyref *k;

	*rc = 0;
	if (cred->cap.security_method == OSD_SEC_NOSEC)
		return NULL;
	k = calloc(1, sizeof(*k));
	if (!k) {
		*rc = -ENOMEM;
		return NULL;
	}
	*rc = osd_key_new(&k->key, cred->cap_key, OSD_HMAC_LEN);
	if (*rc) {
		free(k);
		return NULL;
	}
	k->refs = 1;
	return k;
}

/* Called with dev->lock held (or when nothing else can see @p k). */
static void keyref_put(struct osd__keyref *k)
{
	if (k && --k->refs == 0) {
		osd_key_free(k->key);
		OPENSSL_cleanse(k, sizeof(*k));
		free(k);
	}
}

int osd__keyref_capkey_icv(struct osd__keyref *k, const uint8_t *token, size_t token_len,
			   const uint8_t **icv)
{
	int rc;

	if (token_len > sizeof(k->capkey_token))
		return -EINVAL;
	if (!k->capkey_icv_valid || k->capkey_token_len != token_len ||
	    (token_len && memcmp(k->capkey_token, token, token_len) != 0)) {
		k->capkey_icv_valid = 0;
		rc = osd__sec_capkey_icv(k->key, token, token_len, k->capkey_icv);
		if (rc < 0)
			return rc;
		if (token_len)
			memcpy(k->capkey_token, token, token_len);
		k->capkey_token_len = token_len;
		k->capkey_icv_valid = 1;
	}
	*icv = k->capkey_icv;
	return 0;
}

static struct osd__keyref *keyref_get(struct osd__keyref *k)
{
	if (k)
		k->refs++;
	return k;
}

void osd__keyref_put_locked(struct osd__keyref *k)
{
	keyref_put(k);
}

void osd__keyref_release(osd_dev *dev, struct osd__keyref *k)
{
	if (!k)
		return;
	pthread_mutex_lock(&dev->lock);
	keyref_put(k);
	pthread_mutex_unlock(&dev->lock);
}

static void entry_free(struct osd__cred_entry *e)
{
	keyref_put(e->key);
	memset(&e->cred, 0, sizeof(e->cred));
	free(e);
}

static void drop_all(struct osd__cred_cache *c)
{
	for (unsigned i = 0; i < c->nbuckets; i++) {
		struct osd__cred_entry *e = c->buckets[i];

		while (e) {
			struct osd__cred_entry *next = e->next;

			entry_free(e);
			e = next;
		}
		c->buckets[i] = NULL;
	}
	c->count = 0;
}

void osd__cred_cache_destroy(struct osd__cred_cache *c)
{
	drop_all(c);
	free(c->buckets);
	keyref_put(c->dflt_key);
	memset(c, 0, sizeof(*c));
}

static unsigned bucket_of(const struct osd__cred_cache *c, const struct osd_obj_id *o)
{
	uint64_t h = o->partition * 0x9E3779B97F4A7C15ull ^ o->id * 0xC2B2AE3D27D4EB4Full;

	return (unsigned)((h >> 32) ^ h) & (c->nbuckets - 1);
}

static struct osd__cred_entry **find_slot(struct osd__cred_cache *c, const struct osd_obj_id *o)
{
	struct osd__cred_entry **pp;

	if (!c->nbuckets)
		return NULL;
	for (pp = &c->buckets[bucket_of(c, o)]; *pp; pp = &(*pp)->next)
		if ((*pp)->obj.partition == o->partition && (*pp)->obj.id == o->id)
			return pp;
	return NULL;
}

static int grow(struct osd__cred_cache *c)
{
	unsigned n = c->nbuckets ? c->nbuckets * 2 : CACHE_MIN_BUCKETS;
	struct osd__cred_entry **nb = calloc(n, sizeof(*nb));
	struct osd__cred_cache tmp = *c;

	if (!nb)
		return -ENOMEM;
	tmp.buckets = nb;
	tmp.nbuckets = n;
	for (unsigned i = 0; i < c->nbuckets; i++) {
		struct osd__cred_entry *e = c->buckets[i];

		while (e) {
			struct osd__cred_entry *next = e->next;
			unsigned b = bucket_of(&tmp, &e->obj);

			e->next = nb[b];
			nb[b] = e;
			e = next;
		}
	}
	free(c->buckets);
	c->buckets = nb;
	c->nbuckets = n;
	return 0;
}

/* The object a credential's capability is for: its allowed ids. */
static struct osd_obj_id cred_object(const struct osd_credential *cred)
{
	struct osd_obj_id o = { cred->cap.allowed_partition, cred->cap.allowed_object };

	if (cred->cap.desc_type == OSD_CAP_DESC_PAR)
		o.id = 0;
	return o;
}

/* Full cache: drop one entry, taking buckets in turn (cheap, and fair
 * enough for a cache whose misses cost a credential request anyway).
 * Requests holding its key keep it alive through their reference. */
static void evict_one(struct osd__cred_cache *c)
{
	for (unsigned n = 0; n < c->nbuckets; n++) {
		unsigned b = c->evict_cursor++ & (c->nbuckets - 1);
		struct osd__cred_entry *e = c->buckets[b];

		if (e) {
			c->buckets[b] = e->next;
			entry_free(e);
			c->count--;
			return;
		}
	}
}

/* Insert or replace; called with dev->lock held. */
static int cache_put(struct osd__cred_cache *c, const struct osd_credential *cred)
{
	struct osd_obj_id o = cred_object(cred);
	struct osd__cred_entry **slot, *e;
	int rc;
	struct osd__keyref *key = keyref_new(cred, &rc);

	if (rc)
		return rc;
	slot = find_slot(c, &o);
	if (slot) {
		e = *slot;
		keyref_put(e->key);
		e->key = key;
		e->cred = *cred;
		return 0;
	}
	if (c->max && c->count >= c->max)
		evict_one(c);
	if (c->count >= c->nbuckets && (rc = grow(c)) != 0) {
		keyref_put(key);
		return rc;
	}
	e = calloc(1, sizeof(*e));
	if (!e) {
		keyref_put(key);
		return -ENOMEM;
	}
	e->obj = o;
	e->cred = *cred;
	e->key = key;
	unsigned b = bucket_of(c, &o);

	e->next = c->buckets[b];
	c->buckets[b] = e;
	c->count++;
	return 0;
}

int osd_dev_add_credential(osd_dev *dev, const struct osd_credential *cred)
{
	int rc;

	if (!dev || !cred)
		return -EINVAL;
	if (cred->version != dev->version) {
		osd__dev_set_error(dev, "credential is for OSD-%d, the device speaks OSD-%d",
				   (int)cred->version, (int)dev->version);
		return -EINVAL;
	}
	pthread_mutex_lock(&dev->lock);
	rc = cache_put(&dev->cache, cred);
	pthread_mutex_unlock(&dev->lock);
	return rc;
}

int osd_dev_set_default_credential(osd_dev *dev, const struct osd_credential *cred)
{
	struct osd__keyref *key = NULL;
	int rc;

	if (!dev)
		return -EINVAL;
	if (cred && cred->version != dev->version)
		return -EINVAL;
	if (cred && (key = keyref_new(cred, &rc)) == NULL && rc)
		return rc;
	pthread_mutex_lock(&dev->lock);
	keyref_put(dev->cache.dflt_key);
	dev->cache.dflt_key = key;
	dev->cache.have_default = cred != NULL;
	if (cred)
		dev->cache.dflt = *cred;
	else
		memset(&dev->cache.dflt, 0, sizeof(dev->cache.dflt));
	pthread_mutex_unlock(&dev->lock);
	return 0;
}

void osd_dev_forget_credentials(osd_dev *dev, const struct osd_obj_id *obj)
{
	struct osd__cred_entry **slot, *e;

	if (!dev)
		return;
	pthread_mutex_lock(&dev->lock);
	if (!obj) {
		drop_all(&dev->cache);
	} else if ((slot = find_slot(&dev->cache, obj)) != NULL) {
		e = *slot;
		*slot = e->next;
		entry_free(e);
		dev->cache.count--;
	}
	pthread_mutex_unlock(&dev->lock);
}

unsigned osd_dev_credential_count(osd_dev *dev)
{
	unsigned n;

	if (!dev)
		return 0;
	pthread_mutex_lock(&dev->lock);
	n = dev->cache.count;
	pthread_mutex_unlock(&dev->lock);
	return n;
}

void osd_dev_set_cred_source(osd_dev *dev, osd_cred_source_fn fn, void *payload)
{
	if (!dev)
		return;
	pthread_mutex_lock(&dev->lock);
	dev->opts.cred_source = fn;
	dev->opts.cred_payload = payload;
	pthread_mutex_unlock(&dev->lock);
}

/* Usable for a command needing @p perms: covers them and is not about to expire. */
static int usable(const osd_dev *dev, const struct osd_credential *cred, uint16_t perms,
		  uint64_t now)
{
	uint64_t exp = cred->cap.expiration;

	if ((cred->cap.permissions & perms) != perms)
		return 0;
	return exp == 0 || exp > now + dev->opts.cred_refresh_ms;
}

/* The object the capability must describe (docs/security.md section 1),
 * as the command's descriptor says. */
static void cap_target(osd_req *req)
{
	struct osd_obj_id o = osd__cmd_cap_object(req->desc, &req->cdb.obj, req->cdb.cmd_options);

	req->cap_obj = o;
	req->cap_is_collection = req->is_collection && o.id != 0;
}

/* Capability for NOSEC with no credential at all: every permission on the object. */
static void nosec_cap(osd_req *req)
{
	enum osd_version v = req->dev->version;

	osd_capability_init(&req->cdb.cap, v, &req->cap_obj, req->cap_is_collection,
			    v == OSD_V1 ? OSD_PERM_ALL_V1 : OSD_PERM_ALL_V2, OSD_SEC_NOSEC);
}

static int use_own(osd_req *req, const struct osd_credential *cred)
{
	int rc;

	req->cdb.cap = cred->cap;
	req->key = keyref_new(cred, &rc);
	return rc;
}

/* A partition-wide (or OSD-wide) capability: PAR descriptor with GLOBAL,
 * which the target matches against every object below it. */
static int wide_entry(osd_dev *dev, const struct osd_obj_id *o, uint16_t perms, uint64_t now,
		      struct osd__cred_entry **out)
{
	struct osd__cred_entry **slot = find_slot(&dev->cache, o);

	if (!slot || (*slot)->cred.cap.desc_type != OSD_CAP_DESC_PAR ||
	    !((*slot)->cred.cap.permissions & OSD_PERM_GLOBAL) ||
	    !usable(dev, &(*slot)->cred, perms, now))
		return 0;
	*out = *slot;
	return 1;
}

/* Look in the cache under dev->lock: the object's own entry, then a
 * partition-wide one, then an OSD-wide one. Copies the capability and takes
 * a key reference. */
static int cache_lookup(osd_req *req, uint16_t perms, uint64_t now, uint16_t *had_perms)
{
	osd_dev *dev = req->dev;
	struct osd_obj_id part = { req->cap_obj.partition, 0 }, root = { 0, 0 };
	struct osd__cred_entry **slot = find_slot(&dev->cache, &req->cap_obj), *e = NULL;

	*had_perms = 0;
	if (slot) {
		*had_perms = (*slot)->cred.cap.permissions;
		if (usable(dev, &(*slot)->cred, perms, now))
			e = *slot;
	}
	if (!e && req->cap_obj.id)
		wide_entry(dev, &part, perms, now, &e);
	if (!e && req->cap_obj.partition)
		wide_entry(dev, &root, perms, now, &e);
	if (!e)
		return 0;
	req->cdb.cap = e->cred.cap;
	req->key = keyref_get(e->key);
	return 1;
}

int osd__cred_prepare(osd_req *req)
{
	osd_dev *dev = req->dev;
	uint16_t perms = req->perms, had = 0;
	struct osd_cred_request want;
	struct osd_credential cred;
	osd_cred_source_fn src;
	void *payload;
	uint64_t now;
	int rc, found;

	if (req->gets.n || req->page_mode)
		perms |= OSD_PERM_GET_ATTR;
	if (req->sets.n)
		perms |= OSD_PERM_SET_ATTR;
	cap_target(req);
	if (req->has_cred)
		return use_own(req, &req->cred);

	pthread_mutex_lock(&dev->lock);
	now = osd__dev_clock(dev); /* expirations are OSD clock times */
	found = cache_lookup(req, perms, now, &had);
	src = dev->opts.cred_source;
	payload = dev->opts.cred_payload;
	pthread_mutex_unlock(&dev->lock);
	if (found)
		return 0;

	if (src) {
		memset(&want, 0, sizeof(want));
		want.version = dev->version;
		want.obj = req->cap_obj;
		want.is_collection = req->cap_is_collection;
		/* Ask for what the cached one had as well, so the cache converges
		 * on one credential per object instead of thrashing. */
		want.permissions = (uint16_t)(perms | had);
		want.method = dev->opts.security;
		want.expiration = now + OSD_CRED_LIFETIME_MS;
		memset(&cred, 0, sizeof(cred));
		rc = src(&want, &cred, payload);
		if (rc < 0) {
			osd__errmsg(req, "%s of 0x%llx/0x%llx: the credential source failed: %s",
				    osd_action_name(req->cdb.action),
				    (unsigned long long)req->cdb.obj.partition,
				    (unsigned long long)req->cdb.obj.id, strerror(-rc));
			return rc;
		}
		if (cred.version != dev->version) {
			osd__errmsg(req, "the credential source returned an OSD-%d credential",
				    (int)cred.version);
			return -EINVAL;
		}
		pthread_mutex_lock(&dev->lock);
		rc = cache_put(&dev->cache, &cred);
		if (rc == 0 && !cache_lookup(req, 0, 0, &had)) {
			/* The credential names another object: use it for this request only. */
			pthread_mutex_unlock(&dev->lock);
			return use_own(req, &cred);
		}
		pthread_mutex_unlock(&dev->lock);
		return rc;
	}

	pthread_mutex_lock(&dev->lock);
	if (dev->cache.have_default) {
		req->cdb.cap = dev->cache.dflt.cap;
		req->key = keyref_get(dev->cache.dflt_key);
		pthread_mutex_unlock(&dev->lock);
		return 0;
	}
	pthread_mutex_unlock(&dev->lock);
	if (dev->opts.security == OSD_SEC_NOSEC) {
		nosec_cap(req);
		return 0;
	}
	osd__errmsg(req, "%s of 0x%llx/0x%llx: no credential (no source, none cached)",
		    osd_action_name(req->cdb.action), (unsigned long long)req->cdb.obj.partition,
		    (unsigned long long)req->cdb.obj.id);
	return -ENOKEY;
}
