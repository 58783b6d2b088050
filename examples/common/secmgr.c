/*
 * The tools as clients of a security manager (--security-manager URL with
 * --cert, --key and --ca): instead of deriving every key from a root key,
 * the device's credentials come from osd-secd, which grants what its policy
 * allows this client's certificate (docs/security-manager.md).
 */
#include <errno.h>
#include <string.h>
#include "toolcommon.h"

const char *const tc_device_secmgr_options[] = {
	"security-manager", "cert", "key", "ca", NULL,
};

const char tc_device_secmgr_help[] =
	"Security manager options (instead of --key-file):\n"
	"      --security-manager URL  ask osd-secd at osdsec://host[:port] for credentials\n"
	"      --cert FILE        this client's certificate (PEM)\n"
	"      --key FILE         its private key (PEM, mode 0600)\n"
	"      --ca FILE          CA certificates the manager's certificate must chain to\n";

int tc__secmgr_option(struct tc_device_opts *o, const char *name, const char *value)
{
	const char **slot = !strcmp(name, "security-manager") ? &o->secmgr_url :
			    !strcmp(name, "cert") ? &o->secmgr_cert :
			    !strcmp(name, "key") ? &o->secmgr_key :
			    !strcmp(name, "ca") ? &o->secmgr_ca : NULL;

	if (!slot)
		return 0;
	if (!*value) {
		tc_err("--%s: empty value", name);
		return -EINVAL;
	}
	*slot = value;
	return 1;
}

int tc__secmgr_check(const struct tc_device_opts *o)
{
	int any = o->secmgr_cert || o->secmgr_key || o->secmgr_ca;

	if (!o->secmgr_url && !any)
		return 0;
	if (!o->secmgr_url || !o->secmgr_cert || !o->secmgr_key || !o->secmgr_ca) {
		tc_err("--security-manager, --cert, --key and --ca go together");
		return -EINVAL;
	}
	if (o->key_file) {
		tc_err("--key-file and --security-manager exclude each other (one security "
		       "manager per device)");
		return -EINVAL;
	}
	return 0;
}

int tc__device_open_secmgr(struct tc_device *d, const struct tc_device_opts *o)
{
	struct osd_secmgr_options so = OSD_SECMGR_OPTIONS_INIT;
	char err[512] = "";
	int rc;

	so.url = o->secmgr_url;
	so.cert_file = o->secmgr_cert;
	so.key_file = o->secmgr_key;
	so.ca_file = o->secmgr_ca;
	rc = osd_secmgr_open(&d->mgr, &so, err, sizeof(err));
	if (rc < 0)
		tc_err("%s: %s", o->secmgr_url, *err ? err : strerror(-rc));
	return rc;
}
