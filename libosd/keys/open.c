/*
 * Opening a device with a keyring as its security manager: on any transport
 * (osd_dev_open_keyed()) or on an iSCSI URL (osd_dev_open_url()).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <osd/iscsi.h>
#include <osd/keyring.h>
#include "keys.h"
#include "request/private.h"

static int check_options(const struct osd_open_options *o)
{
	if (o->version < 1 || o->version > OSD_OPEN_OPTIONS_VERSION) {
		osd__keys_error(o->error, o->error_size, "unknown osd_open_options version %u",
				o->version);
		return -EINVAL;
	}
	if (o->security > OSD_SEC_ALLDATA) {
		osd__keys_error(o->error, o->error_size, "unknown security method %d",
				(int)o->security);
		return -EINVAL;
	}
	if (o->secmgr && (o->key_file || o->root_key)) {
		osd__keys_error(o->error, o->error_size, "a root key and a security manager "
				"exclude each other (one security manager per device)");
		return -EINVAL;
	}
	if (o->security != OSD_SEC_NOSEC && !o->key_file && !o->root_key && !o->secmgr) {
		osd__keys_error(o->error, o->error_size,
				"a security method other than nosec needs the root key");
		return -EINVAL;
	}
	return 0;
}

/*
 * The capability keys name the OSD by its system id, which only the target
 * knows: ask it with a NOSEC device borrowing @p tp (a secured root answers
 * a GET of its system id and clock alone without a credential, which is all
 * osd_dev_system_id() asks; a device without destroy operation leaves the
 * transport open), and learn the version on the way.
 */
static int probe_identity(struct osd_transport *tp, const struct osd_open_options *o,
			  uint8_t id[OSD_SYSTEM_ID_LEN], enum osd_version_select *version,
			  char note[OSD__ERR_LEN])
{
	struct osd_dev_options dopt = OSD_DEV_OPTIONS_INIT;
	struct osd_transport_ops borrowed = *tp->ops;
	struct osd_transport probe = { &borrowed, tp->impl };
	char why[OSD__ERR_LEN] = "";
	osd_dev *dev;
	int rc;

	borrowed.destroy = NULL;
	dopt.osd_version = o->osd_version;
	dopt.error = why;
	dopt.error_size = sizeof(why);
	rc = osd_dev_open(&dev, &probe, &dopt);
	if (rc < 0) {
		osd__keys_error(o->error, o->error_size, "cannot open the OSD device: %s",
				*why ? why : strerror(-rc));
		return rc;
	}
	/* right after the open the message is what version detection found out */
	snprintf(note, OSD__ERR_LEN, "%s", osd_dev_error(dev));
	rc = osd_dev_system_id(dev, id);
	if (rc < 0)
		osd__keys_error(o->error, o->error_size, "cannot read the OSD system id: %s",
				*osd_dev_error(dev) ? osd_dev_error(dev) : strerror(-rc));
	*version = osd_dev_version(dev) == OSD_V1 ? OSD_VERSION_1 : OSD_VERSION_2;
	osd_dev_close(dev);
	return rc;
}

/* Keeps the version note of the probe as the device's message (as osd_dev_open() does). */
static void keep_note(osd_dev *dev, const char *note)
{
	snprintf(dev->version_note, sizeof(dev->version_note), "%s", note);
	snprintf(dev->err, sizeof(dev->err), "%s", dev->version_note);
}

/*
 * The security manager as the credential source (osd_secmgr_attach()). A
 * failed attach leaves the transport to the caller, as a failed open does:
 * the device is closed on a copy of its operations without destroy.
 */
static int open_managed(osd_dev **out, struct osd_transport *tp, const struct osd_open_options *o,
			struct osd_dev_options *dopt, const char *note)
{
	struct osd_transport_ops borrowed;
	int rc;

	dopt->security = o->security;
	rc = osd_dev_open(out, tp, dopt);
	if (rc < 0) {
		osd__keys_error(o->error, o->error_size, "cannot open the OSD device: %s",
				strerror(-rc));
		return rc;
	}
	rc = osd_secmgr_attach(o->secmgr, *out);
	if (rc == 0) {
		keep_note(*out, note);
		return 0;
	}
	osd__keys_error(o->error, o->error_size, "%s", *osd_secmgr_error(o->secmgr) ?
			osd_secmgr_error(o->secmgr) : strerror(-rc));
	borrowed = *tp->ops;
	borrowed.destroy = NULL;
	(*out)->tp.ops = &borrowed;
	osd_dev_close(*out);
	*out = NULL;
	return rc;
}

int osd_dev_open_keyed(osd_dev **out, struct osd_transport *tp,
		       const struct osd_open_options *opts)
{
	static const struct osd_open_options defaults = OSD_OPEN_OPTIONS_INIT;
	const struct osd_open_options *o = opts ? opts : &defaults;
	struct osd_dev_options dopt = OSD_DEV_OPTIONS_INIT;
	uint8_t id[OSD_SYSTEM_ID_LEN], key[OSD_HMAC_LEN];
	const uint8_t *root_key = o->root_key;
	char note[OSD__ERR_LEN] = "";
	osd_keyring *kr = NULL;
	int rc;

	if (!out || !tp || !tp->ops)
		return -EINVAL;
	rc = check_options(o);
	if (rc == 0 && o->key_file) {
		rc = osd_keyring_read_key_file(o->key_file, key, o->error, o->error_size);
		root_key = key;
	}
	if (rc == 0)
		rc = probe_identity(tp, o, id, &dopt.osd_version, note);
	if (rc == 0 && o->secmgr)
		return open_managed(out, tp, o, &dopt, note);
	if (rc == 0) {
		rc = osd_keyring_new(&kr, id, root_key, o->security);
		if (rc < 0)
			osd__keys_error(o->error, o->error_size, "cannot set up the security "
					"manager: %s", strerror(-rc));
	}
	memset(key, 0, sizeof(key));
	if (rc < 0)
		return rc;
	dopt.security = o->security;
	dopt.cred_source = osd_keyring_credential;
	dopt.cred_payload = kr;
	rc = osd_dev_open(out, tp, &dopt);
	if (rc < 0) {
		osd__keys_error(o->error, o->error_size, "cannot open the OSD device: %s",
				strerror(-rc));
		osd_keyring_free(kr);
		return rc;
	}
	(*out)->keyring = kr;
	rc = osd_keyring_probe_root(kr, *out);
	keep_note(*out, note);
	return rc;
}

/* A transport to @p url with the options' iSCSI settings and CHAP secret file. */
static int connect_url(struct osd_transport *tp, const char *url,
		       const struct osd_open_options *o)
{
	struct osd_iscsi_options io = OSD_ISCSI_OPTIONS_INIT;
	char err[256] = "", secret[OSD__CHAP_SECRET_MAX + 2];
	int rc;

	if (o->iscsi)
		io = *o->iscsi;
	io.errbuf = err;
	io.errbuf_len = sizeof(err);
	if (o->chap_secret_file) {
		if (!io.chap_user) {
			osd__keys_error(o->error, o->error_size,
					"a CHAP secret file without a CHAP user name");
			return -EINVAL;
		}
		rc = osd__read_chap_secret(o->chap_secret_file, secret, sizeof(secret),
					   o->error, o->error_size);
		if (rc < 0)
			return rc;
		io.chap_secret = secret;
	}
	rc = osd_iscsi_transport_new(tp, url, &io);
	memset(secret, 0, sizeof(secret));
	if (rc == 0)
		return 0;
	if (rc == -EACCES)
		osd__keys_error(o->error, o->error_size, "the target refused the login%s%s",
				*err ? ": " : "", err);
	else if (*err)
		osd__keys_error(o->error, o->error_size, "cannot log in: %s", err);
	else
		osd__keys_error(o->error, o->error_size, "cannot log in: %s", strerror(-rc));
	return rc;
}

/*
 * After a failed open over iSCSI the session's last error (a named protocol
 * error such as "R2T for a READ") says more than the errno: append it to the
 * caller's message. Not for -ETIMEDOUT, the request's own timeout: the last
 * transport error may then be an older one the session recovered from.
 */
static void add_transport_cause(struct osd_transport *tp, int rc,
				const struct osd_open_options *o)
{
	char text[256];
	size_t n;

	if (!o->error || !o->error_size || !osd_iscsi_error_is_transport(rc))
		return;
	if (osd_iscsi_transport_error(tp, text, sizeof(text)) <= 0)
		return;
	n = strnlen(o->error, o->error_size);
	if (n + 1 < o->error_size)
		snprintf(o->error + n, o->error_size - n, " (iSCSI: %s)", text);
}

int osd_dev_open_url(osd_dev **out, const char *url, const struct osd_open_options *opts)
{
	static const struct osd_open_options defaults = OSD_OPEN_OPTIONS_INIT;
	const struct osd_open_options *o = opts ? opts : &defaults;
	struct osd_transport tp;
	int rc;

	if (!out || !url)
		return -EINVAL;
	rc = check_options(o);
	if (rc == 0)
		rc = connect_url(&tp, url, o);
	if (rc < 0)
		return rc;
	rc = osd_dev_open_keyed(out, &tp, o);
	if (rc < 0) {
		add_transport_cause(&tp, rc, o);
		tp.ops->destroy(tp.impl);
	}
	return rc;
}

osd_keyring *osd_dev_keyring(osd_dev *dev)
{
	return dev ? dev->keyring : NULL;
}
