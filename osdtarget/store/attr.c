/*
 * Attributes of any object, kept per object in an array sorted by
 * (page, number) so gets are a binary search and iteration is in order.
 * Every change is logged (empty value = delete), except OSD_STORE_LAZY sets
 * (access times): those stay in memory, marked lazy, until the object's next
 * logged change logs them first. A change that logs one value writes an
 * ATTR record; one that also logs lazy values writes them all in one ATTRS
 * record (a log of version 2), so a first WRITE appends one record.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "proto/byteorder.h"
#include "store/internal.h"

static int attr_cmp(const struct osd__attr *a, uint32_t page, uint32_t num)
{
	if (a->page != page)
		return a->page < page ? -1 : 1;
	if (a->num != num)
		return a->num < num ? -1 : 1;
	return 0;
}

/* Index of the first attribute >= (page, num). */
static size_t attr_lower(const struct osd__obj *obj, uint32_t page, uint32_t num)
{
	size_t lo = 0, hi = obj->nattrs;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (attr_cmp(&obj->attrs[mid], page, num) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static void attr_val_free(struct osd__attr *a)
{
	if (a->len > OSD__ATTR_INLINE)
		free(a->v.ptr);
}

/* Entries an array holding @p n has room for: most objects hold three
 * timestamps, so the first array has room for three and later ones grow by
 * half. The object keeps no capacity of its own: it follows from nattrs. */
static uint64_t attr_room(uint64_t n)
{
	uint64_t c = 3;
	while (c < n)
		c += c / 2 + 1;
	return c;
}

/* Room for one more entry. */
static int attr_grow(struct osd__obj *obj)
{
	if (obj->nattrs && obj->nattrs < attr_room(obj->nattrs))
		return 0;
	uint64_t cap = attr_room((uint64_t)obj->nattrs + 1);
	if (cap > UINT32_MAX)
		return -ENOMEM;
	struct osd__attr *a = realloc(obj->attrs, (size_t)cap * sizeof(*a));
	if (!a)
		return -ENOMEM;
	obj->attrs = a;
	return 0;
}

/* Set or (len 0) delete an attribute. Caller holds obj->mu or owns obj. */
int osd__attr_put(struct osd__obj *obj, uint32_t page, uint32_t num,
		  const void *val, size_t len)
{
	if (len > OSD_STORE_ATTR_MAX)
		return -EINVAL;
	osd__obj_changed(obj); /* the checkpoint's records no longer hold its state */
	size_t i = attr_lower(obj, page, num);
	int found = i < obj->nattrs && attr_cmp(&obj->attrs[i], page, num) == 0;
	if (len == 0) {
		if (found) {
			attr_val_free(&obj->attrs[i]);
			memmove(&obj->attrs[i], &obj->attrs[i + 1],
				(obj->nattrs - i - 1) * sizeof(*obj->attrs));
			obj->nattrs--;
		}
		return 0;
	}
	if (found && obj->attrs[i].len == len) {
		/* same size: no reallocation */
		memcpy((uint8_t *)osd__attr_val(&obj->attrs[i]), val, len);
		obj->attrs[i].lazy = 0;
		return 0;
	}
	uint8_t *v = NULL;
	if (len > OSD__ATTR_INLINE) {
		v = malloc(len);
		if (!v)
			return -ENOMEM;
		memcpy(v, val, len);
	}
	if (found) {
		attr_val_free(&obj->attrs[i]);
	} else {
		if (attr_grow(obj)) {
			free(v);
			return -ENOMEM;
		}
		memmove(&obj->attrs[i + 1], &obj->attrs[i],
			(obj->nattrs - i) * sizeof(*obj->attrs));
		obj->nattrs++;
		obj->attrs[i].page = page;
		obj->attrs[i].num = num;
	}
	struct osd__attr *a = &obj->attrs[i];
	a->len = (uint16_t)len;
	if (v)
		a->v.ptr = v;
	else
		memcpy(a->v.in, val, len);
	a->lazy = 0;
	return 0;
}

void osd__attr_free_all(struct osd__obj *obj)
{
	for (size_t i = 0; i < obj->nattrs; i++)
		attr_val_free(&obj->attrs[i]);
	free(obj->attrs);
	obj->attrs = NULL;
	obj->nattrs = 0;
}

static void attr_done(struct osd_store *st, int change)
{
	if (change)
		osd__change_unlock(st);
	else
		pthread_rwlock_unlock(&st->ns);
}

/* The object, st->ns held for reading (a trim first, when due), and for a
 * logged @p change st->gate too; NULL with *r -ENOENT, or -EIO when its
 * records are damaged (Checkpoint index). attr_done() lets them go. */
static struct osd__obj *attr_obj(struct osd_store *st, uint64_t pid, uint64_t oid, int change,
				 int *r)
{
	osd__ns_trim(st);
	if (change)
		osd__change_lock(st, 0);
	else
		pthread_rwlock_rdlock(&st->ns);
	struct osd__obj *o = osd__ns_find(st, pid, oid);
	if (o && !o->meta_bad)
		return o;
	attr_done(st, change);
	*r = o ? -EIO : -ENOENT;
	return NULL;
}

int osd_store_attr_get(struct osd_store *st, uint64_t pid, uint64_t oid,
		       uint32_t page, uint32_t num, void *buf, size_t bufsize,
		       size_t *len)
{
	int r = -ENODATA;
	int e;
	struct osd__obj *o = attr_obj(st, pid, oid, 0, &e);
	if (!o)
		return e;
	pthread_mutex_lock(&o->mu);
	size_t i = attr_lower(o, page, num);
	if (i < o->nattrs && attr_cmp(&o->attrs[i], page, num) == 0) {
		size_t l = o->attrs[i].len;
		if (buf && bufsize)
			memcpy(buf, osd__attr_val(&o->attrs[i]), l < bufsize ? l : bufsize);
		if (len)
			*len = l;
		r = 0;
	}
	pthread_mutex_unlock(&o->mu);
	pthread_rwlock_unlock(&st->ns);
	return r;
}

/*
 * 1 if (page, num) already holds exactly @p val. A lazy (unlogged) value
 * counts as unchanged only for another lazy set. Caller holds obj->mu.
 */
static int attr_unchanged(const struct osd__obj *obj, uint32_t page, uint32_t num,
			  const void *val, size_t len, int lazy)
{
	size_t i = attr_lower(obj, page, num);

	return len && i < obj->nattrs && attr_cmp(&obj->attrs[i], page, num) == 0 &&
	       (lazy || !obj->attrs[i].lazy) &&
	       obj->attrs[i].len == len && memcmp(osd__attr_val(&obj->attrs[i]), val, len) == 0;
}

static void attr_hdr(uint8_t h[24], uint64_t pid, uint64_t oid, uint32_t page,
		     uint32_t num)
{
	osd__put_be64(h, pid);
	osd__put_be64(h + 8, oid);
	osd__put_be32(h + 16, page);
	osd__put_be32(h + 20, num);
}

/*
 * The attribute changes of one object to be logged together: the payload of
 * an ATTRS record (OSD__ATTRS_HDR, then entries) being built.
 */
struct attr_batch {
	struct osd_store *st;
	struct osd__obj *o;
	uint8_t *buf;
	size_t len, cap;
	unsigned n;                /* entries in buf */
	int pack;                  /* buf starts with the object's pending PACK state */
	int note;                  /* note its records in the object: it had no change that
				      no note holds (when it had, they would not serve) */
	int unnoted;               /* it logged a record that no note can hold (PACK), or
				      could not note one */
	uint8_t local[256];        /* a few timestamps need no malloc */
};

/* A packed object's pending state goes first, in the same record (a PACK
 * record, store format 3): a first small WRITE then appends one record. */
static void batch_init(struct attr_batch *b, struct osd_store *st, struct osd__obj *o)
{
	b->st = st;
	b->o = o;
	b->buf = b->local;
	b->cap = sizeof(b->local);
	b->len = OSD__ATTRS_HDR;
	b->n = 0;
	b->unnoted = 0;
	b->note = !o->unnoted;
	b->pack = o->pack_pending && st->log_attrs;
	if (b->pack) {
		osd__pack_rec(o, b->buf);
		b->len = OSD__PACK_HDR;
		return;
	}
	osd__put_be64(b->buf, o->pid);
	osd__put_be64(b->buf + 8, o->oid);
}

static void batch_free(struct attr_batch *b)
{
	if (b->buf != b->local)
		free(b->buf);
}

/* Log what the batch holds: one entry as an ATTR record, more as one ATTRS. */
static int batch_log(struct attr_batch *b, uint64_t *pos)
{
	uint64_t at = UINT64_MAX; /* where an ATTR or ATTRS record starts in the file */
	int r = 0;
	if (b->pack) {
		r = osd__log_append(&b->st->log, OSD__REC_PACK, b->buf, b->len, NULL, 0, pos);
		if (r)
			return r;
		osd__pack_logged(b->st, b->o, *pos);
		b->pack = 0; /* what follows is ATTRS: pid and oid start both */
		b->unnoted = 1;
	} else if (b->n == 1) {
		const uint8_t *e = b->buf + OSD__ATTRS_HDR;
		uint8_t h[24];
		uint16_t len = osd__get_be16(e + 8);
		attr_hdr(h, b->o->pid, b->o->oid, osd__get_be32(e), osd__get_be32(e + 4));
		r = osd__log_append_at(&b->st->log, OSD__REC_ATTR, h, 24, e + OSD__ATTRS_ENT, len,
				       pos, &at);
	} else if (b->n) {
		r = osd__log_append_at(&b->st->log, OSD__REC_ATTRS, b->buf, b->len, NULL, 0, pos,
				       &at);
	}
	if (!r && at != UINT64_MAX && b->note && osd__obj_note(b->o, at, *pos))
		b->unnoted = 1;
	b->len = OSD__ATTRS_HDR;
	b->n = 0;
	return r;
}

/*
 * Add a change. What the batch holds is logged first when the change does
 * not fit in the same record, or when the log is of version 1 (an older
 * build's, until the next checkpoint), which takes ATTR records only.
 */
static int batch_add(struct attr_batch *b, uint32_t page, uint32_t num, const void *val,
		     size_t len, uint64_t *pos)
{
	size_t need = OSD__ATTRS_ENT + len;
	int r = 0;
	if ((b->n || b->pack) && (!b->st->log_attrs || b->len + need > OSD__REC_MAX_PAYLOAD))
		r = batch_log(b, pos);
	if (!r && b->len + need > b->cap) {
		size_t cap = b->len + need > 2 * b->cap ? b->len + need : 2 * b->cap;
		uint8_t *nb = malloc(cap);
		if (!nb)
			return -ENOMEM;
		memcpy(nb, b->buf, b->len);
		batch_free(b);
		b->buf = nb;
		b->cap = cap;
	}
	if (r)
		return r;
	uint8_t *e = b->buf + b->len;
	osd__put_be32(e, page);
	osd__put_be32(e + 4, num);
	osd__put_be16(e + 8, (uint16_t)len);
	if (len)
		memcpy(e + OSD__ATTRS_ENT, val, len);
	b->len += need;
	b->n++;
	return 0;
}

/* Is (page, num) among the @p n values of @p v? */
static int attr_among(const struct osd_store_attr *v, size_t n, uint32_t page, uint32_t num)
{
	for (size_t i = 0; i < n; i++)
		if (v[i].page == page && v[i].num == num)
			return 1;
	return 0;
}

/* Add the object's lazy values but those the @p n values of @p v replace.
 * Caller holds obj->mu. */
static int batch_add_lazy(struct attr_batch *b, const struct osd__obj *o,
			  const struct osd_store_attr *v, size_t n, uint64_t *pos)
{
	int r = 0;
	for (size_t i = 0; i < o->nattrs && !r; i++) {
		const struct osd__attr *a = &o->attrs[i];
		if (a->lazy && !attr_among(v, n, a->page, a->num))
			r = batch_add(b, a->page, a->num, osd__attr_val(a), a->len, pos);
	}
	return r;
}

/* The lazy values were logged. Caller holds obj->mu. */
static void attr_lazy_logged(struct osd__obj *o)
{
	for (size_t i = 0; i < o->nattrs; i++)
		o->attrs[i].lazy = 0;
	o->has_lazy = 0;
}

/* Add v and make the change, or (-ENOMEM) neither. Caller holds obj->mu. */
static int batch_put(struct attr_batch *b, const struct osd_store_attr *v, uint64_t *pos)
{
	int r = batch_add(b, v->page, v->num, v->val, v->len, pos);
	if (!r && (r = osd__attr_put(b->o, v->page, v->num, v->val, v->len)) != 0) {
		b->len -= OSD__ATTRS_ENT + v->len; /* batch_add left it last */
		b->n--;
	}
	return r;
}

/*
 * A logged set of @p n values of @p o (obj->mu held), @p n 0 for the lazy
 * values alone: a pending pack state and the lazy values (replay applies
 * them first; those the values replace left out), then the values but those
 * the attributes already hold (unless OSD_STORE_FUA), in one record. Each
 * entry is added to the record before its change is made, so running out of
 * memory leaves that change unmade; what was made before is logged. The
 * record is logged under obj->mu, so records of one object are in apply
 * order. *@p pos: where it ends.
 */
static int attr_log_set(struct osd_store *st, struct osd__obj *o, const struct osd_store_attr *v,
			size_t n, unsigned flags, uint64_t *pos)
{
	struct attr_batch b;
	/* these changes are noted with their record; what came before stays as it was */
	uint8_t unnoted = o->unnoted;
	int r = 0, put = 0;
	/* an older build's log takes no PACK record with entries: one alone */
	if (o->pack_pending && !st->log_attrs) {
		r = osd__pack_log_locked(st, o, pos);
		unnoted = 1;
	}
	batch_init(&b, st, o);
	if (!r && o->has_lazy)
		r = batch_add_lazy(&b, o, v, n, pos);
	int lazy = !r && o->has_lazy; /* all of them in the batch */
	for (size_t i = 0; i < n && !r; i++) {
		if (!(flags & OSD_STORE_FUA) &&
		    attr_unchanged(o, v[i].page, v[i].num, v[i].val, v[i].len, 0))
			continue;
		r = batch_put(&b, &v[i], pos);
		put |= !r;
	}
	int l = put || lazy || b.pack ? batch_log(&b, pos) : 0;
	if (!l && lazy)
		attr_lazy_logged(o);
	if (!r && !l)
		o->unnoted = unnoted || b.unnoted;
	batch_free(&b);
	return r ? r : l;
}

int osd_store_attr_set(struct osd_store *st, uint64_t pid, uint64_t oid,
		       uint32_t page, uint32_t num, const void *val, size_t len,
		       unsigned flags)
{
	uint64_t pos = 0;
	int lazy = (flags & OSD_STORE_LAZY) && len && !(flags & OSD_STORE_FUA);
	if (len > OSD_STORE_ATTR_MAX || (len && !val))
		return -EINVAL;
	int e;
	struct osd__obj *o = attr_obj(st, pid, oid, !lazy, &e);
	if (!o)
		return e;
	pthread_mutex_lock(&o->mu);
	/*
	 * Rewriting the same bytes changes nothing (timestamps touched twice in
	 * one millisecond): no record. Not under FUA, which must also make an
	 * earlier, not yet synced record of that value durable. A logged set of
	 * an unchanged value still logs pending lazy values: it is a writer's
	 * change, after which the access times before it must be persisted.
	 */
	if (!(flags & OSD_STORE_FUA) && attr_unchanged(o, page, num, val, len, lazy)) {
		int r = 0;
		if (!lazy && (o->has_lazy || o->pack_pending))
			r = attr_log_set(st, o, NULL, 0, flags, &pos);
		pthread_mutex_unlock(&o->mu);
		attr_done(st, !lazy);
		return r || !pos ? r : osd__store_commit(st, pos, flags);
	}
	if (lazy) {
		/* not a change the checkpoint must hold: an object dropped from
		 * memory loses it as a close or a crash does (Access times) */
		uint8_t clean = o->ckpt_clean, unnoted = o->unnoted;
		int r = osd__attr_put(o, page, num, val, len);
		if (!r) {
			o->attrs[attr_lower(o, page, num)].lazy = 1;
			o->has_lazy = 1;
			o->ckpt_clean = clean;
			o->unnoted = unnoted;
		}
		pthread_mutex_unlock(&o->mu);
		attr_done(st, !lazy);
		return r; /* in memory only: no record, no commit */
	}
	const struct osd_store_attr one = { page, num, val, len };
	int r = attr_log_set(st, o, &one, 1, flags, &pos);
	pthread_mutex_unlock(&o->mu);
	attr_done(st, !lazy);
	return r ? r : osd__store_commit(st, pos, flags);
}

int osd_store_attrs_set(struct osd_store *st, uint64_t pid, uint64_t oid,
			const struct osd_store_attr *v, size_t n, unsigned flags)
{
	uint64_t pos = 0;
	int e;
	for (size_t i = 0; i < n; i++)
		if (v[i].len > OSD_STORE_ATTR_MAX || (v[i].len && !v[i].val))
			return -EINVAL;
	struct osd__obj *o = attr_obj(st, pid, oid, 1, &e);
	if (!o)
		return e;
	pthread_mutex_lock(&o->mu);
	int r = attr_log_set(st, o, v, n, flags, &pos);
	pthread_mutex_unlock(&o->mu);
	attr_done(st, 1);
	return r || !pos ? r : osd__store_commit(st, pos, flags);
}

int osd_store_attr_iterate(struct osd_store *st, uint64_t pid, uint64_t oid,
			   uint32_t page, osd_store_attr_cb cb, void *payload)
{
	int r = 0;
	int e;
	struct osd__obj *o = attr_obj(st, pid, oid, 0, &e);
	if (!o)
		return e;
	pthread_mutex_lock(&o->mu);
	size_t i = page == OSD_STORE_ALL_PAGES ? 0 : attr_lower(o, page, 0);
	for (; i < o->nattrs && !r; i++) {
		const struct osd__attr *a = &o->attrs[i];
		if (page != OSD_STORE_ALL_PAGES && a->page != page)
			break;
		r = cb(a->page, a->num, osd__attr_val(a), a->len, payload);
	}
	pthread_mutex_unlock(&o->mu);
	pthread_rwlock_unlock(&st->ns);
	return r;
}
