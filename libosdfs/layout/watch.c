/*
 * The return watch (docs/layout.md, "Devices that come back while
 * mounted"): the slots that are down are probed every interval, by one
 * attribute read of the superblock (the device's identity, LAY_ATTR_SELF)
 * through the slot's backend, or through a fresh one the owner opens at the
 * table's address when the old one no longer answers (an iSCSI session
 * that gave up). The same device back (filesystem and device uuid of the
 * slot) is resynced from the dirty-region log while the filesystem stays in
 * use (rebuild.c: the slot is rebuilding, so written to, before the log is
 * read); any other device there, or an outage the log does not cover, is
 * reported once and left down for a rebuild. A read-only layout only reports.
 * A slot that is up and whose backend counts resets (reset_count) gets one
 * identity read a pass too: a target that restarted within the initiator's
 * failover window says so only to a command (layout.c, lay_dev_reset_seen()),
 * and one whose session gave up fails it: either goes down and is resynced.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "layout/layout_int.h"

#define RETIRED_MAX 64u  /* old backends of slots given a new one, freed at destroy */
#define MIN_INTERVAL_MS 100u
#define RESYNC_TRIES 5u  /* failed resyncs of one return before the watch waits for the next */

/* What was said about the device of a down slot that answers (once each). */
enum said { SAID_NOTHING, SAID_FOREIGN, SAID_STALE, SAID_REPORTED, SAID_FAILED };

struct lay_watch {
	pthread_mutex_t mu;    /* stop, running */
	pthread_cond_t cv;
	pthread_t thread;
	int running, stop;
	struct osdfs_layout_watch opt;
	pthread_mutex_t pass_mu; /* one pass at a time; guards the fields below */
	uint8_t said[OSDFS_LAYOUT_MAX_DEVICES];
	uint8_t fails[OSDFS_LAYOUT_MAX_DEVICES];  /* failed resyncs since it came back */
	uint32_t wait[OSDFS_LAYOUT_MAX_DEVICES];  /* passes to skip before the next try */
	osdfs_backend *retired[RETIRED_MAX];
	unsigned nretired;
};

static struct lay_watch *watch_of(struct lay *L)
{
	struct lay_watch *W;

	pthread_mutex_lock(&L->mu);
	W = L->watch;
	if (!W && (W = calloc(1, sizeof(*W))) != NULL) {
		pthread_condattr_t ca;

		pthread_condattr_init(&ca);
		pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
		pthread_cond_init(&W->cv, &ca);
		pthread_condattr_destroy(&ca);
		pthread_mutex_init(&W->mu, NULL);
		pthread_mutex_init(&W->pass_mu, NULL);
		L->watch = W;
	}
	pthread_mutex_unlock(&L->mu);
	return W;
}

/* The identity on a device: 0 (in @p me), 1 (it answers without one: no
 * superblock, or none of ours: an empty or wiped store), or its error (any
 * other refusal, e.g. a target still becoming ready, is not taken for an
 * answer: the next probe asks again). */
static int read_self(const struct osdfs_backend_ops *ops, void *impl, struct lay_self *me)
{
	uint8_t buf[LAY_SELF_LEN + 8];
	struct osdfs_attr a = { OSDFS_LAYOUT_PAGE, LAY_ATTR_SELF, buf, sizeof(buf) };
	int rc = ops->get_attrs(impl, OSDFS_LAYOUT_TABLE_OID, &a, 1);

	if (rc < 0)
		return rc == -ENOENT ? 1 : rc;
	return lay_self_decode(me, buf, a.len) < 0 ? 1 : 0;
}

/* Probe slot @p s through its own backend, else a reopened one (*nb). */
static int probe(struct lay *L, struct lay_watch *W, const struct osdfs_layout_watch *w,
		 unsigned s, struct lay_self *me, osdfs_backend **nb, char *addr)
{
	const struct osdfs_backend_ops *ops;
	void *impl;
	int rc = -ENODEV;

	pthread_mutex_lock(&L->mu);
	ops = L->dev[s].be ? L->dev[s].ops : NULL;
	impl = L->dev[s].impl;
	memcpy(addr, L->table.ent[s].address, LAY_ADDR_MAX + 1);
	pthread_mutex_unlock(&L->mu);
	if (ops)
		rc = read_self(ops, impl, me);
	if (rc >= 0 || !lay_is_dev_error(rc) || !w->reopen || W->nretired == RETIRED_MAX)
		return rc;
	if (w->reopen(s, addr, nb, w->payload) < 0 || !*nb) {
		*nb = NULL;
		return -ENODEV;
	}
	return read_self(osdfs_backend_ops_of(*nb), osdfs_backend_impl(*nb), me);
}

/* Whether @p me names slot @p s of this filesystem. */
static int same_device(struct lay *L, unsigned s, const struct lay_self *me)
{
	int r;

	pthread_mutex_lock(&L->mu);
	r = me->slot == s && memcmp(me->fs_uuid, L->table.fs_uuid, 16) == 0 &&
	    memcmp(me->dev_uuid, L->table.ent[s].uuid, 16) == 0;
	pthread_mutex_unlock(&L->mu);
	return r;
}

/* The reopened backend takes the slot; the old one may still be in a
 * component op's hands: kept until destroy. */
static void swap_in(struct lay *L, struct lay_watch *W, unsigned s, osdfs_backend *nb)
{
	osdfs_backend *old;

	pthread_mutex_lock(&L->mu);
	old = L->dev[s].be;
	L->dev[s].be = nb;
	L->dev[s].ops = osdfs_backend_ops_of(nb);
	L->dev[s].impl = osdfs_backend_impl(nb);
	pthread_mutex_unlock(&L->mu);
	if (old)
		W->retired[W->nretired++] = old;
}

/* Say @p what about slot @p s once while its device keeps answering. */
static void say_once(struct lay *L, struct lay_watch *W, unsigned s, enum said what,
		     const char *addr, const char *text)
{
	if (W->said[s] == what)
		return;
	W->said[s] = (uint8_t)what;
	/* the text first: a long address is what the reason's limit cuts */
	lay_event(L, OSDFS_LAYOUT_EV_RETURNED, (int)s, 0, 0, "back %s: device %s", text, addr);
}

/* One down slot (pass_mu held): 1 if brought up. */
static int watch_slot(struct lay *L, struct lay_watch *W, const struct osdfs_layout_watch *w,
		      unsigned s)
{
	struct osdfs_layout_resync_stats st;
	char addr[LAY_ADDR_MAX + 1];
	osdfs_backend *nb = NULL;
	struct lay_self me;
	int rc = probe(L, W, w, s, &me, &nb, addr);

	if (rc < 0) { /* still away: its next return is news again */
		W->said[s] = SAID_NOTHING;
		W->fails[s] = 0;
		W->wait[s] = 0;
		osdfs_backend_free(nb);
		return 0;
	}
	if (rc > 0 || !same_device(L, s, &me)) {
		say_once(L, W, s, SAID_FOREIGN, addr,
			 "but another device (wiped or replaced): down until rebuilt");
		osdfs_backend_free(nb); /* never kept: replace() would format it */
		return 0;
	}
	if (nb) /* the slot's own device: later probes go through it */
		swap_in(L, W, s, nb);
	if (L->readonly || w->report_only) {
		say_once(L, W, s, SAID_REPORTED, addr, L->readonly ? "(read-only mount: not resynced)"
			 : "(auto-resync off: left down)");
		return 0;
	}
	if (!lay_dirty_covers(L, s)) {
		say_once(L, W, s, SAID_STALE, addr, "but stale (the log does not cover its outage): "
			 "down until rebuilt");
		return 0;
	}
	if (W->said[s] == SAID_FAILED && W->fails[s] >= RESYNC_TRIES)
		return 0;
	if (W->said[s] == SAID_FAILED && W->wait[s] > 0) {
		W->wait[s]--;
		return 0;
	}
	lay_event(L, OSDFS_LAYOUT_EV_RETURNED, (int)s, 0, 0, "back: resyncing what was written "
		  "while it was away: device %s", addr);
	rc = lay_resync(L, s, &st);
	if (rc < 0) {
		/* down again; tried again after 1, 3, 7, 15 passes (a cause that
		 * passes, e.g. a session still recovering), then only once it
		 * has been away and is back */
		W->said[s] = SAID_FAILED;
		W->fails[s]++;
		W->wait[s] = (1u << W->fails[s]) - 1;
		lay_event(L, OSDFS_LAYOUT_EV_DOWN, (int)s, 0, 0, "resync failed (%s), down again: "
			  "device %s", strerror(-rc), addr);
		return 0;
	}
	W->said[s] = SAID_NOTHING;
	W->fails[s] = 0;
	W->wait[s] = 0;
	return 1;
}

static int pass(struct lay *L, struct lay_watch *W, const struct osdfs_layout_watch *w)
{
	int up = 0;

	pthread_mutex_lock(&W->pass_mu);
	for (unsigned s = 0; s < L->table.ndev && L->formatted; s++) {
		enum osdfs_layout_dev_state state;

		const struct osdfs_backend_ops *ops;
		void *impl;

		pthread_mutex_lock(&L->mu);
		state = L->dev[s].state;
		ops = L->dev[s].be ? L->dev[s].ops : NULL;
		impl = L->dev[s].impl;
		pthread_mutex_unlock(&L->mu);
		if (ops && state == OSDFS_LAYOUT_DEV_UP && ops->reset_count) {
			struct lay_self me;

			/* an idle device's reset: a restarted target reports it
			 * to the first command of the new session (one small
			 * read a pass), and the slot goes down here; so does
			 * one that no longer answers (its session gave up) */
			int rc = read_self(ops, impl, &me);

			if (lay_dev_reset_seen(L, s, ops, impl)) {
				state = OSDFS_LAYOUT_DEV_DOWN;
			} else if (rc < 0 && lay_is_dev_error(rc)) {
				lay_dev_failed(L, s, rc);
				state = OSDFS_LAYOUT_DEV_DOWN;
			}
		}
		if (state == OSDFS_LAYOUT_DEV_DOWN)
			up += watch_slot(L, W, w, s);
		else
			W->said[s] = SAID_NOTHING;
	}
	pthread_mutex_unlock(&W->pass_mu);
	return up;
}

static int check_opts(const struct osdfs_layout_watch *w)
{
	return w->version != OSDFS_LAYOUT_WATCH_VERSION ||
	       (w->interval_ms && w->interval_ms < MIN_INTERVAL_MS) ? -EINVAL : 0;
}

OSD_EXTERN int osdfs_layout_watch_once(osdfs_backend *be, const struct osdfs_layout_watch *w)
{
	static const struct osdfs_layout_watch defaults = OSDFS_LAYOUT_WATCH_INIT;
	struct lay *L = lay_of(be);
	struct lay_watch *W;

	if (!w)
		w = &defaults;
	if (!L || check_opts(w) < 0)
		return -EINVAL;
	W = watch_of(L);
	return W ? pass(L, W, w) : -ENOMEM;
}

static void *watch_main(void *arg)
{
	struct lay *L = arg;
	struct lay_watch *W = L->watch;
	unsigned ms = W->opt.interval_ms ? W->opt.interval_ms : 5000;
	struct timespec t;

	pthread_mutex_lock(&W->mu);
	while (!W->stop) {
		clock_gettime(CLOCK_MONOTONIC, &t);
		t.tv_sec += ms / 1000;
		t.tv_nsec += (long)(ms % 1000) * 1000000L;
		if (t.tv_nsec >= 1000000000L) {
			t.tv_sec++;
			t.tv_nsec -= 1000000000L;
		}
		while (!W->stop && pthread_cond_timedwait(&W->cv, &W->mu, &t) != ETIMEDOUT)
			;
		if (W->stop)
			break;
		pthread_mutex_unlock(&W->mu);
		pass(L, W, &W->opt);
		pthread_mutex_lock(&W->mu);
	}
	pthread_mutex_unlock(&W->mu);
	return NULL;
}

OSD_EXTERN int osdfs_layout_watch_start(osdfs_backend *be, const struct osdfs_layout_watch *w)
{
	static const struct osdfs_layout_watch defaults = OSDFS_LAYOUT_WATCH_INIT;
	struct lay *L = lay_of(be);
	struct lay_watch *W;
	int rc;

	if (!w)
		w = &defaults;
	if (!L || check_opts(w) < 0)
		return -EINVAL;
	W = watch_of(L);
	if (!W)
		return -ENOMEM;
	pthread_mutex_lock(&W->mu);
	rc = W->running ? -EBUSY : 0;
	if (rc == 0) {
		W->opt = *w;
		W->stop = 0;
		rc = -pthread_create(&W->thread, NULL, watch_main, L);
		W->running = rc == 0;
	}
	pthread_mutex_unlock(&W->mu);
	return rc;
}

/* Ask the thread to stop and wait for it (a probe or resync under way ends first). */
static void stop_thread(struct lay_watch *W)
{
	int running;

	pthread_mutex_lock(&W->mu);
	running = W->running;
	W->stop = 1;
	W->running = 0;
	pthread_cond_signal(&W->cv);
	pthread_mutex_unlock(&W->mu);
	if (running)
		pthread_join(W->thread, NULL);
}

OSD_EXTERN void osdfs_layout_watch_stop(osdfs_backend *be)
{
	struct lay *L = lay_of(be);
	struct lay_watch *W;

	if (!L)
		return;
	pthread_mutex_lock(&L->mu);
	W = L->watch;
	pthread_mutex_unlock(&L->mu);
	if (W)
		stop_thread(W);
}

void lay_watch_destroy(struct lay *L)
{
	struct lay_watch *W = L->watch;

	if (!W)
		return;
	stop_thread(W);
	for (unsigned i = 0; i < W->nretired; i++)
		osdfs_backend_free(W->retired[i]);
	pthread_mutex_destroy(&W->mu);
	pthread_mutex_destroy(&W->pass_mu);
	pthread_cond_destroy(&W->cv);
	free(W);
	L->watch = NULL;
}
