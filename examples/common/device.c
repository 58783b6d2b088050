/*
 * Device options and opening. "--target DIR" runs the software OSD target
 * in-process on the store in DIR and talks to it through its loopback
 * transport, so every tool works without a network or a kernel initiator.
 * "--target iscsi://..." reaches a target over iSCSI instead (remote.c).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "toolcommon.h"

const char tc_device_help[] =
	"Device options:\n"
	"  -t, --target DIR|URL   use the embedded software OSD target stored in DIR,\n"
	"                         or the iSCSI target iscsi://host[:port]/iqn/lun\n"
	"      --osd-version V    OSD version to speak: 1, 2 or auto (default auto)\n"
	"      --security M       nosec, capkey, cmdrsp or alldata (default nosec)\n"
	"      --key-file FILE    root key file (20 bytes or 40 hex digits)\n";

static int parse_version(const char *v, enum osd_version_select *out)
{
	if (strcmp(v, "1") == 0)
		*out = OSD_VERSION_1;
	else if (strcmp(v, "2") == 0)
		*out = OSD_VERSION_2;
	else if (strcmp(v, "auto") == 0)
		*out = OSD_VERSION_AUTO;
	else
		return -EINVAL;
	return 0;
}

static const struct { const char *name; enum osd_sec_method m; } sec_names[] = {
	{ "nosec", OSD_SEC_NOSEC }, { "capkey", OSD_SEC_CAPKEY },
	{ "cmdrsp", OSD_SEC_CMDRSP }, { "alldata", OSD_SEC_ALLDATA },
};

static int parse_security(const char *v, enum osd_sec_method *out)
{
	for (size_t i = 0; i < sizeof(sec_names) / sizeof(sec_names[0]); i++) {
		if (strcmp(v, sec_names[i].name) == 0) {
			*out = sec_names[i].m;
			return 0;
		}
	}
	return -EINVAL;
}

const char *tc_security_name(enum osd_sec_method m)
{
	for (size_t i = 0; i < sizeof(sec_names) / sizeof(sec_names[0]); i++)
		if (sec_names[i].m == m)
			return sec_names[i].name;
	return "?";
}

int tc_device_option(struct tc_device_opts *o, const char *name, const char *value)
{
	if (strcmp(name, "target") == 0) {
		struct osd_iscsi_url url;
		char err[256] = "";

		if (!*value) {
			tc_err("--target: empty directory name");
			return -EINVAL;
		}
		if (tc_target_is_url(value) &&
		    osd_iscsi_url_parse(&url, value, err, sizeof(err)) < 0) {
			tc_err("%s: %s", value, *err ? err : "not an iSCSI URL");
			return -EINVAL;
		}
		o->remote = tc_target_is_url(value);
		o->target_dir = value;
	} else if (strcmp(name, "osd-version") == 0) {
		if (parse_version(value, &o->osd_version) < 0) {
			tc_err("--osd-version: '%s' is not 1, 2 or auto", value);
			return -EINVAL;
		}
	} else if (strcmp(name, "security") == 0) {
		if (parse_security(value, &o->security) < 0) {
			tc_err("--security: '%s' is not nosec, capkey, cmdrsp or alldata", value);
			return -EINVAL;
		}
	} else if (strcmp(name, "key-file") == 0) {
		o->key_file = value;
	} else {
		int rc = tc__secmgr_option(o, name, value);

		return rc ? rc : tc__iscsi_option(o, name, value);
	}
	return 1;
}

int tc_target_is_url(const char *target)
{
	return strstr(target, "://") != NULL;
}

int tc_device_check(const struct tc_device_opts *o)
{
	if (!o->target_dir) {
		tc_err("no device given (use --target DIR or --target iscsi://host/iqn/lun)");
		return -EINVAL;
	}
	if (o->iscsi_opts && !o->remote) {
		tc_err("%s: the iSCSI options need an iscsi:// --target", o->target_dir);
		return -EINVAL;
	}
	if ((o->chap_user != NULL) != (o->chap_secret_file != NULL)) {
		tc_err("--chap-user and --chap-secret-file go together");
		return -EINVAL;
	}
	if (o->security != OSD_SEC_NOSEC && !o->key_file && !o->secmgr_url) {
		tc_err("--security other than nosec needs --key-file or --security-manager");
		return -EINVAL;
	}
	return tc__secmgr_check(o);
}

/* Store events of the embedded target (damage named by file and offset,
 * modes repaired, a full filesystem), as osd-targetd prints them. */
static void store_event(void *arg, int severity, const char *msg)
{
	(void)arg;
	fprintf(stderr, "%s: %s: %s\n", tc_prog(), severity <= OSD_TARGET_LOG_ERR ? "error" :
		severity == OSD_TARGET_LOG_WARNING ? "warning" : "notice", msg);
}

#define STORE_BUSY_WAIT_MS 10000 /* how long to wait for another user to close a store */
#define STORE_BUSY_POLL_MS 50

/*
 * The embedded target in o->target_dir, through its loopback transport
 * (osd_target_open_dev()). Waits (bounded) while another process holds the
 * store: a mount that was just unmounted may still be closing its store
 * when a script mounts again. Says once what it waits for.
 */
static int open_embedded(struct tc_device *d, const struct tc_device_opts *o, int create,
			 struct osd_open_options *dopt)
{
	struct osd_target_options to = OSD_TARGET_OPTIONS_INIT;
	struct timespec pause = { 0, STORE_BUSY_POLL_MS * 1000000L };
	int rc, waited = 0;

	to.create = create;
	to.log_event = store_event;
	while ((rc = osd_target_open_dev(&d->tgt, &d->dev, o->target_dir, &to, dopt)) == -EBUSY &&
	       !o->quiet && waited < STORE_BUSY_WAIT_MS) {
		if (waited == 0)
			fprintf(stderr, "%s: %s: the store is in use by another process; waiting up "
				"to %d s for it to close\n", tc_prog(), o->target_dir,
				STORE_BUSY_WAIT_MS / 1000);
		nanosleep(&pause, NULL);
		waited += STORE_BUSY_POLL_MS;
	}
	if (rc == -ENOENT && !create && strcmp(dopt->error, "no OSD store here") == 0)
		snprintf(dopt->error, dopt->error_size, "no OSD store here (create one with %s)",
			 o->create_cmd ? o->create_cmd : "mkfs");
	if (rc == -EBUSY)
		snprintf(dopt->error, dopt->error_size, "the store is in use by another process "
			 "(an osdfs-mount or osd-targetd of it: use it through that mount, or "
			 "share the store with osd-targetd and its iscsi:// URL)");
	return rc;
}

struct osd_open_options tc_device_open_options(const struct tc_device_opts *o)
{
	struct osd_open_options dopt = OSD_OPEN_OPTIONS_INIT;

	dopt.osd_version = o->osd_version;
	dopt.security = o->security;
	dopt.key_file = o->key_file;
	return dopt;
}

static int names_file(const char *err, const char *path)
{
	size_t n = path ? strlen(path) : 0;

	return n && strncmp(err, path, n) == 0 && err[n] == ':';
}

int tc_device_open(struct tc_device *d, const struct tc_device_opts *o, int create)
{
	struct osd_open_options dopt = tc_device_open_options(o);
	char err[1024] = "";
	int rc;

	memset(d, 0, sizeof(*d));
	d->method = o->security;
	d->key_file = o->key_file;
	dopt.error = err;
	dopt.error_size = sizeof(err);
	if (o->secmgr_url && (rc = tc__device_open_secmgr(d, o)) < 0)
		return rc;
	dopt.secmgr = d->mgr;
	rc = o->remote ? tc__device_open_remote(d, o, &dopt) : open_embedded(d, o, create, &dopt);
	if (rc < 0 && o->quiet) {
		tc_device_close(d);
		return rc;
	}
	if (rc < 0) {
		/* a secret file's message names the file, not the target */
		if (names_file(err, o->key_file) || names_file(err, o->chap_secret_file) ||
		    strncmp(err, "permissions ", 12) == 0)
			tc_err("%s", err);
		else
			tc_err("%s: %s", o->target_dir, *err ? err : strerror(-rc));
		tc_device_close(d);
		return rc;
	}
	d->kr = osd_dev_keyring(d->dev);
	d->tp = *osd_dev_transport(d->dev);
	/* right after the open the device's message is what version detection
	 * found out: a target that refuses the version its INQUIRY claims */
	if (*osd_dev_error(d->dev) && !o->quiet)
		fprintf(stderr, "%s: %s: note: %s\n", tc_prog(), o->target_dir,
			osd_dev_error(d->dev));
	tc_info("%s: opened %s (OSD-%d, security %s%s%s%s)", o->target_dir,
		o->remote ? "over iSCSI" : "the embedded target", (int)osd_dev_version(d->dev),
		tc_security_name(o->security), tc_device_has_key(d) ? ", root key of " : "",
		tc_device_has_key(d) ? o->key_file : "",
		d->mgr ? ", credentials from the security manager" : "");
	return 0;
}

void tc_device_close(struct tc_device *d)
{
	osd_dev_close(d->dev);
	osd_secmgr_close(d->mgr); /* after the device it serves */
	d->mgr = NULL;
	osd_target_close(d->tgt);
	d->dev = NULL;
	d->tgt = NULL;
	memset(&d->tp, 0, sizeof(d->tp));
	d->kr = NULL;
}
