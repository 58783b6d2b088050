/*
 * The keyring: a security manager holding an OSD's root key. Partition and
 * working keys are derived from the root key (osd2r05 4.11.7) with SET KEY
 * seeds that depend only on the partition and key version, so any program
 * holding the root key recomputes them. The seed is "osdctl-key" | kind |
 * version | partition (big-endian); osdctl, osdfs and osdfs-mount keyed
 * partitions this way before the scheme moved here, so it must not change.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <osd/keyring.h>
#include <osd/attributes.h>

#define KEYED_MAX 64 /* partitions whose derived keys are cached */

struct osd_keyring {
	osd_cred_issuer *iss;
	enum osd_sec_method method;
	uint8_t root_key[OSD_HMAC_LEN];
	int have_key;
	uint64_t keyed[KEYED_MAX];  /* partitions whose keys the issuer holds */
	unsigned nkeyed;
	unsigned root_state;        /* OSD_KEYRING_ROOT_* */
	enum osd_sec_method root_method; /* what root commands are signed with */
};

int osd_keyring_new(osd_keyring **out, const uint8_t system_id[OSD_SYSTEM_ID_LEN],
		    const uint8_t *root_key, enum osd_sec_method method)
{
	osd_keyring *kr;
	int rc;

	if (!out || !system_id || method > OSD_SEC_ALLDATA)
		return -EINVAL;
	kr = calloc(1, sizeof(*kr));
	if (!kr)
		return -ENOMEM;
	kr->method = method;
	kr->root_method = method;
	rc = osd_cred_issuer_new(&kr->iss, system_id);
	if (rc == 0 && root_key) {
		memcpy(kr->root_key, root_key, OSD_HMAC_LEN);
		kr->have_key = 1;
		rc = osd_cred_issuer_set_root_key(kr->iss, root_key);
	}
	if (rc < 0) {
		osd_keyring_free(kr);
		return rc;
	}
	*out = kr;
	return 0;
}

void osd_keyring_free(osd_keyring *kr)
{
	if (!kr)
		return;
	osd_cred_issuer_free(kr->iss);
	memset(kr, 0, sizeof(*kr));
	free(kr);
}

/* SET KEY seed and key identifier of key @p kind of @p partition. */
static void key_seed(uint8_t kind, uint64_t partition, uint8_t version,
		     uint8_t seed[OSD_SEED_LEN], uint8_t key_id[OSD_KEY_ID_LEN])
{
	memset(seed, 0, OSD_SEED_LEN);
	memcpy(seed, "osdctl-key", 10);
	seed[10] = kind;
	seed[11] = version;
	for (int i = 0; i < 8; i++)
		seed[12 + i] = (uint8_t)(partition >> (56 - 8 * i));
	memset(key_id, 0, OSD_KEY_ID_LEN);
	key_id[0] = kind;
	for (int i = 0; i < 6; i++)
		key_id[1 + i] = (uint8_t)(partition >> (40 - 8 * i));
	key_id[6] = (uint8_t)(key_id[6] ^ version);
}

int osd_keyring_derive_keys(const uint8_t root_key[OSD_HMAC_LEN], uint64_t partition,
			    uint8_t version, uint8_t pkey[OSD_HMAC_LEN], uint8_t wkey[OSD_HMAC_LEN])
{
	uint8_t seed[OSD_SEED_LEN], id[OSD_KEY_ID_LEN];
	osd_key *root = NULL, *pk = NULL;
	int rc;

	if (!root_key || !partition || version > 15 || !pkey || !wkey)
		return -EINVAL;
	rc = osd_key_new(&root, root_key, OSD_HMAC_LEN);

	key_seed(OSD_KEY_PARTITION, partition, 0, seed, id);
	if (rc == 0)
		rc = osd_key_derive(root, seed, id, OSD_KEY_PARTITION, 0, pkey);
	if (rc == 0)
		rc = osd_key_new(&pk, pkey, OSD_HMAC_LEN);
	key_seed(OSD_KEY_WORKING, partition, version, seed, id);
	if (rc == 0)
		rc = osd_key_derive(pk, seed, id, OSD_KEY_WORKING, version, wkey);
	osd_key_free(pk);
	osd_key_free(root);
	return rc;
}

/* The partition key and working key @p version of @p partition. */
static int derive(const osd_keyring *kr, uint64_t partition, uint8_t version,
		  uint8_t pkey[OSD_HMAC_LEN], uint8_t wkey[OSD_HMAC_LEN])
{
	return osd_keyring_derive_keys(kr->root_key, partition, version, pkey, wkey);
}

static int ensure_working_key(osd_keyring *kr, uint64_t partition)
{
	uint8_t pkey[OSD_HMAC_LEN], wkey[OSD_HMAC_LEN];
	int rc;

	for (unsigned i = 0; i < kr->nkeyed; i++)
		if (kr->keyed[i] == partition)
			return 0;
	rc = derive(kr, partition, 0, pkey, wkey);
	if (rc == 0)
		rc = osd_cred_issuer_set_partition_key(kr->iss, partition, pkey);
	if (rc == 0)
		rc = osd_cred_issuer_set_working_key(kr->iss, partition, 0, wkey);
	if (rc == 0 && kr->nkeyed < KEYED_MAX)
		kr->keyed[kr->nkeyed++] = partition;
	memset(pkey, 0, sizeof(pkey));
	memset(wkey, 0, sizeof(wkey));
	return rc;
}

int osd_keyring_credential(const struct osd_cred_request *want, struct osd_credential *out,
			   void *keyring)
{
	osd_keyring *kr = keyring;
	struct osd_cred_request root;
	int rc;

	if (!kr || !want || !out)
		return -EINVAL;
	if (!want->obj.partition && (kr->root_state & OSD_KEYRING_ROOT_SECURED)) {
		/* the root's own method (osd_keyring_probe_root()), whatever was asked */
		if (!kr->have_key || (kr->root_state & OSD_KEYRING_ROOT_KEY_REFUSED)) {
			kr->root_state |= OSD_KEYRING_ROOT_REFUSED;
			return -ENOKEY;
		}
		root = *want;
		if (root.method < kr->root_method)
			root.method = kr->root_method;
		return osd_cred_issue(kr->iss, &root, out);
	}
	if (want->method != OSD_SEC_NOSEC && !kr->have_key)
		return -ENOKEY;
	if (want->obj.partition && want->method != OSD_SEC_NOSEC &&
	    (rc = ensure_working_key(kr, want->obj.partition)) != 0)
		return rc;
	return osd_cred_issue(kr->iss, want, out);
}

static int set_key(osd_keyring *kr, osd_dev *dev, uint64_t partition, uint8_t kind,
		   uint8_t version)
{
	struct osd_set_key_params p;
	struct osd_cred_request r;
	struct osd_credential cr;
	osd_req *req = NULL;
	int rc;

	memset(&r, 0, sizeof(r));
	r.version = osd_dev_version(dev);
	r.obj.partition = partition;
	r.permissions = OSD_PERM_POL_SEC;
	r.method = kr->method;
	memset(&p, 0, sizeof(p));
	p.key_to_set = kind;
	p.partition = partition;
	p.key_version = version;
	key_seed(kind, partition, version, p.seed, p.key_id);
	rc = osd_cred_issue_set_key(kr->iss, &r, kind, &cr);
	if (rc == 0)
		rc = osd_req_set_key(&req, dev, &p);
	if (rc == 0)
		rc = osd_req_set_credential(req, &cr);
	if (rc == 0)
		rc = osd_req_execute(req);
	osd_req_free(req);
	memset(&cr, 0, sizeof(cr));
	return rc;
}

int osd_keyring_set_partition_keys(osd_keyring *kr, osd_dev *dev, uint64_t partition,
				   uint8_t version)
{
	uint8_t pkey[OSD_HMAC_LEN], wkey[OSD_HMAC_LEN];
	int rc;

	if (!kr || !dev || !partition)
		return -EINVAL;
	if (!kr->have_key)
		return -ENOKEY;
	rc = ensure_working_key(kr, partition);
	if (rc == 0)
		rc = set_key(kr, dev, partition, OSD_KEY_PARTITION, 0);
	if (rc == 0)
		rc = set_key(kr, dev, partition, OSD_KEY_WORKING, version);
	if (rc == 0 && version != 0)
		rc = derive(kr, partition, version, pkey, wkey);
	if (rc == 0 && version != 0)
		rc = osd_cred_issuer_set_working_key(kr->iss, partition, version, wkey);
	memset(pkey, 0, sizeof(pkey));
	memset(wkey, 0, sizeof(wkey));
	return rc;
}

/*
 * The target enforces a partition's default security method (NOSEC while
 * unset), not its keys: without this attribute a NOSEC client could still
 * use a keyed partition (osd2r05 4.11.2, policy/security page attribute 1).
 */
static int set_default_method(osd_keyring *kr, osd_dev *dev, uint64_t partition)
{
	struct osd_obj_id part = { partition, 0 };
	uint8_t m = (uint8_t)kr->method;

	return osd_set_attr(dev, &part, OSD_APAGE_PARTITION_BASE + OSD_APAGE_POLICY_SECURITY,
			    OSD_ATTR_PS_DEFAULT_METHOD, &m, 1);
}

int osd_keyring_secure_partition(osd_keyring *kr, osd_dev *dev, uint64_t partition)
{
	int rc;

	if (!kr || !dev || !partition)
		return -EINVAL;
	rc = kr->method == OSD_SEC_NOSEC ? 0 :
		osd_keyring_set_partition_keys(kr, dev, partition, 0);
	return rc ? rc : set_default_method(kr, dev, partition);
}

int osd_keyring_setup_partition(osd_keyring *kr, osd_dev *dev, uint64_t partition)
{
	osd_req *req;
	int rc;

	if (!kr || !dev || !partition)
		return -EINVAL;
	rc = osd_req_create_partition(&req, dev, partition);
	if (rc == 0) {
		rc = osd_req_execute(req);
		osd_req_free(req);
	}
	if (rc == -EEXIST)
		rc = 0; /* keyed again below: the keys follow from this root key */
	return rc ? rc : osd_keyring_secure_partition(kr, dev, partition);
}

/* GET ATTRIBUTES of the root's default security method, signed with @p method. */
static int root_method_get(osd_keyring *kr, osd_dev *dev, enum osd_sec_method method,
			   uint8_t *out)
{
	const uint32_t pol = OSD_APAGE_ROOT_BASE + OSD_APAGE_POLICY_SECURITY;
	struct osd_obj_id root = { 0, 0 };
	struct osd_cred_request r;
	struct osd_credential cr;
	struct osd_attr a;
	osd_req *req = NULL;
	int rc;

	memset(&r, 0, sizeof(r));
	r.version = osd_dev_version(dev);
	r.obj = root;
	r.permissions = OSD_PERM_GET_ATTR;
	r.method = method;
	rc = osd_cred_issue(kr->iss, &r, &cr);
	if (rc == 0)
		rc = osd_req_get_attributes(&req, dev, &root);
	if (rc == 0)
		rc = osd_req_add_get_attr(req, pol, OSD_ATTR_PS_DEFAULT_METHOD);
	if (rc == 0)
		rc = osd_req_set_credential(req, &cr);
	if (rc == 0)
		rc = osd_req_execute(req);
	*out = OSD_SEC_NOSEC;
	if (rc == 0 && osd_req_find_attr(req, pol, OSD_ATTR_PS_DEFAULT_METHOD, &a) == 0 &&
	    a.length == 1)
		*out = *(const uint8_t *)a.value;
	osd_req_free(req);
	memset(&cr, 0, sizeof(cr));
	return rc;
}

/*
 * A root with a root key answers nothing but its system id and clock without
 * a credential, and needs at least CAPKEY (docs/security.md section 5). With
 * the root key, ask for the root's method under CAPKEY (no nonce, so no
 * dependence on the OSD clock), then, refused, under ALLDATA, which any
 * requirement accepts; refused again, or without a key, ask without a
 * credential: a refusal then means the root is secured (by another key).
 */
int osd_keyring_probe_root(osd_keyring *kr, osd_dev *dev)
{
	uint8_t m;
	int rc = -EACCES;

	if (!kr || !dev)
		return -EINVAL;
	kr->root_method = kr->method;
	if (kr->have_key && (rc = root_method_get(kr, dev, OSD_SEC_CAPKEY, &m)) == -EACCES)
		rc = root_method_get(kr, dev, OSD_SEC_ALLDATA, &m);
	if (rc == 0) {
		kr->root_state |= OSD_KEYRING_ROOT_SECURED;
		if (m > OSD_SEC_ALLDATA)
			m = OSD_SEC_ALLDATA;
		kr->root_method = m > OSD_SEC_CAPKEY ? (enum osd_sec_method)m : OSD_SEC_CAPKEY;
		if (kr->root_method < kr->method)
			kr->root_method = kr->method;
		return 0;
	}
	if (rc != -EACCES)
		return 0; /* not decisive (a transport fault): the commands will tell */
	if (root_method_get(kr, dev, OSD_SEC_NOSEC, &m) == -EACCES) {
		kr->root_state |= OSD_KEYRING_ROOT_SECURED;
		if (kr->have_key)
			kr->root_state |= OSD_KEYRING_ROOT_KEY_REFUSED;
	}
	return 0;
}

unsigned osd_keyring_root_state(const osd_keyring *kr)
{
	return kr ? kr->root_state : 0;
}

int osd_keyring_has_root_key(const osd_keyring *kr)
{
	return kr && kr->have_key;
}

enum osd_sec_method osd_keyring_method(const osd_keyring *kr)
{
	return kr ? kr->method : OSD_SEC_NOSEC;
}

osd_cred_issuer *osd_keyring_issuer(osd_keyring *kr)
{
	return kr ? kr->iss : NULL;
}
