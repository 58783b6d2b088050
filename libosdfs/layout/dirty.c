/*
 * The dirty-region log (docs/layout.md, "Dirty-region log and resync"), after
 * md's write-intent bitmap: while a slot is down, every change records the
 * (object, region) keys it touches, durably on the live devices (attribute
 * 0x10004/5 of the superblock, then a flush) before the change is made and
 * acknowledged; a key already logged costs nothing. A returned device is then
 * resynced from the keys alone (rebuild.c). The log also records which down
 * slots it covers: only a slot that went down while the log was kept (and has
 * not overflowed since) can be resynced; any other needs a rebuild.
 *
 * A device may also lose what it acknowledged but had not yet made durable
 * (a volatile cache, emptied by a flush: the OSD FLUSH command, osd2r03
 * §6.8). So every change's keys are also kept in memory, stamped with the
 * flush epoch, until a flush begun after them completes on every live
 * device; when a slot goes down they join the log, as md keeps a bitmap bit
 * until the write is on every disk.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "checksum/crc32c.h"
#include "lebytes.h"
#include "layout/layout_int.h"

#define BAD(...) lay_errf(err, errlen, -EINVAL, __VA_ARGS__)

size_t lay_dirty_len(size_t n)
{
	return LAY_DIRTY_HDR + n * LAY_DIRTY_ENT + 4;
}

void lay_dirty_encode(uint8_t *out, const struct lay_dirty *d)
{
	size_t o = LAY_DIRTY_HDR;

	memset(out, 0, LAY_DIRTY_HDR);
	memcpy(out, LAY_DIRTY_MAGIC, 8);
	osdfs__put_le16(out + 8, LAY_DIRTY_VERSION);
	osdfs__put_le16(out + 10, LAY_DIRTY_HDR);
	osdfs__put_le32(out + 12, (uint32_t)d->n);
	osdfs__put_le64(out + 16, d->covered);
	osdfs__put_le32(out + 24, OSDFS_LAYOUT_REGION_BYTES);
	osdfs__put_le32(out + 28, d->overflow ? 1u : 0u);
	osdfs__put_le64(out + 32, d->generation);
	for (size_t i = 0; i < d->n; i++, o += LAY_DIRTY_ENT) {
		osdfs__put_le64(out + o, d->k[i].oid);
		osdfs__put_le64(out + o + 8, d->k[i].region);
	}
	osdfs__put_le32(out + o, osd__crc32c(0, out, o));
}

static int key_cmp(const struct lay_dkey *a, const struct lay_dkey *b)
{
	if (a->oid != b->oid)
		return a->oid < b->oid ? -1 : 1;
	return a->region < b->region ? -1 : a->region > b->region;
}

int lay_dirty_decode(struct lay_dirty *d, const uint8_t *in, size_t len, char *err,
		     size_t errlen)
{
	size_t n, o = LAY_DIRTY_HDR;
	uint32_t flags;

	if (len < LAY_DIRTY_HDR + 4)
		return BAD("dirty-region log: %zu bytes, too short", len);
	if (memcmp(in, LAY_DIRTY_MAGIC, 8) != 0)
		return BAD("dirty-region log: bad magic");
	if (osdfs__get_le16(in + 8) != LAY_DIRTY_VERSION)
		return BAD("dirty-region log: unknown version %u", osdfs__get_le16(in + 8));
	n = osdfs__get_le32(in + 12);
	flags = osdfs__get_le32(in + 28);
	if (osdfs__get_le16(in + 10) != LAY_DIRTY_HDR || n > OSDFS_LAYOUT_DIRTY_MAX ||
	    osdfs__get_le32(in + 24) != OSDFS_LAYOUT_REGION_BYTES || flags > 1 ||
	    (flags && n))
		return BAD("dirty-region log: bad header");
	if (len != lay_dirty_len(n))
		return BAD("dirty-region log: %zu bytes for %zu entries", len, n);
	if (osd__crc32c(0, in, len - 4) != osdfs__get_le32(in + len - 4))
		return BAD("dirty-region log: checksum mismatch");
	d->k = n ? malloc(n * sizeof(*d->k)) : NULL;
	if (n && !d->k)
		return -ENOMEM;
	d->n = d->cap = n;
	d->covered = osdfs__get_le64(in + 16);
	d->overflow = (int)flags;
	d->generation = osdfs__get_le64(in + 32);
	for (size_t i = 0; i < n; i++, o += LAY_DIRTY_ENT) {
		d->k[i].oid = osdfs__get_le64(in + o);
		d->k[i].region = osdfs__get_le64(in + o + 8);
		if (i && key_cmp(&d->k[i - 1], &d->k[i]) >= 0) {
			free(d->k);
			d->k = NULL;
			d->n = d->cap = 0;
			return BAD("dirty-region log: entry %zu out of order", i);
		}
	}
	return 0;
}

void lay_dirty_adopt(struct lay *L, struct lay_dirty *d)
{
	struct lay_dirty *m = &L->dirty;

	free(m->k);
	m->k = d->k;
	m->n = d->n;
	m->cap = d->cap;
	m->covered = d->covered;
	m->overflow = d->overflow;
	m->generation = d->generation;
	d->k = NULL;
}

/* Slots down now (in this handle's view). */
static uint64_t down_mask(struct lay *L)
{
	uint64_t m = 0;

	pthread_mutex_lock(&L->mu);
	for (unsigned s = 0; s < L->table.ndev; s++)
		if (L->dev[s].state == OSDFS_LAYOUT_DEV_DOWN)
			m |= 1ull << s;
	pthread_mutex_unlock(&L->mu);
	return m;
}


/* Store the log on every live device and flush it there (dirty.mu held). */
static int store_locked(struct lay *L)
{
	struct lay_dirty *d = &L->dirty;
	struct osdfs_attr a = { OSDFS_LAYOUT_PAGE, LAY_ATTR_DIRTY, NULL, 0 };
	struct lay_copv v = { 0 };
	uint8_t *buf;
	int rc = 0, ok = 0;

	d->generation++;
	a.len = (uint32_t)lay_dirty_len(d->n);
	buf = malloc(a.len);
	if (!buf)
		return -ENOMEM;
	lay_dirty_encode(buf, d);
	a.value = buf;
	for (int pass = 0; pass < 2 && rc == 0; pass++) {
		for (unsigned s = 0; s < L->table.ndev && rc == 0; s++) {
			struct lay_cop *c;

			if (!lay_readable(L, s))
				continue;
			c = lay_copv_add(&v, pass ? LAY_FLUSH : LAY_SETATTR, s, OSDFS_LAYOUT_TABLE_OID);
			if (!c) {
				rc = -ENOMEM;
				break;
			}
			c->attrs = &a;
			c->nattrs = 1;
		}
		if (rc == 0)
			lay_copv_run(L, &v);
		ok = 0;
		for (size_t i = 0; i < v.n; i++)
			ok |= v.v[i].rc == 0;
		lay_copv_free(&v);
		v = (struct lay_copv){ 0 };
	}
	free(buf);
	d->stores++;
	if (rc == 0 && !ok)
		rc = -EIO;
	d->changed = rc < 0;
	return rc;
}

/* Insert @p k (sorted); 1 if added, 0 if there, -ENOSPC when full. */
static int insert(struct lay_dirty *d, struct lay_dkey k)
{
	size_t lo = 0, hi = d->n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		int c = key_cmp(&d->k[mid], &k);

		if (c == 0)
			return 0;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (d->n == OSDFS_LAYOUT_DIRTY_MAX)
		return -ENOSPC;
	if (d->n == d->cap) {
		size_t cap = d->cap ? d->cap * 2 : 64;
		struct lay_dkey *nk = realloc(d->k, cap * sizeof(*nk));

		if (!nk)
			return -ENOMEM;
		d->k = nk;
		d->cap = cap;
	}
	memmove(&d->k[lo + 1], &d->k[lo], (d->n - lo) * sizeof(*d->k));
	d->k[lo] = k;
	d->n++;
	return 1;
}

/* Past the limit: the log no longer says what changed; every covered slot
 * needs a rebuild (as md without a bitmap). */
static void overflow(struct lay_dirty *d)
{
	free(d->k);
	d->k = NULL;
	d->n = d->cap = 0;
	d->covered = 0;
	d->overflow = 1;
	d->changed = 1;
}

/* Position of (@p oid, @p region) in the unflushed keys, or where it goes. */
static size_t ufind(const struct lay_dirty *d, uint64_t oid, uint64_t region, int *found)
{
	struct lay_dkey k = { oid, region };
	size_t lo = 0, hi = d->un;

	*found = 0;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		struct lay_dkey m = { d->u[mid].oid, d->u[mid].region };
		int c = key_cmp(&m, &k);

		if (c == 0) {
			*found = 1;
			return mid;
		}
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Note (@p oid, @p region) as changed in the current epoch (dirty.mu held). */
static void unflushed_add(struct lay_dirty *d, uint64_t oid, uint64_t region)
{
	int found;
	size_t i = ufind(d, oid, region, &found);

	if (found) {
		d->u[i].epoch = d->epoch;
		return;
	}
	if (d->un == d->ucap && d->un < LAY_UNFLUSHED_MAX) {
		size_t cap = d->ucap ? d->ucap * 2 : 64;
		struct lay_ukey *nu = realloc(d->u, cap * sizeof(*nu));

		if (nu) {
			d->u = nu;
			d->ucap = cap;
		}
	}
	if (d->un == d->ucap || d->un >= LAY_UNFLUSHED_MAX) {
		d->ulost = 1; /* a device lost now needs a rebuild */
		d->ulost_epoch = d->epoch;
	} else {
		memmove(&d->u[i + 1], &d->u[i], (d->un - i) * sizeof(*d->u));
		d->u[i] = (struct lay_ukey){ oid, region, d->epoch };
		d->un++;
	}
	if (d->un >= LAY_UNFLUSHED_FLUSH)
		atomic_store(&d->flush_wanted, 1);
}

/* A slot went down: what the devices acknowledged since their last flush
 * goes into the log, for a device may come back without it (dirty.mu held). */
static void merge_unflushed(struct lay_dirty *d)
{
	if (d->overflow)
		return;
	if (d->ulost) {
		overflow(d);
		return;
	}
	for (size_t i = 0; i < d->un; i++) {
		int a = insert(d, (struct lay_dkey){ d->u[i].oid, d->u[i].region });

		if (a < 0) { /* full (or no memory): the log no longer says all */
			overflow(d);
			return;
		}
		d->changed |= a > 0;
	}
}

/* Slots gone down since: the unflushed keys logged, and the slots covered
 * from now on (dirty.mu held). */
static void absorb(struct lay_dirty *d)
{
	uint64_t bits = atomic_exchange(&d->went_down, 0);

	if (atomic_exchange(&d->merge, 0))
		merge_unflushed(d);
	if (!d->overflow && (bits & ~d->covered)) {
		d->covered |= bits;
		d->changed = 1;
	}
}

int lay_dirty_note(struct lay *L, uint64_t oid, uint64_t first, uint64_t last)
{
	struct lay_dirty *d = &L->dirty;
	int rc = 0, added = 0;

	if (L->readonly || !L->formatted)
		return 0;
	pthread_mutex_lock(&d->mu);
	for (uint64_t r = first; r <= last; r++) {
		unflushed_add(d, oid, r);
		if (r == UINT64_MAX)
			break;
	}
	absorb(d);
	if (!down_mask(L)) { /* nothing to log: stored later if absorb changed it */
		pthread_mutex_unlock(&d->mu);
		return 0;
	}
	for (uint64_t r = first; !d->overflow && r <= last; r++) {
		int a = insert(d, (struct lay_dkey){ oid, r });

		if (a == -ENOSPC)
			overflow(d);
		else if (a < 0)
			rc = a;
		added |= a > 0;
		if (r == UINT64_MAX || rc < 0)
			break;
	}
	if (rc == 0 && (added || d->changed))
		rc = store_locked(L);
	pthread_mutex_unlock(&d->mu);
	return rc;
}

int lay_dirty_note_file(struct lay *L, const struct lay_info *fi, uint64_t off, uint64_t len)
{
	struct lay_map lm;
	uint64_t rows_per_region, R0, R1, lo = UINT64_MAX, hi = 0;
	int rc;

	if (len == 0 || L->readonly)
		return 0;
	if (lay_map_resolve(&lm, &fi->map, L->table.ndev) < 0)
		return lay_dirty_note(L, fi->oid, LAY_DIRTY_ALL, LAY_DIRTY_ALL);
	rows_per_region = OSDFS_LAYOUT_REGION_BYTES > lm.su ? OSDFS_LAYOUT_REGION_BYTES / lm.su : 1;
	R0 = off / (lm.su * lm.Wd);
	R1 = (off + len - 1) / (lm.su * lm.Wd);
	if (lm.G == 1) { /* one group: the component row is the logical row */
		lo = R0 / rows_per_region;
		hi = R1 / rows_per_region;
	} else {
		for (uint64_t R = R0; R <= R1; R++) {
			uint64_t k = lay_row_of(&lm, R).row / rows_per_region;

			lo = k < lo ? k : lo;
			hi = k > hi ? k : hi;
		}
	}
	rc = lay_dirty_note(L, fi->oid, lo, hi);
	return rc;
}

/* Without dirty.mu: a component op failing under a log store reaches here. */
void lay_dirty_slot_down(struct lay *L, unsigned s)
{
	if (!L->readonly)
		atomic_fetch_or(&L->dirty.went_down, 1ull << s);
}

void lay_dirty_lost_cache(struct lay *L)
{
	if (!L->readonly)
		atomic_store(&L->dirty.merge, 1);
}

uint64_t lay_dirty_flush_begin(struct lay *L)
{
	struct lay_dirty *d = &L->dirty;
	uint64_t e;

	pthread_mutex_lock(&d->mu);
	e = d->epoch++;
	pthread_mutex_unlock(&d->mu);
	return e;
}

void lay_dirty_flushed(struct lay *L, uint64_t oid, uint64_t epoch)
{
	struct lay_dirty *d = &L->dirty;
	size_t k = 0;

	pthread_mutex_lock(&d->mu);
	absorb(d); /* a device that failed the flush: its keys logged first */
	for (size_t i = 0; i < d->un; i++)
		if (d->u[i].epoch > epoch || (oid && d->u[i].oid != oid))
			d->u[k++] = d->u[i];
	d->un = k;
	if (!oid && d->ulost && d->ulost_epoch <= epoch)
		d->ulost = 0;
	pthread_mutex_unlock(&d->mu);
}

void lay_dirty_sync(struct lay *L)
{
	struct lay_dirty *d = &L->dirty;

	if (L->readonly || !L->formatted)
		return;
	pthread_mutex_lock(&d->mu);
	absorb(d);
	if (d->changed)
		store_locked(L);
	pthread_mutex_unlock(&d->mu);
}

int lay_dirty_covers(struct lay *L, unsigned s)
{
	int r;

	pthread_mutex_lock(&L->dirty.mu);
	absorb(&L->dirty);
	r = !L->dirty.overflow && (L->dirty.covered >> s & 1);
	pthread_mutex_unlock(&L->dirty.mu);
	return r;
}

int lay_dirty_snapshot(struct lay *L, struct lay_dkey **out, size_t *n)
{
	struct lay_dirty *d = &L->dirty;

	pthread_mutex_lock(&d->mu);
	absorb(d); /* keys of a device that failed: in the snapshot */
	*n = d->n;
	*out = malloc((d->n ? d->n : 1) * sizeof(**out));
	if (*out && d->n)
		memcpy(*out, d->k, d->n * sizeof(**out));
	pthread_mutex_unlock(&d->mu);
	return *out ? 0 : -ENOMEM;
}

int lay_dirty_resynced(struct lay *L, unsigned s, const struct lay_dkey *done, size_t ndone)
{
	struct lay_dirty *d = &L->dirty;
	int rc;

	pthread_mutex_lock(&d->mu);
	absorb(d);
	d->covered &= ~(1ull << s);
	if ((down_mask(L) & ~(1ull << s)) == 0) {
		/* no other slot needs them: drop what was replayed (keys noted
		 * during the resync went to the device too) */
		size_t k = 0;

		for (size_t i = 0, j = 0; i < d->n; i++) {
			while (j < ndone && key_cmp(&done[j], &d->k[i]) < 0)
				j++;
			if (j == ndone || key_cmp(&done[j], &d->k[i]) != 0)
				d->k[k++] = d->k[i];
		}
		d->n = k;
		if (d->n == 0)
			d->covered = 0;
	}
	rc = store_locked(L);
	pthread_mutex_unlock(&d->mu);
	return rc;
}

OSD_EXTERN int osdfs_layout_dirty_log(const osdfs_backend *be, uint64_t *entries,
				      uint64_t *covered)
{
	struct lay *L = lay_of(be);
	int of;

	if (!L)
		return -EINVAL;
	pthread_mutex_lock(&L->dirty.mu);
	if (entries)
		*entries = L->dirty.n;
	if (covered)
		*covered = L->dirty.covered;
	of = L->dirty.overflow;
	pthread_mutex_unlock(&L->dirty.mu);
	return of ? 1 : 0;
}

void lay_dirty_clear_if_clean(struct lay *L)
{
	struct lay_dirty *d = &L->dirty;

	pthread_mutex_lock(&d->mu);
	if (!down_mask(L) && (d->n || d->overflow || d->covered)) {
		free(d->k);
		d->k = NULL;
		d->n = d->cap = 0;
		d->covered = 0;
		d->overflow = 0;
		store_locked(L);
	}
	pthread_mutex_unlock(&d->mu);
}
