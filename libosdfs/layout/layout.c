/*
 * The layout backend's state: opening the devices (matching them to table
 * slots by uuid), device states, the device table, format, list, flush,
 * statfs and the public queries of osdfs/layout.h.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include <osdfs/osdfs.h>

#include "layout/layout_int.h"

#define WORKERS_PER_DEVICE 2

/* Random bytes for uuids: getrandom() never returns short for up to 256 bytes. */
int lay_random(void *buf, size_t len)
{
	if (len > 256 || getrandom(buf, len, 0) != (ssize_t)len)
		return -EIO;
	return 0;
}

int lay_is_dev_error(long rc)
{
	return rc == -EIO || rc == -ENOTCONN || rc == -ECONNRESET || rc == -ETIMEDOUT ||
	       rc == -ENODEV || rc == -EPIPE;
}

int lay_readable(struct lay *L, unsigned s)
{
	int r;

	pthread_mutex_lock(&L->mu);
	r = L->dev[s].be && L->dev[s].state == OSDFS_LAYOUT_DEV_UP;
	pthread_mutex_unlock(&L->mu);
	return r;
}

int lay_writable(struct lay *L, unsigned s)
{
	int r;

	pthread_mutex_lock(&L->mu);
	r = L->dev[s].be && L->dev[s].state != OSDFS_LAYOUT_DEV_DOWN;
	pthread_mutex_unlock(&L->mu);
	return r;
}

/* Slot @p s down (L->mu held): 1 if it was not. What its device acknowledged
 * since its last flush may be lost: the unflushed keys join the log, asked
 * for before the mutex drops so that a flush completing meanwhile (which
 * takes it to look at the slot) logs them before it drops them. */
static int mark_down(struct lay *L, unsigned s)
{
	int was_up = L->dev[s].state == OSDFS_LAYOUT_DEV_UP;

	if (L->dev[s].state == OSDFS_LAYOUT_DEV_DOWN)
		return 0;
	L->dev[s].state = OSDFS_LAYOUT_DEV_DOWN;
	if (!L->readonly) { /* read-only: the table keeps what is on disk */
		L->table.ent[s].state = OSDFS_LAYOUT_DEV_DOWN;
		L->table_dirty = 1;
	}
	if (was_up) /* a half-rebuilt replacement is never resynced */
		lay_dirty_slot_down(L, s);
	lay_dirty_lost_cache(L);
	return 1;
}

void lay_dev_failed(struct lay *L, unsigned s, long rc)
{
	int now_down;

	if (!lay_is_dev_error(rc))
		return;
	pthread_mutex_lock(&L->mu);
	L->dev[s].errors++;
	now_down = mark_down(L, s);
	pthread_mutex_unlock(&L->mu);
	if (now_down)
		lay_event(L, OSDFS_LAYOUT_EV_DOWN, (int)s, 0, 0, "device %s failed: %s",
			  L->table.ent[s].address, strerror((int)-rc));
}

int lay_dev_reset_seen(struct lay *L, unsigned s, const struct osdfs_backend_ops *ops,
		       void *impl)
{
	uint64_t n;

	if (!ops->reset_count || ops->reset_count(impl, &n) < 0)
		return 0;
	return lay_dev_reset_count_seen(L, s, impl, n);
}

int lay_dev_reset_count_seen(struct lay *L, unsigned s, void *impl, uint64_t n)
{
	struct lay_dev *d = &L->dev[s];
	uint64_t was;
	int seen, now_down = 0;

	pthread_mutex_lock(&L->mu);
	/* another backend's count (the slot was given a new one), or the
	 * first look at this one: a baseline */
	seen = d->impl == impl && d->reset_impl == impl && d->resets != n;
	was = d->resets;
	if (d->impl == impl) {
		d->reset_impl = impl;
		d->resets = n;
	}
	if (seen)
		now_down = mark_down(L, s);
	pthread_mutex_unlock(&L->mu);
	if (now_down)
		lay_event(L, OSDFS_LAYOUT_EV_DOWN, (int)s, 0, 0, "device %s was reset (%llu resets, "
			  "%llu before): it may have lost what it had not flushed",
			  L->table.ent[s].address, (unsigned long long)n, (unsigned long long)was);
	return seen;
}

int lay_dev_answers(const struct osdfs_backend_ops *ops, void *impl, uint64_t oid)
{
	uint64_t size;
	int rc = ops->size(impl, oid, &size);

	return rc >= 0 || !lay_is_dev_error(rc);
}

pthread_rwlock_t *lay_lock_of(struct lay *L, uint64_t oid)
{
	return &L->locks[(oid * 0x9E3779B97F4A7C15ULL) >> 56 & (LAY_LOCKS - 1)];
}

/* A device's table and identity; *has = 0 when it carries none. */
struct probe {
	struct lay_table t;
	struct lay_self self;
	int has;
	struct lay_health health; /* generation 0: none (or damaged: ignored) */
	struct lay_dirty dirty;   /* generation 0: none (or damaged: ignored) */
};

static int read_table(osdfs_backend *be, struct probe *pr, char *err, size_t errlen);

/* Slot @p s of the table another process stored (@p disk) over ours: a
 * different device there (a rebuild put a replacement in) is taken, but if
 * this handle wrote without it (its old device down here) it is stale by
 * those writes: REBUILDING until a rebuild finishes it. The same device
 * keeps the worse state of the two: each side's writes skipped a slot it
 * saw down. */
static void merge_slot(struct lay *L, unsigned s, const struct lay_table_ent *disk)
{
	struct lay_table_ent *e = &L->table.ent[s];
	uint8_t st = disk->state;

	if (memcmp(e->uuid, disk->uuid, 16) != 0) {
		if (L->dev[s].state == OSDFS_LAYOUT_DEV_DOWN && st == OSDFS_LAYOUT_DEV_UP)
			st = OSDFS_LAYOUT_DEV_REBUILDING;
		*e = *disk;
		e->state = st;
		L->dev[s].state = OSDFS_LAYOUT_DEV_DOWN; /* not the device this handle has */
		return;
	}
	if (e->state == OSDFS_LAYOUT_DEV_DOWN || st == OSDFS_LAYOUT_DEV_DOWN)
		e->state = OSDFS_LAYOUT_DEV_DOWN;
	else if (e->state == OSDFS_LAYOUT_DEV_REBUILDING || st == OSDFS_LAYOUT_DEV_REBUILDING)
		e->state = OSDFS_LAYOUT_DEV_REBUILDING;
}

/* Before a store: the newest table on the devices this handle reads. One
 * newer than ours was stored by another process (a rebuild while this
 * filesystem was mounted): merge it slot by slot rather than undo it. */
static int merge_newer_table(struct lay *L)
{
	struct probe *pr = calloc(1, sizeof(*pr));
	struct lay_table newest = { 0 };
	int merged;

	if (!pr)
		return 0;
	for (unsigned s = 0; s < L->table.ndev; s++) {
		if (!lay_readable(L, s) || read_table(L->dev[s].be, pr, NULL, 0) < 0 || !pr->has)
			continue;
		if (memcmp(pr->t.fs_uuid, L->table.fs_uuid, 16) == 0 &&
		    pr->t.ndev == L->table.ndev && pr->t.generation > newest.generation)
			newest = pr->t;
	}
	free(pr->dirty.k);
	free(pr);
	pthread_mutex_lock(&L->mu);
	merged = newest.generation > L->table.generation;
	if (merged) {
		for (unsigned s = 0; s < L->table.ndev; s++)
			merge_slot(L, s, &newest.ent[s]);
		L->table.generation = newest.generation;
	}
	pthread_mutex_unlock(&L->mu);
	return merged;
}

/* At close: a handle that wrote with a slot down may have stored that long
 * ago; if another process changed the table since (put a device in that
 * slot), its writes still make the slot stale: merge and store. */
static void table_reconcile(struct lay *L)
{
	int down = 0;

	if (!L->pool || !L->formatted || L->readonly)
		return;
	for (unsigned s = 0; s < L->table.ndev; s++)
		down |= L->dev[s].state == OSDFS_LAYOUT_DEV_DOWN;
	if (down && merge_newer_table(L))
		lay_table_store(L);
}

int lay_table_store(struct lay *L)
{
	struct lay_copv v = { 0 };
	struct osdfs_attr a = { OSDFS_LAYOUT_TABLE_PAGE, OSDFS_LAYOUT_TABLE_NUMBER, NULL, 0 };
	uint8_t *buf;
	int rc = 0, ok = 0;

	if (L->readonly)
		return -EROFS;
	if (L->formatted)
		merge_newer_table(L);
	pthread_mutex_lock(&L->mu);
	L->table.generation++;
	L->table_dirty = 0;
	a.len = (uint32_t)lay_table_len(&L->table);
	buf = malloc(a.len);
	if (buf)
		lay_table_encode(buf, &L->table);
	pthread_mutex_unlock(&L->mu);
	if (!buf)
		return -ENOMEM;
	a.value = buf;
	for (unsigned s = 0; s < L->table.ndev && rc == 0; s++) {
		struct lay_cop *c;

		if (!lay_readable(L, s))
			continue;
		c = lay_copv_add(&v, LAY_SETATTR, s, OSDFS_LAYOUT_TABLE_OID);
		if (!c)
			rc = -ENOMEM;
		else {
			c->attrs = &a;
			c->nattrs = 1;
		}
	}
	if (rc == 0)
		lay_copv_run(L, &v);
	for (size_t i = 0; i < v.n; i++)
		if (v.v[i].rc == 0)
			ok = 1;
	lay_copv_free(&v);
	free(buf);
	return rc ? rc : ok ? 0 : -EIO;
}

void lay_table_sync(struct lay *L)
{
	int dirty;

	pthread_mutex_lock(&L->mu);
	dirty = L->table_dirty && L->formatted && !L->readonly;
	pthread_mutex_unlock(&L->mu);
	if (dirty)
		lay_table_store(L);
	lay_dirty_sync(L);
	lay_health_sync(L);
	lay_dirty_flush_if_wanted(L);
}


/* A device's table and identity; has = 0 when it carries none. */
static int read_table(osdfs_backend *be, struct probe *pr, char *err, size_t errlen)
{
	const struct osdfs_backend_ops *ops = osdfs_backend_ops_of(be);
	uint8_t *tbuf = malloc(65536), *hbuf = malloc(8192), *dbuf = malloc(65536),
		sbuf[LAY_SELF_LEN + 8];
	struct osdfs_attr a[4] = {
		{ OSDFS_LAYOUT_TABLE_PAGE, OSDFS_LAYOUT_TABLE_NUMBER, tbuf, 65536 },
		{ OSDFS_LAYOUT_PAGE, LAY_ATTR_SELF, sbuf, sizeof(sbuf) },
		{ OSDFS_LAYOUT_PAGE, LAY_ATTR_HEALTH, hbuf, 8192 },
		{ OSDFS_LAYOUT_PAGE, LAY_ATTR_DIRTY, dbuf, 65536 },
	};
	struct lay_table *t = &pr->t;
	struct lay_self *self = &pr->self;
	int *has = &pr->has, rc;

	*has = 0;
	if (!tbuf || !hbuf || !dbuf) {
		free(tbuf);
		free(hbuf);
		free(dbuf);
		return -ENOMEM;
	}
	rc = ops->get_attrs(osdfs_backend_impl(be), OSDFS_LAYOUT_TABLE_OID, a, 4);
	if (rc == 0 && a[2].len && a[2].len <= 8192 &&
	    lay_health_decode(&pr->health, hbuf, a[2].len, NULL, 0) < 0)
		memset(&pr->health, 0, sizeof(pr->health)); /* damaged: counters restart */
	free(hbuf);
	free(pr->dirty.k);
	memset(&pr->dirty, 0, sizeof(pr->dirty));
	if (rc == 0 && a[3].len && a[3].len <= 65536 &&
	    lay_dirty_decode(&pr->dirty, dbuf, a[3].len, NULL, 0) < 0)
		memset(&pr->dirty, 0, sizeof(pr->dirty)); /* damaged: covers nothing */
	free(dbuf);
	if (rc == -ENOENT || (rc == 0 && a[0].len == 0)) {
		free(tbuf);
		return 0;
	}
	if (rc == 0) {
		rc = lay_table_decode(t, tbuf, a[0].len, err, errlen);
		if (rc == 0 && lay_self_decode(self, sbuf, a[1].len) < 0)
			rc = lay_errf(err, errlen, -EINVAL, "device has a table but no identity");
		*has = rc == 0;
	} else {
		lay_errf(err, errlen, rc, "reading the device table: %s", strerror(-rc));
	}
	free(tbuf);
	return rc;
}

/* The newest dirty-region log among the devices of the filesystem (a device
 * that was away carries an older one). */
static void pick_dirty(struct lay *L, struct probe *pr, unsigned n)
{
	struct probe *best = NULL;

	for (unsigned i = 0; i < n; i++)
		if (pr[i].has && memcmp(L->table.fs_uuid, pr[i].t.fs_uuid, 16) == 0 &&
		    pr[i].dirty.generation && (!best || pr[i].dirty.generation >
						      best->dirty.generation))
			best = &pr[i];
	if (best)
		lay_dirty_adopt(L, &best->dirty);
}

/* The newest table among the devices; -EINVAL if they are of different filesystems. */
static int pick_table(struct lay *L, struct probe *pr, unsigned n, char *err,
		      size_t errlen)
{
	const struct probe *best = NULL;

	for (unsigned i = 0; i < n; i++) {
		if (!pr[i].has)
			continue;
		if (best && memcmp(best->t.fs_uuid, pr[i].t.fs_uuid, 16) != 0)
			return lay_errf(err, errlen, -EINVAL,
				    "device %u belongs to another filesystem (foreign device)", i);
		if (!best || pr[i].t.generation > best->t.generation)
			best = &pr[i];
	}
	if (best) {
		const struct lay_health *h = NULL;

		L->table = best->t;
		L->formatted = 1;
		for (unsigned i = 0; i < n; i++)
			if (pr[i].has && memcmp(best->t.fs_uuid, pr[i].t.fs_uuid, 16) == 0 &&
			    pr[i].health.generation && (!h || pr[i].health.generation > h->generation))
				h = &pr[i].health;
		if (h)
			lay_health_load(L, h);
		pick_dirty(L, pr, n);
	}
	return 0;
}

static void add_spare(struct lay *L, osdfs_backend *be, const char *addr)
{
	L->spares[L->nspares] = be;
	snprintf(L->spare_addr[L->nspares], sizeof(L->spare_addr[0]), "%s", addr ? addr : "");
	L->nspares++;
}

static void set_dev(struct lay *L, unsigned s, osdfs_backend *be)
{
	L->dev[s].be = be;
	L->dev[s].ops = be ? osdfs_backend_ops_of(be) : NULL;
	L->dev[s].impl = be ? osdfs_backend_impl(be) : NULL;
}

/* Whether the newest event of slot @p s already says it returned (so that
 * every open of a stale device does not record it again). */
static int was_down_here(struct lay *L, unsigned s)
{
	for (unsigned i = L->health.nev; i-- > 0;)
		if (L->health.ev[i].slot == (int)s)
			return L->health.ev[i].kind == OSDFS_LAYOUT_EV_RETURNED;
	return 0;
}

/* Put each device in the slot whose uuid it carries; the rest are spares. */
static int match_slots(struct lay *L, const struct osdfs_layout_config *cfg,
		       const struct probe *pr)
{
	unsigned down = 0;

	for (unsigned i = 0; i < cfg->ndevices; i++) {
		osdfs_backend *be = cfg->devices[i];
		unsigned s = pr[i].self.slot;

		cfg->devices[i] = NULL; /* owned by L from here */
		if (!be)
			continue;
		if (pr[i].has && s < L->table.ndev && !L->dev[s].be &&
		    memcmp(L->table.ent[s].uuid, pr[i].self.dev_uuid, 16) == 0)
			set_dev(L, s, be);
		else
			add_spare(L, be, cfg->addresses ? cfg->addresses[i] : NULL);
	}
	for (unsigned s = 0; s < L->table.ndev; s++) {
		L->dev[s].state = (enum osdfs_layout_dev_state)L->table.ent[s].state;
		if (!L->dev[s].be && L->dev[s].state != OSDFS_LAYOUT_DEV_DOWN) {
			if (L->dev[s].state == OSDFS_LAYOUT_DEV_UP)
				lay_dirty_slot_down(L, s); /* not a half-rebuilt one */
			L->dev[s].state = OSDFS_LAYOUT_DEV_DOWN;
			if (!L->readonly) {
				L->table.ent[s].state = OSDFS_LAYOUT_DEV_DOWN;
				L->table_dirty = 1;
				lay_event(L, OSDFS_LAYOUT_EV_DOWN, (int)s, 0, 0,
					  "device %s missing at open", L->table.ent[s].address);
			}
		} else if (L->dev[s].be && L->dev[s].state == OSDFS_LAYOUT_DEV_DOWN &&
			   !L->readonly && !was_down_here(L, s)) {
			lay_event(L, OSDFS_LAYOUT_EV_RETURNED, (int)s, 0, 0, lay_dirty_covers(L, s)
				  ? "device %s is back: the regions written while it was away "
				    "are resynced"
				  : "device %s is back but stale: it stays down until rebuilt",
				  L->table.ent[s].address);
		}
		down += L->dev[s].state != OSDFS_LAYOUT_DEV_UP;
	}
	return down;
}

/* An unformatted layout: slots in the configuration's order. */
static int take_unformatted(struct lay *L, const struct osdfs_layout_config *cfg, char *err,
			    size_t errlen)
{
	for (unsigned i = 0; i < cfg->ndevices; i++)
		if (!cfg->devices[i])
			return lay_errf(err, errlen, -EINVAL, "device %u is missing", i);
	L->table.ndev = cfg->ndevices;
	L->table.map = cfg->map;
	for (unsigned i = 0; i < cfg->ndevices; i++) {
		set_dev(L, i, cfg->devices[i]);
		cfg->devices[i] = NULL;
		L->dev[i].state = OSDFS_LAYOUT_DEV_UP;
		if (cfg->addresses && cfg->addresses[i])
			snprintf(L->table.ent[i].address, sizeof(L->table.ent[i].address), "%s",
				 cfg->addresses[i]);
	}
	return 0;
}

static struct lay *lay_alloc(const struct osdfs_layout_config *cfg)
{
	struct lay *L = calloc(1, sizeof(*L));

	if (!L)
		return NULL;
	L->cache = calloc(LAY_CACHE_SIZE, sizeof(*L->cache));
	if (!L->cache || lay_gather_new(L, cfg->version >= 3 && cfg->no_write_gathering) < 0) {
		free(L->cache);
		free(L);
		return NULL;
	}
	pthread_mutex_init(&L->mu, NULL);
	pthread_mutex_init(&L->health_mu, NULL);
	pthread_mutex_init(&L->dirty.mu, NULL);
	for (unsigned i = 0; i < LAY_LOCKS; i++)
		pthread_rwlock_init(&L->locks[i], NULL);
	pthread_rwlock_init(&L->count_gate, NULL);
	return L;
}

void lay_be_destroy(void *impl)
{
	struct lay *L = impl;

	if (!L)
		return;
	lay_watch_destroy(L); /* its thread uses the pool and the devices */
	lay_gather_free(L); /* writes what is held back, before the table's last store */
	table_reconcile(L);
	lay_pool_free(L->pool);
	for (unsigned s = 0; s < OSDFS_LAYOUT_MAX_DEVICES; s++) {
		osdfs_backend_free(L->dev[s].be);
		osdfs_backend_free(L->spares[s]);
	}
	for (unsigned i = 0; i < LAY_LOCKS; i++)
		pthread_rwlock_destroy(&L->locks[i]);
	pthread_rwlock_destroy(&L->count_gate);
	pthread_mutex_destroy(&L->mu);
	pthread_mutex_destroy(&L->health_mu);
	pthread_mutex_destroy(&L->dirty.mu);
	free(L->dirty.k);
	free(L->dirty.u);
	free(L->cache);
	free(L);
}

static void free_cfg_devices(const struct osdfs_layout_config *cfg)
{
	for (unsigned i = 0; cfg->devices && i < cfg->ndevices; i++) {
		osdfs_backend_free(cfg->devices[i]);
		cfg->devices[i] = NULL;
	}
}

static int probe_all(const struct osdfs_layout_config *cfg, struct probe *pr, char *err,
		     size_t errlen)
{
	for (unsigned i = 0; i < cfg->ndevices; i++) {
		int rc;

		if (!cfg->devices[i])
			continue;
		rc = read_table(cfg->devices[i], &pr[i], err, errlen);
		if (lay_is_dev_error(rc)) {
			/* unreachable: as if it were missing (down if it has a slot) */
			osdfs_backend_free(cfg->devices[i]);
			cfg->devices[i] = NULL;
			continue;
		}
		if (rc < 0)
			return rc;
	}
	return 0;
}

static int open_layout(struct lay *L, const struct osdfs_layout_config *cfg, char *err,
		       size_t errlen)
{
	struct probe *pr = calloc(cfg->ndevices, sizeof(*pr));
	unsigned down;
	int rc;

	if (!pr)
		return -ENOMEM;
	rc = probe_all(cfg, pr, err, errlen);
	if (rc == 0)
		rc = pick_table(L, pr, cfg->ndevices, err, errlen);
	if (rc == 0 && !L->formatted)
		rc = take_unformatted(L, cfg, err, errlen);
	if (rc == 0 && L->formatted) {
		down = (unsigned)match_slots(L, cfg, pr);
		rc = lay_map_resolve(&L->defmap, &L->table.map, L->table.ndev);
		if (rc == 0 && down > L->defmap.tol)
			rc = lay_errf(err, errlen, -ENODEV, "%u of %u devices are down; the layout "
				  "tolerates %u", down, L->table.ndev, L->defmap.tol);
	} else if (rc == 0) {
		rc = osdfs_data_map_check(&L->table.map, L->table.ndev, err, errlen);
		if (rc == 0)
			lay_map_resolve(&L->defmap, &L->table.map, L->table.ndev);
	}
	for (unsigned i = 0; i < cfg->ndevices; i++)
		free(pr[i].dirty.k);
	free(pr);
	return rc;
}

/* At open: each device that is back and that the dirty-region log covers
 * gets the regions written while it was away (a failure leaves it down).
 * Not under a live holder (a mount elsewhere goes on writing without the
 * device, and logging): that is for the mount's own next open. */
static void resync_returned(struct lay *L, osdfs_backend *be)
{
	struct osdfs_holder h;

	if (L->readonly || !L->formatted)
		return;
	if (osdfs_holder_get(be, &h) == 0 && h.state == OSDFS_HOLDER_LIVE)
		return;
	for (unsigned s = 0; s < L->table.ndev; s++)
		if (L->dev[s].be && L->dev[s].state != OSDFS_LAYOUT_DEV_UP &&
		    lay_dirty_covers(L, s))
			lay_resync(L, s, NULL);
}

OSD_EXTERN int osdfs_backend_layout_new(osdfs_backend **out,
					const struct osdfs_layout_config *cfg, char *err,
					size_t errlen)
{
	struct lay *L;
	int rc;

	if (!out || !cfg)
		return lay_errf(err, errlen, -EINVAL, "no configuration");
	*out = NULL;
	if (cfg->version < 1 || cfg->version > OSDFS_LAYOUT_CONFIG_VERSION || !cfg->devices ||
	    cfg->ndevices == 0 || cfg->ndevices > OSDFS_LAYOUT_MAX_DEVICES) {
		free_cfg_devices(cfg);
		return lay_errf(err, errlen, -EINVAL, "bad layout configuration (version or %u devices)",
			    cfg->ndevices);
	}
	L = lay_alloc(cfg);
	if (L)
		L->readonly = cfg->version >= 2 && cfg->readonly; /* version 1 has no field */
	rc = L ? open_layout(L, cfg, err, errlen) : -ENOMEM;
	if (rc == 0)
		rc = lay_pool_new(&L->pool, L->table.ndev, WORKERS_PER_DEVICE);
	if (rc == 0)
		rc = osdfs_backend_new(out, &lay_ops, L, "layout");
	if (rc < 0) {
		free_cfg_devices(cfg);
		lay_be_destroy(L);
		return rc;
	}
	for (unsigned s = 0; s < L->table.ndev; s++) /* each device's reset count, as of now */
		if (L->dev[s].be)
			lay_dev_reset_seen(L, s, L->dev[s].ops, L->dev[s].impl);
	lay_table_sync(L);
	resync_returned(L, *out);
	return 0;
}

struct lay *lay_of(const osdfs_backend *be)
{
	return osdfs_backend_is_layout(be) ? osdfs_backend_impl(be) : NULL;
}

OSD_EXTERN int osdfs_backend_is_layout(const osdfs_backend *be)
{
	return be && osdfs_backend_ops_of(be)->destroy == lay_be_destroy;
}

OSD_EXTERN unsigned osdfs_layout_ndevices(const osdfs_backend *be)
{
	struct lay *L = lay_of(be);

	return L ? L->table.ndev : 0;
}

OSD_EXTERN int osdfs_layout_device(const osdfs_backend *be, unsigned slot,
				   struct osdfs_layout_device *out)
{
	struct lay *L = lay_of(be);

	if (!L || !out)
		return -EINVAL;
	if (slot >= L->table.ndev)
		return -ERANGE;
	pthread_mutex_lock(&L->mu);
	memset(out, 0, sizeof(*out));
	out->slot = slot;
	memcpy(out->uuid, L->table.ent[slot].uuid, 16);
	snprintf(out->address, sizeof(out->address), "%s", L->table.ent[slot].address);
	out->state = L->dev[slot].state;
	out->errors = L->dev[slot].errors;
	out->medium_errors = L->dev[slot].medium;
	out->repairs = L->dev[slot].repairs;
	out->unrepaired = L->dev[slot].unrepaired;
	pthread_mutex_unlock(&L->mu);
	return 0;
}

OSD_EXTERN int osdfs_layout_default_map(const osdfs_backend *be, struct osdfs_data_map *out)
{
	struct lay *L = lay_of(be);

	if (!L || !out)
		return -EINVAL;
	*out = L->defmap.m;
	return 0;
}

/* Per-device capacity for a usable @p capacity: scaled by the data fraction. */
static uint64_t dev_capacity(const struct lay *L, uint64_t capacity)
{
	const struct lay_map *m = &L->defmap;

	if (capacity == 0)
		return 0;
	return capacity / m->Wd * m->W * m->M / m->ndev + (1u << 20);
}

static int new_uuids(struct lay *L)
{
	int rc = lay_random(L->table.fs_uuid, 16);

	for (unsigned s = 0; s < L->table.ndev && rc == 0; s++)
		rc = lay_random(L->table.ent[s].uuid, 16);
	return rc;
}

int lay_be_format(void *impl, uint64_t capacity)
{
	struct lay *L = impl;
	uint64_t cap = dev_capacity(L, capacity);
	int rc;

	if (L->readonly)
		return -EROFS;
	for (unsigned s = 0; s < L->table.ndev; s++) {
		if (!L->dev[s].be)
			return -ENODEV;
		rc = L->dev[s].ops->format(L->dev[s].impl, cap);
		if (rc < 0)
			return rc;
	}
	rc = new_uuids(L);
	if (rc < 0)
		return rc;
	pthread_mutex_lock(&L->mu);
	L->table.generation = 1;
	L->table.capacity = capacity;
	for (unsigned s = 0; s < L->table.ndev; s++) {
		L->dev[s].state = OSDFS_LAYOUT_DEV_UP;
		L->table.ent[s].state = OSDFS_LAYOUT_DEV_UP;
	}
	L->table.map = L->defmap.m;
	L->formatted = 1;
	L->table_dirty = 0;
	L->nobjects = 0; /* the devices are empty: count from here */
	L->nobjects_known = 1;
	memset(L->cache, 0, LAY_CACHE_SIZE * sizeof(*L->cache));
	pthread_mutex_unlock(&L->mu);
	pthread_mutex_lock(&L->dirty.mu); /* the devices are empty: so is the log */
	free(L->dirty.k);
	L->dirty.k = NULL;
	L->dirty.n = L->dirty.cap = 0;
	L->dirty.covered = 0;
	L->dirty.overflow = 0;
	L->dirty.generation = 0;
	L->dirty.changed = 0;
	L->dirty.un = 0;
	L->dirty.ulost = 0;
	pthread_mutex_unlock(&L->dirty.mu);
	return 0;
}

void lay_count_add(struct lay *L, int delta)
{
	pthread_mutex_lock(&L->mu);
	if (L->nobjects_known)
		L->nobjects += (uint64_t)(int64_t)delta;
	pthread_mutex_unlock(&L->mu);
}

/*
 * Objects: the devices' own counts cannot be turned into an exact number
 * (files have as many components as their maps say), so the first statfs
 * counts the ids of the union list holding the count gate exclusive (no
 * create or remove runs meanwhile: they hold it shared); creates and removes
 * keep the count from then on. One lock, so the whole lock set stays small
 * enough for lock-order checkers (ThreadSanitizer tracks 64 at once).
 */
static int count_objects(struct lay *L, uint64_t *out)
{
	uint64_t ids[1024], start = 0, next = 0, total = 0;
	size_t n;
	int rc = 0, known;

	pthread_mutex_lock(&L->mu);
	known = L->nobjects_known;
	*out = L->nobjects;
	pthread_mutex_unlock(&L->mu);
	if (known)
		return 0;
	pthread_rwlock_wrlock(&L->count_gate);
	do {
		rc = lay_be_list(L, start, ids, sizeof(ids) / sizeof(ids[0]), &n, &next);
		total += n;
		start = next;
	} while (rc == 0 && next != 0);
	if (rc == 0) {
		pthread_mutex_lock(&L->mu);
		L->nobjects = *out = total;
		L->nobjects_known = 1;
		pthread_mutex_unlock(&L->mu);
	}
	pthread_rwlock_unlock(&L->count_gate);
	return rc;
}

int lay_be_statfs(void *impl, struct osdfs_backend_stat *st)
{
	struct lay *L = impl;
	const struct lay_map *m = &L->defmap;
	struct osdfs_backend_stat sum = { 0 }, d;

	if (!L->readonly)
		lay_gather_flush(L, 0); /* held writes count as used */
	for (unsigned s = 0; s < L->table.ndev; s++) {
		if (!lay_readable(L, s) || L->dev[s].ops->statfs(L->dev[s].impl, &d) < 0)
			continue;
		sum.capacity += d.capacity;
		sum.used += d.used;
		sum.device_free += d.device_free;
	}
	/* usable bytes: raw bytes times the data fraction of the default map */
	st->capacity = L->table.capacity ? L->table.capacity
					 : sum.capacity / (m->W * m->M) * m->Wd;
	st->used = sum.used / (m->W * m->M) * m->Wd;
	st->device_free = sum.device_free / (m->W * m->M) * m->Wd;
	return count_objects(L, &st->objects);
}

/* Flush the slots of @p oid (0: every device). Once every live one has
 * done so, what was noted as changed before the flush began is durable
 * there and no longer needs logging should a device fail (dirty.c). */
static int flush_devices(struct lay *L, uint64_t oid)
{
	struct lay_copv v = { 0 };
	struct lay_info fi;
	struct lay_map lm;
	unsigned first = 0, count = L->table.ndev;
	uint64_t epoch;
	int rc = 0;

	if (oid) {
		/* one object: the slots of its copies or components */
		rc = lay_info_get(L, oid, &fi);
		if (rc < 0)
			return rc;
		first = (unsigned)(oid % L->table.ndev);
		count = lay_meta_copies(L, oid);
		if (fi.file && lay_map_resolve(&lm, &fi.map, L->table.ndev) == 0)
			count = lm.nc;
	}
	epoch = lay_dirty_flush_begin(L);
	for (unsigned j = 0; j < count; j++) {
		unsigned s = (first + j) % L->table.ndev;
		struct lay_cop *c;

		if (!lay_writable(L, s))
			continue;
		c = lay_copv_add(&v, LAY_FLUSH, s, oid);
		if (!c) {
			lay_copv_free(&v);
			return -ENOMEM;
		}
	}
	lay_copv_run(L, &v);
	for (size_t i = 0; i < v.n; i++)
		if (v.v[i].rc < 0 && v.v[i].rc != -ENOENT && !lay_is_dev_error(v.v[i].rc))
			rc = (int)v.v[i].rc;
	lay_copv_free(&v);
	/* a device that failed it is down: its keys are logged first */
	if (rc == 0)
		lay_dirty_flushed(L, oid, epoch);
	return rc;
}

void lay_dirty_flush_if_wanted(struct lay *L)
{
	if (!L->readonly && atomic_exchange(&L->dirty.flush_wanted, 0))
		flush_devices(L, 0); /* a failure leaves the keys for the next */
}

int lay_be_flush(void *impl, uint64_t oid)
{
	struct lay *L = impl;
	int rc;

	if (L->readonly)
		return 0; /* nothing written; a device's flush may still write (a log) */
	rc = lay_gather_flush(L, oid); /* writes held back to complete rows */
	if (rc < 0)
		return rc;
	lay_table_sync(L);
	rc = flush_devices(L, oid);
	lay_table_sync(L);
	return rc;
}

/* Merge @p add (ascending) into @p acc (ascending, deduplicated) through @p tmp. */
static size_t merge_ids(uint64_t *acc, size_t n, const uint64_t *add, size_t m, uint64_t *tmp)
{
	size_t i = 0, j = 0, k = 0;

	while (i < n || j < m) {
		uint64_t v = j >= m || (i < n && acc[i] <= add[j]) ? acc[i] : add[j];

		if (i < n && acc[i] == v)
			i++;
		if (j < m && add[j] == v)
			j++;
		tmp[k++] = v;
	}
	memcpy(acc, tmp, k * sizeof(*acc));
	return k;
}

/* List one readable device into @p acc; tracks whether it has more and the
 * highest id it vouches for. Returns 0, 1 (device skipped) or an error. */
static int list_child(struct lay *L, unsigned s, uint64_t start, uint64_t *part, size_t max,
		      uint64_t *acc, size_t *nacc, uint64_t *tmp, int *more, uint64_t *horizon)
{
	size_t pn = 0;
	uint64_t pnext = 0;
	int r;

	if (!lay_readable(L, s))
		return 1;
	r = L->dev[s].ops->list(L->dev[s].impl, start, part, max, &pn, &pnext);
	if (r < 0) {
		lay_dev_failed(L, s, r);
		return lay_is_dev_error(r) ? 1 : r;
	}
	*nacc = merge_ids(acc, *nacc, part, pn, tmp);
	if (pnext) {
		*more = 1;
		if (pn && part[pn - 1] < *horizon)
			*horizon = part[pn - 1];
	}
	return 0;
}

int lay_be_list(void *impl, uint64_t start, uint64_t *ids, size_t max, size_t *n,
		uint64_t *next)
{
	struct lay *L = impl;
	uint64_t *acc, *part, *tmp, horizon = UINT64_MAX;
	size_t nacc = 0, cut;
	int rc = 0, more = 0, any = 0;

	*n = 0;
	*next = 0;
	if (max == 0)
		return -EINVAL;
	acc = calloc(max * L->table.ndev, sizeof(*acc));
	part = calloc(max, sizeof(*part));
	tmp = calloc(max * L->table.ndev, sizeof(*tmp));
	if (!acc || !part || !tmp)
		rc = -ENOMEM;
	for (unsigned s = 0; rc == 0 && s < L->table.ndev; s++) {
		int r = list_child(L, s, start, part, max, acc, &nacc, tmp, &more, &horizon);

		any |= r == 0;
		rc = r < 0 ? r : 0;
	}
	if (rc == 0 && !any)
		rc = -EIO;
	if (rc == 0) {
		/* only ids below every unfinished device's last one are complete */
		for (cut = 0; cut < nacc && cut < max && acc[cut] <= horizon; cut++)
			ids[cut] = acc[cut];
		*n = cut;
		if ((more || cut < nacc) && cut > 0 && ids[cut - 1] != UINT64_MAX)
			*next = ids[cut - 1] + 1;
	}
	free(acc);
	free(part);
	free(tmp);
	return rc;
}
