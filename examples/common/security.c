/*
 * The tools as their own security manager. With a root key (--key-file) the
 * device's credential source issues every credential itself: partition and
 * working keys are derived from the root key with SET KEY seeds that depend
 * only on the partition and key version, so any run holding the root key can
 * recompute them. The seed is "osdctl-key" | kind | version | partition
 * (big-endian); osdctl, osdfs and osdfs-mount all key partitions here, and
 * set each keyed partition's default security method, which is what the
 * target actually enforces.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "toolcommon.h"

static int hex_digit(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int tc_parse_hex(const char *hex, size_t nbytes, uint8_t *out)
{
	for (size_t i = 0; i < nbytes; i++) {
		int hi = hex_digit((unsigned char)hex[2 * i]);
		int lo = hi < 0 ? -1 : hex_digit((unsigned char)hex[2 * i + 1]);

		if (lo < 0)
			return -EINVAL;
		out[i] = (uint8_t)(hi << 4 | lo);
	}
	return 0;
}

int tc_secret_file_private(FILE *f, const char *path, const char *what)
{
	struct stat sb;

	if (fstat(fileno(f), &sb) != 0)
		return -errno;
	if (!(sb.st_mode & 077))
		return 0;
	tc_err("permissions %04o for '%s' are too open: a %s must not be readable or writable "
	       "by other users (chmod 600 %s)", (unsigned)(sb.st_mode & 07777), path, what, path);
	return -EPERM;
}

int tc_read_key_file(const char *path, uint8_t key[OSD_HMAC_LEN])
{
	uint8_t buf[2 * OSD_HMAC_LEN + 8];
	FILE *f = fopen(path, "rb");
	size_t len;
	int rc;

	if (!f)
		return -errno;
	if ((rc = tc_secret_file_private(f, path, "root key file")) < 0) {
		fclose(f);
		return rc;
	}
	len = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	while (len > 0 && (buf[len - 1] == '\n' || buf[len - 1] == '\r' || buf[len - 1] == ' '))
		len--;
	if (len == OSD_HMAC_LEN) {
		memcpy(key, buf, OSD_HMAC_LEN);
		return 0;
	}
	if (len != 2 * OSD_HMAC_LEN)
		return -EINVAL;
	return tc_parse_hex((const char *)buf, OSD_HMAC_LEN, key);
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

/* The partition key and working key @p version of @p partition. */
static int derive(const struct tc_device *d, uint64_t partition, uint8_t version,
		  uint8_t pkey[OSD_HMAC_LEN], uint8_t wkey[OSD_HMAC_LEN])
{
	uint8_t seed[OSD_SEED_LEN], id[OSD_KEY_ID_LEN];
	osd_key *root = NULL, *pk = NULL;
	int rc = osd_key_new(&root, d->root_key, OSD_HMAC_LEN);

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

static int ensure_working_key(struct tc_device *d, uint64_t partition)
{
	uint8_t pkey[OSD_HMAC_LEN], wkey[OSD_HMAC_LEN];
	int rc;

	for (unsigned i = 0; i < d->nkeyed; i++)
		if (d->keyed[i] == partition)
			return 0;
	rc = derive(d, partition, 0, pkey, wkey);
	if (rc == 0)
		rc = osd_cred_issuer_set_partition_key(d->iss, partition, pkey);
	if (rc == 0)
		rc = osd_cred_issuer_set_working_key(d->iss, partition, 0, wkey);
	if (rc == 0 && d->nkeyed < sizeof(d->keyed) / sizeof(d->keyed[0]))
		d->keyed[d->nkeyed++] = partition;
	memset(pkey, 0, sizeof(pkey));
	memset(wkey, 0, sizeof(wkey));
	return rc;
}

int tc_issue_credential(const struct osd_cred_request *want, struct osd_credential *out,
			void *payload)
{
	struct tc_device *d = payload;
	struct osd_cred_request root;
	int rc;

	if (!want->obj.partition && d->root_secured) {
		/* The root's own method (tc__device_probe_root), whatever --security says. */
		if (!d->have_key || d->root_key_refused) {
			d->root_refused = 1;
			return -ENOKEY;
		}
		root = *want;
		if (root.method < d->root_method)
			root.method = d->root_method;
		return osd_cred_issue(d->iss, &root, out);
	}
	if (want->method != OSD_SEC_NOSEC && !d->have_key)
		return -ENOKEY;
	if (want->obj.partition && want->method != OSD_SEC_NOSEC &&
	    (rc = ensure_working_key(d, want->obj.partition)) != 0)
		return rc;
	return osd_cred_issue(d->iss, want, out);
}

static int set_key(struct tc_device *d, uint64_t partition, uint8_t kind, uint8_t version)
{
	struct osd_set_key_params p;
	struct osd_cred_request r;
	struct osd_credential cr;
	osd_req *req = NULL;
	int rc;

	memset(&r, 0, sizeof(r));
	r.version = osd_dev_version(d->dev);
	r.obj.partition = partition;
	r.permissions = OSD_PERM_POL_SEC;
	r.method = d->method;
	memset(&p, 0, sizeof(p));
	p.key_to_set = kind;
	p.partition = partition;
	p.key_version = version;
	key_seed(kind, partition, version, p.seed, p.key_id);
	rc = osd_cred_issue_set_key(d->iss, &r, kind, &cr);
	if (rc == 0)
		rc = osd_req_set_key(&req, d->dev, &p);
	if (rc == 0)
		rc = osd_req_set_credential(req, &cr);
	if (rc == 0)
		rc = osd_req_execute(req);
	osd_req_free(req);
	return rc;
}

int tc_device_set_partition_keys(struct tc_device *d, uint64_t partition, uint8_t version)
{
	uint8_t pkey[OSD_HMAC_LEN], wkey[OSD_HMAC_LEN];
	int rc;

	if (!d->have_key)
		return -ENOKEY;
	rc = ensure_working_key(d, partition);
	if (rc == 0)
		rc = set_key(d, partition, OSD_KEY_PARTITION, 0);
	if (rc == 0)
		rc = set_key(d, partition, OSD_KEY_WORKING, version);
	if (rc == 0 && version != 0)
		rc = derive(d, partition, version, pkey, wkey);
	if (rc == 0 && version != 0)
		rc = osd_cred_issuer_set_working_key(d->iss, partition, version, wkey);
	memset(pkey, 0, sizeof(pkey));
	memset(wkey, 0, sizeof(wkey));
	return rc;
}

/*
 * The target enforces a partition's default security method (NOSEC while
 * unset), not its keys: without this attribute a NOSEC client could still
 * use a keyed partition. Set with a credential signed by its working key.
 */
static int set_default_method(struct tc_device *d, uint64_t partition)
{
	struct osd_obj_id part = { partition, 0 };
	uint8_t m = (uint8_t)d->method;

	return osd_set_attr(d->dev, &part, OSD_APAGE_PARTITION_BASE + OSD_APAGE_POLICY_SECURITY,
			    OSD_ATTR_PS_DEFAULT_METHOD, &m, 1);
}

int tc_device_secure_partition(struct tc_device *d, uint64_t partition)
{
	int rc = d->method == OSD_SEC_NOSEC ? 0 : tc_device_set_partition_keys(d, partition, 0);

	return rc ? rc : set_default_method(d, partition);
}

int tc_device_setup_partition(struct tc_device *d, uint64_t partition)
{
	osd_req *req;
	int rc = osd_req_create_partition(&req, d->dev, partition);

	if (rc == 0) {
		rc = osd_req_execute(req);
		osd_req_free(req);
	}
	if (rc == -EEXIST)
		rc = 0; /* keyed again below: the keys follow from this root key */
	return rc ? rc : tc_device_secure_partition(d, partition);
}

int tc_device_install_root_key(struct tc_device *d)
{
	return d->have_key && d->tgt ? osd_target_set_root_key(d->tgt, d->root_key) : 0;
}

/* GET ATTRIBUTES of the root's default security method, signed with @p method. */
static int root_method_get(struct tc_device *d, enum osd_sec_method method, uint8_t *out)
{
	const uint32_t pol = OSD_APAGE_ROOT_BASE + OSD_APAGE_POLICY_SECURITY;
	struct osd_obj_id root = { 0, 0 };
	struct osd_cred_request r;
	struct osd_credential cr;
	struct osd_attr a;
	osd_req *req = NULL;
	int rc;

	memset(&r, 0, sizeof(r));
	r.version = osd_dev_version(d->dev);
	r.obj = root;
	r.permissions = OSD_PERM_GET_ATTR;
	r.method = method;
	rc = osd_cred_issue(d->iss, &r, &cr);
	if (rc == 0)
		rc = osd_req_get_attributes(&req, d->dev, &root);
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
int tc__device_probe_root(struct tc_device *d)
{
	uint8_t m;
	int rc = -EACCES;

	d->root_method = d->method;
	if (d->have_key && (rc = root_method_get(d, OSD_SEC_CAPKEY, &m)) == -EACCES)
		rc = root_method_get(d, OSD_SEC_ALLDATA, &m);
	if (rc == 0) {
		d->root_secured = 1;
		if (m > OSD_SEC_ALLDATA)
			m = OSD_SEC_ALLDATA;
		d->root_method = m > OSD_SEC_CAPKEY ? (enum osd_sec_method)m : OSD_SEC_CAPKEY;
		if (d->root_method < d->method)
			d->root_method = d->method;
		return 0;
	}
	if (rc != -EACCES)
		return 0; /* not decisive (a transport fault): the commands will tell */
	if (root_method_get(d, OSD_SEC_NOSEC, &m) == -EACCES) {
		d->root_secured = 1;
		d->root_key_refused = d->have_key;
	}
	return 0;
}

int tc_device_fail(const struct tc_device *d, int rc, const char *what)
{
	const char *detail = d && d->dev ? osd_dev_error(d->dev) : "";
	char cause[300];

	if (d && d->root_refused) {
		if (d->have_key)
			tc_err("%s: %s: the OSD's root is secured and refused the root key of "
			       "--key-file (a different key?)", what, strerror(EACCES));
		else
			tc_err("%s: %s: the OSD's root is secured: --key-file with the root key is "
			       "needed", what, strerror(EACCES));
		return TC_EXIT_FAILED;
	}

	if (rc == -EACCES) {
		tc_err("%s: %s: the target refused the credential (the partition needs a "
		       "stronger --security method than %s, or a different --key-file)", what,
		       strerror(EACCES), tc_security_name(d ? d->method : OSD_SEC_NOSEC));
		return TC_EXIT_FAILED;
	}
	tc__iscsi_cause(d ? &d->tp : NULL, rc, cause, sizeof(cause));
	if (*detail)
		tc_err("%s: %s%s", what, detail, cause);
	else
		tc_err("%s: %s%s", what, strerror(rc < 0 ? -rc : rc), cause);
	return TC_EXIT_FAILED;
}
