/*
 * osdfs_open_path(): a filesystem mounted by the directory of its store or
 * an iSCSI URL, with the keyring's key scheme; the mount owns the device.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <osdfs/open.h>
#include <osdtarget/target.h>
#include "backends/osd.h"
#include <osdfs/layout.h>

/* What the backend closes when the mount frees it. */
struct opened {
	osd_target *tgt;
	osd_dev *dev;
};

static void close_opened(void *arg)
{
	struct opened *d = arg;

	osd_dev_close(d->dev);
	osd_target_close(d->tgt);
	free(d);
}

static void say(const struct osdfs_open_options *o, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void say(const struct osdfs_open_options *o, const char *fmt, ...)
{
	va_list ap;

	if (!o->error || !o->error_size)
		return;
	va_start(ap, fmt);
	vsnprintf(o->error, o->error_size, fmt, ap);
	va_end(ap);
}

static int open_device(struct opened *d, const char *where, const struct osdfs_open_options *o)
{
	static const struct osd_open_options dev_defaults = OSD_OPEN_OPTIONS_INIT;
	struct osd_target_options to = OSD_TARGET_OPTIONS_INIT;
	struct osd_open_options dopt = o->device ? *o->device : dev_defaults;
	char err[512] = "";
	int rc;

	dopt.error = err;
	dopt.error_size = sizeof(err);
	if (strstr(where, "://")) {
		rc = osd_dev_open_url(&d->dev, where, &dopt);
	} else {
		if (o->store)
			to = *o->store;
		else
			to.create = 0;
		rc = osd_target_open_dev(&d->tgt, &d->dev, where, &to, &dopt);
	}
	if (rc < 0)
		say(o, "%s: %s", where, *err ? err : strerror(-rc));
	return rc;
}

static int check_options(const struct osdfs_open_options *o, const char *where)
{
	if (!where || !*where) {
		say(o, "no directory or URL given");
		return -EINVAL;
	}
	if (o->version < 1 || o->version > OSDFS_OPEN_OPTIONS_VERSION) {
		say(o, "unknown osdfs_open_options version %u", o->version);
		return -EINVAL;
	}
	if (o->mount && (o->mount->flags & OSDFS_MOUNT_KEEP_BACKEND)) {
		say(o, "OSDFS_MOUNT_KEEP_BACKEND: the mount owns the device it opens");
		return -EINVAL;
	}
	if (o->partition && o->partition < OSD_FIRST_ID) {
		say(o, "partition 0x%llx is reserved", (unsigned long long)o->partition);
		return -EINVAL;
	}
	return 0;
}

static int mount_it(osdfs **out, osdfs_backend *be, osd_dev *dev, const char *where,
		    uint64_t partition, const struct osdfs_open_options *o)
{
	struct osdfs_mount_options mo = OSDFS_MOUNT_OPTIONS_INIT;
	char err[256] = "";
	int rc = osdfs_layout_is_member(be);

	if (rc > 0) {
		say(o, "%s partition 0x%llx: a device of a layout (open the layout with all its "
		    "devices, osdfs/layout.h)", where, (unsigned long long)partition);
		return -EMEDIUMTYPE;
	}
	if (o->mount)
		mo = *o->mount;
	mo.error = err;
	mo.error_size = sizeof(err);
	if (rc == 0)
		rc = osdfs_mount(out, be, &mo);
	/* a refusal: the device says which command and why (method, integrity) */
	if (rc == -EACCES && !*err && *osd_dev_error(dev))
		snprintf(err, sizeof(err), "%s (%s)", strerror(-rc), osd_dev_error(dev));
	if (rc < 0)
		say(o, "%s partition 0x%llx: %s", where, (unsigned long long)partition,
		    *err ? err : strerror(-rc));
	if (rc < 0 && o->mount && o->mount->error && o->mount->error_size)
		snprintf(o->mount->error, o->mount->error_size, "%s", err);
	return rc;
}

int osdfs_open_path(osdfs **out, const char *dir_or_url, const struct osdfs_open_options *opts)
{
	static const struct osdfs_open_options defaults = OSDFS_OPEN_OPTIONS_INIT;
	const struct osdfs_open_options *o = opts ? opts : &defaults;
	uint64_t partition = o->partition ? o->partition : OSDFS_DEFAULT_PARTITION;
	osdfs_backend *be = NULL;
	struct opened *d;
	int rc;

	if (!out)
		return -EINVAL;
	*out = NULL;
	rc = check_options(o, dir_or_url);
	if (rc < 0)
		return rc;
	d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	rc = open_device(d, dir_or_url, o);
	if (rc == 0)
		rc = osdfs__backend_osd_owning(&be, d->dev, partition, close_opened, d);
	if (rc < 0) {
		if (d->dev)
			say(o, "%s: %s", dir_or_url, strerror(-rc));
		close_opened(d);
		return rc;
	}
	rc = mount_it(out, be, d->dev, dir_or_url, partition, o);
	if (rc < 0)
		osdfs_backend_free(be); /* closes the device */
	return rc;
}
