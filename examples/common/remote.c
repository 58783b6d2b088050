/*
 * Remote devices: "--target iscsi://host[:port]/iqn/lun" reaches an OSD over
 * libosd's iSCSI initiator. The store belongs to the target's daemon, so
 * nothing is created here; the tools stay the security manager with the
 * root key of --key-file, which the target must know already.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "toolcommon.h"

const char *const tc_device_iscsi_options[] = {
	"initiator-name", "header-digest", "data-digest", "chap-user", "chap-secret-file", NULL,
};

const char tc_device_iscsi_help[] =
	"iSCSI options (with an iscsi:// target):\n"
	"      --initiator-name N our iSCSI name (default iqn.2026-01.org.libosd:initiator.HOSTID)\n"
	"      --header-digest D  none or crc32c (default: either, none preferred)\n"
	"      --data-digest D    none or crc32c (default: either, none preferred)\n"
	"      --chap-user NAME   log in with CHAP under NAME\n"
	"      --chap-secret-file FILE  the CHAP secret (first line of FILE)\n";

/* CHAP secrets longer than this are refused by the initiator anyway. */
#define CHAP_SECRET_MAX 255
/* RFC 7143 12.1.3: shorter secrets fall to an offline search of one exchange. */
#define CHAP_SECRET_MIN 12

static int parse_digest(const char *v, enum osd_iscsi_digest *out)
{
	if (strcmp(v, "none") == 0)
		*out = OSD_ISCSI_DIGEST_NONE;
	else if (strcmp(v, "crc32c") == 0)
		*out = OSD_ISCSI_DIGEST_CRC32C;
	else
		return -EINVAL;
	return 0;
}

int tc__iscsi_option(struct tc_device_opts *o, const char *name, const char *value)
{
	if (strcmp(name, "header-digest") == 0 || strcmp(name, "data-digest") == 0) {
		int hdr = name[0] == 'h';

		if (parse_digest(value, hdr ? &o->header_digest : &o->data_digest) < 0) {
			tc_err("--%s: '%s' is not none or crc32c", name, value);
			return -EINVAL;
		}
	} else if (strcmp(name, "initiator-name") == 0 || strcmp(name, "chap-user") == 0 ||
		   strcmp(name, "chap-secret-file") == 0) {
		if (!*value) {
			tc_err("--%s: empty value", name);
			return -EINVAL;
		}
		if (name[0] == 'i')
			o->initiator_name = value;
		else if (strcmp(name, "chap-user") == 0)
			o->chap_user = value;
		else
			o->chap_secret_file = value;
	} else {
		return 0;
	}
	o->iscsi_opts = 1;
	return 1;
}

/* The first line of @p path, without its line end, into @p buf. */
static int read_secret(const char *path, char *buf, size_t size)
{
	FILE *f = fopen(path, "rb");
	size_t len;
	int rc;

	if (!f) {
		rc = -errno;
		tc_err_rc(rc, "%s", path);
		return rc;
	}
	if ((rc = tc_secret_file_private(f, path, "CHAP secret file")) < 0) {
		fclose(f);
		return rc;
	}
	len = fread(buf, 1, size - 1, f);
	fclose(f);
	buf[len] = '\0';
	buf[strcspn(buf, "\r\n")] = '\0';
	len = strlen(buf);
	if (len < CHAP_SECRET_MIN || len > CHAP_SECRET_MAX) {
		tc_err("%s: a CHAP secret file holds one line of %d to %d bytes", path,
		       CHAP_SECRET_MIN, CHAP_SECRET_MAX);
		memset(buf, 0, size);
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
void tc__iscsi_cause(const struct osd_transport *tp, int rc, char *buf, size_t len)
{
	char text[256];
	struct osd_transport t;

	buf[0] = 0;
	/* not -ETIMEDOUT: the request's own timeout, the last transport error
	 * may be an older one the session recovered from */
	if (!tp || !tp->ops || (rc != -EPROTO && rc != -EIO && rc != -ENOTCONN && rc != -ENOBUFS &&
				rc != -ENODEV))
		return;
	t = *tp;
	if (osd_iscsi_transport_error(&t, text, sizeof(text)) > 0)
		snprintf(buf, len, " (iSCSI: %s)", text);
}

static int probe_identity(struct osd_transport *tp, const struct tc_device_opts *o,
			  uint8_t id[OSD_SYSTEM_ID_LEN], enum osd_version_select *version)
{
	struct osd_dev_options dopt = OSD_DEV_OPTIONS_INIT;
	struct osd_transport_ops borrowed = *tp->ops;
	struct osd_transport probe = { &borrowed, tp->impl };
	osd_dev *dev;
	int rc;

	borrowed.destroy = NULL;
	dopt.osd_version = o->osd_version;
	rc = osd_dev_open(&dev, &probe, &dopt);
	if (rc < 0) {
		char cause[300];

		tc__iscsi_cause(tp, rc, cause, sizeof(cause));
		tc_err("%s: cannot open the OSD device: %s%s", o->target_dir, strerror(-rc), cause);
		return rc;
	}
	rc = osd_dev_system_id(dev, id);
	if (rc < 0) {
		char cause[300];

		tc__iscsi_cause(tp, rc, cause, sizeof(cause));
		tc_err("%s: cannot read the OSD system id: %s%s", o->target_dir,
		       *osd_dev_error(dev) ? osd_dev_error(dev) : strerror(-rc), cause);
	}
	*version = osd_dev_version(dev) == OSD_V1 ? OSD_VERSION_1 : OSD_VERSION_2;
	osd_dev_close(dev);
	return rc;
}

static int connect_target(struct osd_transport *tp, const struct tc_device_opts *o)
{
	struct osd_iscsi_options io = OSD_ISCSI_OPTIONS_INIT;
	char err[256] = "", secret[CHAP_SECRET_MAX + 2];
	int rc;

	io.initiator_name = o->initiator_name;
	io.header_digest = o->header_digest;
	io.data_digest = o->data_digest;
	io.errbuf = err;
	io.errbuf_len = sizeof(err);
	if (o->chap_user) {
		rc = read_secret(o->chap_secret_file, secret, sizeof(secret));
		if (rc < 0)
			return rc;
		io.chap_user = o->chap_user;
		io.chap_secret = secret;
	}
	rc = osd_iscsi_transport_new(tp, o->target_dir, &io);
	memset(secret, 0, sizeof(secret));
	if (rc == 0)
		return 0;
	if (rc == -EACCES)
		tc_err("%s: the target refused the login%s%s", o->target_dir, *err ? ": " : "",
		       err);
	else if (*err)
		tc_err("%s: cannot log in: %s", o->target_dir, err);
	else
		tc_err_rc(rc, "%s: cannot log in", o->target_dir);
	return rc;
}

int tc__device_open_remote(struct tc_device *d, const struct tc_device_opts *o,
			   const struct osd_dev_options *dopt)
{
	struct osd_dev_options opts = *dopt;
	uint8_t id[OSD_SYSTEM_ID_LEN];
	struct osd_transport tp;
	int rc = connect_target(&tp, o);

	if (rc < 0)
		return rc;
	rc = probe_identity(&tp, o, id, &opts.osd_version);
	if (rc == 0) {
		rc = osd_cred_issuer_new(&d->iss, id);
		if (rc == 0 && d->have_key)
			rc = osd_cred_issuer_set_root_key(d->iss, d->root_key);
		if (rc < 0)
			tc_err_rc(rc, "%s: cannot set up the security manager", o->target_dir);
	}
	if (rc == 0) {
		rc = osd_dev_open(&d->dev, &tp, &opts);
		if (rc < 0) {
			char cause[300];

			tc__iscsi_cause(&tp, rc, cause, sizeof(cause));
			tc_err("%s: cannot open the OSD device: %s%s", o->target_dir,
			       strerror(-rc), cause);
		} else {
			d->tp = tp; /* the device owns it from here */
		}
	}
	if (rc < 0)
		tp.ops->destroy(tp.impl);
	return rc;
}
