/*
 * The layout backend's object operations. Every object's components or
 * copies sit on consecutive slots from oid % ndevices: metadata on
 * lay_meta_copies() of them (all for the table object), a file's components
 * on num_comps of them with its attributes on the first lay_holders().
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <osd/attributes.h>

#include "backends/op_sync.h"
#include "layout/layout_int.h"

#define PUNCH_CHUNK (1u << 20)

/* Consecutive slots an operation on @p oid touches. */
struct span {
	unsigned first, count;
};

static struct span meta_span(const struct lay *L, uint64_t oid)
{
	return (struct span){ (unsigned)(oid % L->table.ndev), lay_meta_copies(L, oid) };
}

static int file_map(struct lay *L, const struct lay_info *fi, struct lay_map *lm)
{
	return lay_map_resolve(lm, &fi->map, L->table.ndev) < 0 ? -EUCLEAN : 0;
}

/* The slots of an object: its metadata copies, or a file's components (all,
 * or with @p holders only those that carry its attributes). */
static int obj_span(struct lay *L, const struct lay_info *fi, int holders, struct span *sp)
{
	struct lay_map lm;

	*sp = meta_span(L, fi->oid);
	if (!fi->file)
		return 0;
	if (file_map(L, fi, &lm) < 0)
		return -EUCLEAN;
	sp->count = holders ? lay_holders(&lm) : lm.nc;
	return 0;
}

/* Combine the results of an all-copies batch: 0, a real error, -ENOENT
 * when no copy had the object, or -EIO when no copy was reachable. */
static int all_result(struct lay *L, const struct lay_copv *v)
{
	int ok = 0, noent = 0;

	for (size_t i = 0; i < v->n; i++) {
		long rc = v->v[i].rc;

		if (rc >= 0)
			ok = 1;
		else if (rc == -ENOENT)
			noent = 1;
		else if (!lay_is_dev_error(rc))
			return (int)rc;
	}
	(void)L;
	return ok ? 0 : noent ? -ENOENT : -EIO;
}

/* Queue one op of @p kind on every writable slot of @p sp. */
static int queue_all(struct lay *L, struct lay_copv *v, struct span sp, uint64_t oid,
		     enum lay_op_kind kind, struct lay_cop *tmpl)
{
	for (unsigned j = 0; j < sp.count; j++) {
		unsigned s = (sp.first + j) % L->table.ndev;
		struct lay_cop *op;

		if (!lay_writable(L, s))
			continue;
		op = lay_copv_add(v, kind, s, oid);
		if (!op)
			return -ENOMEM;
		op->off = tmpl->off;
		op->len = tmpl->iovcnt ? 0 : tmpl->len; /* lay_cop_iov() counts the data */
		op->attrs = tmpl->attrs;
		op->nattrs = tmpl->nattrs;
		op->cls = tmpl->cls;
		for (int i = 0; i < tmpl->iovcnt; i++)
			if (lay_cop_iov(op, tmpl->iov[i].iov_base, tmpl->iov[i].iov_len) < 0)
				return -ENOMEM;
	}
	return 0;
}

static int run_all(struct lay *L, struct span sp, uint64_t oid, enum lay_op_kind kind,
		   struct lay_cop *tmpl)
{
	struct lay_copv v = { 0 };
	int rc = queue_all(L, &v, sp, oid, kind, tmpl);

	if (rc == 0) {
		lay_copv_run(L, &v);
		rc = all_result(L, &v);
	}
	lay_copv_free(&v);
	lay_table_sync(L);
	return rc;
}

/* Call @p fn on the first readable slot of @p sp that answers without a device error. */
static long first_ok(struct lay *L, struct span sp,
		     long (*fn)(const struct osdfs_backend_ops *ops, void *impl, void *arg),
		     void *arg)
{
	for (unsigned j = 0; j < sp.count; j++) {
		unsigned s = (sp.first + j) % L->table.ndev;
		long rc;

		if (!lay_readable(L, s))
			continue;
		rc = fn(L->dev[s].ops, L->dev[s].impl, arg);
		lay_dev_failed(L, s, rc);
		if (!lay_is_dev_error(rc))
			return rc;
	}
	return -EIO;
}

static const struct osdfs_attr *find_attr(const struct osdfs_attr *a, int n, uint32_t page,
					  uint32_t number)
{
	for (int i = 0; i < n; i++)
		if (a[i].page == page && a[i].number == number)
			return &a[i];
	return NULL;
}

/* Whether a create makes a striped file (1) or mirrored metadata (0): the
 * caller's class hint, and without one whether it gives a data map. The
 * layout reads nothing else of the caller's attributes: what a file is
 * afterwards is its map attribute (lay_info_get()). -EINVAL: a data map
 * on an object said to be metadata. */
static int creates_file(enum osdfs_obj_class cls, const struct osdfs_attr *attrs, int nattrs)
{
	int has_map = find_attr(attrs, nattrs, OSDFS_LAYOUT_PAGE, LAY_ATTR_MAP) != NULL;

	switch (cls) {
	case OSDFS_OBJ_DATA:
		return 1;
	case OSDFS_OBJ_META:
		return has_map ? -EINVAL : 0;
	default: /* unknown, or a class newer than this code */
		return has_map;
	}
}

/* Remove what a failed create made. */
static void undo_creates(struct lay *L, const struct lay_copv *v)
{
	for (size_t i = 0; i < v->n; i++)
		if (v->v[i].rc == 0)
			L->dev[v->v[i].slot].ops->remove(L->dev[v->v[i].slot].impl, v->v[i].oid);
}

static int finish_create(struct lay *L, struct lay_copv *v)
{
	int rc;

	lay_copv_run(L, v);
	rc = all_result(L, v);
	if (rc == -ENOENT)
		rc = -EIO;
	if (rc < 0)
		undo_creates(L, v);
	return rc;
}

/* The caller's attributes without page OSDFS_LAYOUT_PAGE, plus @p extra. */
static struct osdfs_attr *merge_attrs(const struct osdfs_attr *attrs, int nattrs,
				      const struct osdfs_attr *extra, int nextra, int *n)
{
	struct osdfs_attr *a = calloc((size_t)nattrs + (size_t)nextra + 1, sizeof(*a));

	*n = 0;
	if (!a)
		return NULL;
	for (int i = 0; i < nattrs; i++)
		if (attrs[i].page != OSDFS_LAYOUT_PAGE)
			a[(*n)++] = attrs[i];
	for (int i = 0; i < nextra; i++)
		a[(*n)++] = extra[i];
	return a;
}

static int create_super(struct lay *L, const struct osdfs_attr *attrs, int nattrs)
{
	size_t tlen = lay_table_len(&L->table);
	uint8_t *tbuf = malloc(tlen), (*sbuf)[LAY_SELF_LEN] = calloc(L->table.ndev, LAY_SELF_LEN);
	struct osdfs_attr *all[OSDFS_LAYOUT_MAX_DEVICES] = { 0 };
	struct lay_copv v = { 0 };
	int rc = tbuf && sbuf ? 0 : -ENOMEM, n = 0;

	if (rc == 0)
		lay_table_encode(tbuf, &L->table);
	for (unsigned s = 0; rc == 0 && s < L->table.ndev; s++) {
		struct lay_self self = { .slot = s };
		struct osdfs_attr extra[2] = {
			{ OSDFS_LAYOUT_TABLE_PAGE, OSDFS_LAYOUT_TABLE_NUMBER, tbuf, (uint32_t)tlen },
			{ OSDFS_LAYOUT_PAGE, LAY_ATTR_SELF, sbuf[s], LAY_SELF_LEN },
		};
		struct lay_cop *op;

		if (!lay_writable(L, s))
			continue;
		memcpy(self.fs_uuid, L->table.fs_uuid, 16);
		memcpy(self.dev_uuid, L->table.ent[s].uuid, 16);
		lay_self_encode(sbuf[s], &self);
		all[s] = merge_attrs(attrs, nattrs, extra, 2, &n);
		op = all[s] ? lay_copv_add(&v, LAY_CREATE, s, OSDFS_LAYOUT_TABLE_OID) : NULL;
		if (!op)
			rc = -ENOMEM;
		else {
			op->attrs = all[s];
			op->nattrs = n;
			op->cls = OSDFS_OBJ_META;
		}
	}
	if (rc == 0)
		rc = finish_create(L, &v);
	lay_copv_free(&v);
	for (unsigned s = 0; s < L->table.ndev; s++)
		free(all[s]);
	free(tbuf);
	free(sbuf);
	return rc;
}

/* The map of a new file: from its layout attribute, else the default. */
static int new_file_map(struct lay *L, const struct osdfs_attr *attrs, int nattrs,
			struct lay_map *lm)
{
	const struct osdfs_attr *la = find_attr(attrs, nattrs, OSDFS_LAYOUT_PAGE, LAY_ATTR_MAP);
	struct osdfs_data_map m;

	if (!la) {
		*lm = L->defmap;
		return 0;
	}
	if (lay_map_decode(&m, la->value, la->len) < 0 ||
	    lay_map_resolve(lm, &m, L->table.ndev) < 0)
		return -EINVAL;
	return 0;
}

static int create_file(struct lay *L, uint64_t oid, const struct osdfs_attr *attrs, int nattrs,
		       struct lay_info *fi)
{
	uint8_t mbuf[LAY_MAP_LEN], zero[8] = { 0 };
	struct osdfs_attr extra[2] = { { OSDFS_LAYOUT_PAGE, LAY_ATTR_MAP, mbuf, LAY_MAP_LEN },
				       { OSDFS_LAYOUT_PAGE, LAY_ATTR_SIZE, zero, 8 } };
	struct lay_copv v = { 0 };
	struct lay_map lm;
	struct osdfs_attr *hold;
	int rc = new_file_map(L, attrs, nattrs, &lm), n = 0;

	if (rc < 0)
		return rc;
	lay_map_encode(mbuf, &lm.m);
	hold = merge_attrs(attrs, nattrs, extra, 2, &n);
	for (unsigned c = 0; hold && rc == 0 && c < lm.nc; c++) {
		struct lay_cop *op;

		if (!lay_writable(L, lay_slot(&lm, oid, c)))
			continue;
		op = lay_copv_add(&v, LAY_CREATE, lay_slot(&lm, oid, c), oid);
		if (!op) {
			rc = -ENOMEM;
			break;
		}
		op->attrs = c < lay_holders(&lm) ? hold : extra;
		op->nattrs = c < lay_holders(&lm) ? n : 1;
		op->cls = OSDFS_OBJ_DATA;
	}
	if (!hold)
		rc = -ENOMEM;
	if (rc == 0)
		rc = finish_create(L, &v);
	lay_copv_free(&v);
	free(hold);
	fi->file = 1;
	fi->map = lm.m;
	fi->size_known = 1;
	return rc;
}

/* A change of the whole object (created, removed, truncated, metadata):
 * logged while a slot is down, before the change and again after it (a slot
 * that failed during it); nonzero: not to be made or acknowledged. */
static int note_whole(struct lay *L, uint64_t oid)
{
	return lay_dirty_note(L, oid, LAY_DIRTY_ALL, LAY_DIRTY_ALL);
}

/* Make @p change (an expression giving 0 or -errno) of @p oid between the
 * two notes; @p rc receives the first failure. */
#define LOGGED(L, oid, rc, change) \
	do { \
		(rc) = note_whole(L, oid); \
		if ((rc) == 0) \
			(rc) = (change); \
		if ((rc) == 0) \
			(rc) = note_whole(L, oid); \
	} while (0)

static int lay_create_class(void *impl, uint64_t oid, enum osdfs_obj_class cls,
			    const struct osdfs_attr *attrs, int nattrs)
{
	struct lay *L = impl;
	struct lay_info fi = { .oid = oid };
	struct lay_cop tmpl = { .attrs = attrs, .nattrs = nattrs, .cls = OSDFS_OBJ_META };
	pthread_rwlock_t *lk = lay_lock_of(L, oid);
	int rc, file = creates_file(cls, attrs, nattrs);

	if (!L->formatted)
		return -ENODEV;
	if (L->readonly)
		return -EROFS;
	if (file < 0)
		return file;
	pthread_rwlock_rdlock(&L->count_gate);
	pthread_rwlock_wrlock(lk);
	lay_info_drop(L, oid);
	if (oid == OSDFS_LAYOUT_TABLE_OID)
		LOGGED(L, oid, rc, create_super(L, attrs, nattrs));
	else if (file)
		LOGGED(L, oid, rc, create_file(L, oid, attrs, nattrs, &fi));
	else
		LOGGED(L, oid, rc, run_all(L, meta_span(L, oid), oid, LAY_CREATE, &tmpl));
	if (rc == -ENOENT)
		rc = -EIO;
	if (rc == 0) {
		lay_info_put(L, &fi);
		lay_count_add(L, 1);
	}
	pthread_rwlock_unlock(lk);
	pthread_rwlock_unlock(&L->count_gate);
	lay_table_sync(L);
	return rc;
}

static int lay_create(void *impl, uint64_t oid, const struct osdfs_attr *attrs, int nattrs)
{
	return lay_create_class(impl, oid, OSDFS_OBJ_UNKNOWN, attrs, nattrs);
}

int lay_obj_enter(struct lay *L, uint64_t oid, int excl, struct lay_info *fi)
{
	pthread_rwlock_t *lk = lay_lock_of(L, oid);
	int rc;

	if (excl)
		pthread_rwlock_wrlock(lk);
	else
		pthread_rwlock_rdlock(lk);
	rc = lay_info_get(L, oid, fi);
	if (rc < 0)
		pthread_rwlock_unlock(lk);
	return rc;
}

int lay_obj_leave(struct lay *L, uint64_t oid, int rc)
{
	pthread_rwlock_unlock(lay_lock_of(L, oid));
	lay_table_sync(L);
	return rc;
}

static int lay_remove(void *impl, uint64_t oid)
{
	struct lay *L = impl;
	struct lay_info fi;
	struct lay_cop tmpl = { 0 };
	struct span sp;
	int rc;

	if (L->readonly)
		return -EROFS;
	pthread_rwlock_rdlock(&L->count_gate); /* count_objects() sees no removal */
	rc = lay_obj_enter(L, oid, 1, &fi);
	if (rc < 0) {
		pthread_rwlock_unlock(&L->count_gate);
		return rc;
	}
	rc = obj_span(L, &fi, 0, &sp);
	if (rc == 0)
		LOGGED(L, oid, rc, run_all(L, sp, oid, LAY_REMOVE, &tmpl));
	if (rc == 0) {
		lay_count_add(L, -1);
		lay_gather_drop(L, oid); /* bytes held for it go with it */
	}
	lay_info_drop(L, oid);
	pthread_rwlock_unlock(lay_lock_of(L, oid));
	pthread_rwlock_unlock(&L->count_gate);
	lay_table_sync(L);
	return rc;
}

struct rd_arg {
	uint64_t oid, off;
	const struct iovec *iov;
	int iovcnt;
};

static long meta_read_fn(const struct osdfs_backend_ops *ops, void *impl, void *arg)
{
	struct rd_arg *a = arg;

	return (long)ops->read(impl, a->oid, a->off, a->iov, a->iovcnt);
}

int lay_heal_meta(struct lay *L, unsigned s, uint64_t oid, uint64_t off,
		  const struct iovec *iov, int iovcnt, size_t n)
{
	ssize_t w = -EROFS;
	char what[64];

	if (!L->readonly)
		w = L->dev[s].ops->write(L->dev[s].impl, oid, off, iov, iovcnt, NULL, 0);
	if (w < 0)
		lay_dev_failed(L, s, w);
	snprintf(what, sizeof(what), "metadata copy bytes %llu+%zu", (unsigned long long)off, n);
	lay_repair_note(L, s, oid, off, w < 0 ? (int)w : 0, what);
	return w < 0 ? (int)w : 0;
}

/* Read metadata from the first copy that gives it; a copy that failed on a
 * device that still answered (a medium error) gets the bytes read written
 * over the same range (copies are identical). */
static ssize_t meta_read(struct lay *L, struct span sp, struct rd_arg *a)
{
	unsigned bad[OSDFS_LAYOUT_MAX_DEVICES], nbad = 0;
	ssize_t n = -EIO;

	for (unsigned j = 0; j < sp.count && n < 0; j++) {
		unsigned s = (sp.first + j) % L->table.ndev;

		if (!lay_readable(L, s))
			continue;
		n = meta_read_fn(L->dev[s].ops, L->dev[s].impl, a);
		if (n == -EIO && lay_dev_answers(L->dev[s].ops, L->dev[s].impl, a->oid)) {
			pthread_mutex_lock(&L->mu);
			L->dev[s].medium++;
			pthread_mutex_unlock(&L->mu);
			bad[nbad++] = s;
			continue;
		}
		lay_dev_failed(L, s, n);
		if (n < 0 && !lay_is_dev_error(n))
			return n;
	}
	for (unsigned i = 0; n > 0 && i < nbad; i++) {
		struct iovec iov[64];
		size_t left = (size_t)n;
		int cnt = 0;

		/* only the bytes read: the caller's iovecs cut at n */
		for (int k = 0; k < a->iovcnt && left && cnt < 64; k++) {
			iov[cnt] = a->iov[k];
			if (iov[cnt].iov_len > left)
				iov[cnt].iov_len = left;
			left -= iov[cnt++].iov_len;
		}
		if (left == 0)
			lay_heal_meta(L, bad[i], a->oid, a->off, iov, cnt, (size_t)n);
	}
	if (nbad)
		lay_health_sync(L);
	if (n == -EIO)
		lay_event(L, OSDFS_LAYOUT_EV_UNRECOVERABLE, -1, a->oid, a->off,
			  "metadata bytes %llu+: no copy could be read", (unsigned long long)a->off);
	return n;
}

static size_t iov_total(const struct iovec *iov, int iovcnt)
{
	size_t n = 0;

	for (int i = 0; i < iovcnt; i++)
		n += iov[i].iov_len;
	return n;
}

/* A flat buffer for @p iov: the single iovec itself, or a copy. */
static uint8_t *flat_of(const struct iovec *iov, int iovcnt, size_t total, int gather)
{
	uint8_t *b;
	size_t o = 0;

	if (iovcnt == 1)
		return iov[0].iov_base;
	b = malloc(total ? total : 1);
	for (int i = 0; b && gather && i < iovcnt; i++) {
		memcpy(b + o, iov[i].iov_base, iov[i].iov_len);
		o += iov[i].iov_len;
	}
	return b;
}

static void scatter(const struct iovec *iov, int iovcnt, const uint8_t *b, size_t n)
{
	for (int i = 0; i < iovcnt && n; i++) {
		size_t k = iov[i].iov_len < n ? iov[i].iov_len : n;

		memcpy(iov[i].iov_base, b, k);
		b += k;
		n -= k;
	}
}

static ssize_t lay_read(void *impl, uint64_t oid, uint64_t off, const struct iovec *iov,
			int iovcnt)
{
	struct lay *L = impl;
	struct lay_info fi;
	struct rd_arg a = { oid, off, iov, iovcnt };
	size_t total = iov_total(iov, iovcnt);
	ssize_t n;
	uint8_t *flat;
	int rc = iovcnt < 0 || (iovcnt && !iov) ? -EINVAL : lay_obj_enter(L, oid, 0, &fi);

	if (rc < 0)
		return rc;
	if (!fi.file) {
		n = meta_read(L, meta_span(L, oid), &a);
		return lay_obj_leave(L, oid, 0) < 0 ? -EIO : n;
	}
	flat = flat_of(iov, iovcnt, total, 0);
	n = flat ? lay_file_read(L, &fi, off, flat, total) : -ENOMEM;
	if (n > 0 && iovcnt != 1)
		scatter(iov, iovcnt, flat, (size_t)n);
	if (iovcnt != 1)
		free(flat);
	lay_obj_leave(L, oid, 0);
	return n;
}

static ssize_t lay_write(void *impl, uint64_t oid, uint64_t off, const struct iovec *iov,
			 int iovcnt, const struct osdfs_attr *attrs, int nattrs)
{
	struct lay *L = impl;
	struct lay_info fi;
	size_t total = iov_total(iov, iovcnt);
	struct lay_cop tmpl = { .off = off, .len = total, .attrs = attrs, .nattrs = nattrs,
				.iov = (struct iovec *)iov, .iovcnt = iovcnt };
	ssize_t n;
	uint8_t *flat;
	int rc = iovcnt < 0 || (iovcnt && !iov) ? -EINVAL
		 : L->readonly ? -EROFS : lay_obj_enter(L, oid, 1, &fi);

	if (rc < 0)
		return rc;
	if (!fi.file) {
		LOGGED(L, oid, rc, run_all(L, meta_span(L, oid), oid, LAY_WRITE, &tmpl));
		return lay_obj_leave(L, oid, rc) < 0 ? rc : (ssize_t)total;
	}
	flat = flat_of(iov, iovcnt, total, 1);
	n = flat ? lay_file_write(L, &fi, off, flat, total, attrs, nattrs) : -ENOMEM;
	if (iovcnt != 1)
		free(flat);
	lay_obj_leave(L, oid, 0);
	return n;
}

static int lay_truncate(void *impl, uint64_t oid, uint64_t size)
{
	struct lay *L = impl;
	struct lay_info fi;
	struct lay_cop tmpl = { .off = size };
	int rc = L->readonly ? -EROFS : lay_obj_enter(L, oid, 1, &fi);

	if (rc < 0)
		return rc;
	if (fi.file)
		LOGGED(L, oid, rc, lay_file_truncate(L, &fi, size));
	else
		LOGGED(L, oid, rc, run_all(L, meta_span(L, oid), oid, LAY_TRUNC, &tmpl));
	return lay_obj_leave(L, oid, rc);
}

/* Punch = writes of zeros over the part inside the logical length (keeps parity right). */
static int punch_file(struct lay *L, struct lay_info *fi, uint64_t off, uint64_t len)
{
	uint8_t *z;
	uint64_t size;
	int rc = lay_file_length(L, fi, &size);

	if (rc < 0 || off >= size)
		return rc;
	if (len > size - off)
		len = size - off;
	z = calloc(1, PUNCH_CHUNK);
	if (!z)
		return -ENOMEM;
	while (len && rc == 0) {
		size_t n = len < PUNCH_CHUNK ? (size_t)len : PUNCH_CHUNK;
		ssize_t w = lay_file_write(L, fi, off, z, n, NULL, 0);

		rc = w < 0 ? (int)w : 0;
		off += n;
		len -= n;
	}
	free(z);
	return rc;
}

static long meta_punch_fn(const struct osdfs_backend_ops *ops, void *impl, void *arg)
{
	const uint64_t *a = arg;

	return ops->punch(impl, a[0], a[1], a[2]);
}

static int lay_punch(void *impl, uint64_t oid, uint64_t off, uint64_t len)
{
	struct lay *L = impl;
	struct lay_info fi;
	int rc = L->readonly ? -EROFS : lay_obj_enter(L, oid, 1, &fi);

	if (rc < 0)
		return rc;
	if (fi.file) {
		rc = punch_file(L, &fi, off, len);
	} else if ((rc = note_whole(L, oid)) == 0) {
		/* every copy, one by one: punches are rare on metadata */
		struct span sp = meta_span(L, oid);
		uint64_t a[3] = { oid, off, len };
		int ok = 0;

		for (unsigned j = 0; j < sp.count && rc == 0; j++) {
			struct span one = { (sp.first + j) % L->table.ndev, 1 };
			long r;

			if (!lay_writable(L, one.first))
				continue;
			r = first_ok(L, one, meta_punch_fn, a);
			ok |= r == 0;
			rc = r < 0 && !lay_is_dev_error(r) ? (int)r : 0;
		}
		rc = rc ? rc : ok ? 0 : -EIO;
		if (rc == 0)
			rc = note_whole(L, oid);
	}
	return lay_obj_leave(L, oid, rc);
}

struct ga_arg {
	uint64_t oid;
	struct osdfs_attr *attrs;
	int nattrs;
};

static long get_attrs_fn(const struct osdfs_backend_ops *ops, void *impl, void *arg)
{
	struct ga_arg *a = arg;

	return ops->get_attrs(impl, a->oid, a->attrs, a->nattrs);
}

static int lay_get_attrs(void *impl, uint64_t oid, struct osdfs_attr *attrs, int nattrs)
{
	struct lay *L = impl;
	struct lay_info fi;
	struct ga_arg a = { oid, attrs, nattrs };
	struct span sp;
	int rc = lay_obj_enter(L, oid, 0, &fi);

	if (rc < 0)
		return rc;
	rc = obj_span(L, &fi, 1, &sp);
	if (rc == 0)
		rc = (int)first_ok(L, sp, get_attrs_fn, &a);
	/* A device's USED CAPACITY (user object information page, 81h;
	 * osd2r01 §7.1.2.11) counts one component object, not the file:
	 * not reported (osdfs then takes st_blocks from the size). */
	for (int i = 0; rc >= 0 && i < nattrs; i++)
		if (attrs[i].page == OSD_APAGE_INFORMATION &&
		    attrs[i].number == OSD_ATTR_UI_USED_CAPACITY)
			attrs[i].len = 0;
	return lay_obj_leave(L, oid, rc);
}

/* Room, beyond the caller's, for the layout's own attributes of one object
 * (a file's map and length; on the table object the table, identity,
 * health record and dirty log), each at most an OSD attribute value. */
#define OWN_MAX 8
#define OWN_BYTES (OWN_MAX * 65536u)

struct gall_arg {
	uint64_t oid;
	struct osdfs_attr *attrs;
	int max;
	uint8_t *buf;
	size_t buflen;
};

static long get_all_fn(const struct osdfs_backend_ops *ops, void *impl, void *arg)
{
	struct gall_arg *a = arg;

	if (!ops->get_all_attrs)
		return -EOPNOTSUPP;
	return ops->get_all_attrs(impl, a->oid, a->attrs, a->max, a->buf, a->buflen);
}

/* The layout's own attributes, which get_all_attrs does not report: its
 * page on every object, and the device table. */
static int layout_own(uint64_t oid, const struct osdfs_attr *a)
{
	return a->page == OSDFS_LAYOUT_PAGE ||
	       (oid == OSDFS_LAYOUT_TABLE_OID && a->page == OSDFS_LAYOUT_TABLE_PAGE &&
		a->number == OSDFS_LAYOUT_TABLE_NUMBER);
}

/* The caller's attributes of @p got[0..n) into @p out (values in @p buf). */
static int keep_callers(uint64_t oid, const struct osdfs_attr *got, int n,
			struct osdfs_attr *out, int max, uint8_t *buf, size_t buflen)
{
	size_t used = 0;
	int k = 0;

	for (int i = 0; i < n; i++) {
		if (layout_own(oid, &got[i]))
			continue;
		if (k == max || got[i].len > buflen - used)
			return -ENOSPC;
		out[k] = got[i];
		out[k].value = buf + used;
		if (got[i].len)
			memcpy(out[k].value, got[i].value, got[i].len);
		used += got[i].len;
		k++;
	}
	return k;
}

/* Every attribute the caller put on @p oid, from the copy get_attrs reads
 * (the first readable metadata copy or attribute holder). */
static int lay_get_all_attrs(void *impl, uint64_t oid, struct osdfs_attr *attrs, int max,
			     void *buf, size_t buflen)
{
	struct lay *L = impl;
	struct lay_info fi;
	struct gall_arg a = { oid, NULL, max + OWN_MAX, NULL, buflen + OWN_BYTES };
	struct span sp;
	int rc = max < 0 || (!buf && buflen) ? -EINVAL : lay_obj_enter(L, oid, 0, &fi);

	if (rc < 0)
		return rc;
	a.attrs = calloc((size_t)a.max, sizeof(*a.attrs));
	a.buf = malloc(a.buflen);
	rc = a.attrs && a.buf ? obj_span(L, &fi, 1, &sp) : -ENOMEM;
	if (rc == 0)
		rc = (int)first_ok(L, sp, get_all_fn, &a);
	if (rc >= 0)
		rc = keep_callers(oid, a.attrs, rc, attrs, max, buf, buflen);
	free(a.attrs);
	free(a.buf);
	return lay_obj_leave(L, oid, rc);
}

static int lay_set_attrs(void *impl, uint64_t oid, const struct osdfs_attr *attrs, int nattrs)
{
	struct lay *L = impl;
	struct lay_info fi;
	struct lay_cop tmpl = { .attrs = attrs, .nattrs = nattrs };
	int rc;

	if (find_attr(attrs, nattrs, OSDFS_LAYOUT_PAGE, LAY_ATTR_MAP) ||
	    find_attr(attrs, nattrs, OSDFS_LAYOUT_PAGE, LAY_ATTR_SIZE))
		return -EINVAL; /* the layout's own attributes are not the caller's to set */
	if (L->readonly)
		return -EROFS;
	rc = lay_obj_enter(L, oid, 1, &fi);
	if (rc < 0)
		return rc;
	if (fi.file)
		rc = lay_file_setattrs(L, &fi, attrs, nattrs);
	else
		LOGGED(L, oid, rc, run_all(L, meta_span(L, oid), oid, LAY_SETATTR, &tmpl));
	return lay_obj_leave(L, oid, rc);
}

struct sz_arg {
	uint64_t oid;
	uint64_t *size;
};

static long size_fn(const struct osdfs_backend_ops *ops, void *impl, void *arg)
{
	struct sz_arg *a = arg;

	return ops->size(impl, a->oid, a->size);
}

static int lay_size(void *impl, uint64_t oid, uint64_t *size)
{
	struct lay *L = impl;
	struct lay_info fi;
	struct sz_arg a = { oid, size };
	int rc = lay_obj_enter(L, oid, 0, &fi);

	if (rc < 0)
		return rc;
	if (fi.file)
		rc = lay_file_length(L, &fi, size);
	else
		rc = (int)first_ok(L, meta_span(L, oid), size_fn, &a);
	return lay_obj_leave(L, oid, rc);
}

/* Operations run synchronously; done() is called before submit() returns. */
static int lay_submit(void *impl, struct osdfs_op *op)
{
	return osdfs__op_run_sync(&lay_ops, impl, op);
}

const struct osdfs_backend_ops lay_ops = {
	.version = OSDFS_BACKEND_VERSION,
	.create = lay_create,
	.remove = lay_remove,
	.read = lay_read,
	.write = lay_write,
	.truncate = lay_truncate,
	.punch = lay_punch,
	.get_attrs = lay_get_attrs,
	.set_attrs = lay_set_attrs,
	.size = lay_size,
	.list = lay_be_list,
	.flush = lay_be_flush,
	.format = lay_be_format,
	.statfs = lay_be_statfs,
	.submit = lay_submit,
	.destroy = lay_be_destroy,
	.get_all_attrs = lay_get_all_attrs,
	.create_class = lay_create_class,
};
