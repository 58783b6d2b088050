/*
 * Devices that come back while mounted (docs/osdfs-mount.md, "Devices that
 * come back"): the layout's return watch probes every down slot each
 * probe_interval, and when the slot's own connection gave up it asks us to
 * open the device again at the address of the device table. The devices
 * opened so are kept here until the layout is gone (after the unmount).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <osdfs/backends.h>
#include <osdfs/layout.h>

#include "mount.h"

#define REOPEN_MAX 64u              /* devices opened again in one mount */
#define REOPEN_CONNECT_MS 3000u     /* a paused daemon's kernel accepts, then silence */

static struct {
	pthread_mutex_t mu;
	const struct mnt_options *o;
	const struct tc_devset *set;
	struct tc_device dev[REOPEN_MAX];
	char *addr[REOPEN_MAX];
	unsigned n;
} reopened = { .mu = PTHREAD_MUTEX_INITIALIZER };

/* Whether this process has the store at @p address open (mu held). */
static int have_store(const char *address)
{
	const struct tc_devset *s = reopened.set;

	for (unsigned i = 0; s && i < s->n; i++)
		if (s->dev[i].dev && s->addr[i] && strcmp(s->addr[i], address) == 0)
			return 1;
	for (unsigned i = 0; i < reopened.n; i++)
		if (strcmp(reopened.addr[i], address) == 0)
			return 1;
	return 0;
}

static int reopen(unsigned slot, const char *address, osdfs_backend **out, void *payload)
{
	struct tc_device_opts one;
	struct tc_device *d;
	int rc;

	(void)slot;
	(void)payload;
	pthread_mutex_lock(&reopened.mu);
	rc = reopened.n == REOPEN_MAX ? -ENOSPC : 0;
	/* an embedded store this process has open would be busy or taken twice;
	 * one opened by a read-only mount could replay its own log */
	if (rc == 0 && !tc_target_is_url(address) && (have_store(address) || reopened.o->readonly))
		rc = -EBUSY;
	d = rc == 0 ? &reopened.dev[reopened.n] : NULL;
	if (rc == 0) {
		one = tc_targets_opts(&reopened.o->dev, address);
		one.quiet = 1;
		one.connect_timeout_ms = REOPEN_CONNECT_MS;
		rc = tc_device_open(d, &one, 0);
	}
	if (rc == 0) {
		rc = osdfs_backend_osd_new(out, d->dev, reopened.o->partition);
		reopened.addr[reopened.n] = rc == 0 ? strdup(address) : NULL;
		if (rc == 0 && !reopened.addr[reopened.n]) {
			osdfs_backend_free(*out);
			rc = -ENOMEM;
		}
		if (rc < 0)
			tc_device_close(d);
		else
			reopened.n++;
	}
	pthread_mutex_unlock(&reopened.mu);
	return rc;
}

int mnt_watch_start(osdfs_backend *be, const struct mnt_options *o, const struct tc_devset *set)
{
	struct osdfs_layout_watch w = OSDFS_LAYOUT_WATCH_INIT;

	if (!osdfs_backend_is_layout(be) || o->probe_ms == 0)
		return 0;
	pthread_mutex_lock(&reopened.mu);
	reopened.o = o;
	reopened.set = set;
	pthread_mutex_unlock(&reopened.mu);
	w.interval_ms = o->probe_ms;
	w.report_only = o->readonly || o->no_auto_resync;
	w.reopen = reopen;
	return osdfs_layout_watch_start(be, &w);
}

void mnt_watch_close(void)
{
	pthread_mutex_lock(&reopened.mu);
	while (reopened.n > 0) {
		reopened.n--;
		tc_device_close(&reopened.dev[reopened.n]);
		free(reopened.addr[reopened.n]);
	}
	reopened.set = NULL;
	pthread_mutex_unlock(&reopened.mu);
}
