/*
 * Loading the checkpoint and replaying the metadata log at open: telling a
 * torn tail (cut) from damage (refused with the file, the byte offset and
 * what follows it), salvage (every intact record kept, damaged bytes
 * skipped, checkpoint.prev + log.prev for a bad checkpoint) and the
 * quarantine/ folder for files nothing names (docs/target-store.md,
 * "Damage and salvage").
 */
#include <errno.h>
#include <inttypes.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "proto/byteorder.h"
#include "store/internal.h"

/*
 * What a crash leaves in a log: a last record cut short, or (a system
 * crash) blocks of zeros where pages of the last unsynced write-outs never
 * reached the disk. Such a hole is at least this large and aligned...
 */
#define TORN_BLOCK 512u
/* ...and lies within the last write-outs: a few log buffers from the end. */
#define TORN_WINDOW (4u << 20)
/* Replayed bytes between two releases of the pages behind (release_behind). */
#define RELEASE_STEP (8u << 20)

struct replay {
	const char *name;   /* file in the store directory */
	const uint8_t *buf;
	size_t len;
	int ckpt;           /* a checkpoint: NEXT_GEN and END allowed, END required */
	int attrs;          /* a log of version 2: ATTRS allowed */
	int files;          /* a log of version 3: DATA and GENS allowed */
	size_t applied;     /* records applied */
	int damaged;
	size_t bad;         /* offset of the first damage */
	const char *why;    /* what was wrong there */
	size_t resume;      /* the first intact record after it (or len) */
	size_t after;       /* intact records from resume on (strict replay) */
	int end_ok;         /* checkpoint: a matching END closed it */
	size_t skipped_recs, skipped_bytes, regions; /* salvage */
	size_t released;    /* pages of buf before this offset were given back */
	size_t start;       /* the first record (0: after the file header) */
	int defer;          /* the log after a good checkpoint: changes of objects on
			       disk wait for them (pending.c) */
};

static int type_ok(const struct replay *rp, uint8_t t)
{
	return (t >= OSD__REC_PART_CREATE &&
		(t <= OSD__REC_QUOTA || (rp->ckpt && t <= OSD__REC_END))) ||
	       (rp->attrs && t == OSD__REC_ATTRS) ||
	       t == OSD__REC_PACK || /* the superblock (format 3) allows it */
	       (rp->ckpt && (t == OSD__REC_PACK_MAP || t == OSD__REC_PART_USED ||
			     t == OSD__REC_FILE)) ||
	       (rp->files && (t == OSD__REC_DATA || t == OSD__REC_GENS));
}

/* Size of the intact record at @p off, 0 if there is none. */
static size_t rec_at(const struct replay *rp, size_t off, struct osd__rec *rec)
{
	size_t n = osd__rec_parse(rp->buf + off, rp->len - off, rec);
	return n && type_ok(rp, rec->type) ? n : 0;
}

/* The next offset from @p off holding a record whose CRC verifies, or len. */
static size_t resync(const struct replay *rp, size_t off)
{
	struct osd__rec rec;
	for (; off + OSD__REC_HDR <= rp->len; off++)
		if (type_ok(rp, rp->buf[off + 8]) && rec_at(rp, off, &rec))
			return off;
	return rp->len;
}

static size_t count_intact(const struct replay *rp, size_t off)
{
	struct osd__rec rec;
	size_t n = 0;
	while (off < rp->len) {
		size_t k = rec_at(rp, off, &rec);
		if (k) {
			n++;
			off += k;
		} else {
			off = resync(rp, off + 1);
		}
	}
	return n;
}

static const char *damage_what(const struct replay *rp, size_t off)
{
	struct osd__rec rec;
	size_t avail = rp->len - off;
	if (avail < OSD__REC_HDR)
		return "a short record";
	uint32_t len = osd__get_be32(rp->buf + off + 4);
	if (len > OSD__REC_MAX_PAYLOAD)
		return "an impossible record length";
	if (avail - OSD__REC_HDR < len)
		return "a record running past the end";
	if (!osd__rec_parse(rp->buf + off, avail, &rec))
		return "a CRC mismatch";
	return "an unknown record type";
}

/* 1 if [from, to) holds an aligned TORN_BLOCK of zeros. */
static int zero_block(const uint8_t *buf, size_t from, size_t to)
{
	for (size_t b = (from + TORN_BLOCK - 1) / TORN_BLOCK * TORN_BLOCK;
	     b + TORN_BLOCK <= to; b += TORN_BLOCK) {
		size_t i = 0;
		while (i < TORN_BLOCK && !buf[b + i])
			i++;
		if (i == TORN_BLOCK)
			return 1;
	}
	return 0;
}

/* A damaged log tail that only a crash can have left, and nothing acknowledged. */
static int torn_tail(const struct replay *rp)
{
	return rp->after == 0 ||
	       (rp->len - rp->bad <= TORN_WINDOW && zero_block(rp->buf, rp->bad, rp->resume));
}

static void gone_add(struct osd_store *st, uint64_t gen)
{
	if (st->ngone == st->gone_cap) {
		size_t cap = st->gone_cap ? 2 * st->gone_cap : 64;
		uint64_t *g = realloc(st->gone, cap * sizeof(*g));
		if (!g)
			return; /* its file is then quarantined instead of deleted */
		st->gone = g;
		st->gone_cap = cap;
	}
	st->gone[st->ngone++] = gen;
}

int osd__recover_gone(struct osd_store *st, uint64_t gen)
{
	for (size_t i = 0; i < st->ngone; i++)
		if (st->gone[i] == gen)
			return 1;
	return 0;
}

/*
 * A change of attributes or quota of an object on disk is noted, not
 * applied: the object is not loaded for it (pending.c). 1 if noted; 0 to
 * apply it now (any other record, an object in memory, no memory).
 */
static int defer(struct osd_store *st, const struct osd__rec *rec, size_t off)
{
	if (!osd__ns_deferrable(rec))
		return 0;
	uint64_t pid = osd__get_be64(rec->payload), oid = osd__get_be64(rec->payload + 8);
	struct osd__id *e = osd__ns_on_disk(st, pid, oid);
	if (!e || (rec->type == OSD__REC_QUOTA && e->type != OSD_OBJ_USER) ||
	    osd__pend_open(st) || osd__pend_add(st, pid, oid, off))
		return 0;
	e->flags |= OSD__ID_NOTED;
	return 1;
}

/* Apply a record; a REMOVE's data file is then provably garbage. */
static int apply(struct osd_store *st, struct replay *rp, const struct osd__rec *rec,
		 size_t off)
{
	if (rp->defer && defer(st, rec, off))
		return 0;
	uint32_t slot;
	int damaged = 0;
	if (rec->type == OSD__REC_PACK && !rp->ckpt && rec->len >= OSD__PACK_HDR &&
	    osd__pack_rec_where(rec->payload, &slot, &damaged) > 0 && damaged)
		return -EBADMSG; /* only a checkpoint keeps a damaged number */
	if (rec->type == OSD__REC_OBJ_REMOVE && rec->len == 16) {
		struct osd__obj *o = osd__ns_find(st, osd__get_be64(rec->payload),
						  osd__get_be64(rec->payload + 8));
		if (o && o->type == OSD_OBJ_USER)
			gone_add(st, o->gen);
	}
	return osd__ns_apply(st, rec);
}

/* A checkpoint's END record: @return 1 if it closes the file as written. */
static int end_matches(const struct replay *rp, const struct osd__rec *rec, size_t next)
{
	return rec->len == 8 && osd__get_be64(rec->payload) == rp->applied && next == rp->len;
}

/*
 * Give back the pages of the part of the buffer replayed before @p off.
 * Everything that reads the buffer looks at the record at the replay's
 * position or beyond (the damage checks scan forward from there, and the
 * torn-tail check reads from the first damage on), never behind it. Without
 * this an open peaked at the whole namespace plus the whole file: a
 * checkpoint of 1M objects is 80 MB. The buffer stays allocated (its
 * owner frees it); these pages read as zeros if ever touched again.
 */
static void release_behind(struct replay *rp, size_t off)
{
	if (off - rp->released < RELEASE_STEP)
		return;
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t lo = ((uintptr_t)rp->buf + rp->released + page - 1) & ~(page - 1);
	uintptr_t hi = ((uintptr_t)rp->buf + off) & ~(page - 1);
	if (hi > lo)
		(void)madvise((void *)lo, hi - lo, MADV_DONTNEED);
	rp->released = off;
}

/* A record's type and payload length from its header alone (no CRC):
 * 0 at an impossible length. */
static int rec_peek(const struct replay *rp, size_t off, uint8_t *type, uint32_t *len)
{
	if (rp->len - off < OSD__REC_HDR)
		return 0;
	*len = osd__get_be32(rp->buf + off + 4);
	*type = rp->buf[off + 8];
	return *len <= OSD__REC_MAX_PAYLOAD && rp->len - off - OSD__REC_HDR >= *len;
}

static int may_defer(uint8_t type)
{
	return type == OSD__REC_ATTR || type == OSD__REC_ATTRS || type == OSD__REC_QUOTA;
}

/*
 * The objects and partitions the records create and the records a replay
 * may note, from their headers alone (the count ends at the first
 * impossible length): the hash and the notes are sized for them before the
 * replay.
 */
static void count_records(const struct replay *rp, size_t *creates, size_t *notes)
{
	uint8_t t;
	uint32_t len;
	*creates = *notes = 0;
	for (size_t off = rp->start; rec_peek(rp, off, &t, &len); off += OSD__REC_HDR + len) {
		*creates += t == OSD__REC_OBJ_CREATE || t == OSD__REC_PART_CREATE;
		*notes += may_defer(t);
	}
}

/*
 * Keep @p ahead up to RUN_AHEAD bytes past @p off (about eight change
 * records), starting the cache misses of the records it passes that may be
 * noted (each costs an index entry, a hash slot and a note slot, all at
 * random in memory the size of the store): by the time the replay reaches
 * them they are in the cache.
 */
#define RUN_AHEAD 1024u
static void run_ahead(struct osd_store *st, const struct replay *rp, size_t off, size_t *ahead)
{
	uint8_t t;
	uint32_t len;
	if (*ahead < off)
		*ahead = off; /* salvage skipped past it */
	while (*ahead < off + RUN_AHEAD && rec_peek(rp, *ahead, &t, &len)) {
		if (may_defer(t) && len >= 16) {
			const uint8_t *b = rp->buf + *ahead + OSD__REC_HDR;
			osd__ns_prefetch(st, osd__get_be64(b), osd__get_be64(b + 8));
			osd__pend_prefetch(st, osd__get_be64(b), osd__get_be64(b + 8));
		}
		*ahead += OSD__REC_HDR + len;
	}
}

/*
 * Apply the records after the header. Strict: stop at the first damage and
 * count the intact records after it. Salvage: skip the damaged bytes up to
 * the next record whose CRC verifies, and records that do not apply.
 */
static void replay(struct osd_store *st, struct replay *rp, int salvage)
{
	if (rp->start < OSD__FILE_HDR)
		rp->start = OSD__FILE_HDR;
	size_t off = rp->start, ahead = off, creates, notes;
	if (rp->len > off) {
		count_records(rp, &creates, &notes);
		osd__ns_reserve(st, st->nobjs + creates);
		if (rp->defer && notes)
			osd__pend_reserve(st, notes);
	}
	while (off < rp->len) {
		struct osd__rec rec;
		const char *why;
		release_behind(rp, off);
		if (rp->defer)
			run_ahead(st, rp, off, &ahead);
		size_t n = rec_at(rp, off, &rec);
		if (n && rec.type == OSD__REC_END) {
			if (end_matches(rp, &rec, off + n) || (salvage && rec.len == 8)) {
				rp->end_ok = 1;
				off += n;
				continue;
			}
			why = "an END record that does not match";
		} else if (n) {
			if (apply(st, rp, &rec, off) == 0) {
				rp->applied++;
				off += n;
				/* records load the objects they change from the
				 * checkpoint: the hash grows with them (nothing
				 * reads it concurrently while the store opens) */
				if (st->nobjs >= st->hash_size)
					osd__ns_reserve(st, 2 * st->nobjs);
				continue;
			}
			why = "a record that does not apply";
		} else {
			why = damage_what(rp, off);
		}
		size_t next = n ? off + n : resync(rp, off + 1);
		if (!rp->damaged) {
			rp->damaged = 1;
			rp->bad = off;
			rp->why = why;
			rp->resume = next;
		}
		if (!salvage) {
			rp->after = count_intact(rp, next);
			return;
		}
		rp->regions++;
		rp->skipped_recs += n ? 1 : 0;
		rp->skipped_bytes += next - off;
		off = next;
	}
	if (rp->ckpt && !rp->end_ok && !rp->damaged) {
		rp->damaged = 1;
		rp->bad = rp->len;
		rp->why = "no END record";
		rp->resume = rp->len;
	}
}

static int file_exists(struct osd_store *st, const char *name)
{
	struct stat sb;
	return fstatat(st->dirfd, name, &sb, 0) == 0;
}

/*
 * Read @p name and check its header: a checkpoint is of format version 1, a
 * log of version 1 or 2 (2: it may hold ATTRS records; @p version, may be
 * NULL). @return 0 (@p epoch set), -ENOENT, -ENODATA (0 bytes), -EUCLEAN
 * (bad header; the buffer is still returned when there is one), or a read
 * -errno.
 */
static int read_meta(struct osd_store *st, const char *name, const char *magic,
		     uint8_t **buf, size_t *len, uint64_t *epoch, uint32_t *version)
{
	uint32_t ver = 0, flags = 0;
	uint32_t newest = strcmp(magic, OSD__LOG_MAGIC) ? OSD__CKPT_VERSION : OSD__LOG_VERSION;
	*buf = NULL;
	int r = osd__read_file(st->dirfd, name, buf, len);
	if (r)
		return r;
	if (*len == 0)
		return -ENODATA;
	if (*len < OSD__FILE_HDR || osd__file_hdr_get_ver(*buf, magic, &ver, &flags, epoch) ||
	    ver < OSD__FORMAT_VERSION || ver > newest || flags)
		return -EUCLEAN;
	if (version)
		*version = ver;
	return 0;
}

static void reset_ns(struct osd_store *st)
{
	osd__ns_free(st);
	(void)osd__ns_init(st);
	atomic_store(&st->capacity_set, 0);
	st->ngone = 0;
	/* what the objects loaded so far counted goes with them */
	osd__pack_map_clear(st);
	st->pack_counted = 0;
	atomic_store(&st->used, 0);
}

/* Where the records of a checkpoint read whole start: after the index of
 * version 2 (its head damaged: after the file header, salvage then skips
 * the index as damage). */
static size_t records_start(const uint8_t *buf, size_t len)
{
	uint32_t ver = 0, flags;
	uint64_t epoch;
	size_t off = OSD__FILE_HDR;
	if (len >= OSD__FILE_HDR &&
	    osd__file_hdr_get_ver(buf, OSD__CKPT_MAGIC, &ver, &flags, &epoch) == 0 &&
	    ver >= OSD__CKPT_VERSION_INDEX && osd__table_records(buf, len, &off) != 0)
		off = OSD__FILE_HDR;
	return off;
}

/*
 * An indexed checkpoint: its index loaded, its records left on disk.
 * @return 1 when loaded, 0 when it is to be read whole (not indexed, or
 * damaged: reading it whole finds where), or -ENOMEM.
 */
static int load_ckpt_index(struct osd_store *st, const char *name, struct replay *rp,
			   uint64_t *epoch)
{
	uint8_t hdr[OSD__FILE_HDR];
	uint32_t ver = 0, flags = 0;
	uint64_t bad;
	/* objects load from it for as long as it is the checkpoint: reads that
	 * leave the host atime alone (data.c) */
	int fd = osd__open_noatime(st->dirfd, name, O_RDONLY | O_CLOEXEC, 0);
	if (fd < 0)
		return 0;
	if (pread(fd, hdr, sizeof(hdr), 0) != (ssize_t)sizeof(hdr) ||
	    osd__file_hdr_get_ver(hdr, OSD__CKPT_MAGIC, &ver, &flags, epoch) ||
	    ver < OSD__CKPT_VERSION_INDEX || flags) {
		close(fd);
		return 0;
	}
	int r = osd__table_load(st, fd, &bad, &rp->applied);
	if (!r) {
		rp->end_ok = 1;
		return 1; /* st->ckfd keeps fd */
	}
	close(fd);
	reset_ns(st);
	rp->applied = 0;
	if (r == -ENOMEM)
		return r;
	osd__store_note(st, OSD_STORE_LOG_WARNING, "%s/%s: its index is damaged or does not match "
			"its records (byte %" PRIu64 "): the records are read whole", st->path,
			name, bad);
	return 0;
}

/*
 * Load checkpoint @p name all or nothing, by its index when @p indexed
 * (salvage reads the records whole: they alone make the namespace). @return
 * 0, or <0 with @p rp describing it.
 */
static int load_ckpt_strict(struct osd_store *st, const char *name, struct replay *rp,
			    uint64_t *epoch, int indexed)
{
	uint8_t *buf;
	size_t len;
	memset(rp, 0, sizeof(*rp));
	rp->name = name;
	rp->ckpt = 1;
	int r = indexed ? load_ckpt_index(st, name, rp, epoch) : 0;
	if (r)
		return r < 0 ? r : 0;
	r = read_meta(st, name, OSD__CKPT_MAGIC, &buf, &len, epoch, NULL);
	if (r) {
		free(buf);
		return r;
	}
	rp->buf = buf;
	rp->len = len;
	rp->start = records_start(buf, len);
	replay(st, rp, 0);
	free(buf);
	rp->buf = NULL;
	st->ckpt_size = len;
	return rp->damaged ? -EUCLEAN : 0;
}

static const char *meta_problem(int r)
{
	return r == -ENOENT ? "is missing" : r == -ENODATA ? "is empty (0 bytes)" :
	       r == -EUCLEAN ? "has a damaged header" : "cannot be read";
}

#define SALVAGE_HINT "open it with salvage (osd-targetd --salvage) to keep every intact " \
	"record and skip the damaged bytes"

static int refuse_ckpt(struct osd_store *st, int r, const struct replay *rp)
{
	const char *prev = !file_exists(st, "checkpoint.prev") ? "" :
			   "; checkpoint.prev and log.prev are kept: salvage rebuilds from them";
	if (rp->damaged)
		osd__store_note(st, OSD_STORE_LOG_ERR, "%s/checkpoint is damaged at byte %zu (%s), "
				"%zu intact record(s) follow%s; %s", st->path, rp->bad, rp->why,
				rp->after, prev, SALVAGE_HINT);
	else if (r == -ENOMEM || (r < 0 && r != -ENOENT && r != -ENODATA && r != -EUCLEAN))
		osd__store_note(st, OSD_STORE_LOG_ERR, "%s/checkpoint cannot be read: %s",
				st->path, strerror(-r));
	else
		osd__store_note(st, OSD_STORE_LOG_ERR, "%s/checkpoint %s%s; %s", st->path,
				meta_problem(r), prev, SALVAGE_HINT);
	return r == -ENOENT || r == -ENODATA || r == -EUCLEAN ? -EUCLEAN : r;
}

/* Open "log" read-write at @p end (cutting what follows) into st->log. */
static int log_open_at(struct osd_store *st, size_t end, size_t len)
{
	int fd = openat(st->dirfd, "log", O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (end < len && (ftruncate(fd, (off_t)end) != 0 || fdatasync(fd) != 0)) {
		int r = -errno;
		close(fd);
		return r;
	}
	int r = osd__log_init(&st->log, fd, end);
	if (r)
		close(fd);
	return r;
}

/* The log after a good checkpoint, strictly: only a torn tail may be cut. */
static int load_log_strict(struct osd_store *st)
{
	uint8_t *buf;
	size_t len;
	uint64_t epoch;
	uint32_t version = 0;
	int r = read_meta(st, "log", OSD__LOG_MAGIC, &buf, &len, &epoch, &version);
	if (!r && epoch < st->epoch) {
		/* Older than the checkpoint (a crash during compaction): it holds nothing new. */
		free(buf);
		int fd;
		r = osd__install_log(st, st->epoch, &fd);
		return r ? r : osd__log_init(&st->log, fd, OSD__FILE_HDR);
	}
	const char *problem = r ? meta_problem(r) : NULL;
	if (!r && epoch > st->epoch) {
		r = -EUCLEAN;
		problem = "is from a later epoch than the checkpoint";
	}
	if (r) {
		free(buf);
		if (r != -ENOENT && r != -ENODATA && r != -EUCLEAN) {
			osd__store_note(st, OSD_STORE_LOG_ERR, "%s/log cannot be read: %s",
					st->path, strerror(-r));
			return r;
		}
		osd__store_note(st, OSD_STORE_LOG_ERR, "%s/log %s, and it holds the changes since "
				"the last checkpoint. Open the store with salvage (osd-targetd "
				"--salvage) to keep what is intact; data files no record names are "
				"then moved to quarantine/", st->path, problem);
		return -EUCLEAN;
	}
	/* A version 1 log (an older build's) stays version 1 until the next
	 * checkpoint: what is appended to it is what that build can read. */
	st->log_attrs = version >= OSD__LOG_VERSION_ATTRS;
	atomic_store(&st->log_files, version >= OSD__LOG_VERSION);
	struct replay rp = { .name = "log", .buf = buf, .len = len, .attrs = st->log_attrs,
			     .files = version >= OSD__LOG_VERSION, .defer = 1 };
	replay(st, &rp, 0);
	int torn = rp.damaged && torn_tail(&rp);
	free(buf);
	if (rp.damaged && !torn) {
		osd__store_note(st, OSD_STORE_LOG_ERR, "%s/log is damaged at byte %zu (%s); "
				"%zu intact record(s) follow it (%zu replayed before), which "
				"cutting the log there would lose. Refusing to open: %s",
				st->path, rp.bad, rp.why, rp.after, rp.applied, SALVAGE_HINT);
		return -EUCLEAN;
	}
	if (rp.damaged)
		osd__store_note(st, OSD_STORE_LOG_WARNING, "%s/log: replayed %zu records, cut "
				"%zu bytes of torn or corrupt tail at offset %zu (%s; no intact "
				"acknowledged record after it)", st->path, rp.applied,
				len - rp.bad, rp.bad, rp.why);
	return log_open_at(st, rp.damaged ? rp.bad : len, len);
}

/* ---- salvage ------------------------------------------------------------------ */

struct salvage {
	char text[640];
	size_t used;
	int damaged;
};

static void say(struct salvage *sv, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(struct salvage *sv, const char *fmt, ...)
{
	va_list ap;
	if (sv->used >= sizeof(sv->text))
		return;
	va_start(ap, fmt);
	int n = vsnprintf(sv->text + sv->used, sizeof(sv->text) - sv->used, fmt, ap);
	va_end(ap);
	if (n > 0)
		sv->used += (size_t)n;
}

/* Replay whatever of @p name is intact; @p magic checked only for the report. */
static void salvage_file(struct osd_store *st, struct salvage *sv, const char *name,
			 const char *magic, int ckpt)
{
	uint8_t *buf;
	size_t len;
	uint64_t epoch = 0;
	uint32_t version = OSD__LOG_VERSION; /* a damaged header: any record may be there */
	int r = read_meta(st, name, magic, &buf, &len, &epoch, &version);
	if (r && !(r == -EUCLEAN && buf)) {
		free(buf);
		say(sv, "; %s %s", name, meta_problem(r));
		sv->damaged = 1;
		return;
	}
	if (r) {
		say(sv, "; %s header damaged, its records read anyway", name);
		sv->damaged = 1;
	} else if (epoch > st->epoch) {
		st->epoch = epoch;
	}
	struct replay rp = { .name = name, .buf = buf, .len = len, .ckpt = ckpt,
			     .attrs = !ckpt && version >= OSD__LOG_VERSION_ATTRS,
			     .files = !ckpt && version >= OSD__LOG_VERSION,
			     .start = ckpt ? records_start(buf, len) : 0 };
	replay(st, &rp, 1);
	free(buf);
	say(sv, "; %s: %zu records kept", name, rp.applied);
	if (rp.damaged) {
		sv->damaged = 1;
		say(sv, ", %zu damaged bytes skipped in %zu place(s) from byte %zu (%s)"
		    ", %zu record(s) that did not apply", rp.skipped_bytes, rp.regions, rp.bad,
		    rp.why, rp.skipped_recs);
	}
}

/* The log of epoch @p want (or of an unknown epoch), for salvage. */
static void salvage_log(struct osd_store *st, struct salvage *sv, const char *name,
			uint64_t want)
{
	uint8_t *buf;
	size_t len;
	uint64_t epoch;
	int r = read_meta(st, name, OSD__LOG_MAGIC, &buf, &len, &epoch, NULL);
	free(buf);
	if (!r && epoch < want) {
		say(sv, "; %s is older than the checkpoint, not needed", name);
		return;
	}
	salvage_file(st, sv, name, OSD__LOG_MAGIC, 0);
}

static int salvage_load(struct osd_store *st)
{
	struct salvage sv = { .used = 0 };
	struct replay rp;
	uint64_t epoch = 0, pe = 0;
	int r = load_ckpt_strict(st, "checkpoint", &rp, &epoch, 0);
	if (!r) {
		st->epoch = epoch;
		say(&sv, "checkpoint intact (%zu records)", rp.applied);
		salvage_log(st, &sv, "log", epoch);
	} else {
		sv.damaged = 1;
		say(&sv, "checkpoint %s", r == -EUCLEAN && rp.damaged ? "damaged" :
		    meta_problem(r));
		if (rp.damaged)
			say(&sv, " at byte %zu (%s)", rp.bad, rp.why);
		reset_ns(st);
		struct replay pp;
		if (load_ckpt_strict(st, "checkpoint.prev", &pp, &pe, 0) == 0) {
			/* The previous checkpoint and its log rebuild the current checkpoint. */
			st->epoch = pe + 1;
			say(&sv, "; rebuilt from checkpoint.prev (%zu records)", pp.applied);
			salvage_log(st, &sv, "log.prev", pe);
			salvage_log(st, &sv, "log", pe + 1);
		} else {
			reset_ns(st);
			say(&sv, "; no usable checkpoint.prev");
			salvage_file(st, &sv, "checkpoint", OSD__CKPT_MAGIC, 1);
			salvage_log(st, &sv, "log", 0);
		}
	}
	osd__store_note(st, sv.damaged ? OSD_STORE_LOG_WARNING : OSD_STORE_LOG_NOTICE,
			"%s: salvage: %s%s", st->path, sv.text,
			sv.damaged ? "" : "; nothing was damaged");
	/* The caller writes a clean checkpoint and log, which switches to it. */
	return osd__log_init(&st->log, -1, 0);
}

int osd__recover_load(struct osd_store *st)
{
	if (st->salvage)
		return salvage_load(st);
	struct replay rp;
	uint64_t epoch;
	int r = load_ckpt_strict(st, "checkpoint", &rp, &epoch, 1);
	if (r)
		return refuse_ckpt(st, r, &rp);
	st->epoch = epoch;
	return load_log_strict(st);
}

/* ---- quarantine ------------------------------------------------------------------- */

static int quarantine_dir(struct osd_store *st)
{
	if (mkdirat(st->dirfd, "quarantine", 0700) == 0)
		(void)fsync(st->dirfd);
	else if (errno != EEXIST)
		return -errno;
	int fd = openat(st->dirfd, "quarantine", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

/* Move (or with @p link, link) @p name into quarantine/ under a free name. */
static int quarantine_as(struct osd_store *st, int dfd, const char *name, const char *as,
			 int link)
{
	int qfd = quarantine_dir(st);
	if (qfd < 0)
		return qfd;
	char to[300];
	int r = -EEXIST;
	for (unsigned i = 0; i < 1000 && r == -EEXIST; i++) {
		if (i)
			snprintf(to, sizeof(to), "%s.%u", as, i);
		else
			snprintf(to, sizeof(to), "%s", as);
		int k = link ? linkat(dfd, name, qfd, to, 0) :
			renameat2(dfd, name, qfd, to, RENAME_NOREPLACE);
		r = k == 0 ? 0 : -errno;
	}
	if (!r && (fsync(qfd) != 0 || fsync(dfd) != 0))
		r = -errno;
	close(qfd);
	return r;
}

int osd__quarantine(struct osd_store *st, int dfd, const char *name)
{
	return quarantine_as(st, dfd, name, name, 0);
}

void osd__recover_keep_damaged(struct osd_store *st)
{
	static const char *const names[] = { "checkpoint", "log", "checkpoint.prev", "log.prev" };
	char as[64];
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		snprintf(as, sizeof(as), "%s.salvaged", names[i]);
		if (file_exists(st, names[i]))
			(void)quarantine_as(st, st->dirfd, names[i], as, 1);
	}
	/* Their chain no longer leads to the checkpoint salvage writes. */
	(void)unlinkat(st->dirfd, "checkpoint.prev", 0);
	(void)unlinkat(st->dirfd, "log.prev", 0);
}
