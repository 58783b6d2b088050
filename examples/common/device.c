/*
 * Device options and opening. "--target DIR" runs the software OSD target
 * in-process on the store in DIR and talks to it through its loopback
 * transport, so every tool works without a network or a kernel initiator.
 * "--target iscsi://..." reaches a target over iSCSI instead (remote.c).
 */
#include <errno.h>
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
		return tc__iscsi_option(o, name, value);
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
	if (o->security != OSD_SEC_NOSEC && !o->key_file) {
		tc_err("--security other than nosec needs --key-file");
		return -EINVAL;
	}
	return 0;
}

/*
 * The issuer for the target's system id with the root key; a new store
 * (create) is given the root key out of band, as its owner would.
 */
static int security_setup(struct tc_device *d, int create)
{
	uint8_t id[OSD_SYSTEM_ID_LEN];
	int rc;

	osd_target_system_id(d->tgt, id);
	rc = osd_cred_issuer_new(&d->iss, id);
	if (rc == 0 && d->have_key)
		rc = osd_cred_issuer_set_root_key(d->iss, d->root_key);
	if (rc == 0 && create)
		rc = tc_device_install_root_key(d);
	return rc;
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
 * Open the store, waiting (bounded) while another process holds it: a mount
 * that was just unmounted may still be closing its store when a script
 * mounts again. Says once what it waits for.
 */
static int open_store(struct tc_device *d, const char *dir, const struct osd_target_options *to)
{
	struct timespec pause = { 0, STORE_BUSY_POLL_MS * 1000000L };
	int rc, waited = 0;

	while ((rc = osd_target_open(&d->tgt, dir, to)) == -EBUSY &&
	       waited < STORE_BUSY_WAIT_MS) {
		if (waited == 0)
			fprintf(stderr, "%s: %s: the store is in use by another process; waiting up "
				"to %d s for it to close\n", tc_prog(), dir, STORE_BUSY_WAIT_MS / 1000);
		nanosleep(&pause, NULL);
		waited += STORE_BUSY_POLL_MS;
	}
	return rc;
}

/* The embedded target in o->target_dir, through its loopback transport. */
static int open_embedded(struct tc_device *d, const struct tc_device_opts *o, int create,
			 const struct osd_dev_options *dopt)
{
	struct osd_target_options to = OSD_TARGET_OPTIONS_INIT;
	struct osd_transport tp;
	int rc;

	to.create = create;
	to.log_event = store_event;
	rc = open_store(d, o->target_dir, &to);
	if (rc == -ENOENT && !create)
		return tc_err("%s: no OSD store here (create one with %s)", o->target_dir,
			      o->create_cmd ? o->create_cmd : "mkfs"), rc;
	if (rc == -EBUSY)
		return tc_err("%s: the store is in use by another process", o->target_dir), rc;
	if (rc < 0) {
		tc_err_rc(rc, "%s: cannot open the OSD store", o->target_dir);
		return rc;
	}
	rc = security_setup(d, create);
	if (rc < 0) {
		tc_err_rc(rc, "%s: cannot set up the security manager", o->target_dir);
		return rc;
	}
	rc = osd_target_loopback(d->tgt, &tp);
	if (rc < 0) {
		tc_err_rc(rc, "%s: cannot connect to the target", o->target_dir);
		return rc;
	}
	rc = osd_dev_open(&d->dev, &tp, dopt);
	if (rc < 0) {
		tc_err_rc(rc, "%s: cannot open the OSD device", o->target_dir);
		tp.ops->destroy(tp.impl);
	}
	return rc;
}

int tc_device_open(struct tc_device *d, const struct tc_device_opts *o, int create)
{
	struct osd_dev_options dopt = OSD_DEV_OPTIONS_INIT;
	int rc;

	memset(d, 0, sizeof(*d));
	d->method = o->security;
	if (o->key_file) {
		rc = tc_read_key_file(o->key_file, d->root_key);
		if (rc == -EINVAL)
			return tc_err("%s: a key file holds 20 bytes or 40 hex digits",
				      o->key_file), rc;
		if (rc == -EPERM)
			return rc; /* tc_read_key_file() said why */
		if (rc < 0)
			return tc_err_rc(rc, "%s", o->key_file), rc;
		d->have_key = 1;
	}
	dopt.osd_version = o->osd_version;
	dopt.security = o->security;
	dopt.cred_source = tc_issue_credential;
	dopt.cred_payload = d;
	rc = o->remote ? tc__device_open_remote(d, o, &dopt) : open_embedded(d, o, create, &dopt);
	if (rc == 0)
		rc = tc__device_probe_root(d);
	if (rc < 0)
		tc_device_close(d);
	return rc;
}

void tc_device_close(struct tc_device *d)
{
	osd_dev_close(d->dev);
	osd_target_close(d->tgt);
	osd_cred_issuer_free(d->iss);
	memset(d->root_key, 0, sizeof(d->root_key));
	d->dev = NULL;
	d->tgt = NULL;
	d->iss = NULL;
	d->tp.ops = NULL;
}
