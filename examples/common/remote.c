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

/* The comment of tc__iscsi_cause() is in toolcommon.h. */
void tc__iscsi_cause(const struct osd_transport *tp, int rc, char *buf, size_t len)
{
	char text[256];
	struct osd_transport t;

	buf[0] = 0;
	if (!tp || !tp->ops || !osd_iscsi_error_is_transport(rc))
		return;
	t = *tp;
	if (osd_iscsi_transport_error(&t, text, sizeof(text)) > 0)
		snprintf(buf, len, " (iSCSI: %s)", text);
}

int tc__device_open_remote(struct tc_device *d, const struct tc_device_opts *o,
			   struct osd_open_options *dopt)
{
	struct osd_iscsi_options io = OSD_ISCSI_OPTIONS_INIT;

	io.initiator_name = o->initiator_name;
	io.header_digest = o->header_digest;
	io.data_digest = o->data_digest;
	io.chap_user = o->chap_user;
	if (o->connect_timeout_ms)
		io.connect_timeout_ms = o->connect_timeout_ms;
	dopt->iscsi = &io;
	dopt->chap_secret_file = o->chap_secret_file;
	return osd_dev_open_url(&d->dev, o->target_dir, dopt);
}
