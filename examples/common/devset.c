/*
 * Several devices as one filesystem: the tools open every --target, make an
 * "osd" backend on each and a layout backend (osdfs/layout.h) over them.
 * A single device without a device table stays a plain filesystem, exactly
 * as before layouts existed.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <osdfs/backends.h>
#include "toolcommon.h"

int tc_targets_add(struct tc_targets *t, struct tc_device_opts *o, const char *value)
{
	int rc;

	if (t->n == TC_MAX_TARGETS) {
		tc_err("--target: at most %u devices", TC_MAX_TARGETS);
		return -EINVAL;
	}
	rc = tc_device_option(o, "target", value);
	if (rc < 0)
		return rc;
	t->v[t->n++] = value;
	return 1;
}

const char *tc_targets_name(const struct tc_targets *t)
{
	static char name[32];

	if (t->n == 1)
		return t->v[0];
	snprintf(name, sizeof(name), "%u devices", t->n);
	return name;
}

int tc_targets_check(const struct tc_targets *t, const struct tc_device_opts *o)
{
	struct tc_device_opts c = *o;

	if (t->n > 0)
		c.target_dir = t->v[0];
	for (unsigned i = 0; i < t->n; i++)
		c.remote |= tc_target_is_url(t->v[i]); /* the iSCSI options need one URL */
	return tc_device_check(&c);
}

struct tc_device_opts tc_targets_opts(const struct tc_device_opts *o, const char *target)
{
	struct tc_device_opts one = *o;

	one.target_dir = target;
	one.remote = tc_target_is_url(target);
	/* the iSCSI options concern the URLs among several targets */
	if (!one.remote)
		one.iscsi_opts = 0;
	return one;
}

const struct tc_device *tc_devset_refusing(const struct tc_devset *s,
					   const struct tc_device_opts *o,
					   struct tc_device *fallback)
{
	if (s->n == 1 && s->dev && s->dev[0].dev)
		return &s->dev[0];
	memset(fallback, 0, sizeof(*fallback));
	fallback->method = o->security;
	fallback->mgr = s->dev ? s->dev[0].mgr : NULL;
	return fallback;
}

const char *tc_layout_state_name(enum osdfs_layout_dev_state st)
{
	switch (st) {
	case OSDFS_LAYOUT_DEV_UP: return "up";
	case OSDFS_LAYOUT_DEV_DOWN: return "down";
	case OSDFS_LAYOUT_DEV_REBUILDING: return "rebuilding";
	}
	return "?";
}

void tc_format_uuid(const uint8_t u[16], char out[37])
{
	char *p = out;

	for (int i = 0; i < 16; i++) {
		p += sprintf(p, "%02x", u[i]);
		if (i == 3 || i == 5 || i == 7 || i == 9)
			*p++ = '-';
	}
	*p = '\0';
}

/* An absolute directory name, so the table means the same from anywhere. */
static char *absolute_address(const char *target)
{
	char buf[PATH_MAX];
	char *abs;

	if (tc_target_is_url(target) || target[0] == '/')
		return strdup(target);
	if (realpath(target, buf))
		return strdup(buf);
	if (!getcwd(buf, sizeof(buf)) || asprintf(&abs, "%s/%s", buf, target) < 0)
		return strdup(target);
	return abs;
}

static int devset_alloc(struct tc_devset *s, const struct tc_targets *t)
{
	memset(s, 0, sizeof(*s));
	s->dev = calloc(TC_MAX_TARGETS + 1, sizeof(*s->dev));
	s->addr = calloc(TC_MAX_TARGETS + 1, sizeof(*s->addr));
	if (!s->dev || !s->addr)
		return -ENOMEM;
	s->n = t->n;
	return 0;
}

/* Device @p i and its "osd" backend; @p make: create, partition and keys. */
static int open_one(struct tc_devset *s, unsigned i, const struct tc_device_opts *o,
		    const char *target, uint64_t partition, int make, osdfs_backend **child)
{
	struct tc_device_opts one = tc_targets_opts(o, target);
	int rc;

	s->addr[i] = absolute_address(target);
	if (!s->addr[i])
		return tc_err_rc(-ENOMEM, "%s", target), -ENOMEM;
	rc = tc_device_open(&s->dev[i], &one, make);
	if (rc < 0)
		return rc;
	if (make && (rc = tc_device_setup_partition(&s->dev[i], partition)) < 0) {
		tc_device_fail(&s->dev[i], rc, target);
		return rc;
	}
	rc = osdfs_backend_osd_new(child, s->dev[i].dev, partition);
	if (rc < 0)
		tc_err_rc(rc, "%s: partition 0x%llx", target, (unsigned long long)partition);
	return rc;
}

static int layout_backend(struct tc_devset *s, const struct tc_device_opts *o,
			  osdfs_backend **children, const struct osdfs_data_map *map, int readonly)
{
	struct osdfs_layout_config cfg = OSDFS_LAYOUT_CONFIG_INIT;
	char err[256] = "";
	int rc;

	cfg.readonly = readonly;
	cfg.no_write_gathering = o->no_gather;
	cfg.ndevices = s->n;
	cfg.devices = children;
	cfg.addresses = (const char *const *)s->addr;
	if (map)
		cfg.map = *map;
	rc = osdfs_backend_layout_new(&s->be, &cfg, err, sizeof(err));
	if (rc < 0) {
		tc_err("cannot open the filesystem on %s: %s",
		       s->n == 1 ? s->addr[0] : "its devices", *err ? err : strerror(-rc));
		return rc;
	}
	s->layout = 1;
	return 0;
}

/* Says which slots are down (left out, or not given at all). */
static void warn_degraded(const osdfs_backend *be)
{
	unsigned n = osdfs_layout_ndevices(be), down = 0;
	struct osdfs_layout_device d;

	for (unsigned i = 0; i < n; i++) {
		if (osdfs_layout_device(be, i, &d) == 0 && d.state != OSDFS_LAYOUT_DEV_UP) {
			tc_err("warning: slot %u (%s) is %s", i, d.address,
			       d.state == OSDFS_LAYOUT_DEV_DOWN ? "down" : "not rebuilt yet");
			down++;
		}
	}
	if (down)
		tc_err("warning: %u of %u devices missing: running degraded", down, n);
}

/* An existing filesystem on the devices that open; the others are down. */
static int open_existing(struct tc_devset *s, const struct tc_device_opts *o,
			 const struct tc_targets *t, uint64_t partition, osdfs_backend **children,
			 int readonly)
{
	int rc = 0;

	for (unsigned i = 0; i < s->n; i++) {
		rc = open_one(s, i, o, t->v[i], partition, 0, &children[i]);
		if (rc < 0 && s->n == 1)
			return rc;
		if (rc < 0) {
			tc_device_close(&s->dev[i]);
			s->missing++;
		}
	}
	/* an error reading the table is left for the mount to report, as ever */
	if (s->n == 1 && osdfs_layout_is_member(children[0]) <= 0) {
		s->be = children[0];
		children[0] = NULL;
		return 0;
	}
	rc = layout_backend(s, o, children, NULL, readonly);
	if (rc == 0)
		warn_degraded(s->be);
	return rc;
}

/* mkfs: every device, made and keyed, with no old table. */
static int open_new(struct tc_devset *s, const struct tc_device_opts *o,
		    const struct tc_targets *t, uint64_t partition, osdfs_backend **children,
		    const struct osdfs_data_map *map, int plain)
{
	int rc = 0;

	for (unsigned i = 0; i < s->n && rc == 0; i++) {
		rc = open_one(s, i, o, t->v[i], partition, 1, &children[i]);
		if (rc == 0 && (rc = osdfs_layout_forget_member(children[i])) < 0)
			tc_err_rc(rc, "%s: cannot clear the old device table", t->v[i]);
	}
	if (rc < 0)
		return rc;
	if (plain) {
		s->be = children[0];
		children[0] = NULL;
		return 0;
	}
	return layout_backend(s, o, children, map, 0);
}

int tc_devset_open(struct tc_devset *s, const struct tc_device_opts *o,
		   const struct tc_targets *t, uint64_t partition,
		   const struct osdfs_data_map *map, int plain_ok, int readonly)
{
	osdfs_backend *children[TC_MAX_TARGETS] = { NULL };
	int rc = devset_alloc(s, t);

	if (rc < 0)
		return tc_err_rc(rc, "devices"), rc;
	if (map)
		rc = open_new(s, o, t, partition, children, map, plain_ok && t->n == 1);
	else
		rc = open_existing(s, o, t, partition, children, readonly);
	/* the layout owns the children once asked to; before that, we do */
	if (!s->layout)
		for (unsigned i = 0; i < s->n; i++)
			osdfs_backend_free(children[i]);
	if (rc < 0)
		tc_devset_close(s);
	return rc;
}

int tc_devset_open_spare(struct tc_devset *s, const struct tc_device_opts *o,
			 const char *target, uint64_t partition, osdfs_backend **child)
{
	unsigned i = s->n;
	int rc;

	if (i > TC_MAX_TARGETS)
		return -EINVAL;
	s->n++;
	rc = open_one(s, i, o, target, partition, 1, child);
	if (rc < 0)
		return rc;
	rc = osdfs_layout_is_member(*child);
	if (rc > 0) {
		tc_err("%s: already a device of a layout (use a new, empty store)", target);
		rc = -EEXIST;
	}
	if (rc < 0) {
		osdfs_backend_free(*child);
		*child = NULL;
	}
	return rc;
}

void tc_devset_close(struct tc_devset *s)
{
	osdfs_backend_free(s->be);
	s->be = NULL;
	for (unsigned i = 0; s->dev && i < s->n; i++)
		tc_device_close(&s->dev[i]);
	for (unsigned i = 0; s->addr && i < s->n; i++)
		free(s->addr[i]);
	free(s->dev);
	free(s->addr);
	s->dev = NULL;
	s->addr = NULL;
	s->n = 0;
}
