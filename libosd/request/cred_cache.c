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

static struct osd__cred_entry *entry_of(struct osd__lru_node *n)
{
	return n ? OSD__LRU_ENTRY(n, struct osd__cred_entry, node) : NULL;
}

static void drop_all(struct osd__cred_cache *c)
{
	struct osd__lru_node *n;

	if (!c->lru.tab)
		return;
	while ((n = osd__lru_any(&c->lru))) {
		osd__lru_remove(&c->lru, n);
		entry_free(entry_of(n));
	}
}

void osd__cred_cache_destroy(struct osd__cred_cache *c)
{
	drop_all(c);
	osd__lru_destroy(&c->lru);
	keyref_put(c->dflt_key);
	memset(c, 0, sizeof(*c));
}

static uint64_t obj_hash(const struct osd_obj_id *o)
{
	return o->partition * 0x9E3779B97F4A7C15ull ^ o->id * 0xC2B2AE3D27D4EB4Full;
}

static int obj_equal(const struct osd__lru_node *n, const void *key)
{
	const struct osd_obj_id *a = &OSD__LRU_ENTRY(n, struct osd__cred_entry, node)->obj;
	const struct osd_obj_id *b = key;

	return a->partition == b->partition && a->id == b->id;
}

/* The entry for @p o, or NULL. */
static struct osd__cred_entry *find_entry(struct osd__cred_cache *c, const struct osd_obj_id *o)
{
	if (!c->lru.tab)
		return NULL;
	return entry_of(osd__lru_find(&c->lru, obj_hash(o), obj_equal, o));
}

/* The object a credential's capability is for: its allowed ids. */
static struct osd_obj_id cred_object(const struct osd_credential *cred)
{
	struct osd_obj_id o = { cred->cap.allowed_partition, cred->cap.allowed_object };

	if (cred->cap.desc_type == OSD_CAP_DESC_PAR)
		o.id = 0;
	return o;
}

/* Full cache: drop the least recently used entry. Requests holding its
 * key keep it alive through their reference. */
static void evict_one(struct osd__cred_cache *c)
{
	struct osd__cred_entry *e = entry_of(osd__lru_oldest(&c->lru));

	if (e) {
		osd__lru_remove(&c->lru, &e->node);
		entry_free(e);
	}
}

/* Insert or replace; called with dev->lock held. */
static int cache_put(struct osd__cred_cache *c, const struct osd_credential *cred)
{
	struct osd_obj_id o = cred_object(cred);
	struct osd__cred_entry *e;
	int rc;
	struct osd__keyref *key = keyref_new(cred, &rc);

	if (rc)
		return rc;
	if (!c->lru.tab && osd__lru_init(&c->lru, CACHE_MIN_BUCKETS) < 0) {
		keyref_put(key);
		return -ENOMEM;
	}
	e = find_entry(c, &o);
	if (e) {
		keyref_put(e->key);
		e->key = key;
		e->cred = *cred;
		osd__lru_touch(&c->lru, &e->node);
		return 0;
	}
	if (c->max && c->lru.count >= c->max)
		evict_one(c);
	e = calloc(1, sizeof(*e));
	if (!e) {
		keyref_put(key);
		return -ENOMEM;
	}
	e->obj = o;
	e->cred = *cred;
	e->key = key;
	osd__lru_insert(&c->lru, &e->node, obj_hash(&o), 0);
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
	struct osd__cred_entry *e;

	if (!dev)
		return;
	pthread_mutex_lock(&dev->lock);
	if (!obj) {
		drop_all(&dev->cache);
	} else if ((e = find_entry(&dev->cache, obj)) != NULL) {
		osd__lru_remove(&dev->cache.lru, &e->node);
		entry_free(e);
	}
	pthread_mutex_unlock(&dev->lock);
}

unsigned osd_dev_credential_count(osd_dev *dev)
{
	unsigned n;

	if (!dev)
		return 0;
	pthread_mutex_lock(&dev->lock);
	n = (unsigned)dev->cache.lru.count;
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
	struct osd__cred_entry *e = find_entry(&dev->cache, o);

	if (!e || e->cred.cap.desc_type != OSD_CAP_DESC_PAR ||
	    !(e->cred.cap.permissions & OSD_PERM_GLOBAL) || !usable(dev, &e->cred, perms, now))
		return 0;
	*out = e;
	return 1;
}

/* Look in the cache under dev->lock: the object's own entry, then a
 * partition-wide one, then an OSD-wide one. Copies the capability and takes
 * a key reference. */
static int cache_lookup(osd_req *req, uint16_t perms, uint64_t now, uint16_t *had_perms)
{
	osd_dev *dev = req->dev;
	struct osd_obj_id part = { req->cap_obj.partition, 0 }, root = { 0, 0 };
	struct osd__cred_entry *own = find_entry(&dev->cache, &req->cap_obj), *e = NULL;

	*had_perms = 0;
	if (own) {
		*had_perms = own->cred.cap.permissions;
		if (usable(dev, &own->cred, perms, now))
			e = own;
	}
	if (!e && req->cap_obj.id)
		wide_entry(dev, &part, perms, now, &e);
	if (!e && req->cap_obj.partition)
		wide_entry(dev, &root, perms, now, &e);
	if (!e)
		return 0;
	osd__lru_touch(&dev->cache.lru, &e->node); /* recently used: evicted last */
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
