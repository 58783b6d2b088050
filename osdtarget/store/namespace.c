/*
 * The in-memory namespace of the store: a hash of every object keyed by
 * (partition, object id), a sorted array of partitions and, per partition,
 * its member ids in order (ids.c; LIST walks them). Mutations here are
 * logged as metadata records; replay feeds the same records back through
 * osd__ns_apply().
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "proto/byteorder.h"
#include "search/sorted_ids.h"
#include "store/internal.h"

/* ---- hash of objects ---------------------------------------------------- */

uint64_t osd__ns_hash(uint64_t pid, uint64_t oid)
{
	uint64_t h = pid * 0x9E3779B97F4A7C15ULL ^ oid;
	h ^= h >> 29;
	h *= 0xBF58476D1CE4E5B9ULL;
	h ^= h >> 32;
	return h;
}

static size_t ns_slot(const struct osd_store *st, uint64_t pid, uint64_t oid)
{
	return (size_t)osd__ns_hash(pid, oid) & (st->hash_size - 1);
}

/* Rehash into @p size slots (a power of two larger than hash_size). */
static int ns_rehash(struct osd_store *st, size_t size)
{
	size_t old = st->hash_size;
	struct osd__obj **oldh = st->hash;
	struct osd__obj **h = calloc(size, sizeof(*h));
	if (!h)
		return -ENOMEM;
	st->hash = h;
	st->hash_size = size;
	for (size_t i = 0; i < old; i++) {
		struct osd__obj *o = oldh[i];
		while (o) {
			struct osd__obj *next = o->hnext;
			size_t s = ns_slot(st, o->pid, o->oid);
			o->hnext = h[s];
			h[s] = o;
			o = next;
		}
	}
	free(oldh);
	return 0;
}

static int ns_grow(struct osd_store *st)
{
	return st->nobjs < st->hash_size ? 0 : ns_rehash(st, st->hash_size * 2);
}

void osd__ns_reserve(struct osd_store *st, size_t n)
{
	size_t size = st->hash_size;
	while (size < n && size <= SIZE_MAX / 4 / sizeof(*st->hash))
		size *= 2;
	if (size > st->hash_size)
		(void)ns_rehash(st, size); /* a hint: without memory, growth rehashes */
}

/*
 * The object if it is in memory. Without a lock of its own: under st->ns
 * held for reading the hash only gains objects at a chain's head, published
 * by osd__ns_adopt() with a release store; it is resized and loses objects
 * only under st->ns held for writing.
 */
struct osd__obj *osd__ns_lookup(struct osd_store *st, uint64_t pid, uint64_t oid)
{
	struct osd__obj *o = __atomic_load_n(&st->hash[ns_slot(st, pid, oid)], __ATOMIC_ACQUIRE);
	for (; o; o = __atomic_load_n(&o->hnext, __ATOMIC_ACQUIRE))
		if (o->pid == pid && o->oid == oid)
			break;
	return o;
}

/* The partition whose index may hold (pid, oid) on disk, or NULL. */
static struct osd__part *disk_part(struct osd_store *st, uint64_t pid, uint64_t oid)
{
	return st->ckfd >= 0 && oid ? osd__ns_part(st, pid) : NULL;
}

/* The index entry of (pid, oid) with records in the checkpoint (its place
 * in *@p pos), or NULL. */
static struct osd__id *disk_entry(struct osd_store *st, uint64_t pid, uint64_t oid,
				  struct osd__part **pp, struct osd__ids_pos *pos)
{
	struct osd__part *p = disk_part(st, pid, oid);
	struct osd__id *e = p ? osd__ids_find(&p->ids, oid, pos) : NULL;
	if (!e || !e->off)
		return NULL;
	*pp = p;
	return e;
}

static struct osd__obj *ns_publish(struct osd_store *st, struct osd__obj *o);

/*
 * The object, loaded from the checkpoint when only its index entry is in
 * memory. Callers hold st->ns (read or write), which keeps it there: only
 * osd__ns_trim() drops objects, holding st->ns for writing.
 */
struct osd__obj *osd__ns_find(struct osd_store *st, uint64_t pid, uint64_t oid)
{
	struct osd__part *p;
	struct osd__ids_pos pos;
	struct osd__obj *o = osd__ns_lookup(st, pid, oid);
	struct osd__id *e = o ? NULL : disk_entry(st, pid, oid, &p, &pos);
	if (!e)
		return o;
	o = osd__table_obj(st, p, pos);
	if (!o)
		return NULL;
	/* An object whose files are read as it loads is published with its
	 * mutex held until they are: anyone else waits for its state, and the
	 * totals change once (a thread that loaded it too frees its copy). */
	int attach = o->attach;
	if (attach)
		pthread_mutex_lock(&o->mu);
	struct osd__obj *in = ns_publish(st, o);
	/* published: what it applied is its own. Not while a checkpoint is
	 * written beside it: one that missed it in memory loads it again from
	 * the records (write_pending() in table.c), and its install clears them
	 * all. (The checkpoint sets the flag before it looks at the hash, under
	 * hash_mu as the publication: one that sees it unset was published first.) */
	if (in == o && (e->flags & OSD__ID_NOTED) && !atomic_load(&st->ckpt_online))
		osd__pend_take(st, pid, oid);
	if (in == o && attach)
		(void)osd__data_attach(st, o, st->attach_sc); /* failures leave it unusable */
	if (attach)
		pthread_mutex_unlock(&o->mu);
	if (in != o)
		osd__ns_obj_free(o);
	atomic_fetch_add(&st->loads, 1);
	return in;
}

void osd__ns_prefetch_slot(struct osd_store *st, uint64_t pid, uint64_t oid)
{
	__builtin_prefetch(&st->hash[ns_slot(st, pid, oid)]);
}

void osd__ns_prefetch(struct osd_store *st, uint64_t pid, uint64_t oid)
{
	osd__ns_prefetch_slot(st, pid, oid);
	struct osd__part *p = disk_part(st, pid, oid);
	const struct osd__ids *x = p ? &p->ids : NULL;
	if (!x || x->nc < 2)
		return;
	uint64_t a = x->first[0], b = x->first[x->nc - 1];
	if (oid > a && oid <= b)
		__builtin_prefetch(&x->first[osd__sorted_guess(0, x->nc, a, b, oid)]);
}

struct osd__id *osd__ns_on_disk(struct osd_store *st, uint64_t pid, uint64_t oid)
{
	struct osd__part *p;
	struct osd__ids_pos pos;
	return pid && !osd__ns_lookup(st, pid, oid) ? disk_entry(st, pid, oid, &p, &pos) : NULL;
}

struct osd__obj *osd__ns_get(struct osd_store *st, uint64_t pid, uint64_t oid)
{
	osd__ns_trim(st);
	pthread_rwlock_rdlock(&st->ns);
	struct osd__obj *o = osd__ns_find(st, pid, oid);
	if (o)
		atomic_fetch_add(&o->refs, 1);
	pthread_rwlock_unlock(&st->ns);
	return o;
}

void osd__ns_obj_free(struct osd__obj *o)
{
	osd__obj_io_free(o);
	osd__attr_free_all(o);
	free(o->notes);
	pthread_mutex_destroy(&o->mu);
	free(o);
}

void osd__obj_put(struct osd_store *st, struct osd__obj *obj)
{
	(void)st;
	if (obj && atomic_fetch_sub(&obj->refs, 1) == 1)
		osd__ns_obj_free(obj);
}

struct osd__obj *osd__ns_obj_new(uint64_t pid, uint64_t oid, enum osd_obj_type type)
{
	struct osd__obj *o = calloc(1, sizeof(*o));
	if (!o)
		return NULL;
	o->pid = pid;
	o->oid = oid;
	o->type = (uint8_t)type;
	o->quota = OSD_STORE_NO_QUOTA;
	o->unnoted = 1; /* until a load from the checkpoint says otherwise */
	atomic_init(&o->refs, 1);
	pthread_mutex_init(&o->mu, NULL);
	return o;
}

int osd__obj_note(struct osd__obj *o, uint64_t file_off, uint64_t end)
{
	if (o->nnotes == o->cnotes) {
		uint32_t cap = o->cnotes ? 2 * o->cnotes : 4;
		uint64_t *n = cap > o->cnotes ? realloc(o->notes, (size_t)cap * sizeof(*n)) : NULL;
		if (!n)
			return -ENOMEM;
		o->notes = n;
		o->cnotes = cap;
	}
	o->notes[o->nnotes++] = file_off;
	o->note_end = end;
	return 0;
}

static void ns_insert(struct osd_store *st, struct osd__obj *o)
{
	size_t s = ns_slot(st, o->pid, o->oid);
	o->hnext = st->hash[s];
	st->hash[s] = o;
	st->nobjs++;
}

static void ns_unlink(struct osd_store *st, struct osd__obj *o)
{
	struct osd__obj **pp = &st->hash[ns_slot(st, o->pid, o->oid)];
	while (*pp != o)
		pp = &(*pp)->hnext;
	*pp = o->hnext;
	st->nobjs--;
}

/* Put @p o, loaded under st->ns held for reading, into the hash: @return the
 * object there (another thread may have loaded it first: @p o is left to
 * the caller). */
static struct osd__obj *ns_publish(struct osd_store *st, struct osd__obj *o)
{
	pthread_mutex_lock(&st->hash_mu);
	struct osd__obj **head = &st->hash[ns_slot(st, o->pid, o->oid)];
	struct osd__obj *had = osd__ns_lookup(st, o->pid, o->oid);
	if (!had) {
		/* no resize here (readers walk without a lock): ns_evict() grows it */
		o->hnext = *head;
		__atomic_store_n(head, o, __ATOMIC_RELEASE);
		st->nobjs++;
	}
	pthread_mutex_unlock(&st->hash_mu);
	return had ? had : o;
}

struct osd__obj *osd__ns_adopt(struct osd_store *st, struct osd__obj *o)
{
	struct osd__obj *in = ns_publish(st, o);
	if (in != o)
		osd__ns_obj_free(o);
	return in;
}

/* An object that nobody uses and whose state is all in the checkpoint, or in
 * the checkpoint and the records its notes name (lazy access times are not
 * held: Access times). A packed object reloads from its records without
 * counting its slot again (osd__pack_adopt); one whose slot is damaged
 * stays, as a checkpoint of version 2 cannot say so. The references first:
 * data I/O changes the rest under obj->mu alone, holding one, and none is
 * taken while st->ns is held for writing. */
static int evictable(const struct osd_store *st, const struct osd__obj *o)
{
	return atomic_load(&o->refs) == 1 && (o->ckpt_clean || !o->unnoted) && o->part &&
	       !o->pack_pending && !o->removed &&
	       (!(o->has_file || o->has_sums) || (st->files_counted && !o->sums_bad)) &&
	       !(o->packed && (o->sums_bad || !st->pack_counted));
}

/* The index entry of @p o with records in the checkpoint, or NULL: where it
 * was when @p o loaded, unless creates and removes moved it since. */
static struct osd__id *entry_of(struct osd_store *st, const struct osd__obj *o)
{
	const struct osd__ids *x = &o->part->ids;
	struct osd__part *p;
	struct osd__ids_pos pos;
	if (st->ckfd >= 0 && o->ids_c < x->nc && o->ids_k < x->cn[o->ids_c]) {
		struct osd__id *e = &x->c[o->ids_c][o->ids_k];
		if (e->id == o->oid)
			return e->off ? e : NULL;
	}
	return disk_entry(st, o->pid, o->oid, &p, &pos);
}

/*
 * Let a changed object go with its notes (Dirty objects leave memory): each
 * record is noted as a replay would have, and its next load applies them.
 * Not while a checkpoint is written (it reads the notes of the objects it
 * did not find in memory: it must see these in memory or noted, not
 * noted twice), nor before its records are in the log file, which loads
 * read. 0 if it may go.
 */
static int note_dirty(struct osd_store *st, struct osd__obj *o)
{
	if (o->ckpt_clean)
		return 0;
	if (!o->nnotes || atomic_load(&st->ckpt_online) || st->pend_stale ||
	    o->note_end > osd__log_written(&st->log))
		return -EAGAIN;
	struct osd__id *e = entry_of(st, o);
	if (!e || osd__pend_open(st) ||
	    osd__pend_add_all(st, o->pid, o->oid, o->notes, o->nnotes))
		return -EAGAIN;
	e->flags |= OSD__ID_NOTED;
	return 0;
}

/* Drop every object evictable() allows. st->ns held for writing. */
static void ns_drop_unused(struct osd_store *st)
{
	for (size_t i = 0; i < st->hash_size; i++) {
		struct osd__obj **pp = &st->hash[i];
		while (*pp) {
			struct osd__obj *o = *pp;
			if (!evictable(st, o) || note_dirty(st, o)) {
				pp = &o->hnext;
				continue;
			}
			*pp = o->hnext;
			st->nobjs--;
			osd__obj_put(st, o);
		}
	}
}

/*
 * Drop unused objects when more than the cache are in memory. The next
 * trim comes once a quarter of the cache, or of what stays (objects with
 * data, changed ones), was loaded: the walks of the hash cost each load
 * O(1). st->ns held for writing.
 */
static void ns_evict(struct osd_store *st)
{
	osd__ns_reserve(st, st->nobjs); /* loads may have filled it (a hint) */
	if (st->nobjs > st->cache_max) {
		/* the records of changed objects into the file, where their
		 * loads read them (a failure keeps those objects) */
		(void)osd__log_write_out(&st->log);
		ns_drop_unused(st);
	}
	size_t step = (st->nobjs > st->cache_max ? st->nobjs : st->cache_max) / 4;
	atomic_store(&st->trim_step, step ? step : 1);
}

/*
 * Keep the objects in memory near the cache size: once trim_step objects
 * were loaded since the last trim, drop those that evictable() allows.
 * Never waits: a trim needs st->ns for writing, and a caller that cannot
 * have it now leaves the trim to a later one.
 */
void osd__ns_trim(struct osd_store *st)
{
	if (atomic_load(&st->loads) < atomic_load(&st->trim_step) ||
	    pthread_rwlock_trywrlock(&st->ns) != 0)
		return;
	ns_evict(st);
	atomic_store(&st->loads, 0);
	pthread_rwlock_unlock(&st->ns);
}

/* Every object in memory matches the checkpoint just written, but for user
 * objects whose data changed their pack state since it wrote them (data I/O
 * does not wait for st->ns): those over the cache go. st->ns held for
 * writing. */
void osd__ns_all_clean(struct osd_store *st)
{
	for (size_t i = 0; i < st->hash_size; i++)
		for (struct osd__obj *o = st->hash[i]; o; o = o->hnext) {
			pthread_mutex_lock(&o->mu);
			if (o->type != OSD_OBJ_USER)
				o->ckpt_clean = 1;
			else if (o->ckpt_seen) /* else loaded meanwhile: as clean as its load left it */
				o->ckpt_clean = o->ckpt_written;
			o->ckpt_seen = 0;
			/* notes name the log just replaced: one still changed stays */
			free(o->notes);
			o->notes = NULL;
			o->nnotes = o->cnotes = 0;
			o->unnoted = !o->ckpt_clean;
			pthread_mutex_unlock(&o->mu);
		}
	ns_evict(st);
}

static int resident_cmp(const void *a, const void *b)
{
	const struct osd__resident *x = a, *y = b;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->oid < y->oid ? -1 : x->oid > y->oid;
}

/* Sorted by value, not through the pointers: comparing objects themselves
 * would miss the cache on every comparison. More objects than nobjs (which
 * is exact while st->ns is held for writing) gives NULL too: the caller
 * then looks each one up. */
struct osd__resident *osd__ns_resident(struct osd_store *st, size_t *n)
{
	size_t k = 0;
	int online = atomic_load(&st->ckpt_online);
	if (online)
		pthread_rwlock_rdlock(&st->ns);
	pthread_mutex_lock(&st->hash_mu); /* objects load under st->ns held for reading */
	struct osd__resident *v = malloc((st->nobjs ? st->nobjs : 1) * sizeof(*v));
	for (size_t i = 0; v && i < st->hash_size; i++) {
		for (struct osd__obj *o = st->hash[i]; v && o; o = o->hnext) {
			if (k == st->nobjs) {
				free(v);
				v = NULL;
			} else {
				v[k++] = (struct osd__resident){ o->pid, o->oid, o };
			}
		}
	}
	for (size_t i = 0; v && i < k; i++)
		atomic_fetch_add(&v[i].o->refs, 1); /* no trim drops them meanwhile */
	pthread_mutex_unlock(&st->hash_mu);
	if (online)
		pthread_rwlock_unlock(&st->ns);
	if (!v)
		return NULL;
	qsort(v, k, sizeof(*v), resident_cmp);
	*n = k;
	return v;
}

/* ---- sorted arrays -------------------------------------------------------- */

/* Index of the first partition with pid >= @p pid. */
static size_t part_lower(const struct osd_store *st, uint64_t pid)
{
	size_t lo = 0, hi = st->nparts;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (st->parts[mid]->pid < pid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

struct osd__part *osd__ns_part(struct osd_store *st, uint64_t pid)
{
	size_t i = part_lower(st, pid);
	return i < st->nparts && st->parts[i]->pid == pid ? st->parts[i] : NULL;
}

static int grow_array(void **arr, size_t *cap, size_t need, size_t elem)
{
	if (need <= *cap)
		return 0;
	size_t n = *cap ? *cap * 2 : 16;
	while (n < need)
		n *= 2;
	void *a = realloc(*arr, n * elem);
	if (!a)
		return -ENOMEM;
	*arr = a;
	*cap = n;
	return 0;
}

/* ---- mutations (shared by the API and replay) ------------------------------ */

static void put_ids(uint8_t *b, uint64_t pid, uint64_t oid)
{
	osd__put_be64(b, pid);
	osd__put_be64(b + 8, oid);
}

static int ns_part_create(struct osd_store *st, uint64_t pid)
{
	if (pid == 0)
		return -EINVAL;
	size_t i = part_lower(st, pid);
	if (i < st->nparts && st->parts[i]->pid == pid)
		return -EEXIST;
	if (grow_array((void **)&st->parts, &st->parts_cap, st->nparts + 1, sizeof(*st->parts)) ||
	    ns_grow(st))
		return -ENOMEM;
	struct osd__part *p = calloc(1, sizeof(*p));
	struct osd__obj *o = osd__ns_obj_new(pid, 0, OSD_OBJ_PARTITION);
	if (!p || !o) {
		free(p);
		if (o)
			osd__ns_obj_free(o);
		return -ENOMEM;
	}
	p->pid = pid;
	p->obj = o;
	memmove(&st->parts[i + 1], &st->parts[i], (st->nparts - i) * sizeof(*st->parts));
	st->parts[i] = p;
	st->nparts++;
	ns_insert(st, o);
	return 0;
}

int osd__ns_part_add(struct osd_store *st, struct osd__obj *po, struct osd__ids *ids,
		     size_t ncoll, struct osd__part **out)
{
	if (grow_array((void **)&st->parts, &st->parts_cap, st->nparts + 1, sizeof(*st->parts)) ||
	    ns_grow(st))
		return -ENOMEM;
	struct osd__part *p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->pid = po->pid;
	p->obj = po;
	p->ids = *ids;
	memset(ids, 0, sizeof(*ids));
	p->ncoll = ncoll;
	po->ckpt_clean = 1;
	st->parts[st->nparts++] = p; /* the index is sorted */
	ns_insert(st, po);
	*out = p;
	return 0;
}

static int ns_part_remove(struct osd_store *st, uint64_t pid)
{
	size_t i = part_lower(st, pid);
	if (pid == 0 || i >= st->nparts || st->parts[i]->pid != pid)
		return -ENOENT;
	struct osd__part *p = st->parts[i];
	if (p->ids.n)
		return -ENOTEMPTY;
	memmove(&st->parts[i], &st->parts[i + 1], (st->nparts - i - 1) * sizeof(*st->parts));
	st->nparts--;
	ns_unlink(st, p->obj);
	pthread_mutex_lock(&p->obj->mu);
	p->obj->removed = 1;
	pthread_mutex_unlock(&p->obj->mu);
	osd__obj_put(st, p->obj);
	osd__ids_free(&p->ids);
	free(p);
	return 0;
}

static int ns_obj_create(struct osd_store *st, uint64_t pid, uint64_t oid,
			 enum osd_obj_type type, uint64_t gen)
{
	if (oid == 0 || (type != OSD_OBJ_USER && type != OSD_OBJ_COLLECTION))
		return -EINVAL;
	struct osd__part *p = osd__ns_part(st, pid);
	if (!p)
		return -ENOENT;
	struct osd__ids_pos pos = osd__ids_lower(&p->ids, oid);
	const struct osd__id *at = osd__ids_at(&p->ids, pos);
	if (at && at->id == oid)
		return -EEXIST;
	if (ns_grow(st))
		return -ENOMEM;
	struct osd__obj *o = osd__ns_obj_new(pid, oid, type);
	if (!o)
		return -ENOMEM;
	if (osd__ids_insert(&p->ids, pos, &(struct osd__id){ .id = oid, .type = (uint8_t)type })) {
		osd__ns_obj_free(o);
		return -ENOMEM;
	}
	o->gen = gen;
	o->part = p;
	p->ncoll += type == OSD_OBJ_COLLECTION;
	ns_insert(st, o);
	if (gen >= st->next_gen)
		st->next_gen = gen + 1;
	return 0;
}

/* Take the object out of the namespace; returns it with the namespace's reference. */
static struct osd__obj *ns_obj_remove(struct osd_store *st, uint64_t pid, uint64_t oid)
{
	if (oid == 0)
		return NULL;
	struct osd__obj *o = osd__ns_find(st, pid, oid);
	if (!o)
		return NULL;
	struct osd__part *p = o->part;
	struct osd__ids_pos pos;
	const struct osd__id *e = osd__ids_find(&p->ids, oid, &pos);
	if (e) { /* always: the object is in the namespace */
		p->ncoll -= e->type == OSD_OBJ_COLLECTION;
		osd__ids_remove(&p->ids, pos);
	}
	ns_unlink(st, o);
	return o;
}

static int ns_set_quota(struct osd_store *st, uint64_t pid, uint64_t oid, uint64_t quota)
{
	struct osd__obj *o = osd__ns_find(st, pid, oid);
	if (!o)
		return -ENOENT;
	if (o->type != OSD_OBJ_PARTITION && o->type != OSD_OBJ_USER)
		return -EINVAL;
	if (o->meta_bad)
		return -EIO;
	pthread_mutex_lock(&o->mu);
	o->quota = quota;
	osd__obj_changed(o);
	pthread_mutex_unlock(&o->mu);
	return 0;
}

/*
 * An ATTRS record: pid(8) oid(8), then one or more entries page(4) num(4)
 * len(2) value; a PACK record: pid(8) oid(8) where(8) length(8) crc(4),
 * then zero or more such entries. The whole record is checked before any
 * of it applies: its attribute entries fill it exactly.
 */
static int attrs_valid(const uint8_t *b, uint32_t n, int pack)
{
	uint32_t off = pack ? OSD__PACK_HDR : OSD__ATTRS_HDR;
	if (pack ? n < off : n <= off)
		return 0;
	while (off < n) {
		if (n - off < OSD__ATTRS_ENT)
			return 0;
		uint32_t len = osd__get_be16(b + off + 8);
		if (len > OSD_STORE_ATTR_MAX || n - off - OSD__ATTRS_ENT < len)
			return 0;
		off += OSD__ATTRS_ENT + len;
	}
	return 1;
}

static int attrs_put(struct osd__obj *o, const uint8_t *b, uint32_t n, uint32_t off)
{
	int r = 0;
	for (; off < n && !r; off += OSD__ATTRS_ENT + osd__get_be16(b + off + 8))
		r = osd__attr_put(o, osd__get_be32(b + off), osd__get_be32(b + off + 4),
				  b + off + OSD__ATTRS_ENT, osd__get_be16(b + off + 8));
	return r;
}

int osd__ns_deferrable(const struct osd__rec *rec)
{
	switch (rec->type) {
	case OSD__REC_ATTR:
		return rec->len >= 24;
	case OSD__REC_ATTRS:
		return attrs_valid(rec->payload, rec->len, 0);
	case OSD__REC_QUOTA:
		return rec->len == 24;
	default:
		return 0;
	}
}

static int ns_apply_attrs(struct osd_store *st, const uint8_t *b, uint32_t n, int pack)
{
	if (!attrs_valid(b, n, pack))
		return -EBADMSG;
	struct osd__obj *o = osd__ns_find(st, osd__get_be64(b), osd__get_be64(b + 8));
	if (!o)
		return -ENOENT;
	int r = pack ? osd__pack_apply(st, o, b) : 0;
	/* moved into its file: the file is the truth (a scan reads it otherwise) */
	if (!r && pack && !o->packed && st->files_counted)
		r = osd__data_attach(st, o, st->attach_sc);
	return r ? r : attrs_put(o, b, n, pack ? OSD__PACK_HDR : OSD__ATTRS_HDR);
}

/* A DATA record: the object's files changed since the checkpoint, so they
 * are read as they are now (a scan of every file reads them otherwise). */
static int ns_apply_data(struct osd_store *st, const uint8_t *b, uint32_t n)
{
	if (n != 16)
		return -EBADMSG;
	uint64_t pid = osd__get_be64(b), oid = osd__get_be64(b + 8);
	/* one with a FILE record reads its files as it loads */
	const struct osd__id *e = osd__ns_on_disk(st, pid, oid);
	int loads_attached = e && (e->flags & OSD__ID_DATA);
	struct osd__obj *o = osd__ns_find(st, pid, oid);
	if (!o)
		return -ENOENT;
	if (o->type != OSD_OBJ_USER)
		return -EINVAL;
	atomic_fetch_add(&st->data_named, 1); /* the log still names it */
	return st->files_counted && !loads_attached ? osd__data_attach(st, o, st->attach_sc) : 0;
}

int osd__ns_attrs_apply(struct osd__obj *o, const uint8_t *b, uint32_t n)
{
	return attrs_valid(b, n, 0) ? attrs_put(o, b, n, OSD__ATTRS_HDR) : -EUCLEAN;
}

/* NEXT_GEN and GENS: a generation (payload @p b, @p n bytes) raises *@p to. */
static int raise_to(uint64_t *to, const uint8_t *b, uint32_t n)
{
	if (n != 8)
		return -EBADMSG;
	if (osd__get_be64(b) > *to)
		*to = osd__get_be64(b);
	return 0;
}

int osd__ns_apply(struct osd_store *st, const struct osd__rec *rec)
{
	const uint8_t *b = rec->payload;
	uint32_t n = rec->len;
	struct osd__obj *o;

	switch (rec->type) {
	case OSD__REC_PART_CREATE:
		return n == 8 ? ns_part_create(st, osd__get_be64(b)) : -EBADMSG;
	case OSD__REC_PART_REMOVE:
		return n == 8 ? ns_part_remove(st, osd__get_be64(b)) : -EBADMSG;
	case OSD__REC_OBJ_CREATE:
		if (n != 25)
			return -EBADMSG;
		return ns_obj_create(st, osd__get_be64(b), osd__get_be64(b + 8),
				     (enum osd_obj_type)b[24], osd__get_be64(b + 16));
	case OSD__REC_OBJ_REMOVE:
		if (n != 16)
			return -EBADMSG;
		o = ns_obj_remove(st, osd__get_be64(b), osd__get_be64(b + 8));
		if (!o)
			return -ENOENT;
		osd__pack_drop(st, o);
		osd__data_account(st, o, 0);
		o->removed = 1;
		osd__obj_put(st, o);
		return 0;
	case OSD__REC_ATTR:
		if (n < 24)
			return -EBADMSG;
		o = osd__ns_find(st, osd__get_be64(b), osd__get_be64(b + 8));
		if (!o)
			return -ENOENT;
		return osd__attr_put(o, osd__get_be32(b + 16), osd__get_be32(b + 20),
				     b + 24, n - 24);
	case OSD__REC_ATTRS:
		return ns_apply_attrs(st, b, n, 0);
	case OSD__REC_PACK:
		return ns_apply_attrs(st, b, n, 1);
	case OSD__REC_CAPACITY:
		if (n != 8)
			return -EBADMSG;
		st->capacity_set = osd__get_be64(b);
		return 0;
	case OSD__REC_QUOTA:
		if (n != 24)
			return -EBADMSG;
		return ns_set_quota(st, osd__get_be64(b), osd__get_be64(b + 8),
				    osd__get_be64(b + 16));
	case OSD__REC_NEXT_GEN:
		return raise_to(&st->next_gen, b, n);
	case OSD__REC_DATA:
		return ns_apply_data(st, b, n);
	case OSD__REC_GENS:
		return raise_to(&st->gens_reserved, b, n);
	case OSD__REC_FILE:
		/* a checkpoint read whole: the scan reads the files */
		return n == OSD__FILE_LEN ? 0 : -EBADMSG;
	case OSD__REC_PACK_MAP:
	case OSD__REC_PART_USED:
		/* a checkpoint read whole: its PACK records make the map and
		 * the totals as they load (osd__pack_apply) */
		return osd__pack_summary_ok(rec) ? 0 : -EBADMSG;
	default:
		return -EBADMSG;
	}
}

int osd__ns_init(struct osd_store *st)
{
	st->hash_size = 1024;
	st->hash = calloc(st->hash_size, sizeof(*st->hash));
	st->root = osd__ns_obj_new(0, 0, OSD_OBJ_ROOT);
	if (!st->hash || !st->root)
		return -ENOMEM;
	ns_insert(st, st->root);
	st->next_gen = 1;
	return 0;
}

/* Drop every object (close/format). Caller holds the namespace exclusively. */
void osd__ns_free(struct osd_store *st)
{
	for (size_t i = 0; st->hash && i < st->hash_size; i++) {
		struct osd__obj *o = st->hash[i];
		while (o) {
			struct osd__obj *next = o->hnext;
			pthread_mutex_lock(&o->mu);
			o->removed = 1;
			pthread_mutex_unlock(&o->mu);
			osd__obj_put(st, o);
			o = next;
		}
	}
	for (size_t i = 0; i < st->nparts; i++) {
		osd__ids_free(&st->parts[i]->ids);
		free(st->parts[i]);
	}
	free(st->parts);
	free(st->hash);
	if (st->ckfd >= 0)
		close(st->ckfd);
	st->ckfd = -1;
	st->parts = NULL;
	st->nparts = st->parts_cap = 0;
	st->hash = NULL;
	st->hash_size = st->nobjs = 0;
	st->root = NULL;
}

/* ---- public API: partitions ------------------------------------------------- */

int osd_store_partition_create(struct osd_store *st, uint64_t pid, unsigned flags)
{
	uint8_t b[8];
	uint64_t pos = 0;
	osd__put_be64(b, pid);
	osd__change_lock(st, 1);
	int r = ns_part_create(st, pid);
	if (!r)
		r = osd__log_append(&st->log, OSD__REC_PART_CREATE, b, 8, NULL, 0, &pos);
	osd__change_unlock(st);
	return r ? r : osd__store_commit(st, pos, flags);
}

int osd_store_partition_remove(struct osd_store *st, uint64_t pid, unsigned flags)
{
	uint8_t b[8];
	uint64_t pos = 0;
	osd__put_be64(b, pid);
	osd__change_lock(st, 1);
	int r = ns_part_remove(st, pid);
	if (!r)
		r = osd__log_append(&st->log, OSD__REC_PART_REMOVE, b, 8, NULL, 0, &pos);
	osd__change_unlock(st);
	return r ? r : osd__store_commit(st, pos, flags);
}

int osd_store_partition_exists(struct osd_store *st, uint64_t pid)
{
	pthread_rwlock_rdlock(&st->ns);
	int r = pid != 0 && osd__ns_part(st, pid) != NULL;
	pthread_rwlock_unlock(&st->ns);
	return r;
}

int osd_store_partition_list(struct osd_store *st, uint64_t start, uint64_t *ids,
			     size_t max, size_t *count, uint64_t *next)
{
	size_t n = 0;
	pthread_rwlock_rdlock(&st->ns);
	size_t i = part_lower(st, start);
	for (; i < st->nparts && n < max; i++)
		ids[n++] = st->parts[i]->pid;
	uint64_t nx = i < st->nparts ? st->parts[i]->pid : 0;
	pthread_rwlock_unlock(&st->ns);
	*count = n;
	if (next)
		*next = nx;
	return 0;
}

int osd_store_partition_stats(struct osd_store *st, uint64_t *count, uint64_t *max_id)
{
	pthread_rwlock_rdlock(&st->ns);
	if (count)
		*count = st->nparts;
	if (max_id)
		*max_id = st->nparts ? st->parts[st->nparts - 1]->pid : 0;
	pthread_rwlock_unlock(&st->ns);
	return 0;
}

/* ---- public API: objects ---------------------------------------------------- */

/* A new object takes generation @p gen (st->ns held for writing): past the
 * reservation, a GENS record reserves the next OSD__GENS_AHEAD, so that an
 * open after a crash looks for files no record names among those only. */
static int gens_reserve(struct osd_store *st, uint64_t gen)
{
	uint8_t b[8];
	uint64_t pos;
	if (gen < st->gens_logged || !atomic_load(&st->log_files))
		return 0;
	osd__put_be64(b, gen + OSD__GENS_AHEAD);
	int r = osd__log_append(&st->log, OSD__REC_GENS, b, 8, NULL, 0, &pos);
	if (!r) {
		st->gens_logged = gen + OSD__GENS_AHEAD;
		atomic_store(&st->gens_pos, pos);
	}
	return r;
}

int osd_store_object_create(struct osd_store *st, uint64_t pid, uint64_t oid,
			    enum osd_obj_type type, unsigned flags)
{
	uint8_t b[25];
	uint64_t pos = 0;
	put_ids(b, pid, oid);
	b[24] = (uint8_t)type;
	osd__change_lock(st, 1);
	uint64_t gen = st->next_gen;
	int r = type == OSD_OBJ_USER ? gens_reserve(st, gen) : 0;
	if (!r)
		r = ns_obj_create(st, pid, oid, type, gen);
	if (!r) {
		osd__put_be64(b + 16, gen);
		r = osd__log_append(&st->log, OSD__REC_OBJ_CREATE, b, 25, NULL, 0, &pos);
	}
	osd__change_unlock(st);
	return r ? r : osd__store_commit(st, pos, flags);
}

int osd_store_object_remove(struct osd_store *st, uint64_t pid, uint64_t oid,
			    unsigned flags)
{
	uint8_t b[16];
	uint64_t pos = 0;
	int r = 0;
	put_ids(b, pid, oid);
	if (oid == 0)
		return -EINVAL;
	int had_file = 0;
	osd__change_lock(st, 1);
	struct osd__obj *o = ns_obj_remove(st, pid, oid);
	if (!o) {
		r = -ENOENT;
	} else {
		/* Under st->ns: the partition (o->part) cannot go away meanwhile. */
		pthread_mutex_lock(&o->mu);
		o->removed = 1;
		had_file = o->has_file;
		osd__data_account(st, o, 0);
		pthread_mutex_unlock(&o->mu);
		r = osd__log_append(&st->log, OSD__REC_OBJ_REMOVE, b, 16, NULL, 0, &pos);
		/* its slots are free once the REMOVE is durable (never, unlogged) */
		pthread_mutex_lock(&o->mu);
		osd__pack_forget(st, o, r ? UINT64_MAX : pos);
		pthread_mutex_unlock(&o->mu);
	}
	osd__change_unlock(st);
	if (!o)
		return r;
	osd__data_close_fd(st, o);
	if (had_file)
		osd__data_unlink_later(st, o, pos);
	osd__obj_put(st, o);
	return r ? r : osd__store_commit(st, pos, flags);
}

int osd_store_object_type(struct osd_store *st, uint64_t pid, uint64_t oid,
			  enum osd_obj_type *type)
{
	pthread_rwlock_rdlock(&st->ns);
	struct osd__obj *o = osd__ns_find(st, pid, oid);
	if (o && type)
		*type = o->type;
	pthread_rwlock_unlock(&st->ns);
	return o ? 0 : -ENOENT;
}

/* Entries per dense-run test of copy_ids: 4 KiB of the index. */
#define DENSE_RUN 256u

/*
 * Copies the ids of @p n entries. Ids are sorted and distinct, so a stretch
 * whose last id exceeds its first by its length less one holds every id
 * between them: such a stretch (objects made in order, the usual case) is
 * written from its first id without reading the entries between, and a
 * LIST walk of densely numbered objects reads two entries of each 256
 * instead of streaming 16 bytes per id from memory.
 */
static void copy_ids(const struct osd__id *e, size_t n, uint64_t *ids)
{
	for (size_t k = 0; k < n;) {
		size_t run = n - k < DENSE_RUN ? n - k : DENSE_RUN;
		uint64_t first = e[k].id;

		if (e[k + run - 1].id - first == run - 1)
			for (size_t j = 0; j < run; j++)
				ids[k + j] = first + j;
		else
			for (size_t j = 0; j < run; j++)
				ids[k + j] = e[k + j].id;
		k += run;
	}
}

int osd_store_object_list(struct osd_store *st, uint64_t pid, uint64_t start,
			  enum osd_obj_type type, uint64_t *ids, size_t max,
			  size_t *count, uint64_t *next)
{
	size_t n = 0;
	uint64_t nx = 0;
	pthread_rwlock_rdlock(&st->ns);
	struct osd__part *p = osd__ns_part(st, pid);
	if (!p || pid == 0) {
		pthread_rwlock_unlock(&st->ns);
		return -ENOENT;
	}
	const struct osd__ids *x = &p->ids;
	struct osd__ids_pos i = osd__ids_lower(x, start ? start : 1);
	const struct osd__id *e;
	if (!type || (type == OSD_OBJ_USER && !p->ncoll)) {
		/* every id qualifies: a plain copy a chunk at a time, the bulk
		 * of a LIST walk. A chunk whose last id is its first plus its
		 * size less one holds every id between: those are written from
		 * the chunk arrays alone. Reading two entries of each stretch of
		 * 256 in the chunks themselves took 2.8 times as long as in one
		 * flat array (each chunk is its own 8 KiB elsewhere) */
		while (n < max && i.c < x->nc) {
			size_t k = x->cn[i.c] - i.k < max - n ? x->cn[i.c] - i.k : max - n;
			uint64_t id = x->first[i.c] + i.k;
			if (x->last[i.c] - x->first[i.c] == x->cn[i.c] - 1)
				for (size_t j = 0; j < k; j++) /* dense: the chunk unread */
					ids[n + j] = id + j;
			else
				copy_ids(x->c[i.c] + i.k, k, ids + n);
			n += k;
			i.k += k;
			if (i.k == x->cn[i.c]) {
				i.c++;
				i.k = 0;
			}
		}
		nx = (e = osd__ids_at(x, i)) ? e->id : 0;
	} else {
		for (; (e = osd__ids_at(x, i)); osd__ids_step(x, &i)) {
			if (e->type != (uint8_t)type)
				continue;
			if (n == max) {
				nx = e->id;
				break;
			}
			ids[n++] = e->id;
		}
	}
	pthread_rwlock_unlock(&st->ns);
	*count = n;
	if (next)
		*next = nx;
	return 0;
}

int osd_store_object_count(struct osd_store *st, uint64_t pid, uint64_t start,
			   enum osd_obj_type type, uint64_t *count)
{
	uint64_t n = 0;
	pthread_rwlock_rdlock(&st->ns);
	struct osd__part *p = osd__ns_part(st, pid);
	if (!p || pid == 0) {
		pthread_rwlock_unlock(&st->ns);
		return -ENOENT;
	}
	const struct osd__ids *x = &p->ids;
	struct osd__ids_pos i = osd__ids_lower(x, start ? start : 1);
	const struct osd__id *e;
	if (!type || (type == OSD_OBJ_USER && !p->ncoll))
		n = x->n - osd__ids_rank(x, i);
	else if (p->ncoll) /* collections are few: count by a scan */
		for (; (e = osd__ids_at(x, i)); osd__ids_step(x, &i))
			n += e->type == (uint8_t)type;
	pthread_rwlock_unlock(&st->ns);
	*count = n;
	return 0;
}

int osd_store_object_stats(struct osd_store *st, uint64_t pid, uint64_t *count,
			   uint64_t *max_id)
{
	pthread_rwlock_rdlock(&st->ns);
	struct osd__part *p = pid ? osd__ns_part(st, pid) : NULL;
	if (p) {
		const struct osd__id *last = osd__ids_last(&p->ids);
		if (count)
			*count = p->ids.n;
		if (max_id)
			*max_id = last ? last->id : 0;
	}
	pthread_rwlock_unlock(&st->ns);
	return p ? 0 : -ENOENT;
}

int osd_store_set_quota(struct osd_store *st, uint64_t pid, uint64_t oid,
			uint64_t quota, unsigned flags)
{
	uint8_t b[24];
	uint64_t pos = 0;
	put_ids(b, pid, oid);
	osd__put_be64(b + 16, quota);
	osd__change_lock(st, 0);
	int r = ns_set_quota(st, pid, oid, quota);
	if (!r)
		r = osd__log_append(&st->log, OSD__REC_QUOTA, b, 24, NULL, 0, &pos);
	osd__change_unlock(st);
	return r ? r : osd__store_commit(st, pos, flags);
}

int osd_store_get_quota(struct osd_store *st, uint64_t pid, uint64_t oid, uint64_t *quota)
{
	int r = 0;
	pthread_rwlock_rdlock(&st->ns);
	struct osd__obj *o = osd__ns_find(st, pid, oid);
	if (!o) {
		r = -ENOENT;
	} else if (o->type != OSD_OBJ_PARTITION && o->type != OSD_OBJ_USER) {
		r = -EINVAL;
	} else if (o->meta_bad) {
		r = -EIO;
	} else {
		pthread_mutex_lock(&o->mu);
		*quota = o->quota;
		pthread_mutex_unlock(&o->mu);
	}
	pthread_rwlock_unlock(&st->ns);
	return r;
}
