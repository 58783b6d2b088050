/*
 * Small objects packed into one shared file, data/pack (store format 3).
 *
 * An object without a data file keeps its data, at most one slot of
 * OSD__PACK_SLOT bytes, in a slot of data/pack, so making a small object
 * creates no host file (two file creations per object were the limit of
 * CREATE + 4 KiB WRITE). Slots are copy-on-write: every change writes a
 * fresh slot and the object's PACK state (slot, length, CRC32C of the whole
 * slot) goes into the log with the object's next record, or at the flush
 * that covers it. A superseded slot is reused only once a record (or a
 * checkpoint) that no longer names it is durable, and the pack file is
 * made durable before any log sync (osd__pack_sync is the log's pre-sync
 * hook), so every durable record names a slot holding exactly its bytes.
 * An object that outgrows a slot moves into its own data file for good
 * (data.c). docs/target-store.md, "Packed small objects".
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "checksum/crc32c.h"
#include "proto/byteorder.h"
#include "store/internal.h"

#define PACK_MAGIC "OSDPACK1"
#define PACK_VERSION 1u

/* A slot superseded by a record at log position pos. */
struct osd__pack_free {
	uint32_t slot;
	uint64_t pos;
	struct osd__pack_free *next;
};

static uint64_t slot_off(uint32_t slot)
{
	return (uint64_t)slot * OSD__PACK_SLOT;
}

/* ---- slot map -------------------------------------------------------------------- */

/* Mark @p slot used (1) or free (0) in the map. pack_mu held. */
static int map_set(struct osd_store *st, uint32_t slot, int used)
{
	size_t w = slot / 64;
	if (w >= st->pack_words) {
		if (!used)
			return 0;
		size_t n = st->pack_words ? st->pack_words : 16;
		while (n <= w)
			n *= 2;
		uint64_t *m = realloc(st->pack_map, n * sizeof(*m));
		if (!m)
			return -ENOMEM;
		st->pack_map = m;
		uint64_t *l = realloc(st->pack_loose_map, n * sizeof(*l));
		if (!l)
			return -ENOMEM;
		memset(m + st->pack_words, 0, (n - st->pack_words) * sizeof(*m));
		memset(l + st->pack_words, 0, (n - st->pack_words) * sizeof(*l));
		st->pack_loose_map = l;
		st->pack_words = n;
	}
	uint64_t bit = 1ULL << (slot % 64);
	int was = !!(st->pack_map[w] & bit);
	if (used)
		st->pack_map[w] |= bit;
	else
		st->pack_map[w] &= ~bit;
	if (!used && slot < st->pack_hint)
		st->pack_hint = slot;
	return was;
}

/* The lowest free slot, marked used. */
static int slot_alloc(struct osd_store *st, uint32_t *out)
{
	pthread_mutex_lock(&st->pack_mu);
	size_t w = st->pack_hint / 64;
	while (w < st->pack_words && st->pack_map[w] == UINT64_MAX)
		w++;
	uint64_t s = w * 64 + (w < st->pack_words ? (uint64_t)__builtin_ctzll(~st->pack_map[w]) : 0);
	int r = s >= UINT32_MAX ? -ENOSPC : map_set(st, (uint32_t)s, 1);
	if (r >= 0) {
		st->pack_hint = (uint32_t)s + 1;
		*out = (uint32_t)s;
		r = 0;
	}
	pthread_mutex_unlock(&st->pack_mu);
	return r;
}

/* Freed slots between two sweeps that punch them out (64 MiB). */
#define PUNCH_BATCH 16384u

static int bit_get(const uint64_t *m, size_t words, uint64_t b)
{
	return b / 64 < words && (m[b / 64] >> (b % 64) & 1);
}

/*
 * Punch the slots freed since the last sweep out of the file, a run of
 * them at a time: their space returns. In batches: every rewrite of a
 * packed object frees a slot, and a punch per slot (about 85 us) made the
 * sync that released them slow. The lowest free slot is taken first, so
 * many are written again before a sweep and are not punched. pack_mu
 * held: no slot is taken meanwhile.
 */
static void punch_loose(struct osd_store *st)
{
	uint64_t end = (uint64_t)st->pack_words * 64;
	for (uint64_t s = 1; s < end;) {
		if (!bit_get(st->pack_loose_map, st->pack_words, s) ||
		    bit_get(st->pack_map, st->pack_words, s)) {
			s++;
			continue;
		}
		uint64_t e = s;
		while (e < end && bit_get(st->pack_loose_map, st->pack_words, e) &&
		       !bit_get(st->pack_map, st->pack_words, e))
			e++;
		(void)fallocate(st->packfd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
				(off_t)(s * OSD__PACK_SLOT), (off_t)((e - s) * OSD__PACK_SLOT));
		s = e;
	}
	memset(st->pack_loose_map, 0, st->pack_words * sizeof(uint64_t));
	st->pack_loose = 0;
}

/* Free @p slot now: no durable record names it. Its bytes are zeroed
 * first (a page-cache write, not a punch): an object that damage brings
 * back naming it (its REMOVE lost) then fails its CRC, and never reads
 * what was removed. */
static void slot_free(struct osd_store *st, uint32_t slot)
{
	static const uint8_t zeros[OSD__PACK_SLOT];
	if (!slot)
		return;
	(void)osd__pwrite_all(st->packfd, &(struct iovec){ (void *)zeros, sizeof(zeros) }, 1,
			      slot_off(slot));
	pthread_mutex_lock(&st->pack_mu);
	(void)map_set(st, slot, 0);
	if (slot / 64 < st->pack_words && st->pack_loose_map) {
		st->pack_loose_map[slot / 64] |= 1ULL << (slot % 64);
		if (++st->pack_loose >= PUNCH_BATCH)
			punch_loose(st);
	}
	pthread_mutex_unlock(&st->pack_mu);
}

/* Free @p slot once the log is durable up to @p pos. */
static void slot_free_later(struct osd_store *st, uint32_t slot, uint64_t pos)
{
	if (!slot)
		return;
	struct osd__pack_free *f = malloc(sizeof(*f));
	if (!f)
		return; /* never reused in this run; the next open frees it */
	f->slot = slot;
	f->pos = pos;
	f->next = NULL;
	pthread_mutex_lock(&st->pack_mu);
	*st->pack_frees_tail = f;
	st->pack_frees_tail = &f->next;
	st->pack_nfrees++;
	pthread_mutex_unlock(&st->pack_mu);
}

int osd__pack_frees_many(struct osd_store *st)
{
	pthread_mutex_lock(&st->pack_mu);
	int many = st->pack_nfrees >= OSD__PACK_FREES_MAX;
	pthread_mutex_unlock(&st->pack_mu);
	return many;
}

void osd__pack_release(struct osd_store *st, uint64_t synced)
{
	for (;;) {
		pthread_mutex_lock(&st->pack_mu);
		struct osd__pack_free *f = st->pack_frees;
		if (f && f->pos <= synced) {
			st->pack_nfrees--;
			st->pack_frees = f->next;
			if (!st->pack_frees)
				st->pack_frees_tail = &st->pack_frees;
		} else {
			f = NULL;
		}
		pthread_mutex_unlock(&st->pack_mu);
		if (!f)
			return;
		slot_free(st, f->slot);
		free(f);
	}
}

static void drop_frees(struct osd_store *st)
{
	while (st->pack_frees) {
		struct osd__pack_free *f = st->pack_frees;
		st->pack_frees = f->next;
		free(f);
	}
	st->pack_frees_tail = &st->pack_frees;
	st->pack_nfrees = 0;
}

/* ---- the pack file ----------------------------------------------------------------- */

static int write_hdr(int fd)
{
	uint8_t hdr[OSD__FILE_HDR];
	osd__file_hdr_put_ver(hdr, PACK_MAGIC, PACK_VERSION, 0, 0);
	ssize_t n = pwrite(fd, hdr, sizeof(hdr), 0);
	return n == (ssize_t)sizeof(hdr) ? 0 : n < 0 ? -errno : -EIO;
}

int osd__pack_open(struct osd_store *st, int create)
{
	pthread_mutex_lock(&st->pack_mu);
	int r = map_set(st, 0, 1) < 0 ? -ENOMEM : 0; /* slot 0 holds the header */
	pthread_mutex_unlock(&st->pack_mu);
	if (r)
		return r;
	st->packfd = osd__open_noatime(st->datafd, OSD__PACK_NAME, O_RDWR | O_CLOEXEC, 0);
	int missing = st->packfd < 0 && errno == ENOENT;
	if (st->packfd < 0 && !missing)
		return -errno;
	if (missing) {
		st->packfd = osd__open_noatime(st->datafd, OSD__PACK_NAME, O_RDWR | O_CREAT | O_CLOEXEC,
						 0600);
		if (st->packfd < 0)
			return -errno;
		if ((r = write_hdr(st->packfd)) != 0 || fsync(st->packfd) != 0 ||
		    fsync(st->datafd) != 0)
			return r ? r : -errno;
		st->pack_open_slots = 1; /* the header's */
		if (!create)
			osd__store_note(st, OSD_STORE_LOG_ERR, "%s: data/%s was missing and is made "
					"anew; any packed object in it reads as damaged",
					st->path, OSD__PACK_NAME);
		return 0;
	}
	struct stat sb;
	if (fstat(st->packfd, &sb) != 0)
		return -errno;
	st->pack_open_slots = ((uint64_t)sb.st_size + OSD__PACK_SLOT - 1) / OSD__PACK_SLOT;
	uint8_t hdr[OSD__FILE_HDR];
	uint32_t version = 0, flags = 0;
	uint64_t epoch;
	if (pread(st->packfd, hdr, sizeof(hdr), 0) != (ssize_t)sizeof(hdr) ||
	    osd__file_hdr_get_ver(hdr, PACK_MAGIC, &version, &flags, &epoch) != 0 ||
	    version != PACK_VERSION || flags) {
		/* only slot 0 is the header: the slots stay as they are */
		osd__store_note(st, OSD_STORE_LOG_WARNING, "%s: data/%s header damaged; "
				"written anew", st->path, OSD__PACK_NAME);
		return write_hdr(st->packfd);
	}
	return 0;
}

void osd__pack_close(struct osd_store *st)
{
	if (st->packfd >= 0)
		close(st->packfd);
	st->packfd = -1;
	drop_frees(st);
	free(st->pack_map);
	free(st->pack_loose_map);
	st->pack_map = st->pack_loose_map = NULL;
	st->pack_words = 0;
}

/* Every slot but the header's free, none waiting to be punched. pack_mu held. */
static void map_empty(struct osd_store *st)
{
	if (st->pack_map) {
		memset(st->pack_map, 0, st->pack_words * sizeof(*st->pack_map));
		memset(st->pack_loose_map, 0, st->pack_words * sizeof(*st->pack_map));
	}
	st->pack_loose = 0;
	(void)map_set(st, 0, 1);
	st->pack_hint = 1;
}

void osd__pack_reset(struct osd_store *st)
{
	pthread_mutex_lock(&st->pack_mu);
	drop_frees(st);
	map_empty(st);
	pthread_mutex_unlock(&st->pack_mu);
	if (st->packfd >= 0 && ftruncate(st->packfd, OSD__PACK_SLOT) == 0)
		(void)fallocate(st->packfd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
				OSD__FILE_HDR, OSD__PACK_SLOT - OSD__FILE_HDR);
}

int osd__pack_sync(struct osd_store *st)
{
	if (st->packfd < 0)
		return 0;
	/* One at a time: a caller that finds the flag clear must not return
	 * while the fdatasync of the caller that cleared it still runs (the
	 * log's committer and a checkpoint may sync at once). */
	int r = 0;
	pthread_mutex_lock(&st->pack_sync_mu);
	if (atomic_exchange(&st->pack_dirty, 0) && fdatasync(st->packfd) != 0) {
		r = -errno;
		atomic_store(&st->pack_dirty, 1);
	}
	pthread_mutex_unlock(&st->pack_sync_mu);
	return r;
}

int osd__pack_presync(void *arg)
{
	return osd__pack_sync(arg);
}

/* ---- an object's slot ----------------------------------------------------------------- */

uint32_t osd__pack_crc(const uint8_t img[OSD__PACK_SLOT])
{
	return osd__crc32c(0, img, OSD__PACK_SLOT);
}

int osd__pack_load(struct osd_store *st, const struct osd__obj *o, uint8_t img[OSD__PACK_SLOT])
{
	if (o->sums_bad)
		return -EIO;
	memset(img, 0, OSD__PACK_SLOT);
	if (!o->slot)
		return 0; /* no slot: zeros up to the length */
	size_t got = 0;
	while (got < OSD__PACK_SLOT) {
		ssize_t n = pread(st->packfd, img + got, OSD__PACK_SLOT - got,
				  (off_t)(slot_off(o->slot) + got));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -EIO;
		if (n == 0)
			break; /* past the end: zeros, which the CRC judges */
		got += (size_t)n;
	}
	return osd__pack_crc(img) == o->pcrc ? 0 : -EIO;
}

static int all_zero(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return 0;
	return 1;
}

/* Slots written between two starts of the pack file's writeback (1 MiB). */
#define WRITEBACK_SLOTS 256u

/*
 * Every record's sync makes data/pack durable first, and the file is
 * shared: an fsync of one large file also waits for every small object
 * written before it (much as ext4's journal ties them together). Starting
 * the writeback every megabyte, without waiting, leaves that sync little
 * to write. Only a hint: durability comes from osd__pack_sync().
 */
static void writeback_hint(struct osd_store *st)
{
	if (atomic_fetch_add(&st->pack_written, 1) % WRITEBACK_SLOTS == WRITEBACK_SLOTS - 1)
		(void)sync_file_range(st->packfd, 0, 0, SYNC_FILE_RANGE_WRITE);
}

/* The slot the object no longer uses: freed now unless a record or a
 * checkpoint may name it (then once a newer record is durable). */
static void slot_superseded(struct osd_store *st, struct osd__obj *o, uint32_t old)
{
	if (old && old != o->slot_logged)
		slot_free(st, old);
}

int osd__pack_store(struct osd_store *st, struct osd__obj *o,
		    const uint8_t img[OSD__PACK_SLOT], uint64_t length)
{
	uint32_t slot = 0;
	int r = 0;
	if (!all_zero(img, OSD__PACK_SLOT)) {
		r = slot_alloc(st, &slot);
		if (!r)
			r = osd__pwrite_all(st->packfd, &(struct iovec){ (void *)img, OSD__PACK_SLOT },
					    1, slot_off(slot));
		osd__store_space(st, r, "data");
		if (r) {
			slot_free(st, slot);
			return r;
		}
		atomic_store(&st->pack_dirty, 1);
		writeback_hint(st);
	}
	if (o->packed && o->sums_bad) {
		/* written whole (osd__pack_load refused anything less): healed; the
		 * damaged number was never its slot */
		o->slot = o->slot_logged = 0;
		o->sums_bad = 0;
	}
	uint32_t old = o->slot;
	o->slot = slot;
	o->pcrc = slot ? osd__pack_crc(img) : 0;
	o->length = length;
	o->packed = 1;
	o->pack_pending = 1;
	osd__obj_changed(o); /* kept until a checkpoint holds the new slot */
	o->ckpt_written = 0;
	slot_superseded(st, o, old);
	osd__data_account(st, o, slot ? OSD__PACK_SLOT : 0);
	return 0;
}

void osd__pack_unpacked(struct osd_store *st, struct osd__obj *o)
{
	uint32_t old = o->slot;
	o->slot = 0;
	o->pcrc = 0;
	o->packed = 0;
	o->pack_pending = 1;
	osd__obj_changed(o);
	o->ckpt_written = 0;
	slot_superseded(st, o, old);
}

/* ---- records ------------------------------------------------------------------------ */

void osd__pack_rec(const struct osd__obj *o, uint8_t out[OSD__PACK_HDR])
{
	osd__put_be64(out, o->pid);
	osd__put_be64(out + 8, o->oid);
	osd__put_be64(out + 16, o->packed ? o->slot : OSD__PACK_IN_FILE);
	osd__put_be64(out + 24, o->packed ? o->length : 0);
	osd__put_be32(out + 32, o->pcrc);
}

void osd__pack_logged(struct osd_store *st, struct osd__obj *o, uint64_t pos)
{
	if (o->slot_logged != o->slot)
		slot_free_later(st, o->slot_logged, pos);
	o->slot_logged = o->slot;
	o->pack_pending = 0;
}

int osd__pack_log_locked(struct osd_store *st, struct osd__obj *o, uint64_t *pos)
{
	uint8_t b[OSD__PACK_HDR];
	osd__pack_rec(o, b);
	int r = osd__log_append(&st->log, OSD__REC_PACK, b, sizeof(b), NULL, 0, pos);
	if (!r)
		osd__pack_logged(st, o, *pos);
	return r;
}

int osd__pack_log_pending(struct osd_store *st, struct osd__obj *o)
{
	uint64_t pos = 0;
	int r = 0;
	osd__change_lock(st, 0);
	pthread_mutex_lock(&o->mu);
	if (o->pack_pending && !o->removed)
		r = osd__pack_log_locked(st, o, &pos);
	pthread_mutex_unlock(&o->mu);
	osd__change_unlock(st);
	return r;
}

void osd__pack_forget(struct osd_store *st, struct osd__obj *o, uint64_t pos)
{
	if (o->packed && o->sums_bad)
		o->slot = o->slot_logged = 0; /* numbers of damage, not its slots */
	slot_superseded(st, o, o->slot);
	if (pos != UINT64_MAX)
		slot_free_later(st, o->slot_logged, pos);
	o->slot = o->slot_logged = 0;
	o->pack_pending = 0;
}

/* Remember @p slot to free once the checkpoint being written is durable.
 * Without memory it stays taken until the next open. */
static void ckpt_free_push(struct osd_store *st, uint32_t slot)
{
	if (st->pack_ckpt_n == st->pack_ckpt_cap) {
		size_t cap = st->pack_ckpt_cap ? 2 * st->pack_ckpt_cap : 64;
		uint32_t *a = realloc(st->pack_ckpt, cap * sizeof(*a));
		if (!a)
			return;
		st->pack_ckpt = a;
		st->pack_ckpt_cap = cap;
	}
	st->pack_ckpt[st->pack_ckpt_n++] = slot;
}

void osd__pack_drop(struct osd_store *st, struct osd__obj *o)
{
	pthread_mutex_lock(&st->pack_mu);
	if (o->slot && !o->sums_bad) /* a damaged object's number is not its slot */
		(void)map_set(st, o->slot, 0);
	pthread_mutex_unlock(&st->pack_mu);
	o->slot = o->slot_logged = 0;
	o->sums_bad = 0;
}

int osd__pack_ckpt(struct osd_store *st, struct osd__obj *o, uint8_t rec[OSD__PACK_HDR])
{
	if (o->pack_pending && o->slot_logged != o->slot) {
		/* The checkpoint names the current slot, so it must outlive a
		 * change made before the next record; the slot the log named is
		 * free once the checkpoint is durable. The state stays pending: the
		 * next flush logs it again, which costs a record and is always right. */
		if (o->slot_logged)
			ckpt_free_push(st, o->slot_logged);
		o->slot_logged = o->slot;
	}
	if (!o->packed)
		return 0;
	osd__pack_rec(o, rec);
	return 1;
}

void osd__pack_ckpt_done(struct osd_store *st, int ok)
{
	/* after a failed checkpoint the old slots stay taken until the next open */
	for (size_t i = 0; ok && i < st->pack_ckpt_n; i++)
		slot_free(st, st->pack_ckpt[i]);
	st->pack_ckpt_n = 0;
}

int osd__pack_rec_where(const uint8_t *b, uint32_t *slot, int *damaged)
{
	uint64_t where = osd__get_be64(b + 16), length = osd__get_be64(b + 24);
	if (where == OSD__PACK_IN_FILE)
		return 0;
	*damaged = (where & OSD__PACK_DAMAGED) != 0;
	where &= ~OSD__PACK_DAMAGED;
	if (length > OSD__PACK_SLOT || where >= UINT32_MAX || (*damaged && !where))
		return -EBADMSG;
	*slot = (uint32_t)where;
	return 1;
}

/* An object's packed state from a record it holds the slot of (the map and
 * the totals are the caller's). */
static void set_packed(struct osd__obj *o, uint32_t slot, int damaged, const uint8_t *b)
{
	o->packed = 1;
	o->slot = o->slot_logged = slot;
	o->pcrc = osd__get_be32(b + 32);
	o->length = osd__get_be64(b + 24);
	o->sums_bad = damaged;
}

/* Damage: an object names a slot past the end data/pack had at the open. */
static void past_note(struct osd_store *st, const struct osd__obj *o)
{
	osd__store_note(st, OSD_STORE_LOG_ERR, "%s: object 0x%" PRIx64 " in partition 0x%"
			PRIx64 " names pack slot %" PRIu32 ", past the end of data/%s; its "
			"reads fail until it is written whole", st->path, o->oid, o->pid,
			o->slot, OSD__PACK_NAME);
}

int osd__pack_adopt(struct osd_store *st, struct osd__obj *o, const uint8_t *b)
{
	uint32_t slot = 0;
	int damaged = 0, r = osd__pack_rec_where(b, &slot, &damaged);
	if (o->type != OSD_OBJ_USER)
		return -EINVAL;
	if (r <= 0)
		return r;
	set_packed(o, slot, damaged, b);
	o->used = slot && !damaged ? OSD__PACK_SLOT : 0; /* in the totals already */
	if (slot && !damaged && st->opening && slot >= st->pack_open_slots) {
		/* the map left it out at the open (osd__pack_map_load) */
		o->sums_bad = 1;
		osd__data_account(st, o, 0);
		past_note(st, o);
	}
	return 0;
}

/* A PACK record's state applied at open (replay). */
int osd__pack_apply(struct osd_store *st, struct osd__obj *o, const uint8_t *b)
{
	uint32_t slot = 0;
	int damaged = 0, r = osd__pack_rec_where(b, &slot, &damaged);
	if (o->type != OSD_OBJ_USER)
		return -EINVAL;
	if (r < 0)
		return r;
	osd__pack_drop(st, o); /* the slot an earlier record gave it */
	o->pcrc = 0;
	osd__obj_changed(o);
	if (!r) {
		o->packed = 0;
		return 0;
	}
	if (damaged) {
		set_packed(o, slot, 1, b);
		osd__data_account(st, o, 0);
		return 0;
	}
	uint64_t where = slot;
	/* Damage: a slot past the end the file had at the open (never made
	 * durable, or the file lost its tail). The object keeps the number (a
	 * checkpoint writes it again) but not the slot: its reads fail until it
	 * is written whole, and it never frees the slot; the map stays as large
	 * as the file. A slot another object holds too is settled after the
	 * replay (osd__pack_settle). */
	int past = where && where >= st->pack_open_slots, clash = 0;
	if (where && !past) {
		pthread_mutex_lock(&st->pack_mu);
		clash = map_set(st, (uint32_t)where, 1);
		pthread_mutex_unlock(&st->pack_mu);
		if (clash < 0)
			return -ENOMEM;
	}
	set_packed(o, slot, past, b);
	osd__data_account(st, o, where && !past ? OSD__PACK_SLOT : 0);
	if (clash)
		st->pack_clash = 1;
	if (past)
		past_note(st, o);
	return 0;
}

/* ---- the slot map in the checkpoint (version 3) ------------------------------------- */

int osd__pack_summary_ok(const struct osd__rec *rec)
{
	if (rec->type == OSD__REC_PART_USED)
		return rec->len == 16;
	return rec->type == OSD__REC_PACK_MAP && rec->len >= 16 && rec->len % 8 == 0 &&
	       rec->len - 8 <= 8 * OSD__PACK_MAP_WORDS &&
	       osd__get_be64(rec->payload) <= UINT32_MAX / 64;
}

int osd__pack_map_load(struct osd_store *st, const struct osd__rec *rec, uint64_t *past)
{
	if (!osd__pack_summary_ok(rec) || rec->type != OSD__REC_PACK_MAP)
		return -EUCLEAN;
	uint64_t first = osd__get_be64(rec->payload), end = st->pack_open_slots;
	size_t n = (rec->len - 8) / 8;
	int r = 0;
	pthread_mutex_lock(&st->pack_mu);
	for (size_t i = 0; !r && i < n; i++) {
		uint64_t w = first + i, bits = osd__get_be64(rec->payload + 8 + 8 * i);
		/* slots at or past the end of data/pack are damage: counted, and
		 * never make the map larger than the file */
		uint64_t in = w * 64 >= end ? 0 : end - w * 64 >= 64 ? UINT64_MAX :
			      (1ULL << (end - w * 64)) - 1;
		*past += (uint64_t)__builtin_popcountll(bits & ~in);
		bits &= in;
		if (!bits)
			continue;
		/* map_set() grows the map to word w, which is then written */
		if (map_set(st, (uint32_t)(w * 64 + 63 - (uint64_t)__builtin_clzll(bits)), 1) < 0)
			r = -ENOMEM;
		else
			st->pack_map[w] = bits;
	}
	st->pack_map[0] |= 1; /* the header's */
	st->pack_hint = 1;
	pthread_mutex_unlock(&st->pack_mu);
	return r;
}

void osd__pack_map_clear(struct osd_store *st)
{
	pthread_mutex_lock(&st->pack_mu);
	map_empty(st);
	pthread_mutex_unlock(&st->pack_mu);
}

/* Calls @p fn for every packed user object with a slot of its own. */
static void each_slotted(struct osd_store *st, void (*fn)(struct osd_store *, struct osd__obj *,
							  uint64_t **),
			 uint64_t **maps)
{
	for (size_t i = 0; i < st->hash_size; i++)
		for (struct osd__obj *o = st->hash[i]; o; o = o->hnext)
			if (o->type == OSD_OBJ_USER && o->packed && o->slot && !o->sums_bad)
				fn(st, o, maps);
}

static int bit_test_set(uint64_t *m, uint32_t b)
{
	int was = !!(m[b / 64] & (1ULL << (b % 64)));
	m[b / 64] |= 1ULL << (b % 64);
	return was;
}

/* maps[0]: slots named once, maps[1]: named more than once. */
static void count_claims(struct osd_store *st, struct osd__obj *o, uint64_t **maps)
{
	(void)st;
	if (bit_test_set(maps[0], o->slot))
		bit_test_set(maps[1], o->slot);
}

/* maps[2]: a claimant of the slot was kept. */
static void judge_claim(struct osd_store *st, struct osd__obj *o, uint64_t **maps)
{
	uint8_t img[OSD__PACK_SLOT];
	uint32_t b = o->slot;
	if (!(maps[1][b / 64] & (1ULL << (b % 64))))
		return;
	if (osd__pack_load(st, o, img) == 0 && !bit_test_set(maps[2], b))
		return; /* its bytes: it keeps the slot */
	o->sums_bad = 1;
	osd__data_account(st, o, 0);
	osd__store_note(st, OSD_STORE_LOG_ERR, "%s: object 0x%" PRIx64 " in partition 0x%" PRIx64
			" names pack slot %" PRIu32 ", which another object holds; its reads "
			"fail until it is written whole", st->path, o->oid, o->pid, b);
}

int osd__pack_settle(struct osd_store *st)
{
	if (!st->pack_clash)
		return 0;
	st->pack_clash = 0;
	size_t words = (size_t)(st->pack_open_slots / 64 + 1);
	uint64_t *maps[3];
	for (int k = 0; k < 3; k++)
		maps[k] = calloc(words, sizeof(uint64_t));
	int r = maps[0] && maps[1] && maps[2] ? 0 : -ENOMEM;
	if (!r) {
		each_slotted(st, count_claims, maps);
		each_slotted(st, judge_claim, maps);
	}
	for (int k = 0; k < 3; k++)
		free(maps[k]);
	return r;
}
