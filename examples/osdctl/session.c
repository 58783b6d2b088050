/*
 * osdctl sessions: the embedded software target, its loopback transport, the
 * device, and the credentials osdctl issues itself from the root key.
 *
 * Key convention (so that every osdctl run can recompute the keys without
 * storing them): the partition key of P and its working keys are derived
 * with SET KEY from fixed seeds that depend only on P and the key version;
 * see derive_seed(). Anyone holding the root key can therefore issue
 * credentials for a partition that osdctl keyed.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "osdctl.h"

static int read_key_file(const char *path, uint8_t key[OSD_HMAC_LEN])
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf;
	size_t len, n = 0;
	int rc;

	if (!f)
		return -errno;
	rc = ctl_read_all(f, &buf, &len);
	fclose(f);
	if (rc)
		return rc;
	while (len && (buf[len - 1] == '\n' || buf[len - 1] == '\r' || buf[len - 1] == ' '))
		len--;
	if (len == OSD_HMAC_LEN) {
		memcpy(key, buf, OSD_HMAC_LEN);
	} else if (len == 2 * OSD_HMAC_LEN) {
		/* 40 hex digits */
		char hex[2 * OSD_HMAC_LEN + 3] = "0x";
		size_t got;

		memcpy(hex + 2, buf, len);
		hex[2 + len] = '\0';
		rc = ctl_parse_value(hex, 0, 0, key, OSD_HMAC_LEN, &got);
		n = got;
		if (rc == 0 && n != OSD_HMAC_LEN)
			rc = -EINVAL;
	} else {
		rc = -EINVAL;
	}
	free(buf);
	return rc;
}

/* Fixed SET KEY seed and key identifier for key @p kind of @p partition. */
static void derive_seed(uint8_t kind, uint64_t partition, uint8_t version,
			uint8_t seed[OSD_SEED_LEN], uint8_t key_id[OSD_KEY_ID_LEN])
{
	memset(seed, 0, OSD_SEED_LEN);
	memcpy(seed, "osdctl-key", 10);
	seed[10] = kind;
	seed[11] = version;
	for (int i = 0; i < 8; i++)
		seed[12 + i] = (uint8_t)(partition >> (56 - 8 * i));
	key_id[0] = kind;
	for (int i = 0; i < 6; i++)
		key_id[1 + i] = (uint8_t)(partition >> (40 - 8 * i));
	key_id[6] = (uint8_t)(key_id[6] ^ version);
}

/* Derive the partition key and working key @p version of @p partition. */
static int derive_keys(struct ctl_session *s, uint64_t partition, uint8_t version,
		       uint8_t pkey[OSD_HMAC_LEN], uint8_t wkey[OSD_HMAC_LEN])
{
	uint8_t seed[OSD_SEED_LEN], id[OSD_KEY_ID_LEN];
	osd_key *root = NULL, *pk = NULL;
	int rc = osd_key_new(&root, s->root_key, OSD_HMAC_LEN);

	derive_seed(OSD_KEY_PARTITION, partition, 0, seed, id);
	if (rc == 0)
		rc = osd_key_derive(root, seed, id, OSD_KEY_PARTITION, 0, pkey);
	if (rc == 0)
		rc = osd_key_new(&pk, pkey, OSD_HMAC_LEN);
	derive_seed(OSD_KEY_WORKING, partition, version, seed, id);
	if (rc == 0)
		rc = osd_key_derive(pk, seed, id, OSD_KEY_WORKING, version, wkey);
	osd_key_free(pk);
	osd_key_free(root);
	return rc;
}

static int ensure_working_key(struct ctl_session *s, uint64_t partition)
{
	uint8_t pkey[OSD_HMAC_LEN], wkey[OSD_HMAC_LEN];
	int rc;

	for (unsigned i = 0; i < s->nkeyed; i++)
		if (s->keyed_partitions[i] == partition)
			return 0;
	rc = derive_keys(s, partition, 0, pkey, wkey);
	if (rc == 0)
		rc = osd_cred_issuer_set_working_key(s->iss, partition, 0, wkey);
	if (rc == 0 && s->nkeyed < sizeof(s->keyed_partitions) / sizeof(s->keyed_partitions[0]))
		s->keyed_partitions[s->nkeyed++] = partition;
	return rc;
}

/* The device's credential source: osdctl is its own security manager. */
static int issue(const struct osd_cred_request *want, struct osd_credential *out, void *p)
{
	struct ctl_session *s = p;
	struct osd_cred_request r = *want;
	int rc;

	if (r.method != OSD_SEC_NOSEC && !s->have_root_key)
		return -ENOKEY;
	if (r.obj.partition && r.method != OSD_SEC_NOSEC &&
	    (rc = ensure_working_key(s, r.obj.partition)) != 0)
		return rc;
	return osd_cred_issue(s->iss, &r, out);
}

/* A SET KEY credential for (P,0), signed with the parent of the key set. */
static int set_key_cred(struct ctl_session *s, uint64_t partition, uint8_t key_to_set,
			struct osd_credential *cr)
{
	struct osd_cred_request r;

	memset(&r, 0, sizeof(r));
	r.version = osd_dev_version(s->dev);
	r.obj.partition = partition;
	r.permissions = OSD_PERM_POL_SEC;
	r.method = s->method;
	return osd_cred_issue_set_key(s->iss, &r, key_to_set, cr);
}

static int run_set_key(struct ctl_session *s, const struct osd_set_key_params *p,
		       const struct osd_credential *cr)
{
	osd_req *req;
	int rc = osd_req_set_key(&req, s->dev, p);

	if (rc == 0)
		rc = osd_req_set_credential(req, cr);
	if (rc == 0)
		rc = osd_req_execute(req);
	osd_req_free(req);
	return rc;
}

int ctl_set_partition_keys(struct ctl_session *s, uint64_t partition, unsigned key_version)
{
	struct osd_set_key_params p;
	struct osd_credential cr;
	uint8_t pkey[OSD_HMAC_LEN], wkey[OSD_HMAC_LEN];
	int rc;

	if (!s->have_root_key)
		return -ENOKEY;
	rc = derive_keys(s, partition, (uint8_t)key_version, pkey, wkey);
	/* partition key: parent is the root key */
	memset(&p, 0, sizeof(p));
	p.key_to_set = OSD_KEY_PARTITION;
	p.partition = partition;
	derive_seed(OSD_KEY_PARTITION, partition, 0, p.seed, p.key_id);
	if (rc == 0)
		rc = set_key_cred(s, partition, OSD_KEY_PARTITION, &cr);
	if (rc == 0)
		rc = run_set_key(s, &p, &cr);
	if (rc == 0)
		rc = osd_cred_issuer_set_partition_key(s->iss, partition, pkey);
	/* working key: parent is the partition key */
	p.key_to_set = OSD_KEY_WORKING;
	p.key_version = (uint8_t)key_version;
	derive_seed(OSD_KEY_WORKING, partition, (uint8_t)key_version, p.seed, p.key_id);
	if (rc == 0)
		rc = set_key_cred(s, partition, OSD_KEY_WORKING, &cr);
	if (rc == 0)
		rc = run_set_key(s, &p, &cr);
	if (rc == 0)
		rc = osd_cred_issuer_set_working_key(s->iss, partition, (uint8_t)key_version, wkey);
	memset(pkey, 0, sizeof(pkey));
	memset(wkey, 0, sizeof(wkey));
	return rc;
}

int ctl_bootstrap_root_key(struct ctl_session *s)
{
	if (!s->have_root_key)
		return 0;
	return osd_target_set_root_key(s->tgt, s->root_key);
}

int ctl_open(struct ctl_session *s, const struct ctl_opts *o, int create)
{
	struct osd_target_options to = OSD_TARGET_OPTIONS_INIT;
	struct osd_dev_options d = OSD_DEV_OPTIONS_INIT;
	struct osd_transport tp;
	int rc;

	memset(s, 0, sizeof(*s));
	s->method = o->security;
	if (o->key_file) {
		rc = read_key_file(o->key_file, s->root_key);
		if (rc) {
			fprintf(stderr, "osdctl: %s: %s\n", o->key_file,
				rc == -EINVAL ? "a key file holds 20 bytes or 40 hex digits"
					      : strerror(-rc));
			return rc;
		}
		s->have_root_key = 1;
	}
	to.create = create;
	rc = osd_target_open(&s->tgt, o->target_dir, &to);
	if (rc) {
		if (rc == -ENOENT)
			fprintf(stderr, "osdctl: no OSD store in %s (create one with 'osdctl format')\n",
				o->target_dir);
		else
			fprintf(stderr, "osdctl: cannot open the target in %s: %s\n", o->target_dir,
				strerror(-rc));
		return rc;
	}
	osd_target_system_id(s->tgt, s->system_id);
	rc = osd_cred_issuer_new(&s->iss, s->system_id);
	if (rc == 0 && s->have_root_key)
		rc = osd_cred_issuer_set_root_key(s->iss, s->root_key);
	if (rc == 0 && create)
		rc = ctl_bootstrap_root_key(s);
	if (rc == 0)
		rc = osd_target_loopback(s->tgt, &tp);
	if (rc) {
		fprintf(stderr, "osdctl: cannot set up the target: %s\n", strerror(-rc));
		ctl_close(s);
		return rc;
	}
	d.osd_version = o->osd_version;
	d.security = o->security;
	d.cred_source = issue;
	d.cred_payload = s;
	rc = osd_dev_open(&s->dev, &tp, &d);
	if (rc) {
		fprintf(stderr, "osdctl: cannot open the OSD: %s\n", strerror(-rc));
		tp.ops->destroy(tp.impl);
		ctl_close(s);
		return rc;
	}
	return 0;
}

void ctl_close(struct ctl_session *s)
{
	osd_dev_close(s->dev);
	osd_target_close(s->tgt);
	osd_cred_issuer_free(s->iss);
	memset(s->root_key, 0, sizeof(s->root_key));
	s->dev = NULL;
	s->tgt = NULL;
	s->iss = NULL;
}

int ctl_fail(struct ctl_session *s, const char *what, int rc)
{
	const char *msg = s && s->dev ? osd_dev_error(s->dev) : "";

	fprintf(stderr, "osdctl: %s: %s\n", what, *msg ? msg : strerror(-rc));
	return EXIT_FAILED;
}
