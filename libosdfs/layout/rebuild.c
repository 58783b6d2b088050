/*
 * Restoring redundancy: osdfs_layout_replace() puts a fresh device in a
 * down slot, osdfs_layout_rebuild() recreates every component or copy that
 * belongs on it from the live devices (copies, or parity), with every
 * attribute a live copy holds (get_all_attrs: the layout knows nothing of
 * what the filesystem stores), then marks the slot up.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/create.h"
#include "layout/layout_int.h"

#define ATTR_BUF 65536u /* room for any attribute value */
#define COPY_CHUNK (1u << 20)
#define MAX_ATTRS LAY_MAX_ATTRS

enum origin { FROM_CALLER, FROM_SPARE, FROM_SLOT };

/* The device for a down slot: @p fresh, else the first spare, else the
 * slot's own stale device. */
static int pick_device(struct lay *L, unsigned slot, osdfs_backend **fresh, char *addr,
		       enum origin *from)
{
	int rc;

	pthread_mutex_lock(&L->mu);
	rc = L->dev[slot].state != OSDFS_LAYOUT_DEV_DOWN ? -EBUSY
	     : !*fresh && L->nspares == 0 && !L->dev[slot].be ? -ENODEV : 0;
	*from = FROM_CALLER;
	if (rc == 0 && !*fresh && L->nspares) {
		*fresh = L->spares[--L->nspares];
		memcpy(addr, L->spare_addr[L->nspares], LAY_ADDR_MAX + 1);
		L->spares[L->nspares] = NULL;
		*from = FROM_SPARE;
	} else if (rc == 0 && !*fresh) {
		*fresh = L->dev[slot].be;
		*from = FROM_SLOT;
	}
	pthread_mutex_unlock(&L->mu);
	return rc;
}

/* Put the emptied device in the slot, state rebuilding, under a new uuid. */
static void install(struct lay *L, unsigned slot, osdfs_backend *fresh, enum origin from,
		    const uint8_t uuid[16], const char *address)
{
	struct lay_table_ent *e = &L->table.ent[slot];
	osdfs_backend *old;

	pthread_mutex_lock(&L->mu);
	old = from == FROM_SLOT ? NULL : L->dev[slot].be;
	if (old && L->nspares < OSDFS_LAYOUT_MAX_DEVICES) {
		/* an op may still be using it: kept as a spare, freed at destroy */
		memcpy(L->spare_addr[L->nspares], e->address, sizeof(e->address));
		L->spares[L->nspares++] = old;
		old = NULL;
	}
	L->dev[slot].be = fresh;
	L->dev[slot].ops = osdfs_backend_ops_of(fresh);
	L->dev[slot].impl = osdfs_backend_impl(fresh);
	L->dev[slot].state = OSDFS_LAYOUT_DEV_REBUILDING;
	e->state = OSDFS_LAYOUT_DEV_REBUILDING;
	memcpy(e->uuid, uuid, 16);
	if (address && address[0])
		snprintf(e->address, sizeof(e->address), "%s", address);
	pthread_mutex_unlock(&L->mu);
	osdfs_backend_free(old);
}

OSD_EXTERN int osdfs_layout_replace(osdfs_backend *be, unsigned slot, osdfs_backend *fresh,
				    const char *address)
{
	struct lay *L = osdfs_backend_is_layout(be) ? osdfs_backend_impl(be) : NULL;
	struct osdfs_backend_stat st = { 0 };
	char addr[LAY_ADDR_MAX + 1] = "";
	enum origin from;
	uint8_t uuid[16];
	int rc;

	if (!L || slot >= L->table.ndev || !L->formatted)
		return -EINVAL;
	if (L->readonly)
		return -EROFS;
	rc = pick_device(L, slot, &fresh, addr, &from);
	if (rc < 0)
		return rc;
	/* refused before the device is emptied */
	rc = lay_attrs_listable(L, fresh);
	/* the same capacity as the others */
	for (unsigned s = 0; rc == 0 && s < L->table.ndev; s++)
		if (lay_readable(L, s) && L->dev[s].ops->statfs(L->dev[s].impl, &st) == 0)
			break;
	if (rc == 0)
		rc = lay_random(uuid, 16);
	if (rc == 0)
		rc = osdfs_backend_ops_of(fresh)->format(osdfs_backend_impl(fresh), st.capacity);
	if (rc < 0 && from == FROM_SPARE) {
		pthread_mutex_lock(&L->mu);
		L->spares[L->nspares++] = fresh;
		pthread_mutex_unlock(&L->mu);
	}
	if (rc < 0)
		return rc; /* a device the caller gave is still the caller's */
	install(L, slot, fresh, from, uuid, address ? address : addr);
	rc = lay_table_store(L);
	if (rc == 0) /* a new device: the log no longer describes it */
		rc = lay_dirty_resynced(L, slot, NULL, 0);
	return rc;
}


int lay_attrs_listable(struct lay *L, const osdfs_backend *fresh)
{
	int rc = fresh && !osdfs_backend_ops_of(fresh)->get_all_attrs ? -EOPNOTSUPP : 0;

	pthread_mutex_lock(&L->mu);
	for (unsigned s = 0; rc == 0 && s < L->table.ndev; s++)
		if (L->dev[s].be && !L->dev[s].ops->get_all_attrs)
			rc = -EOPNOTSUPP;
	pthread_mutex_unlock(&L->mu);
	return rc;
}

/* The layout's own attributes of one device (its identity, counters and
 * dirty log): never copied from another device. */
static int per_device(const struct osdfs_attr *a)
{
	return a->page == OSDFS_LAYOUT_PAGE &&
	       (a->number == LAY_ATTR_SELF || a->number == LAY_ATTR_HEALTH ||
		a->number == LAY_ATTR_DIRTY);
}

/* Every attribute of @p oid on slot @p s, whatever the filesystem keeps
 * there, less the per-device ones; the last entry and buffer stay free
 * for add_self(). */
static int get_all_from(struct lay *L, unsigned s, uint64_t oid, struct lay_attrset *as)
{
	int n = L->dev[s].ops->get_all_attrs(L->dev[s].impl, oid, as->a, MAX_ATTRS - 1, as->buf,
					     (size_t)(MAX_ATTRS - 1) * ATTR_BUF);
	int k = 0;

	lay_dev_failed(L, s, n < 0 ? n : 0);
	if (n < 0)
		return n == -ENOSPC ? -EUCLEAN : n;
	for (int i = 0; i < n; i++)
		if (!per_device(&as->a[i]))
			as->a[k++] = as->a[i];
	as->n = k;
	return 0;
}

/* Drop undefined attributes (length 0) so the create sets only real ones. */
static void compact(struct lay_attrset *as)
{
	int k = 0;

	for (int i = 0; i < as->n; i++)
		if (as->a[i].len > 0 && as->a[i].len <= ATTR_BUF)
			as->a[k++] = as->a[i];
	as->n = k;
}

int lay_attrs_read(struct lay *L, unsigned first, unsigned count, unsigned skip,
		   uint64_t oid, struct lay_attrset *as)
{
	int rc = -EIO;

	as->buf = malloc((size_t)MAX_ATTRS * ATTR_BUF);
	if (!as->buf)
		return -ENOMEM;
	for (unsigned j = 0; j < count && rc < 0; j++) {
		unsigned s = (first + j) % L->table.ndev;

		if (s == skip || !lay_readable(L, s))
			continue;
		if (!L->dev[s].ops->get_all_attrs)
			return -EOPNOTSUPP; /* lay_attrs_listable() said so first */
		rc = get_all_from(L, s, oid, as);
		if (rc < 0 && !lay_is_dev_error(rc))
			return rc;
	}
	if (rc == 0)
		compact(as);
	return rc;
}

static int is_zero(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return 0;
	return 1;
}

/* Write @p n bytes at @p off of the new component unless all zero (a hole). */
static int put_data(struct lay_dev *d, uint64_t oid, uint64_t off, uint8_t *p, size_t n,
		    struct osdfs_layout_rebuild_stats *st)
{
	struct iovec iov = { p, n };
	ssize_t w;

	if (is_zero(p, n))
		return 0;
	w = d->ops->write(d->impl, oid, off, &iov, 1, NULL, 0);
	if (w < 0)
		return (int)w;
	st->bytes += n;
	return (size_t)w == n ? 0 : -EIO;
}

/* Recreate the object on the new slot with @p as; removes a stale one first. */
static int recreate(struct lay_dev *d, uint64_t oid, enum osdfs_obj_class cls,
		    struct osdfs_attr *a, int n, struct osdfs_layout_rebuild_stats *st)
{
	int rc = d->ops->remove(d->impl, oid);

	if (rc < 0 && rc != -ENOENT)
		return rc;
	rc = osdfs__create(d->ops, d->impl, oid, cls, a, n);
	if (rc == 0)
		st->components++;
	return rc;
}

/* The superblock's copy on the slot also names the device itself. */
static void add_self(struct lay *L, unsigned slot, struct lay_attrset *as)
{
	uint8_t *v = as->buf + (size_t)(MAX_ATTRS - 1) * ATTR_BUF;
	struct lay_self me = { .slot = slot };

	memcpy(me.fs_uuid, L->table.fs_uuid, 16);
	memcpy(me.dev_uuid, L->table.ent[slot].uuid, 16);
	lay_self_encode(v, &me);
	as->a[as->n++] = (struct osdfs_attr){ OSDFS_LAYOUT_PAGE, LAY_ATTR_SELF, v, LAY_SELF_LEN };
}

/* Read [off, off + iov len) of metadata object @p oid from a live copy. */
static ssize_t read_copy(struct lay *L, unsigned first, unsigned count, unsigned slot,
			 uint64_t oid, uint64_t off, struct iovec *iov)
{
	ssize_t n = -EIO;

	for (unsigned j = 0; j < count && n < 0; j++) {
		unsigned s = (first + j) % L->table.ndev;

		if (s != slot && lay_readable(L, s))
			n = L->dev[s].ops->read(L->dev[s].impl, oid, off, iov, 1);
	}
	return n;
}

static int copy_meta(struct lay *L, unsigned slot, uint64_t oid,
		     struct osdfs_layout_rebuild_stats *st)
{
	struct lay_dev *d = &L->dev[slot];
	unsigned first = (unsigned)(oid % L->table.ndev), count = lay_meta_copies(L, oid);
	struct lay_attrset as = { .n = 0 };
	uint8_t *buf = NULL;
	uint64_t size = 0;
	int rc = lay_attrs_read(L, first, count, slot, oid, &as);

	for (unsigned j = 0; rc == 0 && j < count; j++) {
		unsigned s = (first + j) % L->table.ndev;

		if (s != slot && lay_readable(L, s)) {
			rc = L->dev[s].ops->size(L->dev[s].impl, oid, &size);
			break;
		}
	}
	if (rc == 0 && oid == OSDFS_LAYOUT_TABLE_OID)
		add_self(L, slot, &as);
	if (rc == 0)
		rc = recreate(d, oid, OSDFS_OBJ_META, as.a, as.n, st);
	buf = rc == 0 ? malloc(COPY_CHUNK) : NULL;
	if (rc == 0 && !buf)
		rc = -ENOMEM;
	for (uint64_t off = 0; rc == 0 && off < size; off += COPY_CHUNK) {
		struct iovec iov = { buf, size - off < COPY_CHUNK ? (size_t)(size - off) : COPY_CHUNK };
		ssize_t n = read_copy(L, first, count, slot, oid, off, &iov);

		rc = n < 0 ? (int)n : put_data(d, oid, off, buf, (size_t)n, st);
	}
	if (rc == 0)
		rc = d->ops->truncate(d->impl, oid, size);
	free(buf);
	free(as.buf);
	return rc;
}

static int copy_comp(struct lay *L, unsigned slot, struct lay_info *fi, unsigned c,
		     struct osdfs_layout_rebuild_stats *st)
{
	struct lay_dev *d = &L->dev[slot];
	struct lay_attrset as = { .n = 0 };
	struct lay_map lm;
	uint64_t size, len;
	unsigned g, pos;
	uint8_t *buf = NULL;
	int rc;

	if (lay_map_resolve(&lm, &fi->map, L->table.ndev) < 0)
		return -EUCLEAN;
	g = c / lm.M / lm.W;
	pos = c / lm.M % lm.W;
	rc = lay_file_size(L, fi, &size);
	if (rc == 0)
		rc = lay_attrs_read(L, (unsigned)(fi->oid % L->table.ndev), lay_holders(&lm), slot,
				fi->oid, &as);
	if (rc == 0 && c >= lay_holders(&lm)) {
		/* not a holder: only the map */
		for (int i = 0; i < as.n; i++)
			if (as.a[i].page == OSDFS_LAYOUT_PAGE && as.a[i].number == LAY_ATTR_MAP)
				as.a[0] = as.a[i];
		as.n = 1;
	}
	if (rc == 0)
		rc = recreate(d, fi->oid, OSDFS_OBJ_DATA, as.a, as.n, st);
	len = lay_comp_len(&lm, c, size);
	buf = rc == 0 ? malloc(lm.su) : NULL;
	if (rc == 0 && !buf)
		rc = -ENOMEM;
	for (uint64_t row = 0; rc == 0 && row * lm.su < len; row++) {
		size_t n = (size_t)(len - row * lm.su < lm.su ? len - row * lm.su : lm.su);

		rc = lay_unit_rebuild(L, fi, g, row, pos, slot, buf);
		if (rc == 0)
			rc = put_data(d, fi->oid, row * lm.su, buf, n, st);
	}
	if (rc == 0)
		rc = d->ops->truncate(d->impl, fi->oid, len);
	free(buf);
	free(as.buf);
	return rc;
}

/* Rebuild what object @p oid keeps on @p slot (under its lock). */
static int rebuild_object(struct lay *L, unsigned slot, uint64_t oid,
			  struct osdfs_layout_rebuild_stats *st)
{
	pthread_rwlock_t *lk = lay_lock_of(L, oid);
	struct lay_info fi;
	struct lay_map lm;
	unsigned ndev = L->table.ndev, j = (slot + ndev - (unsigned)(oid % ndev)) % ndev;
	int rc;

	pthread_rwlock_wrlock(lk);
	rc = lay_info_get(L, oid, &fi);
	if (rc == 0 && !fi.file && j < lay_meta_copies(L, oid))
		rc = copy_meta(L, slot, oid, st);
	else if (rc == 0 && fi.file && lay_map_resolve(&lm, &fi.map, ndev) == 0 && j < lm.nc)
		rc = copy_comp(L, slot, &fi, j, st);
	pthread_rwlock_unlock(lk);
	return rc == -ENOENT ? 0 : rc; /* removed meanwhile */
}

/* What was written to slot @p s made durable there (a device's volatile
 * cache flushed) before it counts as holding it: a device failed. */
static int flush_slot(struct lay *L, unsigned s)
{
	int rc = L->dev[s].ops->flush(L->dev[s].impl, 0);

	lay_dev_failed(L, s, rc);
	return rc;
}

static int rebuild_all(struct lay *L, unsigned slot, struct osdfs_layout_rebuild_stats *st,
		       void (*progress)(const struct osdfs_layout_rebuild_stats *, void *),
		       void *payload)
{
	uint64_t ids[256], start = 0, next;
	size_t n;
	int rc;

	do {
		rc = lay_be_list(L, start, ids, 256, &n, &next);
		for (size_t i = 0; rc == 0 && i < n; i++) {
			int r = rebuild_object(L, slot, ids[i], st);

			st->objects++;
			if (r < 0 && lay_writable(L, slot))
				st->unrecoverable++;
			else if (r < 0)
				rc = r; /* the new device failed */
			if (progress)
				progress(st, payload);
		}
		start = next;
	} while (rc == 0 && next);
	return rc;
}

OSD_EXTERN int osdfs_layout_rebuild(osdfs_backend *be, unsigned slot,
				    struct osdfs_layout_rebuild_stats *st,
				    void (*progress)(const struct osdfs_layout_rebuild_stats *st,
						     void *payload),
				    void *payload)
{
	struct lay *L = osdfs_backend_is_layout(be) ? osdfs_backend_impl(be) : NULL;
	struct osdfs_layout_rebuild_stats local = { 0 };
	int rc;

	if (!st)
		st = &local;
	memset(st, 0, sizeof(*st));
	if (!L || slot >= L->table.ndev)
		return -EINVAL;
	if (L->readonly)
		return -EROFS;
	if (L->dev[slot].state != OSDFS_LAYOUT_DEV_REBUILDING)
		return -EINVAL;
	rc = lay_attrs_listable(L, NULL);
	if (rc == 0)
		rc = rebuild_all(L, slot, st, progress, payload);
	if (rc == 0 && st->unrecoverable)
		rc = -EIO;
	if (rc == 0)
		rc = flush_slot(L, slot);
	if (rc < 0)
		return rc;
	pthread_mutex_lock(&L->mu);
	L->dev[slot].state = OSDFS_LAYOUT_DEV_UP;
	L->table.ent[slot].state = OSDFS_LAYOUT_DEV_UP;
	pthread_mutex_unlock(&L->mu);
	lay_event(L, OSDFS_LAYOUT_EV_UP, (int)slot, 0, 0, "device %s rebuilt: %llu objects, "
		  "%llu bytes", L->table.ent[slot].address, (unsigned long long)st->objects,
		  (unsigned long long)st->bytes);
	rc = lay_table_store(L);
	lay_dirty_clear_if_clean(L);
	lay_health_sync(L);
	return rc;
}

/* ---- resync: only what the dirty-region log names (dirty.c) ---- */

static void add_rebuild(struct osdfs_layout_resync_stats *st,
			const struct osdfs_layout_rebuild_stats *rs)
{
	st->components += rs->components;
	st->bytes += rs->bytes;
}

/* Band @p region (component rows [region * rr, (region + 1) * rr)) of
 * component @p c on the slot, reconstructed unit by unit, zeros included
 * (the stale device may hold other bytes there). */
static int resync_band(struct lay *L, unsigned slot, const struct lay_info *fi,
		       const struct lay_map *lm, unsigned c, uint64_t region, uint64_t len,
		       struct osdfs_layout_resync_stats *st)
{
	struct lay_dev *d = &L->dev[slot];
	uint64_t rr = OSDFS_LAYOUT_REGION_BYTES > lm->su ? OSDFS_LAYOUT_REGION_BYTES / lm->su : 1;
	unsigned g = c / lm->M / lm->W, pos = c / lm->M % lm->W;
	uint8_t *buf = malloc(lm->su);
	int rc = buf ? 0 : -ENOMEM;

	for (uint64_t row = region * rr; rc == 0 && row < (region + 1) * rr && row * lm->su < len;
	     row++) {
		size_t n = (size_t)(len - row * lm->su < lm->su ? len - row * lm->su : lm->su);
		struct iovec iov = { buf, n };
		ssize_t w;

		rc = lay_unit_rebuild(L, fi, g, row, pos, slot, buf);
		if (rc < 0)
			break;
		w = d->ops->write(d->impl, fi->oid, row * lm->su, &iov, 1, NULL, 0);
		rc = w < 0 ? (int)w : (size_t)w == n ? 0 : -EIO;
		st->components++;
		st->bytes += n;
	}
	free(buf);
	return rc;
}

static int has_attr(const struct lay_attrset *as, const struct osdfs_attr *a)
{
	for (int i = 0; i < as->n; i++)
		if (as->a[i].page == a->page && as->a[i].number == a->number)
			return 1;
	return 0;
}

/* Delete from the stale holder on @p slot what the live ones no longer
 * have (@p live): attributes removed while the device was away. */
static int drop_removed(struct lay *L, unsigned slot, uint64_t oid,
			const struct lay_attrset *live)
{
	struct lay_attrset old = { .n = 0 };
	struct osdfs_attr del[LAY_MAX_ATTRS];
	int rc, n = 0;

	old.buf = malloc((size_t)MAX_ATTRS * ATTR_BUF);
	if (!old.buf)
		return -ENOMEM;
	rc = get_all_from(L, slot, oid, &old);
	for (int i = 0; rc == 0 && i < old.n; i++)
		if (!has_attr(live, &old.a[i]))
			del[n++] = (struct osdfs_attr){ old.a[i].page, old.a[i].number, NULL, 0 };
	if (rc == 0 && n)
		rc = L->dev[slot].ops->set_attrs(L->dev[slot].impl, oid, del, n);
	free(old.buf);
	return rc;
}

/* The attributes of a holder component on the slot, from a live holder:
 * set, and those removed meanwhile deleted. */
static int resync_attrs(struct lay *L, unsigned slot, const struct lay_info *fi,
			const struct lay_map *lm, struct osdfs_layout_resync_stats *st)
{
	struct lay_attrset as = { .n = 0 };
	int rc = lay_attrs_read(L, (unsigned)(fi->oid % L->table.ndev), lay_holders(lm), slot,
				fi->oid, &as);

	if (rc == 0)
		rc = drop_removed(L, slot, fi->oid, &as);
	if (rc == 0)
		rc = L->dev[slot].ops->set_attrs(L->dev[slot].impl, fi->oid, as.a, as.n);
	if (rc == 0)
		st->components++;
	free(as.buf);
	return rc;
}

/* File @p fi's entries @p k[0..n) (regions and attributes, sorted) on component @p c. */
static int resync_file(struct lay *L, unsigned slot, const struct lay_info *fi, unsigned c,
		       const struct lay_dkey *k, size_t n, struct osdfs_layout_resync_stats *st)
{
	struct lay_dev *d = &L->dev[slot];
	struct lay_map lm;
	uint64_t size, len, have;
	int rc = lay_map_resolve(&lm, &fi->map, L->table.ndev) < 0 ? -EUCLEAN : 0;

	if (rc == 0)
		rc = lay_file_size(L, (struct lay_info *)fi, &size);
	len = rc == 0 ? lay_comp_len(&lm, c, size) : 0;
	for (size_t i = 0; rc == 0 && i < n && k[i].region != LAY_DIRTY_ATTRS; i++) {
		rc = resync_band(L, slot, fi, &lm, c, k[i].region, len, st);
		st->regions++;
	}
	/* a write past the end extended the component; make the length exact */
	if (rc == 0)
		rc = d->ops->size(d->impl, fi->oid, &have);
	if (rc == 0 && have != len) {
		rc = d->ops->truncate(d->impl, fi->oid, len);
		st->components++;
	}
	if (rc == 0 && c < lay_holders(&lm))
		rc = resync_attrs(L, slot, fi, &lm, st);
	return rc;
}

/* Resync what object @p oid keeps on @p slot from its entries @p k[0..n)
 * (one object, sorted: LAY_DIRTY_ALL, if there, is last), under its lock. */
static int resync_object(struct lay *L, unsigned slot, uint64_t oid, const struct lay_dkey *k,
			 size_t n, struct osdfs_layout_resync_stats *st)
{
	struct osdfs_layout_rebuild_stats rs = { 0 };
	struct lay_dev *d = &L->dev[slot];
	pthread_rwlock_t *lk = lay_lock_of(L, oid);
	unsigned ndev = L->table.ndev, j = (slot + ndev - (unsigned)(oid % ndev)) % ndev;
	struct lay_info fi;
	struct lay_map lm;
	int rc, whole = k[n - 1].region == LAY_DIRTY_ALL;

	pthread_rwlock_wrlock(lk);
	rc = lay_info_get(L, oid, &fi);
	if (rc == 0 && fi.file && lay_map_resolve(&lm, &fi.map, ndev) < 0)
		rc = -EUCLEAN;
	if (rc == -ENOENT || (rc == 0 && (fi.file ? j >= lm.nc : j >= lay_meta_copies(L, oid)))) {
		/* removed while the device was away, or nothing of it belongs there */
		rc = d->ops->remove(d->impl, oid);
		st->components += rc == 0;
		rc = rc == -ENOENT ? 0 : rc;
		st->objects++;
	} else if (rc == 0 && (whole || !fi.file)) {
		rc = fi.file ? copy_comp(L, slot, &fi, j, &rs) : copy_meta(L, slot, oid, &rs);
		add_rebuild(st, &rs);
		st->objects++;
	} else if (rc == 0) {
		rc = resync_file(L, slot, &fi, j, k, n, st);
		if (rc == -ENOENT) { /* not there (a create it lost): all of it */
			rc = copy_comp(L, slot, &fi, j, &rs);
			add_rebuild(st, &rs);
			st->objects++;
		}
	}
	pthread_rwlock_unlock(lk);
	return rc;
}

static void set_state(struct lay *L, unsigned s, enum osdfs_layout_dev_state state)
{
	pthread_mutex_lock(&L->mu);
	L->dev[s].state = state;
	L->table.ent[s].state = (uint8_t)state;
	pthread_mutex_unlock(&L->mu);
}

/* Rebuilding -> up, unless the device failed meanwhile (a write of the
 * mounted filesystem marked it down and logged its regions): 0 or -EIO. */
static int promote(struct lay *L, unsigned s)
{
	int rc = flush_slot(L, s) < 0 ? -EIO : 0;

	if (rc < 0)
		return rc;
	rc = -EIO;

	pthread_mutex_lock(&L->mu);
	if (L->dev[s].state == OSDFS_LAYOUT_DEV_REBUILDING) {
		L->dev[s].state = OSDFS_LAYOUT_DEV_UP;
		L->table.ent[s].state = OSDFS_LAYOUT_DEV_UP;
		rc = 0;
	}
	pthread_mutex_unlock(&L->mu);
	return rc;
}

static int check_resync(struct lay *L, unsigned s)
{
	int rc;

	if (L->readonly)
		return -EROFS;
	if (s >= L->table.ndev || !L->formatted)
		return -EINVAL;
	pthread_mutex_lock(&L->mu);
	rc = L->dev[s].state == OSDFS_LAYOUT_DEV_UP ? -EINVAL : !L->dev[s].be ? -ENODEV : 0;
	pthread_mutex_unlock(&L->mu);
	if (rc == 0 && !lay_dirty_covers(L, s))
		rc = -ESTALE;
	if (rc == 0)
		rc = lay_attrs_listable(L, NULL);
	return rc;
}

/* Replay the entries, one object at a time; counts what could not be done. */
static int replay(struct lay *L, unsigned s, const struct lay_dkey *k, size_t n,
		  struct osdfs_layout_resync_stats *st, uint64_t *failed)
{
	for (size_t i = 0; i < n;) {
		size_t e = i + 1;
		int r;

		while (e < n && k[e].oid == k[i].oid)
			e++;
		r = resync_object(L, s, k[i].oid, k + i, e - i, st);
		st->entries += e - i;
		if (r < 0 && !lay_writable(L, s))
			return r; /* the device failed again */
		*failed += r < 0;
		i = e;
	}
	return 0;
}

int lay_resync(struct lay *L, unsigned s, struct osdfs_layout_resync_stats *st)
{
	struct osdfs_layout_resync_stats local = { 0 };
	struct lay_dkey *k = NULL;
	uint64_t failed = 0;
	size_t n = 0;
	int rc = check_resync(L, s);

	if (!st)
		st = &local;
	memset(st, 0, sizeof(*st));
	if (rc < 0)
		return rc;
	/* rebuilding while it runs: written to, not read from, not logged.
	 * Before the snapshot: a write that logged a key while the slot was
	 * down did so before it wrote (io.c), so the snapshot has its key; one
	 * that logs none from here on writes to the slot itself (a mounted
	 * filesystem keeps writing during the resync, watch.c) */
	set_state(L, s, OSDFS_LAYOUT_DEV_REBUILDING);
	rc = lay_dirty_snapshot(L, &k, &n);
	if (rc < 0) {
		set_state(L, s, OSDFS_LAYOUT_DEV_DOWN);
		return rc;
	}
	lay_table_store(L);
	lay_event(L, OSDFS_LAYOUT_EV_RESYNC_STARTED, (int)s, 0, 0,
		  "device %s: resyncing %zu dirty regions", L->table.ent[s].address, n);
	rc = replay(L, s, k, n, st, &failed);
	if (rc == 0 && failed)
		rc = -EIO;
	if (rc == 0)
		rc = promote(L, s);
	if (rc == 0) {
		rc = lay_dirty_resynced(L, s, k, n);
		/* counts first: a long address is what the reason's limit cuts */
		lay_event(L, OSDFS_LAYOUT_EV_RESYNC_FINISHED, (int)s, 0, 0,
			  "%llu regions, %llu objects, %llu bytes resynced; up: device %s",
			  (unsigned long long)st->regions, (unsigned long long)st->objects,
			  (unsigned long long)st->bytes, L->table.ent[s].address);
	} else {
		/* the log still names everything: a later resync starts over */
		set_state(L, s, OSDFS_LAYOUT_DEV_DOWN);
	}
	free(k);
	lay_table_store(L);
	lay_health_sync(L);
	return rc;
}

OSD_EXTERN int osdfs_layout_resync(osdfs_backend *be, unsigned slot,
				   struct osdfs_layout_resync_stats *st)
{
	struct lay *L = lay_of(be);

	if (st)
		memset(st, 0, sizeof(*st));
	return L ? lay_resync(L, slot, st) : -EINVAL;
}
