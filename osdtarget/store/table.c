/*
 * The indexed checkpoint (checkpoint version 2, store format 4; version 3,
 * format 5, adds the slot map): an index of every object sorted by
 * (partition, object id) ahead of the objects' records, so that an open
 * reads the index and leaves the records on disk. An object is loaded from
 * its records when first used (osd__table_obj) and may be dropped again
 * while it is unchanged since (osd__ns_trim); only the index entry (16
 * bytes) of an object stays in memory. docs/target-store.md, "Checkpoint
 * index", has the layout:
 *
 *   file header (32) | head (104; 120 in versions 3 and 4) | index | records | END
 *
 * Version 3 ends its records with the slot map of data/pack and each
 * partition's bytes in slots (PACK_MAP and PART_USED records, from the head's
 * pack_off): the open takes them as they are instead of loading every
 * packed object to count its slot. Version 4 (format 6) ends the records of
 * each object with a data file with a FILE record (its length, used bytes
 * and files), and PART_USED counts the files' bytes too: such objects stay
 * on disk as well, and read their files when they load.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "checksum/crc32c.h"
#include "proto/byteorder.h"
#include "store/internal.h"

#define HEAD_MAGIC_V2 "OSDINDX2"
#define HEAD_MAGIC_V3 "OSDINDX3"
#define HEAD_MAGIC "OSDINDX4"   /* the layout of version 3's */
#define HEAD_LEN_V2 104u
#define HEAD_LEN 120u       /* read whole: a version 2 head and what follows fit */
#define PART_HDR 32u        /* pid(8) part_off(8) nids(8) ncoll(8) */
#define ENT_LEN 16u         /* id(8) meta(8): offset << 16 | flags << 8 | type */
#define IO_CHUNK (1u << 20) /* reads and writes of whole sections */

/* The head after the file header: where the sections are, and their CRC32Cs. */
struct head {
	unsigned version;   /* OSD__CKPT_VERSION_INDEX, _PACKMAP or OSD__CKPT_VERSION */
	uint64_t nparts, nids;
	uint64_t index_off, index_len, records_off, records_len;
	uint64_t capacity, next_gen, root_off, nrecs;
	uint64_t pack_off;  /* version 3: the first PACK_MAP or PART_USED record, or END */
	uint32_t index_crc, records_crc;
};

static unsigned head_len(unsigned version)
{
	return version == OSD__CKPT_VERSION_INDEX ? HEAD_LEN_V2 : HEAD_LEN;
}

static void head_put(uint8_t b[HEAD_LEN], const struct head *h)
{
	const uint64_t v[] = { h->nparts, h->nids, h->index_off, h->index_len, h->records_off,
			       h->records_len, h->capacity, h->next_gen, h->root_off, h->nrecs,
			       h->pack_off };
	size_t nv = h->version == OSD__CKPT_VERSION_INDEX ? 10 : 11, at = 8 + 8 * nv;
	memset(b, 0, HEAD_LEN);
	memcpy(b, h->version == OSD__CKPT_VERSION_INDEX ? HEAD_MAGIC_V2 :
		  h->version == OSD__CKPT_VERSION_PACKMAP ? HEAD_MAGIC_V3 : HEAD_MAGIC, 8);
	for (size_t i = 0; i < nv; i++)
		osd__put_be64(b + 8 + 8 * i, v[i]);
	osd__put_be32(b + at, h->index_crc);
	osd__put_be32(b + at + 4, h->records_crc);
	osd__put_be32(b + at + 8, osd__crc32c(0, b, at + 8));
}

static int head_get(const uint8_t b[HEAD_LEN], struct head *h)
{
	int v2 = !memcmp(b, HEAD_MAGIC_V2, 8), v3 = !memcmp(b, HEAD_MAGIC_V3, 8);
	size_t nv = v2 ? 10 : 11, at = 8 + 8 * nv;
	if ((!v2 && !v3 && memcmp(b, HEAD_MAGIC, 8)) ||
	    osd__get_be32(b + at + 8) != osd__crc32c(0, b, at + 8))
		return -EUCLEAN;
	uint64_t *v[] = { &h->nparts, &h->nids, &h->index_off, &h->index_len, &h->records_off,
			  &h->records_len, &h->capacity, &h->next_gen, &h->root_off, &h->nrecs,
			  &h->pack_off };
	h->version = v2 ? OSD__CKPT_VERSION_INDEX : v3 ? OSD__CKPT_VERSION_PACKMAP :
		     OSD__CKPT_VERSION;
	h->pack_off = 0;
	for (size_t i = 0; i < nv; i++)
		*v[i] = osd__get_be64(b + 8 + 8 * i);
	h->index_crc = osd__get_be32(b + at);
	h->records_crc = osd__get_be32(b + at + 4);
	if (h->index_off != OSD__FILE_HDR + head_len(h->version) || h->index_len > UINT64_MAX / 2 ||
	    h->records_off != h->index_off + h->index_len || h->records_len > UINT64_MAX / 2 ||
	    h->nparts > h->index_len / PART_HDR || h->nids > h->index_len / ENT_LEN ||
	    h->index_len != h->nparts * PART_HDR + h->nids * ENT_LEN ||
	    (!v2 && (h->pack_off < h->records_off ||
		     h->pack_off >= h->records_off + h->records_len)))
		return -EUCLEAN;
	return 0;
}

static int pread_all(int fd, void *buf, size_t len, uint64_t off)
{
	size_t done = 0;
	while (done < len) {
		ssize_t n = pread(fd, (uint8_t *)buf + done, len - done, (off_t)(off + done));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EUCLEAN;
		done += (size_t)n;
	}
	return 0;
}

static int pwrite_all(int fd, const void *buf, size_t len, uint64_t off)
{
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };
	return osd__pwrite_all(fd, &iov, 1, off);
}

int osd__table_records(const uint8_t *buf, size_t len, size_t *records_off)
{
	struct head h;
	if (len >= OSD__FILE_HDR + HEAD_LEN && !head_get(buf + OSD__FILE_HDR, &h) &&
	    h.records_off <= len) {
		*records_off = (size_t)h.records_off;
		return 0;
	}
	/* a damaged head: the records begin with CAPACITY and NEXT_GEN, after
	 * a head of either version and an index of 16-byte units */
	for (size_t off = OSD__FILE_HDR + HEAD_LEN_V2; off + 2 * (OSD__REC_HDR + 8) <= len;
	     off += 8) {
		struct osd__rec a, b;
		size_t n = osd__rec_parse(buf + off, len - off, &a);
		if (n && a.type == OSD__REC_CAPACITY && a.len == 8 &&
		    osd__rec_parse(buf + off + n, len - off - n, &b) && b.type == OSD__REC_NEXT_GEN) {
			*records_off = off;
			return 0;
		}
	}
	return -EUCLEAN;
}

/* ---- reading records at an offset ------------------------------------------------- */

/* A window of the file: records are read through it, in place. */
struct reader {
	int fd;
	uint8_t *buf;
	size_t cap;
	uint64_t base;      /* file offset of buf[0] */
	size_t len;         /* bytes valid */
	uint64_t stop;      /* a refill reads no further than this (unless it must); 0: cap */
	uint8_t small[1024];
};

static void rd_init(struct reader *r, int fd, size_t cap)
{
	r->fd = fd;
	r->buf = cap > sizeof(r->small) ? malloc(cap) : NULL;
	r->cap = r->buf ? cap : sizeof(r->small);
	if (!r->buf)
		r->buf = r->small;
	r->base = 0;
	r->len = 0;
	r->stop = 0;
}

static void rd_free(struct reader *r)
{
	if (r->buf != r->small)
		free(r->buf);
}

/* The bytes [off, off + need) of the file, or NULL (end of file: -EUCLEAN). */
static const uint8_t *rd_at(struct reader *r, uint64_t off, size_t need, int *err)
{
	if (off >= r->base && off - r->base + need <= r->len)
		return r->buf + (off - r->base);
	if (need > r->cap) {
		uint8_t *b = malloc(need);
		if (!b) {
			*err = -ENOMEM;
			return NULL;
		}
		if (r->buf != r->small)
			free(r->buf);
		r->buf = b;
		r->cap = need;
	}
	size_t want = r->cap;
	if (r->stop > off && r->stop - off < want)
		want = r->stop - off > need ? (size_t)(r->stop - off) : need;
	r->base = off;
	r->len = 0;
	while (r->len < need) {
		ssize_t n = pread(r->fd, r->buf + r->len, want - r->len, (off_t)(off + r->len));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			*err = n < 0 ? -errno : -EUCLEAN;
			return NULL;
		}
		r->len += (size_t)n;
	}
	return r->buf;
}

/* The intact record at @p off: its size, or -1 with *err (-EUCLEAN: damaged). */
static long rd_rec(struct reader *r, uint64_t off, struct osd__rec *rec, int *err)
{
	const uint8_t *p = rd_at(r, off, OSD__REC_HDR, err);
	if (!p)
		return -1;
	uint32_t len = osd__get_be32(p + 4);
	if (len > OSD__REC_MAX_PAYLOAD || !(p = rd_at(r, off, OSD__REC_HDR + len, err)))
		return *err = *err ? *err : -EUCLEAN, -1;
	size_t n = osd__rec_parse(p, OSD__REC_HDR + len, rec);
	return n ? (long)n : (*err = -EUCLEAN, -1);
}

/*
 * The record at @p off if it belongs to object (pid, oid): its size; 0 when
 * the object's records ended before it; -EUCLEAN when it is damaged.
 * @p first: the object's first record, which creates it (none for the root).
 */
static long obj_rec(struct reader *r, uint64_t off, uint64_t pid, uint64_t oid, int first,
		    struct osd__rec *rec, int *err)
{
	long n = rd_rec(r, off, rec, err);
	if (n < 0)
		return -1;
	const uint8_t *b = rec->payload;
	int mine = rec->len >= 16 && osd__get_be64(b) == pid && osd__get_be64(b + 8) == oid;
	switch (rec->type) {
	case OSD__REC_PART_CREATE:
		mine = first && oid == 0 && rec->len == 8 && osd__get_be64(b) == pid;
		break;
	case OSD__REC_OBJ_CREATE:
		mine = mine && first && rec->len == 25;
		break;
	case OSD__REC_ATTR:
	case OSD__REC_QUOTA:
	case OSD__REC_PACK:
	case OSD__REC_FILE:
		mine = mine && !(first && (pid || oid));
		break;
	default:
		mine = 0;
	}
	if (!mine && first && (pid || oid))
		return *err = -EUCLEAN, -1; /* the index names no creation there */
	return mine ? (long)n : 0;
}

/*
 * A FILE record (version 4): the object's length, used bytes (in the totals
 * already) and files as the checkpoint saw them; the files themselves are
 * read before it is used (o->attach). Without files_counted (a checkpoint
 * whose totals are counted again) the scan of the open reads them instead.
 */
static int file_apply(struct osd_store *st, struct osd__obj *o, const struct osd__rec *rec)
{
	const uint8_t *b = rec->payload;
	if (rec->len != OSD__FILE_LEN || o->type != OSD_OBJ_USER ||
	    (b[32] & ~(OSD__FILE_HAS_DATA | OSD__FILE_HAS_SUMS)))
		return -EUCLEAN;
	if (!st->files_counted)
		return 0;
	o->length = osd__get_be64(b + 16);
	o->used = osd__get_be64(b + 24);
	o->has_file = (b[32] & OSD__FILE_HAS_DATA) != 0;
	o->has_sums = (b[32] & OSD__FILE_HAS_SUMS) != 0;
	o->attach = 1;
	return 0;
}

/* Apply a record of the object's own to @p o (its creation was checked). */
static int obj_apply(struct osd_store *st, struct osd__obj *o, const struct osd__rec *rec)
{
	const uint8_t *b = rec->payload;
	switch (rec->type) {
	case OSD__REC_OBJ_CREATE:
		if (b[24] != o->type)
			return -EUCLEAN;
		o->gen = osd__get_be64(b + 16);
		return 0;
	case OSD__REC_ATTR:
		if (rec->len < 24)
			return -EUCLEAN;
		return osd__attr_put(o, osd__get_be32(b + 16), osd__get_be32(b + 20), b + 24,
				     rec->len - 24);
	case OSD__REC_ATTRS: /* only in logs: a record a replay left (log_apply) */
		return osd__ns_attrs_apply(o, b, rec->len);
	case OSD__REC_QUOTA:
		if (rec->len != 24)
			return -EUCLEAN;
		o->quota = osd__get_be64(b + 16);
		return 0;
	case OSD__REC_PACK:
		if (rec->len != OSD__PACK_HDR)
			return -EUCLEAN;
		return st->pack_counted ? osd__pack_adopt(st, o, b) : osd__pack_apply(st, o, b);
	case OSD__REC_FILE:
		return file_apply(st, o, rec);
	default:
		return 0;
	}
}

/*
 * Where the records of entry @p e of @p p end at the latest: where the next
 * entry's on disk begin (records of objects removed since may lie between,
 * their owner tells), so a damaged record there is not taken for this
 * object's; when no entry on disk follows in the partition, where the
 * objects' records end (version 3: the slot map follows them; version 2:
 * UINT64_MAX, END follows).
 */
static uint64_t obj_end(const struct osd_store *st, const struct osd__part *p,
			struct osd__ids_pos pos)
{
	const struct osd__id *n;
	for (osd__ids_step(&p->ids, &pos); (n = osd__ids_at(&p->ids, pos));
	     osd__ids_step(&p->ids, &pos))
		if (n->off)
			return n->off;
	return st->ckpt_objs_end;
}

/* Apply the records of @p o in [off, end); @return 0 or -errno, *bad the damage. */
static int obj_read(struct osd_store *st, struct reader *r, uint64_t off, uint64_t end,
		    struct osd__obj *o, uint64_t *bad)
{
	int err = 0;
	for (int first = 1; off < end; first = 0) {
		struct osd__rec rec;
		long n = obj_rec(r, off, o->pid, o->oid, first, &rec, &err);
		if (n == 0)
			return 0;
		if (n < 0 || (err = obj_apply(st, o, &rec)) != 0) {
			*bad = off;
			return err;
		}
		off += (uint64_t)n;
	}
	*bad = end;
	return off == end || end == UINT64_MAX ? 0 : -EUCLEAN; /* a record across it */
}

/*
 * Apply the log records a replay left for @p o (pending.c), in log order:
 * each read back through st->pend_fd and checked (its CRC, that it is a
 * change of this object's attributes or quota as noted). *applied: there
 * were some; @return 0 or -errno, *bad the offset of the first that failed.
 */
static int log_apply(struct osd_store *st, struct osd__obj *o, int *applied, uint64_t *bad)
{
	size_t n = 0;
	int err = 0;
	uint64_t *offs = osd__pend_offsets(st, o->pid, o->oid, &n, &err);
	if (n > UINT32_MAX)
		err = -ENOMEM;
	struct reader r;
	rd_init(&r, st->pend_fd, 0);
	for (size_t i = 0; i < n && !err; i++) {
		struct osd__rec rec;
		*bad = offs[i];
		if (rd_rec(&r, offs[i], &rec, &err) < 0)
			break;
		if (!osd__ns_deferrable(&rec) || osd__get_be64(rec.payload) != o->pid ||
		    osd__get_be64(rec.payload + 8) != o->oid)
			err = -EUCLEAN; /* not the record noted: the log changed */
		else
			err = obj_apply(st, o, &rec);
	}
	rd_free(&r);
	/* they stay its notes: it may leave memory again with them (pending.c) */
	o->notes = offs;
	o->nnotes = o->cnotes = (uint32_t)n;
	*applied = n > 0;
	return err;
}

/* osd__table_obj() through reader @p r of st->ckfd. */
static struct osd__obj *table_obj(struct osd_store *st, struct osd__part *p,
				  struct osd__ids_pos pos, struct reader *r)
{
	const struct osd__id *e = osd__ids_at(&p->ids, pos);
	uint64_t bad = 0;
	int in_log = 0, applied = 0;
	struct osd__obj *o = osd__ns_obj_new(p->pid, e->id, (enum osd_obj_type)e->type);
	if (!o)
		return NULL;
	o->part = p;
	o->ids_c = (uint32_t)pos.c;
	o->ids_k = (uint32_t)pos.k;
	int err = obj_read(st, r, e->off, obj_end(st, p, pos), o, &bad);
	if (!err && (e->flags & OSD__ID_NOTED))
		in_log = (err = log_apply(st, o, &applied, &bad)) != 0;
	if (err == -ENOMEM) {
		osd__ns_obj_free(o);
		return NULL;
	}
	if (err) {
		/* what is known of it is its id and type: the rest fails -EIO
		 * until salvage rebuilds it (the object stays in memory, told
		 * once), never answering from part of its state */
		if (in_log)
			osd__store_note(st, OSD_STORE_LOG_ERR, "%s/log: the record at byte %" PRIu64
					" that changes object 0x%" PRIx64 " in partition 0x%" PRIx64
					" cannot be read back or applied (%s): the object cannot be "
					"used; open the store with salvage (osd-targetd --salvage) to "
					"replay what is intact", st->path, bad, e->id, p->pid,
					strerror(-err));
		else
			osd__store_note(st, OSD_STORE_LOG_ERR, "%s/checkpoint: the records of object "
					"0x%" PRIx64 " in partition 0x%" PRIx64 " are damaged at byte %"
					PRIu64 " (%s): it cannot be used; open the store with salvage "
					"(osd-targetd --salvage) to rebuild the checkpoint from "
					"checkpoint.prev and the logs", st->path, e->id, p->pid, bad,
					strerror(-err));
		osd__ns_obj_free(o);
		if (!(o = osd__ns_obj_new(p->pid, e->id, (enum osd_obj_type)e->type)))
			return NULL;
		o->part = p;
		o->meta_bad = in_log ? OSD__META_BAD_LOG : OSD__META_BAD_CKPT;
		return o;
	}
	o->ckpt_clean = !applied; /* log records applied: no longer the checkpoint's state */
	o->unnoted = 0;           /* ...but that and its notes */
	return o;
}

struct osd__obj *osd__table_obj(struct osd_store *st, struct osd__part *p,
				struct osd__ids_pos pos)
{
	struct reader r;
	rd_init(&r, st->ckfd, 0);
	struct osd__obj *o = table_obj(st, p, pos, &r);
	rd_free(&r);
	return o;
}

/* ---- writing ------------------------------------------------------------------------ */

/* A buffered writer of one section, with its CRC32C. */
struct writer {
	int fd;
	uint8_t *buf;
	size_t len, cap;
	uint64_t off;       /* file offset of buf[0] */
	uint32_t crc;
	uint64_t count;     /* records */
	uint64_t kicked;    /* written back up to here (wr_flush) */
	int err;
};

/* Bytes a writer leaves to the page cache before it starts their writeback. */
#define WB_STEP (32u << 20)

static int wr_init(struct writer *w, int fd, uint64_t off, size_t cap)
{
	*w = (struct writer){ .fd = fd, .off = off, .cap = cap, .kicked = off };
	w->buf = malloc(cap);
	return w->buf ? 0 : -ENOMEM;
}

static void wr_flush(struct writer *w)
{
	if (!w->err && w->len)
		w->err = pwrite_all(w->fd, w->buf, w->len, w->off);
	w->crc = osd__crc32c(w->crc, w->buf, w->len);
	w->off += w->len;
	w->len = 0;
	/* The checkpoint is synced before anyone may use the store again: its
	 * pages go to disk while the rest is made, not all at that fsync. */
	if (!w->err && w->off - w->kicked >= WB_STEP) {
		(void)sync_file_range(w->fd, (off_t)w->kicked, (off_t)(w->off - w->kicked),
				      SYNC_FILE_RANGE_WRITE);
		w->kicked = w->off;
	}
}

static uint8_t *wr_room(struct writer *w, size_t n)
{
	if (w->len + n > w->cap)
		wr_flush(w);
	if (n > w->cap) {
		uint8_t *b = realloc(w->buf, n);
		if (!b) {
			w->err = -ENOMEM;
			return NULL;
		}
		w->buf = b;
		w->cap = n;
	}
	uint8_t *p = w->buf + w->len;
	w->len += n;
	return p;
}

static uint64_t wr_pos(const struct writer *w)
{
	return w->off + w->len;
}

static void wr_rec(struct writer *w, uint8_t type, const void *p1, size_t l1, const void *p2,
		   size_t l2)
{
	uint8_t *d = wr_room(w, OSD__REC_HDR + l1 + l2);
	if (d)
		osd__rec_encode(d, type, p1, l1, p2, l2);
	w->count++;
}

static void put_ids(uint8_t *b, uint64_t pid, uint64_t oid)
{
	osd__put_be64(b, pid);
	osd__put_be64(b + 8, oid);
}

/*
 * What the records of a checkpoint of version 3 say of data/pack, summed as
 * they are written: the slots they name and each partition's bytes in them.
 */
struct tally {
	uint64_t *map;
	size_t words;
	uint64_t *part_bytes;      /* per partition, in st->parts order */
	size_t part;               /* the partition being written */
	int err;
};

/* A record names @p slot (not damaged) of an object of the current partition. */
static void tally_slot(struct tally *t, uint32_t slot)
{
	size_t w = slot / 64;
	if (!t || !slot)
		return;
	if (w >= t->words) {
		size_t n = t->words ? t->words : 64;
		while (n <= w)
			n *= 2;
		uint64_t *m = realloc(t->map, n * sizeof(*m));
		if (!m) {
			t->err = -ENOMEM;
			return;
		}
		memset(m + t->words, 0, (n - t->words) * sizeof(*m));
		t->map = m;
		t->words = n;
	}
	t->map[w] |= 1ULL << (slot % 64);
	t->part_bytes[t->part] += OSD__PACK_SLOT;
}

/* A FILE record of an object of the current partition names @p used bytes. */
static void tally_used(struct tally *t, uint64_t used)
{
	if (t)
		t->part_bytes[t->part] += used;
}

/* The FILE record of @p o (version 4): for an object with a file or sidecar,
 * or with a data change in flight (it may be making its file now: @p
 * changing). obj->mu held. */
static void file_rec(const struct osd__obj *o, uint8_t b[OSD__FILE_LEN])
{
	put_ids(b, o->pid, o->oid);
	osd__put_be64(b + 16, o->length);
	osd__put_be64(b + 24, o->used);
	b[32] = (uint8_t)((o->has_file ? OSD__FILE_HAS_DATA : 0) |
			  (o->has_sums ? OSD__FILE_HAS_SUMS : 0));
}

/* Checkpoint: remember @p o to name in the new log (a change of its data
 * is in flight), holding a reference until then (log_carry() in store.c).
 * Without memory the totals may be off until it loads again. */
static void carry_push(struct osd_store *st, struct osd__obj *o)
{
	if (st->ncarry == st->carry_cap) {
		size_t cap = st->carry_cap ? 2 * st->carry_cap : 16;
		struct osd__obj **a = realloc(st->carry, cap * sizeof(*a));
		if (!a)
			return;
		st->carry = a;
		st->carry_cap = cap;
	}
	atomic_fetch_add(&o->refs, 1);
	st->carry[st->ncarry++] = o;
}

/* Index flags of an object that holds data in a file or sidecar (@p file) or
 * is packed (@p packed), in the version written. */
static unsigned data_flags(const struct osd_store *st, int file, int packed)
{
	if (st->ckpt_version == OSD__CKPT_VERSION_INDEX)
		return file || packed ? OSD__ID_DATA : 0;
	return (file ? OSD__ID_DATA : 0) | (packed ? OSD__ID_PACKED : 0);
}

/* The records of an object in memory; @return its index flags. Under
 * obj->mu: data I/O changes the pack and file state under it alone, and
 * reads set lazy access times while a checkpoint runs beside them. */
static unsigned write_obj(struct osd_store *st, struct writer *w, struct osd__obj *o,
			  struct tally *t)
{
	uint8_t b[25], pk[OSD__PACK_HDR], fr[OSD__FILE_LEN];
	unsigned flags = 0;
	int file = 0, packed = 0;
	pthread_mutex_lock(&o->mu);
	put_ids(b, o->pid, o->oid);
	if (o->type == OSD_OBJ_PARTITION) {
		wr_rec(w, OSD__REC_PART_CREATE, b, 8, NULL, 0);
	} else if (o->type != OSD_OBJ_ROOT) {
		osd__put_be64(b + 16, o->gen);
		b[24] = (uint8_t)o->type;
		wr_rec(w, OSD__REC_OBJ_CREATE, b, 25, NULL, 0);
	}
	if (o->type == OSD_OBJ_USER) {
		packed = st->packfd >= 0 && osd__pack_ckpt(st, o, pk);
		struct osd__obj_io *io = atomic_load(&o->io);
		int changing = io && atomic_load(&io->changing);
		file = st->ckpt_version >= OSD__CKPT_VERSION && !packed &&
		       (o->has_file || o->has_sums || changing);
		flags = data_flags(st, o->has_file || o->has_sums || file, packed);
		/* a change past its DATA check: the new log names it */
		o->ckpt_written = !changing;
		o->ckpt_seen = 1;
		if (changing && t)
			carry_push(st, o);
		if (packed && o->sums_bad && st->ckpt_version != OSD__CKPT_VERSION_INDEX)
			osd__put_be64(pk + 16, OSD__PACK_DAMAGED | o->slot); /* not its slot */
		else if (packed)
			tally_slot(t, o->slot);
		if (file) {
			file_rec(o, fr);
			tally_used(t, o->used);
		}
		if (packed)
			wr_rec(w, OSD__REC_PACK, pk, sizeof(pk), NULL, 0);
	}
	if (o->quota != OSD_STORE_NO_QUOTA) {
		osd__put_be64(b + 16, o->quota);
		wr_rec(w, OSD__REC_QUOTA, b, 24, NULL, 0);
	}
	for (size_t i = 0; i < o->nattrs; i++) {
		uint8_t h[24];
		put_ids(h, o->pid, o->oid);
		osd__put_be32(h + 16, o->attrs[i].page);
		osd__put_be32(h + 20, o->attrs[i].num);
		wr_rec(w, OSD__REC_ATTR, h, 24, osd__attr_val(&o->attrs[i]), o->attrs[i].len);
	}
	if (file) /* last: the load reads its files once its records are applied */
		wr_rec(w, OSD__REC_FILE, fr, sizeof(fr), NULL, 0);
	pthread_mutex_unlock(&o->mu);
	return flags;
}

/* A checkpoint cannot hold an object whose records are damaged. */
static int meta_bad_msg(struct osd_store *st, uint64_t pid, const struct osd__id *e,
			int why)
{
	if (why == OSD__META_BAD_LOG)
		osd__store_msg(st, "checkpoint: a log record that changes object 0x%" PRIx64
			       " in partition 0x%" PRIx64 " cannot be read back or applied",
			       e->id, pid);
	else
		osd__store_msg(st, "checkpoint: the records of object 0x%" PRIx64 " in partition "
			       "0x%" PRIx64 " are damaged at byte %" PRIu64 " of the current "
			       "checkpoint", e->id, pid, (uint64_t)e->off);
	return -EUCLEAN;
}

/* A PACK record copied for an object on disk: its slot tallied; 1 if packed. */
static int copy_pack(struct tally *t, const struct osd__rec *rec)
{
	uint32_t slot = 0;
	int damaged = 0;
	if (rec->len != OSD__PACK_HDR)
		return 0;
	int r = osd__pack_rec_where(rec->payload, &slot, &damaged);
	if (r > 0 && !damaged)
		tally_slot(t, slot);
	return r != 0;
}

/* The records of an object left on disk, copied from the current checkpoint;
 * *@p flags its index flags. */
static int copy_obj(struct osd_store *st, struct writer *w, struct reader *r,
		    const struct osd__part *p, struct osd__ids_pos pos, unsigned *flags,
		    struct tally *t)
{
	int err = 0, packed = 0, file = 0;
	const struct osd__id *e = osd__ids_at(&p->ids, pos);
	uint64_t off = e->off, end = obj_end(st, p, pos);
	for (int first = 1; off < end; first = 0) {
		struct osd__rec rec;
		long n = obj_rec(r, off, p->pid, e->id, first, &rec, &err);
		if (n == 0)
			break;
		if (n < 0)
			return err == -ENOMEM ? err : meta_bad_msg(st, p->pid, e, OSD__META_BAD_CKPT);
		if (rec.type == OSD__REC_PACK)
			packed = copy_pack(t, &rec);
		if (rec.type == OSD__REC_FILE && rec.len == OSD__FILE_LEN) {
			file = 1;
			tally_used(t, osd__get_be64(rec.payload + 24));
		}
		uint8_t *d = wr_room(w, (size_t)n);
		if (d)
			memcpy(d, rec.payload - OSD__REC_HDR, (size_t)n);
		w->count++;
		off += (uint64_t)n;
	}
	if (off > end)
		return meta_bad_msg(st, p->pid, e, OSD__META_BAD_CKPT); /* a record runs past end */
	/* before version 4 objects with a file or sidecar never left memory:
	 * one on disk holds data only in a slot, whatever an index of version 2
	 * said; in version 4 its FILE record says so */
	*flags = (e->flags & ~(OSD__ID_NOTED | OSD__ID_DATA | OSD__ID_PACKED)) |
		 data_flags(st, file, packed);
	return 0;
}

/* An object on disk with log records a replay left for it (pending.c):
 * loaded apart with them, written from memory, freed. */
static int write_pending(struct osd_store *st, struct writer *w, struct osd__part *p,
			 struct osd__ids_pos pos, unsigned *flags, struct tally *tl)
{
	const struct osd__id *e = osd__ids_at(&p->ids, pos);
	struct osd__obj *t = osd__table_obj(st, p, pos);
	if (!t)
		return -ENOMEM;
	int err = t->meta_bad ? meta_bad_msg(st, p->pid, e, t->meta_bad) : 0;
	if (!err)
		*flags = write_obj(st, w, t, tl);
	osd__ns_obj_free(t);
	return err;
}

static void index_ent(struct writer *x, uint64_t id, uint64_t off, unsigned flags, unsigned type)
{
	uint8_t *d = wr_room(x, ENT_LEN);
	if (!d)
		return;
	osd__put_be64(d, id);
	osd__put_be64(d + 8, off << 16 | (uint64_t)(flags & 0xFF) << 8 | (type & 0xFF));
}

static struct head plan(const struct osd_store *st)
{
	struct head h = { .version = st->ckpt_version, .nparts = st->nparts,
			  .index_off = OSD__FILE_HDR + head_len(st->ckpt_version) };
	for (size_t i = 0; i < st->nparts; i++)
		h.nids += st->parts[i]->ids.n;
	h.index_len = h.nparts * PART_HDR + h.nids * ENT_LEN;
	h.records_off = h.index_off + h.index_len;
	h.capacity = atomic_load(&st->capacity_set);
	h.next_gen = st->next_gen;
	return h;
}

/* The objects in memory, walked beside the sorted index: looking each index
 * entry up in the hash instead missed the cache once per object, a third
 * of a checkpoint of 10M objects. */
struct resident_walk {
	struct osd__resident *v;   /* NULL: no memory for it, look up the hash */
	size_t n, at;
};

/* The object in memory for index entry @p id of partition @p pid, or NULL;
 * calls come in (pid, id) order. */
static struct osd__obj *resident_next(struct osd_store *st, struct resident_walk *rw,
				      uint64_t pid, uint64_t id)
{
	if (!rw->v)
		return osd__ns_lookup(st, pid, id);
	while (rw->at < rw->n && (rw->v[rw->at].pid < pid ||
				  (rw->v[rw->at].pid == pid && rw->v[rw->at].oid < id)))
		rw->at++;
	if (rw->at < rw->n && rw->v[rw->at].pid == pid && rw->v[rw->at].oid == id)
		return rw->v[rw->at].o;
	return NULL;
}

/* The partitions and their objects: records to @p w, index to @p x. */
static int write_parts(struct osd_store *st, struct writer *w, struct writer *x,
		       struct tally *t)
{
	struct resident_walk rw = { NULL, 0, 0 };
	struct reader r;
	int err = 0;
	rw.v = osd__ns_resident(st, &rw.n);
	if (!rw.v && atomic_load(&st->ckpt_online))
		return -ENOMEM; /* the hash changes meanwhile: no lookups in it */
	if (st->ckpt_hook && atomic_load(&st->ckpt_online))
		st->ckpt_hook(st->ckpt_hook_arg);
	rd_init(&r, st->ckfd, IO_CHUNK);
	for (size_t i = 0; i < st->nparts && !err && !w->err && !x->err; i++) {
		struct osd__part *p = st->parts[i];
		uint8_t *d = wr_room(x, PART_HDR);
		if (d) {
			osd__put_be64(d, p->pid);
			osd__put_be64(d + 8, wr_pos(w));
			osd__put_be64(d + 16, p->ids.n);
			osd__put_be64(d + 24, p->ncoll);
		}
		(void)write_obj(st, w, p->obj, NULL);
		t->part = i;
		const struct osd__id *e;
		for (struct osd__ids_pos k = { 0, 0 }; !err && (e = osd__ids_at(&p->ids, k));
		     osd__ids_step(&p->ids, &k)) {
			struct osd__obj *o = resident_next(st, &rw, p->pid, e->id);
			uint64_t off = wr_pos(w);
			unsigned flags = e->flags & ~OSD__ID_NOTED;
			if (o && o->meta_bad)
				err = meta_bad_msg(st, p->pid, e, o->meta_bad);
			else if (o)
				flags = write_obj(st, w, o, t);
			else if (e->off && st->ckfd >= 0 && (e->flags & OSD__ID_NOTED))
				err = write_pending(st, w, p, k, &flags, t);
			else if (e->off && st->ckfd >= 0)
				err = copy_obj(st, w, &r, p, k, &flags, t);
			else
				err = -EUCLEAN; /* neither in memory nor on disk: a bug */
			index_ent(x, e->id, off, flags, e->type);
		}
	}
	rd_free(&r);
	for (size_t i = 0; rw.v && i < rw.n; i++)
		osd__obj_put(st, rw.v[i].o);
	free(rw.v);
	return err ? err : t->err ? t->err : w->err ? w->err : x->err;
}

/* Version 3: the slot map's words that have a slot set, then each
 * partition's bytes in slots. */
static void write_summary(struct osd_store *st, struct writer *w, const struct tally *t)
{
	uint8_t b[16], *q = t->words ? malloc(8 + 8 * OSD__PACK_MAP_WORDS) : NULL;
	if (t->words && !q)
		w->err = -ENOMEM;
	for (size_t first = 0; q && first < t->words; first += OSD__PACK_MAP_WORDS) {
		size_t n = t->words - first < OSD__PACK_MAP_WORDS ? t->words - first :
			   OSD__PACK_MAP_WORDS;
		while (n && !t->map[first + n - 1])
			n--;
		if (!n)
			continue;
		osd__put_be64(q, first);
		for (size_t i = 0; i < n; i++)
			osd__put_be64(q + 8 + 8 * i, t->map[first + i]);
		wr_rec(w, OSD__REC_PACK_MAP, q, 8 + 8 * n, NULL, 0);
	}
	free(q);
	for (size_t i = 0; i < st->nparts; i++) {
		if (!t->part_bytes[i])
			continue;
		osd__put_be64(b, st->parts[i]->pid);
		osd__put_be64(b + 8, t->part_bytes[i]);
		wr_rec(w, OSD__REC_PART_USED, b, 16, NULL, 0);
	}
}

int osd__table_write(struct osd_store *st, int fd, uint64_t *size)
{
	struct head h = plan(st);
	struct writer w, x;
	struct tally t = { .part_bytes = calloc(st->nparts + 1, sizeof(uint64_t)) };
	uint8_t b[8];
	int r = t.part_bytes ? wr_init(&w, fd, h.records_off, IO_CHUNK) : -ENOMEM;
	if (r) {
		free(t.part_bytes);
		return r;
	}
	if ((r = wr_init(&x, fd, h.index_off, 64u << 10)) != 0) {
		free(w.buf);
		free(t.part_bytes);
		return r;
	}
	osd__put_be64(b, h.capacity);
	wr_rec(&w, OSD__REC_CAPACITY, b, 8, NULL, 0);
	osd__put_be64(b, h.next_gen);
	wr_rec(&w, OSD__REC_NEXT_GEN, b, 8, NULL, 0);
	h.root_off = wr_pos(&w);
	(void)write_obj(st, &w, st->root, NULL);
	r = write_parts(st, &w, &x, &t);
	h.pack_off = wr_pos(&w);
	if (h.version != OSD__CKPT_VERSION_INDEX)
		write_summary(st, &w, &t);
	free(t.map);
	free(t.part_bytes);
	osd__put_be64(b, w.count);
	wr_rec(&w, OSD__REC_END, b, 8, NULL, 0);
	wr_flush(&w);
	wr_flush(&x);
	if (!r)
		r = w.err ? w.err : x.err;
	if (!r && x.off != h.records_off)
		r = -EIO; /* the index is not the size planned: a bug */
	h.records_len = w.off - h.records_off;
	h.nrecs = w.count - 1; /* as END counts them */
	h.index_crc = x.crc;
	h.records_crc = w.crc;
	free(w.buf);
	free(x.buf);
	if (!r) {
		uint8_t hb[HEAD_LEN];
		head_put(hb, &h);
		r = pwrite_all(fd, hb, head_len(h.version), OSD__FILE_HDR);
	}
	*size = h.records_off + h.records_len;
	return r;
}

/* ---- loading the index --------------------------------------------------------------- */

/* CRC32C of [off, off + len) of @p fd. */
static int crc_range(int fd, uint64_t off, uint64_t len, uint32_t *crc)
{
	uint8_t *buf = malloc(IO_CHUNK);
	int r = buf ? 0 : -ENOMEM;
	*crc = 0;
	while (!r && len) {
		size_t n = len < IO_CHUNK ? (size_t)len : IO_CHUNK;
		r = pread_all(fd, buf, n, off);
		if (!r)
			*crc = osd__crc32c(*crc, buf, n);
		off += n;
		len -= n;
	}
	free(buf);
	return r;
}

static void ent_get(const uint8_t *d, struct osd__id *e)
{
	uint64_t meta = osd__get_be64(d + 8);
	e->id = osd__get_be64(d);
	e->off = meta >> 16;
	e->flags = (meta >> 8) & 0xFF & ~OSD__ID_NOTED; /* a replay's, never a file's */
	e->type = meta & 0xFF;
}

/* Read the head and check the index's CRC32C. */
static int head_read(int fd, struct head *h, uint64_t *bad)
{
	uint8_t hb[HEAD_LEN];
	uint32_t crc;
	*bad = OSD__FILE_HDR;
	int r = pread_all(fd, hb, HEAD_LEN, OSD__FILE_HDR);
	if (r || (r = head_get(hb, h)) != 0)
		return r;
	*bad = h->index_off;
	if ((r = crc_range(fd, h->index_off, h->index_len, &crc)) != 0 || crc != h->index_crc)
		return r ? r : -EUCLEAN;
	return 0;
}

/* One partition's index entries into @p ids, checked: sorted, within the records. */
static int read_ents(struct reader *rd, const struct head *h, uint64_t *pos,
		     struct osd__ids *ids, uint64_t nids, uint64_t *ncoll)
{
	int err = 0;
	uint64_t prev = 0;
	*ncoll = 0;
	for (uint64_t k = 0; k < nids; k++, *pos += ENT_LEN) {
		const uint8_t *d = rd_at(rd, *pos, ENT_LEN, &err);
		if (!d)
			return err;
		struct osd__id e;
		ent_get(d, &e);
		if (e.id <= prev || e.off < h->records_off ||
		    e.off >= h->records_off + h->records_len ||
		    (e.type != OSD_OBJ_USER && e.type != OSD_OBJ_COLLECTION))
			return -EUCLEAN;
		if (osd__ids_append(ids, &e))
			return -ENOMEM;
		prev = e.id;
		*ncoll += e.type == OSD_OBJ_COLLECTION;
	}
	return 0;
}

/* Members of @p p whose index entry has @p flag. */
static size_t flagged(const struct osd__part *p, unsigned flag)
{
	size_t n = 0;
	for (size_t c = 0; c < p->ids.nc; c++)
		for (size_t k = 0; k < p->ids.cn[c]; k++)
			n += (p->ids.c[c][k].flags & flag) != 0;
	return n;
}

/*
 * Grow the hash of objects for the members of @p p that hold data, which
 * the open loads: osd__ns_adopt() never resizes it (readers walk it without
 * a lock), so 200,000 of them piled up in chains 200 long and an open of
 * that store spent 90 % of its 3.7-4.1 s walking them.
 */
static void reserve_data(struct osd_store *st, const struct osd__part *p)
{
	size_t n = flagged(p, OSD__ID_DATA);
	if (n)
		osd__ns_reserve(st, st->nobjs + n);
}

/* Entries ahead of the one loaded whose hash slots are fetched: each load
 * adopts its object into a random slot of a hash the size of the store. */
#define LOAD_AHEAD 8

/* Where the records of the run of objects that hold data from entry @p k
 * of @p p end: at the next entry's that holds none (UINT64_MAX: the last). */
static uint64_t data_run_end(const struct osd__part *p, struct osd__ids_pos k)
{
	const struct osd__id *e;
	for (osd__ids_step(&p->ids, &k); (e = osd__ids_at(&p->ids, k)); osd__ids_step(&p->ids, &k))
		if (!(e->flags & OSD__ID_DATA))
			return e->off;
	return UINT64_MAX;
}

/*
 * Partition at *@p pos of the index: its object is loaded and, before
 * version 4, the objects that hold data (their state is rebuilt from their
 * files and data/pack at the open, so they stay in memory); the rest stay
 * on disk.
 */
static int load_part(struct osd_store *st, struct reader *rd, const struct head *h,
		     uint64_t *pos, uint64_t *prev, uint64_t *bad)
{
	int err = 0;
	*bad = *pos;
	const uint8_t *d = rd_at(rd, *pos, PART_HDR, &err);
	if (!d)
		return err;
	uint64_t pid = osd__get_be64(d), part_off = osd__get_be64(d + 8);
	uint64_t nids = osd__get_be64(d + 16), want_coll = osd__get_be64(d + 24), ncoll;
	if (!pid || pid <= *prev || nids > (h->records_off - *pos - PART_HDR) / ENT_LEN ||
	    part_off < h->records_off || part_off >= h->records_off + h->records_len)
		return -EUCLEAN;
	*prev = pid;
	*pos += PART_HDR;
	struct osd__ids ids = { 0 };
	struct osd__obj *po = osd__ns_obj_new(pid, 0, OSD_OBJ_PARTITION);
	struct osd__part *p = NULL;
	struct reader r1;
	rd_init(&r1, rd->fd, 0);
	int r = !po ? -ENOMEM : read_ents(rd, h, pos, &ids, nids, &ncoll);
	if (!r && ncoll != want_coll)
		r = -EUCLEAN;
	if (!r && (r = obj_read(st, &r1, part_off, UINT64_MAX, po, bad)) == 0 &&
	    (r = osd__ns_part_add(st, po, &ids, (size_t)ncoll, &p)) == 0)
		po = NULL;
	rd_free(&r1);
	osd__ids_free(&ids);
	if (po)
		osd__ns_obj_free(po);
	if (!r && st->files_counted)
		return 0; /* version 4: file objects load when used */
	if (!r)
		reserve_data(st, p);
	/* the records of neighbours in the index are neighbours in the file:
	 * a run of objects that hold data is read in large reads, not one
	 * pread each (a fifth of the open of 1M of them) */
	rd_init(&r1, rd->fd, IO_CHUNK);
	const struct osd__id *e, *a;
	struct osd__ids_pos ahead = { 0, 0 };
	for (int i = 0; !r && i < LOAD_AHEAD && osd__ids_at(&p->ids, ahead); i++)
		osd__ids_step(&p->ids, &ahead);
	for (struct osd__ids_pos k = { 0, 0 }; !r && (e = osd__ids_at(&p->ids, k));
	     osd__ids_step(&p->ids, &k)) {
		if ((a = osd__ids_at(&p->ids, ahead))) {
			if (a->flags & OSD__ID_DATA)
				osd__ns_prefetch_slot(st, p->pid, a->id);
			osd__ids_step(&p->ids, &ahead);
		}
		if (!(e->flags & OSD__ID_DATA))
			continue;
		if (r1.stop <= e->off)
			r1.stop = data_run_end(p, k);
		struct osd__obj *o = table_obj(st, p, k, &r1);
		if (!o || o->meta_bad) {
			/* its state is rebuilt from its data now: reading the
			 * records whole finds the damage */
			*bad = e->off;
			if (o)
				osd__ns_obj_free(o);
			r = o ? -EUCLEAN : -ENOMEM;
			break;
		}
		(void)osd__ns_adopt(st, o);
	}
	rd_free(&r1);
	return r;
}

/* A partition's bytes in slots (a PART_USED record), added to the totals. */
static int part_used(struct osd_store *st, const struct osd__rec *rec)
{
	struct osd__part *p = osd__ns_part(st, osd__get_be64(rec->payload));
	uint64_t bytes = osd__get_be64(rec->payload + 8);
	/* version 4 adds files' allocated bytes: st_blocks units */
	if (!p || bytes % (st->files_counted ? 512 : OSD__PACK_SLOT))
		return -EUCLEAN;
	atomic_fetch_add(&p->used, bytes);
	atomic_fetch_add(&st->used, bytes);
	return 0;
}

static int load_flagged(struct osd_store *st, unsigned flag);

/*
 * The slot map and the partitions' totals counted from the objects
 * themselves, not taken from the checkpoint: every packed object loads (as
 * from a version 2 checkpoint), and every object with a file, whose files
 * the scan of the open then reads (step 5). The next checkpoint writes them
 * whole.
 */
static int recount(struct osd_store *st)
{
	osd__pack_map_clear(st);
	atomic_store(&st->used, 0); /* objects with files count theirs later (step 5) */
	for (size_t i = 0; i < st->nparts; i++)
		atomic_store(&st->parts[i]->used, 0);
	st->pack_counted = 0;
	int r = osd__table_load_packed(st);
	if (!r && st->files_counted) {
		st->files_counted = 0;
		r = load_flagged(st, OSD__ID_DATA);
	}
	return r;
}

/* The slot map or a partition's total is damaged: the open counts them
 * again rather than refusing. */
static int recount_packed(struct osd_store *st, uint64_t bad)
{
	osd__store_note(st, OSD_STORE_LOG_WARNING, "%s/checkpoint: its slot map of data/%s is "
			"damaged at byte %" PRIu64 ": counted again from the packed objects' "
			"records%s", st->path, OSD__PACK_NAME, bad, st->files_counted ?
			" and the files of the others" : "");
	return recount(st);
}

/*
 * Version 3: the slot map and the partitions' bytes in slots, from the
 * records at the head's pack_off up to END. Slots past the end of
 * data/pack are damage: their objects are all loaded to be told.
 */
static int load_summary(struct osd_store *st, struct reader *rd, const struct head *h,
			uint64_t *bad)
{
	int err = 0;
	uint64_t past = 0;
	for (uint64_t off = h->pack_off;;) {
		struct osd__rec rec;
		*bad = off;
		long n = rd_rec(rd, off, &rec, &err);
		if (n < 0)
			return err == -ENOMEM ? err : recount_packed(st, off);
		if (rec.type == OSD__REC_END)
			break;
		if (rec.type == OSD__REC_PACK_MAP)
			err = osd__pack_map_load(st, &rec, &past);
		else if (rec.type == OSD__REC_PART_USED && osd__pack_summary_ok(&rec))
			err = part_used(st, &rec);
		else
			err = -EUCLEAN;
		if (err)
			return err == -ENOMEM ? err : recount_packed(st, off);
		off += (uint64_t)n;
	}
	return past ? osd__table_load_packed(st) : 0;
}

int osd__table_load(struct osd_store *st, int fd, uint64_t *bad, size_t *nrecs)
{
	struct head h;
	/* the index is verified now, each object's records when it is loaded
	 * (and all of them by the next checkpoint, which copies them): an open
	 * reads no more than the index, whatever the checkpoint's size */
	int r = head_read(fd, &h, bad);
	if (r)
		return r;
	struct reader rd;
	rd_init(&rd, fd, IO_CHUNK);
	uint64_t pos = h.index_off, prev = 0;
	atomic_store(&st->capacity_set, h.capacity);
	st->next_gen = h.next_gen;
	st->ckfd = fd;
	/* version 3: the map and totals come whole, objects count nothing;
	 * version 4: file objects too, and they stay on disk */
	st->pack_counted = h.version != OSD__CKPT_VERSION_INDEX;
	st->files_counted = h.version >= OSD__CKPT_VERSION;
	st->ckpt_objs_end = st->pack_counted ? h.pack_off : UINT64_MAX;
	r = h.root_off < h.records_off || h.root_off >= h.records_off + h.records_len ? -EUCLEAN :
	    obj_read(st, &rd, h.root_off, UINT64_MAX, st->root, bad);
	for (uint64_t i = 0; i < h.nparts && !r; i++)
		r = load_part(st, &rd, &h, &pos, &prev, bad);
	if (!r && pos != h.records_off)
		r = -EUCLEAN; /* the partitions' members are not the head's count */
	/* a scan of data/ (osd_store_options.scan_data) counts it all again */
	if (!r && st->pack_counted)
		r = st->scan_data && st->files_counted ? recount(st) : load_summary(st, &rd, &h, bad);
	rd_free(&rd);
	if (r) {
		st->ckfd = -1;
		st->files_counted = 0;
		return r;
	}
	st->root->ckpt_clean = 1;
	st->ckpt_size = h.records_off + h.records_len;
	*nrecs = (size_t)h.nrecs;
	return 0;
}

/*
 * A pass over the index of checkpoint @p fd beside the namespace's: with
 * @p take, each entry's offset and flags replace the namespace's, which must
 * hold the same ids and types (-EIO otherwise).
 */
static int index_pass(struct osd_store *st, int fd, const struct head *h, int take)
{
	struct reader rd;
	int r = 0;
	uint64_t pos = h->index_off;
	rd_init(&rd, fd, IO_CHUNK);
	for (size_t i = 0; i < st->nparts && !r; i++) {
		struct osd__part *p = st->parts[i];
		int err = 0;
		const uint8_t *d = rd_at(&rd, pos, PART_HDR, &err);
		if (!d || osd__get_be64(d) != p->pid || osd__get_be64(d + 16) != p->ids.n) {
			r = d ? -EIO : err;
			break;
		}
		pos += PART_HDR;
		struct osd__id *m;
		for (struct osd__ids_pos k = { 0, 0 }; !r && (m = osd__ids_at(&p->ids, k));
		     osd__ids_step(&p->ids, &k), pos += ENT_LEN) {
			struct osd__id e;
			if (!(d = rd_at(&rd, pos, ENT_LEN, &err))) {
				r = err;
				break;
			}
			ent_get(d, &e);
			if (e.id != m->id || e.type != m->type)
				r = -EIO;
			else if (take)
				*m = e;
		}
	}
	rd_free(&rd);
	return r;
}

int osd__table_check(struct osd_store *st, int fd)
{
	struct head h;
	uint64_t bad;
	int r = head_read(fd, &h, &bad);
	if (!r && h.nparts != st->nparts)
		r = -EIO;
	return r ? r : index_pass(st, fd, &h, 0);
}

int osd__table_reload(struct osd_store *st, int fd)
{
	uint8_t hb[HEAD_LEN];
	struct head h;
	int r = pread_all(fd, hb, HEAD_LEN, OSD__FILE_HDR);
	if (!r)
		r = head_get(hb, &h);
	if (!r)
		r = index_pass(st, fd, &h, 1);
	if (r)
		return r;
	if (st->ckfd >= 0)
		close(st->ckfd);
	st->ckfd = fd;
	st->ckpt_objs_end = h.version == OSD__CKPT_VERSION_INDEX ? UINT64_MAX : h.pack_off;
	osd__ns_all_clean(st);
	return 0;
}

static int u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/*
 * Load the objects of data-file generations @p gens (sorted here) that are
 * still on disk: the open met files of theirs. One pass over the records.
 */
int osd__table_find_gens(struct osd_store *st, uint64_t *gens, size_t n)
{
	struct head h;
	uint64_t bad;
	if (st->ckfd < 0 || !n)
		return 0;
	int r = head_read(st->ckfd, &h, &bad);
	if (r)
		return r;
	qsort(gens, n, sizeof(*gens), u64_cmp);
	osd__ns_reserve(st, st->nobjs + n); /* loads adopt without resizing */
	struct reader rd;
	rd_init(&rd, st->ckfd, IO_CHUNK);
	uint64_t off = h.records_off, end = h.records_off + h.records_len;
	while (off < end) {
		struct osd__rec rec;
		long k = rd_rec(&rd, off, &rec, &r);
		if (k < 0)
			break;
		uint64_t g = rec.len == 25 ? osd__get_be64(rec.payload + 16) : 0;
		if (rec.type == OSD__REC_OBJ_CREATE && rec.len == 25 &&
		    bsearch(&g, gens, n, sizeof(*gens), u64_cmp))
			(void)osd__ns_find(st, osd__get_be64(rec.payload),
					   osd__get_be64(rec.payload + 8));
		off += (uint64_t)k;
	}
	rd_free(&rd);
	return r;
}

/* Load every object on disk whose index entry has @p flag. */
static int load_flagged(struct osd_store *st, unsigned flag)
{
	size_t n = 0;
	const struct osd__id *e;
	for (size_t i = 0; i < st->nparts; i++)
		n += flagged(st->parts[i], flag);
	osd__ns_reserve(st, st->nobjs + n); /* loads adopt without resizing */
	for (size_t i = 0; i < st->nparts; i++) {
		struct osd__part *p = st->parts[i];
		for (struct osd__ids_pos k = { 0, 0 }; (e = osd__ids_at(&p->ids, k));
		     osd__ids_step(&p->ids, &k))
			if ((e->flags & flag) && !osd__ns_find(st, p->pid, e->id))
				return -ENOMEM;
	}
	return 0;
}

int osd__table_load_packed(struct osd_store *st)
{
	return load_flagged(st, OSD__ID_PACKED);
}
