/*
 * The tools as their own security manager: libosd's keyring (osd/keyring.h)
 * derives every partition and working key from the root key of --key-file,
 * so osdctl, osdfs, osdfs-mount and applications using the libraries'
 * entry points all compute the same keys. Here: the tools' use of it, and
 * what they say when the target refuses a credential.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

int tc_device_set_partition_keys(struct tc_device *d, uint64_t partition, uint8_t version)
{
	if (!d->kr)
		return -ENOKEY; /* a security manager's client holds no key */
	return osd_keyring_set_partition_keys(d->kr, d->dev, partition, version);
}

int tc_device_secure_partition(struct tc_device *d, uint64_t partition)
{
	if (d->mgr)
		return 0; /* osd-secd keys what it grants (docs/security-manager.md 3.2) */
	return osd_keyring_secure_partition(d->kr, d->dev, partition);
}

int tc_device_setup_partition(struct tc_device *d, uint64_t partition)
{
	osd_req *req;
	int rc;

	if (!d->mgr)
		return osd_keyring_setup_partition(d->kr, d->dev, partition);
	/* osd-secd keys the partition when it first grants in it */
	rc = osd_req_create_partition(&req, d->dev, partition);
	if (rc == 0) {
		rc = osd_req_execute(req);
		osd_req_free(req);
	}
	return rc == -EEXIST ? 0 : rc;
}

int tc_device_has_key(const struct tc_device *d)
{
	return osd_keyring_has_root_key(d->kr);
}

int tc_device_install_root_key(struct tc_device *d)
{
	uint8_t key[OSD_HMAC_LEN];
	char err[512];
	int rc;

	if (!d->tgt || !d->key_file)
		return 0;
	rc = osd_keyring_read_key_file(d->key_file, key, err, sizeof(err));
	if (rc == 0)
		rc = osd_target_set_root_key(d->tgt, key);
	memset(key, 0, sizeof(key));
	return rc;
}

/*
 * -EACCES is the target's ACCESS DENIED (osd2r05 4.11.3): either the
 * credential (a weaker method than the partition's default, another key),
 * or an integrity check value that did not verify (sense INVALID FIELD IN
 * CDB on the capability or the integrity check value, which libosd names
 * in osd_dev_error()). Name which.
 */
static int refused(const struct tc_device *d, const char *what, const char *detail)
{
	if (*detail && strcasestr(detail, "integrity check value")) {
		tc_err("%s: %s: the target refused the integrity check of the command (%s): "
		       "the command or its data changed in transit, or --key-file is not the key "
		       "the partition was keyed with", what, strerror(EACCES), detail);
		return TC_EXIT_FAILED;
	}
	tc_err("%s: %s: the target refused the credential (the partition needs a "
	       "stronger --security method than %s, or a different --key-file)", what,
	       strerror(EACCES), tc_security_name(d ? d->method : OSD_SEC_NOSEC));
	return TC_EXIT_FAILED;
}

int tc_device_fail(const struct tc_device *d, int rc, const char *what)
{
	const char *detail = d && d->dev ? osd_dev_error(d->dev) : "";
	unsigned root = d ? osd_keyring_root_state(d->kr) : 0;
	char cause[300];

	if (root & OSD_KEYRING_ROOT_REFUSED) {
		if (tc_device_has_key(d))
			tc_err("%s: %s: the OSD's root is secured and refused the root key of "
			       "--key-file (a different key?)", what, strerror(EACCES));
		else
			tc_err("%s: %s: the OSD's root is secured: --key-file with the root key is "
			       "needed", what, strerror(EACCES));
		return TC_EXIT_FAILED;
	}
	if (rc == -EACCES && d && d->mgr) {
		tc_err("%s: %s: %s", what, strerror(EACCES), *osd_secmgr_error(d->mgr) ?
		       osd_secmgr_error(d->mgr) : "the target refused the credential");
		return TC_EXIT_FAILED;
	}
	if (rc == -EACCES)
		return refused(d, what, detail);
	tc__iscsi_cause(d ? &d->tp : NULL, rc, cause, sizeof(cause));
	if (*detail)
		tc_err("%s: %s%s", what, detail, cause);
	else
		tc_err("%s: %s%s", what, strerror(rc < 0 ? -rc : rc), cause);
	return TC_EXIT_FAILED;
}
