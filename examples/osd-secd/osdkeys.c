/*
 * The daemon's own commands to its OSDs (those with a target URL in the key
 * store).
 *
 * Keying a partition (docs/security-manager.md section 3.2): the first time
 * a client asks for a capability in partition P, the daemon installs P's
 * partition key and working key 0 with SET KEY, with the same seeds as the
 * tools' --key-file (osd_keyring_set_partition_keys(), so installing them
 * again changes nothing), and raises P's default security method to CAPKEY
 * if it is lower: a partition created through the manager (osdfs mkfs) is
 * then keyed like one created with --key-file, and never left to NOSEC.
 *
 * Working key rotation (docs/security-manager.md section 3.6): for each
 * partition the daemon keyed, SET KEY installs working key v+1 (mod 16)
 * from a random seed under the partition key (docs/security.md 2.1), the
 * daemon derives the same key, and capabilities are signed with it from then
 * on. Capabilities signed with v stay valid until they expire, since the OSD
 * keeps all 16 working keys: clients see no error and pick up v+1 when the
 * refresher renews their credentials.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <openssl/rand.h>
#include "secd.h"
#include "toolcommon.h"

#define OSD_CMD_TIMEOUT_MS 5000
static pthread_mutex_t osd_ops = PTHREAD_MUTEX_INITIALIZER; /* one at a time */

static int open_osd(const struct secd_system *s, osd_dev **dev)
{
	struct osd_iscsi_options io = OSD_ISCSI_OPTIONS_INIT;
	struct osd_dev_options o = OSD_DEV_OPTIONS_INIT;
	struct osd_transport tp;
	int rc = osd_iscsi_transport_new(&tp, s->target, &io);

	o.timeout_ms = OSD_CMD_TIMEOUT_MS; /* a client waits for its answer meanwhile */
	if (rc == 0 && (rc = osd_dev_open(dev, &tp, &o)) < 0)
		tp.ops->destroy(tp.impl);
	return rc;
}

/* SET KEY of working key @p v of @p partition; *child is the new key. */
static int set_working_key(struct secd_system *s, osd_dev *dev, uint64_t partition, uint8_t v,
			   uint8_t child[OSD_HMAC_LEN])
{
	struct osd_set_key_params p;
	struct osd_cred_request r;
	struct osd_credential cr;
	uint8_t pkey[OSD_HMAC_LEN], w0[OSD_HMAC_LEN];
	osd_key *pk = NULL;
	osd_req *req = NULL;
	int rc;

	memset(&p, 0, sizeof(p));
	p.key_to_set = OSD_KEY_WORKING;
	p.partition = partition;
	p.key_version = v;
	if (RAND_bytes(p.seed, sizeof(p.seed)) != 1 || RAND_bytes(p.key_id, sizeof(p.key_id)) != 1)
		return -EIO;
	memset(&r, 0, sizeof(r));
	r.version = osd_dev_version(dev);
	r.obj.partition = partition;
	r.permissions = OSD_PERM_POL_SEC;
	r.method = OSD_SEC_ALLDATA; /* accepted whatever the partition's default method */
	r.expiration = osd_now_ms() + 60000;
	rc = osd_cred_issue_set_key(s->iss, &r, OSD_KEY_WORKING, &cr);
	if (rc == 0)
		rc = osd_req_set_key(&req, dev, &p);
	if (rc == 0)
		rc = osd_req_set_credential(req, &cr);
	if (rc == 0)
		rc = osd_req_execute(req);
	if (rc < 0 && req)
		secd_log(SECD_ERR, "SET KEY of partition 0x%llx working key %u: %s",
			 (unsigned long long)partition, v, osd_req_error(req));
	osd_req_free(req);
	memset(&cr, 0, sizeof(cr));
	/* the child, as the OSD computed it, from the partition key */
	if (rc == 0)
		rc = osd_keyring_derive_keys(s->root_key, partition, 0, pkey, w0);
	if (rc == 0)
		rc = osd_key_new(&pk, pkey, OSD_HMAC_LEN);
	if (rc == 0)
		rc = osd_key_derive(pk, p.seed, p.key_id, OSD_KEY_WORKING, v, child);
	osd_key_free(pk);
	memset(pkey, 0, sizeof(pkey));
	memset(w0, 0, sizeof(w0));
	return rc;
}

int secd_rotate_system(struct secd_system *s)
{
	uint64_t parts[256];
	size_t n = 0;
	osd_dev *dev = NULL;
	int failed = 0, rc;

	if (!s->target[0])
		return 0;
	pthread_mutex_lock(&s->lock);
	for (size_t i = 0; i < s->npart && n < sizeof(parts) / sizeof(parts[0]); i++)
		parts[n++] = s->part[i].id;
	pthread_mutex_unlock(&s->lock);
	if (n == 0)
		return 0;
	pthread_mutex_lock(&osd_ops);
	if ((rc = open_osd(s, &dev)) < 0) {
		pthread_mutex_unlock(&osd_ops);
		secd_log(SECD_ERR, "rotation: cannot reach %s: %s", s->target, strerror(-rc));
		return (int)n;
	}
	for (size_t i = 0; i < n; i++) {
		uint8_t v, child[OSD_HMAC_LEN];

		if ((rc = secd_system_key_partition(s, parts[i], &v)) == 0) {
			v = (uint8_t)((v + 1) & 15);
			rc = set_working_key(s, dev, parts[i], v, child);
		}
		if (rc == 0)
			rc = secd_system_set_working(s, parts[i], v, child);
		memset(child, 0, sizeof(child));
		if (rc < 0) {
			secd_log(SECD_ERR, "rotation of partition 0x%llx on %s failed: %s",
				 (unsigned long long)parts[i], s->target, strerror(-rc));
			failed++;
			continue;
		}
		secd_log(SECD_NOTICE, "rotated partition 0x%llx on %s: capabilities are signed "
			 "with working key %u from now on", (unsigned long long)parts[i], s->target, v);
	}
	osd_dev_close(dev);
	pthread_mutex_unlock(&osd_ops);
	return failed;
}

/* Raises partition @p partition's default security method to CAPKEY
 * (0x30000005/1, docs/security.md section 5 check 2) if it is lower. */
static int secure_method(struct secd_system *s, osd_dev *dev, uint64_t partition)
{
	const uint32_t page = OSD_APAGE_PARTITION_BASE + OSD_APAGE_POLICY_SECURITY;
	struct osd_obj_id part = { partition, 0 };
	struct osd_cred_request r;
	struct osd_credential cr;
	uint8_t m = OSD_SEC_CAPKEY;
	struct osd_attr a;
	osd_req *req = NULL;
	int rc;

	memset(&r, 0, sizeof(r));
	r.version = osd_dev_version(dev);
	r.obj = part;
	r.permissions = OSD_PERM_GET_ATTR | OSD_PERM_SET_ATTR;
	r.method = OSD_SEC_ALLDATA;
	r.expiration = osd_now_ms() + 60000;
	rc = osd_cred_issue(s->iss, &r, &cr);
	if (rc == 0)
		rc = osd_req_get_attributes(&req, dev, &part);
	if (rc == 0)
		rc = osd_req_add_get_attr(req, page, OSD_ATTR_PS_DEFAULT_METHOD);
	if (rc == 0)
		rc = osd_req_set_credential(req, &cr);
	if (rc == 0)
		rc = osd_req_execute(req);
	if (rc == 0 && osd_req_find_attr(req, page, OSD_ATTR_PS_DEFAULT_METHOD, &a) == 0 &&
	    a.length == 1 && *(const uint8_t *)a.value >= OSD_SEC_CAPKEY)
		m = 0; /* strong enough already */
	osd_req_free(req);
	req = NULL;
	if (rc == 0 && m)
		rc = osd_req_set_attributes(&req, dev, &part);
	if (rc == 0 && m)
		rc = osd_req_add_set_attr(req, page, OSD_ATTR_PS_DEFAULT_METHOD, &m, 1);
	if (rc == 0 && m)
		rc = osd_req_set_credential(req, &cr);
	if (rc == 0 && m)
		rc = osd_req_execute(req);
	osd_req_free(req);
	memset(&cr, 0, sizeof(cr));
	return rc;
}

int secd_install_partition(struct secd_system *s, uint64_t partition)
{
	osd_keyring *kr = NULL;
	osd_dev *dev = NULL;
	int rc;

	if (!s->target[0] || partition == 0)
		return 0;
	pthread_mutex_lock(&osd_ops);
	if (secd_system_on_osd(s, partition)) {
		pthread_mutex_unlock(&osd_ops);
		return 0;
	}
	rc = open_osd(s, &dev);
	if (rc < 0) {
		pthread_mutex_unlock(&osd_ops);
		secd_log(SECD_WARNING, "cannot key partition 0x%llx: cannot reach %s: %s (trying "
			 "again in a few seconds)", (unsigned long long)partition, s->target,
			 strerror(-rc));
		return rc;
	}
	/* the tools' SET KEY sequence (libosd's keyring) with this system's root key;
	 * ALLDATA is accepted whatever the partition's default method */
	rc = osd_keyring_new(&kr, s->id, s->root_key, OSD_SEC_ALLDATA);
	if (rc == 0)
		rc = osd_keyring_set_partition_keys(kr, dev, partition, 0);
	osd_keyring_free(kr);
	if (rc == 0)
		rc = secure_method(s, dev, partition);
	osd_dev_close(dev);
	if (rc == 0) {
		secd_system_set_on_osd(s, partition);
		secd_log(SECD_NOTICE, "keyed partition 0x%llx on %s (partition key, working key 0, "
			 "default method at least capkey)", (unsigned long long)partition, s->target);
	} else {
		secd_system_install_retry(s, partition);
		secd_log(SECD_WARNING, "cannot key partition 0x%llx on %s: %s (it may not exist "
			 "yet)", (unsigned long long)partition, s->target, strerror(-rc));
	}
	pthread_mutex_unlock(&osd_ops);
	return rc;
}
