/*
 * The security manager's key store and credential issuer: the root key and
 * up to 16 working keys per partition, behind one mutex.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/rand.h>

#include <osd/cdb.h>
#include <osd/security.h>

#define OSD_WORKING_KEYS 16
#define OSD_TIME_MAX 0xFFFFFFFFFFFFull /* 48-bit wire timestamps */
#define OSD_PERM_V2_ONLY (OSD_PERM_M_OBJECT | OSD_PERM_QUERY | OSD_PERM_GBL_REM)

struct osd_issuer_partition {
	uint64_t id;
	osd_key *partition_key; /* signs SET KEY of the working keys */
	osd_key *working[OSD_WORKING_KEYS];
};

struct osd_cred_issuer {
	pthread_mutex_t lock;
	uint8_t system_id[OSD_SYSTEM_ID_LEN];
	osd_key *root;
	struct osd_issuer_partition *parts; /* sorted by id */
	size_t nparts;
	size_t cap;
};

int osd_cred_issuer_new(osd_cred_issuer **out, const uint8_t system_id[OSD_SYSTEM_ID_LEN])
{
	osd_cred_issuer *iss;

	if (out == NULL || system_id == NULL)
		return -EINVAL;
	*out = NULL;
	iss = calloc(1, sizeof(*iss));
	if (iss == NULL)
		return -ENOMEM;
	if (pthread_mutex_init(&iss->lock, NULL) != 0) {
		free(iss);
		return -ENOMEM;
	}
	memcpy(iss->system_id, system_id, OSD_SYSTEM_ID_LEN);
	*out = iss;
	return 0;
}

void osd_cred_issuer_free(osd_cred_issuer *iss)
{
	size_t i, v;

	if (iss == NULL)
		return;
	osd_key_free(iss->root);
	for (i = 0; i < iss->nparts; i++) {
		osd_key_free(iss->parts[i].partition_key);
		for (v = 0; v < OSD_WORKING_KEYS; v++)
			osd_key_free(iss->parts[i].working[v]);
	}
	free(iss->parts);
	pthread_mutex_destroy(&iss->lock);
	OPENSSL_cleanse(iss, sizeof(*iss));
	free(iss);
}

/* Index of the first partition with id >= @id (binary search). */
static size_t osd_issuer__lower_bound(const osd_cred_issuer *iss, uint64_t id)
{
	size_t lo = 0, hi = iss->nparts;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (iss->parts[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static struct osd_issuer_partition *osd_issuer__find(osd_cred_issuer *iss, uint64_t id)
{
	size_t i = osd_issuer__lower_bound(iss, id);

	return (i < iss->nparts && iss->parts[i].id == id) ? &iss->parts[i] : NULL;
}

static struct osd_issuer_partition *osd_issuer__get_or_add(osd_cred_issuer *iss, uint64_t id)
{
	size_t i = osd_issuer__lower_bound(iss, id);

	if (i < iss->nparts && iss->parts[i].id == id)
		return &iss->parts[i];
	if (iss->nparts == iss->cap) {
		size_t ncap = iss->cap ? iss->cap * 2 : 4;
		struct osd_issuer_partition *np = realloc(iss->parts, ncap * sizeof(*np));

		if (np == NULL)
			return NULL;
		iss->parts = np;
		iss->cap = ncap;
	}
	memmove(&iss->parts[i + 1], &iss->parts[i], (iss->nparts - i) * sizeof(*iss->parts));
	memset(&iss->parts[i], 0, sizeof(*iss->parts));
	iss->parts[i].id = id;
	iss->nparts++;
	return &iss->parts[i];
}

/* Replace *@slot with a key made from @key; the old key is freed (wiped). */
static int osd_issuer__install(osd_key **slot, const uint8_t key[OSD_HMAC_LEN])
{
	osd_key *k;
	int rc = osd_key_new(&k, key, OSD_HMAC_LEN);

	if (rc < 0)
		return rc;
	osd_key_free(*slot);
	*slot = k;
	return 0;
}

int osd_cred_issuer_set_root_key(osd_cred_issuer *iss, const uint8_t key[OSD_HMAC_LEN])
{
	int rc;

	if (iss == NULL || key == NULL)
		return -EINVAL;
	pthread_mutex_lock(&iss->lock);
	rc = osd_issuer__install(&iss->root, key);
	pthread_mutex_unlock(&iss->lock);
	return rc;
}

/* Install @key as @partition's partition key (@version < 0) or working key. */
static int osd_issuer__install_partition(osd_cred_issuer *iss, uint64_t partition,
					 int version, const uint8_t key[OSD_HMAC_LEN])
{
	struct osd_issuer_partition *p;
	int rc = -ENOMEM;

	pthread_mutex_lock(&iss->lock);
	p = osd_issuer__get_or_add(iss, partition);
	if (p != NULL)
		rc = osd_issuer__install(version < 0 ? &p->partition_key : &p->working[version],
					 key);
	pthread_mutex_unlock(&iss->lock);
	return rc;
}

int osd_cred_issuer_set_working_key(osd_cred_issuer *iss, uint64_t partition,
				    uint8_t version, const uint8_t key[OSD_HMAC_LEN])
{
	/* Partition 0 is the root: it has the root key, not working keys. */
	if (iss == NULL || key == NULL || partition == 0 || version >= OSD_WORKING_KEYS)
		return -EINVAL;
	return osd_issuer__install_partition(iss, partition, version, key);
}

int osd_cred_issuer_set_partition_key(osd_cred_issuer *iss, uint64_t partition,
				      const uint8_t key[OSD_HMAC_LEN])
{
	if (iss == NULL || key == NULL || partition == 0)
		return -EINVAL;
	return osd_issuer__install_partition(iss, partition, -1, key);
}

static int osd_issuer__check_request(const struct osd_cred_request *req)
{
	if (req->version != OSD_V1 && req->version != OSD_V2)
		return -EINVAL;
	if ((unsigned)req->method > OSD_SEC_ALLDATA || req->key_version >= OSD_WORKING_KEYS)
		return -EINVAL;
	if (req->expiration > OSD_TIME_MAX || req->object_created > OSD_TIME_MAX)
		return -EINVAL;
	/* Bits 1-0 are reserved; M_OBJECT, QUERY and GBL_REM do not exist in v1. */
	if ((req->permissions & ~OSD_PERM_ALL_V2) != 0 ||
	    (req->version == OSD_V1 && (req->permissions & OSD_PERM_V2_ONLY) != 0))
		return -EINVAL;
	/* The root is (0,0); partitions and the root are never collections. */
	if (req->obj.partition == 0 && req->obj.id != 0)
		return -EINVAL;
	if (req->is_collection && req->obj.id == 0)
		return -EINVAL;
	return 0;
}

/*
 * The secret docs/security.md 2.2 selects (lock held): for an ordinary
 * credential (@key_to_set 0) the root key for the root and the working key
 * otherwise; for SET KEY the parent of the key being set.
 */
static osd_key *osd_issuer__secret(osd_cred_issuer *iss, const struct osd_cred_request *req,
				   uint8_t key_to_set)
{
	struct osd_issuer_partition *p;

	if (req->obj.partition == 0 || key_to_set == OSD_KEY_PARTITION)
		return iss->root;
	p = osd_issuer__find(iss, req->obj.partition);
	if (p == NULL)
		return NULL;
	return key_to_set == OSD_KEY_WORKING ? p->partition_key : p->working[req->key_version];
}

static int osd_issuer__issue(osd_cred_issuer *iss, const struct osd_cred_request *req,
			     uint8_t key_to_set, struct osd_credential *out)
{
	struct osd_credential cred;
	osd_key *secret;
	int rc;

	memset(&cred, 0, sizeof(cred));
	cred.version = req->version;
	memcpy(cred.system_id, iss->system_id, OSD_SYSTEM_ID_LEN);
	osd_capability_init(&cred.cap, req->version, &req->obj, req->is_collection,
			    req->permissions, req->method);
	cred.cap.key_version = req->key_version;
	cred.cap.icv_algorithm = OSD_ICV_ALG_HMAC_SHA1;
	cred.cap.expiration = req->expiration;
	cred.cap.object_created = req->object_created;
	cred.cap.policy_access_tag = req->policy_access_tag;
	/* A random discriminator makes every issued capability (and key) unique. */
	if (RAND_bytes(cred.cap.discriminator, sizeof(cred.cap.discriminator)) != 1)
		return -EIO;
	rc = 0;
	if (req->method != OSD_SEC_NOSEC) {
		pthread_mutex_lock(&iss->lock);
		secret = osd_issuer__secret(iss, req, key_to_set);
		rc = secret ? osd_capability_key(secret, req->version, &cred.cap, iss->system_id,
						 cred.cap_key)
			    : -ENOKEY;
		pthread_mutex_unlock(&iss->lock);
	}
	if (rc == 0)
		*out = cred;
	OPENSSL_cleanse(&cred, sizeof(cred));
	return rc;
}

int osd_cred_issue(osd_cred_issuer *iss, const struct osd_cred_request *req,
		   struct osd_credential *out)
{
	int rc;

	if (iss == NULL || req == NULL || out == NULL)
		return -EINVAL;
	rc = osd_issuer__check_request(req);
	if (rc < 0)
		return rc;
	return osd_issuer__issue(iss, req, 0, out);
}

int osd_cred_issue_set_key(osd_cred_issuer *iss, const struct osd_cred_request *req,
			   uint8_t key_to_set, struct osd_credential *out)
{
	int rc;

	if (iss == NULL || req == NULL || out == NULL)
		return -EINVAL;
	if (key_to_set == OSD_KEY_ROOT)
		return -ENOTSUP; /* parent would be the master key */
	if (key_to_set != OSD_KEY_PARTITION && key_to_set != OSD_KEY_WORKING)
		return -EINVAL;
	rc = osd_issuer__check_request(req);
	if (rc < 0)
		return rc;
	/* SET KEY of partition and working keys addresses the partition (P,0). */
	if (req->obj.partition == 0 || req->obj.id != 0)
		return -EINVAL;
	return osd_issuer__issue(iss, req, key_to_set, out);
}
