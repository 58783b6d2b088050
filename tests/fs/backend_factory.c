/* Backend factories for the conformance suite (see backend_factory.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <osdfs/backends.h>

#include "backend_factory.h"

static int mem_open(struct be_instance *inst, const char *dir)
{
	(void)dir;
	inst->priv = NULL;
	return osdfs_backend_mem_new(&inst->be, 0);
}

static void mem_close(struct be_instance *inst)
{
	osdfs_backend_free(inst->be);
	inst->be = NULL;
}

#ifdef OSDFS_TEST_OSD
/* The osd backend over the loopback transport to a software target. */
#include <poll.h>
#include <pthread.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <osd/request.h>
#include <osdtarget/target.h>

/*
 * An event-loop transport in front of the loopback: submit() only queues and
 * signals an eventfd; service() runs the queued commands. Completions then
 * come from osd_dev_service(), as with a network transport, so requests are
 * really in flight between submit and completion.
 */
struct deferred {
	struct osd_transport inner;
	int efd;
	pthread_mutex_t lock;
	struct osd_xfer **queue;
	size_t n, cap;
};

static int deferred_submit(void *impl, struct osd_xfer *xfer)
{
	struct deferred *d = impl;
	uint64_t one = 1;
	int rc = 0;

	pthread_mutex_lock(&d->lock);
	if (d->n == d->cap) {
		size_t cap = d->cap ? d->cap * 2 : 64;
		struct osd_xfer **q = realloc(d->queue, cap * sizeof(*q));

		if (q) {
			d->queue = q;
			d->cap = cap;
		} else {
			rc = -ENOMEM;
		}
	}
	if (!rc)
		d->queue[d->n++] = xfer;
	pthread_mutex_unlock(&d->lock);
	if (!rc && write(d->efd, &one, sizeof(one)) != (ssize_t)sizeof(one))
		abort(); /* an eventfd write cannot fail short of a bug */
	return rc;
}

static int deferred_get_fd(void *impl)
{
	return ((struct deferred *)impl)->efd;
}

static int deferred_which_events(void *impl)
{
	(void)impl;
	return POLLIN;
}

static int deferred_service(void *impl, int revents)
{
	struct deferred *d = impl;
	struct osd_xfer **batch;
	uint64_t count;
	size_t n;

	if (!(revents & POLLIN))
		return 0;
	if (read(d->efd, &count, sizeof(count)) < 0 && errno != EAGAIN)
		return -errno;
	pthread_mutex_lock(&d->lock);
	batch = d->queue;
	n = d->n;
	d->queue = NULL;
	d->n = d->cap = 0;
	pthread_mutex_unlock(&d->lock);
	for (size_t i = 0; i < n; i++) {
		int rc = d->inner.ops->submit(d->inner.impl, batch[i]);

		if (rc)
			batch[i]->done(batch[i], rc);
	}
	free(batch);
	return 0;
}

static size_t deferred_token(void *impl, uint8_t *buf, size_t len)
{
	struct deferred *d = impl;

	return d->inner.ops->security_token ? d->inner.ops->security_token(d->inner.impl, buf, len) : 0;
}

static void deferred_destroy(void *impl)
{
	struct deferred *d = impl;

	d->inner.ops->destroy(d->inner.impl);
	close(d->efd);
	pthread_mutex_destroy(&d->lock);
	free(d->queue);
	free(d);
}

static const struct osd_transport_ops deferred_ops = {
	OSD_TRANSPORT_VERSION, deferred_submit, deferred_get_fd, deferred_which_events,
	deferred_service, deferred_token, deferred_destroy, NULL /* cancel */,
};

/* Wrap @tp (taken over) in a deferring transport. */
static int deferred_wrap(struct osd_transport *tp)
{
	struct deferred *d = calloc(1, sizeof(*d));

	if (!d)
		return -ENOMEM;
	d->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (d->efd < 0) {
		free(d);
		return -errno;
	}
	pthread_mutex_init(&d->lock, NULL);
	d->inner = *tp;
	tp->ops = &deferred_ops;
	tp->impl = d;
	return 0;
}

static int osd_open(struct be_instance *inst, const char *dir, enum osd_version_select v,
		    bool deferred)
{
	struct osd_target_options topts = OSD_TARGET_OPTIONS_INIT;
	struct osd_dev_options dopts = OSD_DEV_OPTIONS_INIT;
	struct osd_transport tp;
	struct be_osd_env *env = calloc(1, sizeof(*env));
	char path[4096];
	int rc;

	if (!env)
		return -ENOMEM;
	snprintf(path, sizeof(path), "%s/target-XXXXXX", dir);
	if (!mkdtemp(path)) {
		free(env);
		return -errno;
	}
	rc = osd_target_open(&env->tgt, path, &topts);
	if (!rc)
		rc = osd_target_loopback(env->tgt, &tp);
	if (!rc && deferred) {
		rc = deferred_wrap(&tp);
		if (rc)
			tp.ops->destroy(tp.impl);
	}
	if (!rc) {
		dopts.osd_version = v;
		rc = osd_dev_open(&env->dev, &tp, &dopts);
		if (rc)
			tp.ops->destroy(tp.impl);
	}
	if (!rc && osd_dev_version(env->dev) != (enum osd_version)v)
		rc = -EPROTO;
	if (!rc)
		rc = osdfs_backend_osd_new(&inst->be, env->dev, BE_OSD_PARTITION);
	if (rc) {
		osd_dev_close(env->dev);
		osd_target_close(env->tgt);
		free(env);
		return rc;
	}
	inst->priv = env;
	return 0;
}

static int osd1_open(struct be_instance *inst, const char *dir)
{
	return osd_open(inst, dir, OSD_VERSION_1, false);
}

static int osd2_open(struct be_instance *inst, const char *dir)
{
	return osd_open(inst, dir, OSD_VERSION_2, false);
}

static int osd2_evloop_open(struct be_instance *inst, const char *dir)
{
	return osd_open(inst, dir, OSD_VERSION_2, true);
}

static void osd_close(struct be_instance *inst)
{
	struct be_osd_env *env = inst->priv;

	osdfs_backend_free(inst->be);
	inst->be = NULL;
	osd_dev_close(env->dev);
	osd_target_close(env->tgt);
	free(env);
}

/* The layout backend over three OSD-2 loopback targets (RAID 5). */
#include <osdfs/layout.h>

#define LAYOUT_OSD_N 3

static void layout_osd_close(struct be_instance *inst)
{
	struct be_instance *sub = inst->priv;

	osdfs_backend_free(inst->be); /* first: its children use the devices */
	inst->be = NULL;
	for (int i = 0; i < LAYOUT_OSD_N; i++)
		if (sub[i].priv)
			osd_close(&sub[i]);
	free(sub);
}

static int layout_osd_open(struct be_instance *inst, const char *dir)
{
	struct osdfs_layout_config cfg = OSDFS_LAYOUT_CONFIG_INIT;
	struct be_instance *sub = calloc(LAYOUT_OSD_N, sizeof(*sub));
	osdfs_backend *dev[LAYOUT_OSD_N];
	int rc = sub ? 0 : -ENOMEM;

	inst->priv = sub;
	for (int i = 0; i < LAYOUT_OSD_N && rc == 0; i++)
		rc = osd2_open(&sub[i], dir);
	for (int i = 0; i < LAYOUT_OSD_N && rc == 0; i++) {
		dev[i] = sub[i].be;
		sub[i].be = NULL; /* owned by the layout from here */
	}
	if (rc == 0)
		rc = osdfs_data_map_parse(&cfg.map, "raid5,su=16K", NULL, 0);
	cfg.ndevices = LAYOUT_OSD_N;
	cfg.devices = dev;
	if (rc == 0)
		rc = osdfs_backend_layout_new(&inst->be, &cfg, NULL, 0);
	if (rc < 0 && sub)
		layout_osd_close(inst);
	return rc;
}
#endif

/* The layout backend (osdfs/layout.h): RAID 5 over four mem devices. */
#include <osdfs/layout.h>

static int layout_open(struct be_instance *inst, const char *dir)
{
	struct osdfs_layout_config cfg = OSDFS_LAYOUT_CONFIG_INIT;
	osdfs_backend *dev[4] = { NULL };
	int rc = 0;

	(void)dir;
	inst->priv = NULL;
	for (int i = 0; i < 4 && rc == 0; i++)
		rc = osdfs_backend_mem_new(&dev[i], 0);
	if (rc == 0)
		rc = osdfs_data_map_parse(&cfg.map, "raid5,su=16K", NULL, 0);
	cfg.ndevices = 4;
	cfg.devices = dev;
	if (rc == 0)
		return osdfs_backend_layout_new(&inst->be, &cfg, NULL, 0);
	for (int i = 0; i < 4; i++)
		osdfs_backend_free(dev[i]);
	return rc;
}

static const struct be_factory factories[] = {
	{ "mem", true, true, true, 1ULL << 40, false, NULL, mem_open, mem_close },
	{ "layout", false, false, false, 1ULL << 40, false, NULL, layout_open, mem_close },
#ifdef OSDFS_TEST_OSD
	/* OSD-1 has no PUNCH: the backend writes zeros, which frees nothing. */
	{ "osd1", false, true, false, 1ULL << 30, false, NULL, osd1_open, osd_close },
	{ "osd2", false, true, true, 1ULL << 30, false, NULL, osd2_open, osd_close },
	/* OSD-2 through an event-loop transport: completions need poll(). */
	{ "osd2-evloop", false, true, true, 1ULL << 30, true, NULL, osd2_evloop_open, osd_close },
	{ "layout-osd2", false, false, false, 1ULL << 30, false, NULL, layout_osd_open,
	  layout_osd_close },
#endif
};

const struct be_factory *be_factory_find(const char *name)
{
	for (size_t i = 0; i < sizeof(factories) / sizeof(factories[0]); i++)
		if (!strcmp(factories[i].name, name))
			return &factories[i];
	return NULL;
}
