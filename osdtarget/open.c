/*
 * osd_target_open_dev(): a store in a local directory as a libosd device,
 * through the target's loopback transport, with a keyring (osd/keyring.h)
 * as security manager: what the tools' "--target DIR" is.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <osd/keyring.h>
#include <osdtarget/target.h>

static void say(const struct osd_open_options *o, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void say(const struct osd_open_options *o, const char *fmt, ...)
{
	va_list ap;

	if (!o->error || !o->error_size)
		return;
	va_start(ap, fmt);
	vsnprintf(o->error, o->error_size, fmt, ap);
	va_end(ap);
}

/* The store's owner gives a new (or formatted) store its root key out of band. */
static int install_root_key(osd_target *tgt, const struct osd_open_options *o)
{
	int rc = 0;

	if (o->root_key && (rc = osd_target_set_root_key(tgt, o->root_key)) < 0)
		say(o, "cannot install the root key: %s", strerror(-rc));
	return rc;
}

int osd_target_open_dev(osd_target **tgt_out, osd_dev **dev_out, const char *dir,
			const struct osd_target_options *topts,
			const struct osd_open_options *opts)
{
	static const struct osd_target_options tdefaults = OSD_TARGET_OPTIONS_INIT;
	static const struct osd_open_options odefaults = OSD_OPEN_OPTIONS_INIT;
	struct osd_open_options o = opts ? *opts : odefaults;
	const struct osd_target_options *to = topts ? topts : &tdefaults;
	uint8_t key[OSD_HMAC_LEN];
	struct osd_transport tp;
	osd_target *tgt = NULL;
	int rc;

	if (!tgt_out || !dev_out || !dir)
		return -EINVAL;
	/* a bad key file is refused before anything is created */
	if (o.key_file) {
		rc = osd_keyring_read_key_file(o.key_file, key, o.error, o.error_size);
		if (rc < 0)
			return rc;
		o.key_file = NULL;
		o.root_key = key;
	}
	rc = osd_target_open(&tgt, dir, to);
	if (rc == -ENOENT && !to->create)
		say(&o, "no OSD store here");
	else if (rc == -EBUSY)
		say(&o, "the store is in use by another process");
	else if (rc < 0)
		say(&o, "cannot open the OSD store: %s", strerror(-rc));
	if (rc < 0) {
		memset(key, 0, sizeof(key));
		return rc;
	}
	if (to->create)
		rc = install_root_key(tgt, &o);
	if (rc == 0 && (rc = osd_target_loopback(tgt, &tp)) < 0)
		say(&o, "cannot connect to the target: %s", strerror(-rc));
	if (rc == 0 && (rc = osd_dev_open_keyed(dev_out, &tp, &o)) < 0)
		tp.ops->destroy(tp.impl);
	memset(key, 0, sizeof(key));
	if (rc < 0) {
		osd_target_close(tgt);
		return rc;
	}
	*tgt_out = tgt;
	return 0;
}
