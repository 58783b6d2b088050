/*
 * Data checksums: a CRC32C per 4 KiB block of every user object, kept in a
 * sidecar file next to the data file (data/<dir>/<gen>.sum). Reads verify
 * every block they touch; a mismatch is an unrecovered read error naming
 * the first bad byte. Crash rule: before a block changes, the sidecar header
 * records it in a dirty range (durable first), and a flush marks the
 * sidecar clean once data and checksums are durable; at open, the blocks of
 * a dirty range are recomputed from the data. Layout and reasoning:
 * docs/target-store.md, "Data checksums".
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "checksum/crc32c.h"
#include "proto/byteorder.h"
#include "store/internal.h"

#define BLK OSD__SUM_BLOCK
#define SUM_MAGIC "OSDSUMS1"
/* A dirty range starts at least 64 MiB long, aligned, and grows at least
 * fivefold, so a sequential writer makes its range durable a logarithmic
 * number of times. */
#define DIRTY_STEP 16384u
#define DIRTY_GROWTH 4u
/* A range opened after a flush reaches twice the object's length ahead, at
 * most 1 GiB: the next writes of a writer going through it need no mark. */
#define DIRTY_AHEAD_MAX 262144u
/* The dirty range a new sidecar's header opens: every block an object can have. */
#define FRESH_HI (UINT64_MAX / BLK)
/* Blocks handled per step by recomputation and scrub. */
#define CHUNK_BLOCKS 256u

static uint32_t zero_crc;
static pthread_once_t zero_once = PTHREAD_ONCE_INIT;

static void zero_init(void)
{
	static const uint8_t zeros[BLK];
	zero_crc = osd__crc32c(0, zeros, BLK);
}

/*
 * The stored form swaps 0 and the CRC of an all-zero block: 0, which is
 * what a hole in the sidecar or a read past its end gives, then means
 * "this block reads as zeros". A bijection, so no checksum is weakened.
 */
static uint32_t enc(uint32_t crc)
{
	pthread_once(&zero_once, zero_init);
	return crc == zero_crc ? 0 : crc == 0 ? zero_crc : crc;
}

static uint64_t nblocks(uint64_t len)
{
	return len / BLK + (len % BLK != 0);
}

static uint64_t ent_off(uint64_t block)
{
	return OSD__SUM_HDR + 4 * block;
}

void osd__sum_path(uint64_t gen, char name[40])
{
	unsigned dir = (unsigned)(gen & (OSD__FANOUT - 1));
	snprintf(name, 40, "%02x/%016" PRIx64 OSD__SUM_SUFFIX, dir, gen);
}

/* pread until @p len bytes or end of file; the rest is zero-filled. */
static int pread_zero(int fd, void *buf, size_t len, uint64_t off)
{
	uint8_t *p = buf;
	size_t got = 0;
	while (got < len) {
		ssize_t n = fd >= 0 ? pread(fd, p + got, len - got, (off_t)(off + got)) : 0;
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			break;
		got += (size_t)n;
	}
	memset(p + got, 0, len - got);
	return 0;
}

/* One buffer through the store's write-everything helper (data.c). */
static int pwrite_all(int fd, const void *buf, size_t len, uint64_t off)
{
	struct iovec v = { (void *)buf, len };

	return osd__pwrite_all(fd, &v, 1, off);
}

/* ---- sidecar header ---------------------------------------------------------------- */

/*
 * 64 bytes: "OSDSUMS1", block size(4), 0(4), length(8), dirty first
 * block(8), dirty end block(8), 0(20), CRC32C of bytes 0-59(4). The length
 * is the logical length when the range is empty (clean).
 */
int osd__sum_hdr_write(int sfd, uint64_t length, uint64_t lo, uint64_t hi)
{
	uint8_t h[OSD__SUM_HDR] = { 0 };
	memcpy(h, SUM_MAGIC, 8);
	osd__put_be32(h + 8, BLK);
	osd__put_be64(h + 16, length);
	osd__put_be64(h + 24, lo);
	osd__put_be64(h + 32, hi);
	osd__put_be32(h + 60, osd__crc32c(0, h, 60));
	return pwrite_all(sfd, h, sizeof(h), 0);
}

/* A header that never reached the disk: the sidecar's first bytes are all zero. */
static int hdr_unwritten(int sfd)
{
	uint8_t h[OSD__SUM_HDR], zero[OSD__SUM_HDR] = { 0 };
	return sfd >= 0 && pread_zero(sfd, h, sizeof(h), 0) == 0 && !memcmp(h, zero, sizeof(h));
}

static int hdr_read(int sfd, uint64_t *length, uint64_t *lo, uint64_t *hi)
{
	uint8_t h[OSD__SUM_HDR];
	int r = pread_zero(sfd, h, sizeof(h), 0);
	if (r)
		return r;
	if (memcmp(h, SUM_MAGIC, 8) != 0 || osd__get_be32(h + 8) != BLK ||
	    osd__get_be32(h + 60) != osd__crc32c(0, h, 60))
		return -EUCLEAN;
	*length = osd__get_be64(h + 16);
	*lo = osd__get_be64(h + 24);
	*hi = osd__get_be64(h + 32);
	return *lo <= *hi ? 0 : -EUCLEAN;
}

int osd__sum_open(struct osd_store *st, struct osd__obj *o, int create, int *sfd)
{
	char name[40];
	*sfd = -1;
	if (!o->has_sums && !create)
		return 0;
	osd__sum_path(o->gen, name);
	int flags = O_RDWR | O_CLOEXEC;
	if (!o->has_sums)
		flags |= osd__pool_take(st, name) == 0 ? O_TRUNC : O_CREAT | O_TRUNC;
	int fd = osd__open_noatime(st->datafd, name, flags, 0600);
	if (fd < 0)
		return -errno;
	if (!o->has_sums) {
		/* Dirty over everything and not synced: after a crash the sidecar
		 * holds this header or none (all zeros), and open recomputes the
		 * object's checksums from its data either way. So the first write
		 * of a new object needs no synced mark (it cost an fdatasync per
		 * small object). */
		int r = osd__sum_hdr_write(fd, 0, 0, FRESH_HI);
		if (r) {
			close(fd);
			return r;
		}
		o->has_sums = 1;
		o->io->sum_fresh = 1;
		o->io->sum_alloc = 0;
	} else {
		/* Entries before the sidecar's first hole have room already: an
		 * overwrite there needs no fallocate (one per write otherwise,
		 * 6 % of a small random overwrite). Nobody writes before the
		 * descriptor is published. */
		off_t hole = lseek(fd, 0, SEEK_HOLE);
		if (hole > 0 && (uint64_t)hole > o->io->sum_alloc)
			o->io->sum_alloc = (uint64_t)hole;
	}
	*sfd = fd;
	return 0;
}

int osd__sum_mark(struct osd__obj *o, int sfd, uint64_t len, uint64_t lo, uint64_t hi)
{
	int clean = o->io->dlo >= o->io->dhi;
	if (!clean && lo >= o->io->dlo && hi <= o->io->dhi)
		return 0;
	if (clean && o->io->sum_fresh) { /* the header made with the sidecar covers it */
		o->io->sum_fresh = 0;
		o->io->dlo = 0;
		o->io->dhi = FRESH_HI;
		return 0;
	}
	uint64_t nlo = lo / DIRTY_STEP * DIRTY_STEP;
	uint64_t nhi = (hi + DIRTY_STEP - 1) / DIRTY_STEP * DIRTY_STEP;
	if (clean) {
		/* a writer that goes on through the object needs no second mark */
		uint64_t ahead = 2 * nblocks(len) < DIRTY_AHEAD_MAX ? 2 * nblocks(len)
								   : DIRTY_AHEAD_MAX;
		if (nhi < nlo + ahead)
			nhi = (nlo + ahead + DIRTY_STEP - 1) / DIRTY_STEP * DIRTY_STEP;
	} else {
		if (o->io->dlo < nlo)
			nlo = o->io->dlo;
		if (nhi > o->io->dhi && nhi < o->io->dhi + DIRTY_GROWTH * (o->io->dhi - o->io->dlo))
			nhi = o->io->dhi + DIRTY_GROWTH * (o->io->dhi - o->io->dlo);
		if (nhi < o->io->dhi)
			nhi = o->io->dhi;
	}
	/* the length field counts only when clean */
	int r = osd__sum_hdr_write(sfd, 0, nlo, nhi);
	/* Durable before the data: after a machine crash the blocks that may
	 * disagree with their checksums are known. */
	if (!r && fdatasync(sfd) != 0)
		r = -errno;
	if (!r) {
		o->io->dlo = nlo;
		o->io->dhi = nhi;
	}
	return r;
}

/* ---- block checksums ---------------------------------------------------------------- */

/* A position in an iovec array. */
struct cursor {
	const struct iovec *iov;
	int cnt, i;
	size_t at;
};

static uint32_t cursor_crc(struct cursor *c, uint32_t crc, size_t n)
{
	while (n && c->i < c->cnt) {
		size_t left = c->iov[c->i].iov_len - c->at, k = left < n ? left : n;
		crc = osd__crc32c(crc, (const uint8_t *)c->iov[c->i].iov_base + c->at, k);
		n -= k;
		c->at += k;
		if (c->at == c->iov[c->i].iov_len) {
			c->i++;
			c->at = 0;
		}
	}
	return crc;
}

static void cursor_copy(struct cursor *c, uint8_t *dst, size_t n)
{
	while (n && c->i < c->cnt) {
		size_t left = c->iov[c->i].iov_len - c->at, k = left < n ? left : n;
		memcpy(dst, (const uint8_t *)c->iov[c->i].iov_base + c->at, k);
		dst += k;
		n -= k;
		c->at += k;
		if (c->at == c->iov[c->i].iov_len) {
			c->i++;
			c->at = 0;
		}
	}
}

/* Checksums of the next @p n whole blocks at the cursor: blocks that lie in
 * one iovec go three at a time (osd__crc32c_blocks). */
static void cursor_blocks(struct cursor *c, uint64_t n, uint32_t *out)
{
	while (n && c->i < c->cnt) {
		size_t left = c->iov[c->i].iov_len - c->at;
		uint64_t k = left / BLK < n ? left / BLK : n;
		if (!k) { /* a block split between iovecs */
			*out++ = cursor_crc(c, 0, BLK);
			n--;
			continue;
		}
		osd__crc32c_blocks((const uint8_t *)c->iov[c->i].iov_base + c->at, BLK, (size_t)k,
				   out);
		out += k;
		n -= k;
		c->at += (size_t)(k * BLK);
		if (c->at == c->iov[c->i].iov_len) {
			c->i++;
			c->at = 0;
		}
	}
}

/* Stored entries of blocks [first, first + n) (0 past the sidecar's end). */
static int entries_read(int sfd, uint64_t first, uint64_t n, uint8_t *ent)
{
	return pread_zero(sfd, ent, (size_t)(4 * n), ent_off(first));
}

static uint32_t ent_get(const uint8_t *ent, uint64_t i)
{
	return osd__get_be32(ent + 4 * i);
}

/* Read whole block @p b from the data file and check it. -EIO on mismatch. */
static int block_check(int fd, int sfd, uint64_t b, uint8_t *buf)
{
	uint8_t e[4];
	int r = pread_zero(fd, buf, BLK, b * BLK);
	if (!r)
		r = entries_read(sfd, b, 1, e);
	if (r)
		return r;
	return enc(osd__crc32c(0, buf, BLK)) == ent_get(e, 0) ? 0 : -EIO;
}

int osd__sum_verify(const struct osd__obj *o, int fd, int sfd, uint64_t off,
		    const struct iovec *iov, int iovcnt, uint64_t got, uint64_t *bad)
{
	if (!got)
		return 0;
	if (o->sums_bad) {
		*bad = off;
		return -EIO;
	}
	uint64_t first = off / BLK, last = (off + got - 1) / BLK, n = last - first + 1;
	uint8_t stack_ent[1024], scratch[BLK];
	uint8_t *ent = n * 4 <= sizeof(stack_ent) ? stack_ent : malloc((size_t)(n * 4));
	if (!ent)
		return -ENOMEM;
	int r = entries_read(sfd, first, n, ent);
	struct cursor c = { iov, iovcnt, 0, 0 };
	uint32_t crcs[CHUNK_BLOCKS];
	for (uint64_t b = first; !r && b <= last; b++) {
		uint64_t bs = b * BLK, be = bs + BLK;
		uint64_t from = bs > off ? bs : off, to = be < off + got ? be : off + got;
		uint32_t crc = 0;
		if (from == bs && to == be) { /* a run of whole blocks */
			uint64_t k = (off + got) / BLK - b;
			if (k > CHUNK_BLOCKS)
				k = CHUNK_BLOCKS;
			cursor_blocks(&c, k, crcs);
			for (uint64_t i = 0; i < k && !r; i++)
				if (enc(crcs[i]) != ent_get(ent, b + i - first)) {
					*bad = (b + i) * BLK;
					r = -EIO;
				}
			b += k - 1;
			continue;
		}
		if (from > bs) { /* head of the block, not asked for */
			r = pread_zero(fd, scratch, (size_t)(from - bs), bs);
			crc = osd__crc32c(crc, scratch, (size_t)(from - bs));
		}
		crc = cursor_crc(&c, crc, (size_t)(to - from));
		if (!r && to < be) {
			r = pread_zero(fd, scratch, (size_t)(be - to), to);
			crc = osd__crc32c(crc, scratch, (size_t)(be - to));
		}
		if (!r && enc(crc) != ent_get(ent, b - first)) {
			*bad = from;
			r = -EIO;
		}
	}
	if (ent != stack_ent)
		free(ent);
	return r;
}

int osd__sum_prepare_write(struct osd__obj *o, int fd, int sfd,
			   uint64_t len, uint64_t off, const struct iovec *iov, int iovcnt,
			   uint64_t total, uint8_t **entp, uint64_t *bad)
{
	uint64_t first, last, n;
	uint8_t *ent, scratch[BLK];
	struct cursor c = { iov, iovcnt, 0, 0 };
	uint32_t crcs[CHUNK_BLOCKS];
	int r;

	*entp = NULL;
	if (!total) /* an empty WRITE or APPEND changes no block */
		return 0;
	first = off / BLK;
	last = (off + total - 1) / BLK;
	n = last - first + 1;
	ent = malloc((size_t)(n * 4));
	r = ent ? 0 : -ENOMEM;
	for (uint64_t b = first; !r && b <= last; b++) {
		uint64_t bs = b * BLK, be = bs + BLK;
		uint64_t from = bs > off ? bs : off, to = be < off + total ? be : off + total;
		uint32_t crc;
		if (from == bs && to == be) { /* a run of whole blocks */
			uint64_t k = (off + total) / BLK - b;
			if (k > CHUNK_BLOCKS)
				k = CHUNK_BLOCKS;
			cursor_blocks(&c, k, crcs);
			for (uint64_t i = 0; i < k; i++)
				osd__put_be32(ent + 4 * (b + i - first), enc(crcs[i]));
			b += k - 1;
			continue;
		} else {
			/* A partial block: its other bytes are checked before they
			 * are covered by a new checksum (never launder bad data). */
			if (bs < len) {
				r = block_check(fd, sfd, b, scratch);
				if (r == -EIO)
					*bad = bs;
			} else {
				memset(scratch, 0, BLK);
			}
			cursor_copy(&c, scratch + (from - bs), (size_t)(to - from));
			crc = osd__crc32c(0, scratch, BLK);
		}
		if (ent)
			osd__put_be32(ent + 4 * (b - first), enc(crc));
	}
	/* Room for the entries before the data changes: a full filesystem then
	 * fails the write with nothing changed, never with new data whose
	 * checksums could not be written (holes read as 0: still right).
	 * Entries below sum_alloc have room already (an overwrite). */
	if (!r && ent_off(first) + 4 * n > o->io->sum_alloc) {
		if (fallocate(sfd, 0, (off_t)ent_off(first), (off_t)(4 * n)) == 0) {
			/* the header is always written: [0, OSD__SUM_HDR) has room */
			if (ent_off(first) <= o->io->sum_alloc || first == 0)
				o->io->sum_alloc = ent_off(first) + 4 * n;
		} else if (errno != EOPNOTSUPP) {
			r = -errno;
		}
	}
	if (!r)
		r = osd__sum_mark(o, sfd, len, first, last + 1);
	if (r) {
		free(ent);
		return r;
	}
	*entp = ent;
	return 0;
}

int osd__sum_put(int sfd, uint64_t first, const uint8_t *ent, size_t n)
{
	return pwrite_all(sfd, ent, 4 * n, ent_off(first));
}

int osd__sum_truncate(struct osd__obj *o, int fd, int sfd,
		      uint64_t oldlen, uint64_t newlen, uint64_t *bad)
{
	uint8_t scratch[BLK], e[4];
	uint64_t keep = nblocks(newlen);
	int tail = newlen < oldlen && newlen % BLK;
	int r = 0;
	if (tail) {
		r = block_check(fd, sfd, newlen / BLK, scratch);
		if (r == -EIO)
			*bad = newlen / BLK * BLK;
		memset(scratch + newlen % BLK, 0, BLK - newlen % BLK);
		osd__put_be32(e, enc(osd__crc32c(0, scratch, BLK)));
	}
	uint64_t lo = newlen < oldlen ? newlen / BLK : nblocks(oldlen);
	uint64_t hi = newlen < oldlen ? nblocks(oldlen) : keep;
	if (!r)
		r = osd__sum_mark(o, sfd, oldlen, lo, hi > lo ? hi : lo + 1);
	if (!r && ftruncate(fd, (off_t)newlen) != 0)
		r = -errno;
	if (!r && newlen < oldlen && ftruncate(sfd, (off_t)ent_off(keep)) != 0)
		r = -errno;
	if (o->io->sum_alloc > ent_off(keep))
		o->io->sum_alloc = ent_off(keep);
	if (!r && tail)
		r = pwrite_all(sfd, e, 4, ent_off(newlen / BLK));
	return r;
}

int osd__sum_punch(struct osd__obj *o, int fd, int sfd, uint64_t len,
		   uint64_t start, uint64_t end, uint64_t *bad)
{
	uint8_t scratch[BLK], head[4], tail[4];
	uint64_t first = start / BLK, last = (end - 1) / BLK;
	int has_head = start % BLK != 0, has_tail = end % BLK != 0 && (!has_head || last > first);
	int r = 0;
	if (has_head) {
		/* also the tail when the range lies inside one block */
		uint64_t bs = first * BLK, to = end < bs + BLK ? end : bs + BLK;
		r = block_check(fd, sfd, first, scratch);
		if (r == -EIO)
			*bad = bs;
		memset(scratch + (start - bs), 0, (size_t)(to - start));
		osd__put_be32(head, enc(osd__crc32c(0, scratch, BLK)));
	}
	if (!r && has_tail) {
		r = block_check(fd, sfd, last, scratch);
		if (r == -EIO)
			*bad = last * BLK;
		memset(scratch, 0, (size_t)(end - last * BLK));
		osd__put_be32(tail, enc(osd__crc32c(0, scratch, BLK)));
	}
	if (!r)
		r = osd__sum_mark(o, sfd, len, first, last + 1);
	if (!r && fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)start,
			    (off_t)(end - start)) != 0)
		r = -errno;
	/* Whole blocks read as zeros now: their entries become 0 (a hole). */
	uint64_t ff = first + has_head, lf = last + 1 - has_tail;
	if (lf > ff && o->io->sum_alloc > ent_off(ff))
		o->io->sum_alloc = ent_off(ff);
	if (!r && lf > ff &&
	    fallocate(sfd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)ent_off(ff),
		      (off_t)(4 * (lf - ff))) != 0)
		r = -errno;
	if (!r && has_head)
		r = pwrite_all(sfd, head, 4, ent_off(first));
	if (!r && has_tail)
		r = pwrite_all(sfd, tail, 4, ent_off(last));
	return r;
}

/* ---- recomputation (open after a crash, upgrade, salvage) ---------------------------------- */

/*
 * Compute the entries of blocks [lo, hi) of data file @p fd (@p len bytes)
 * from the data as it is, skipping holes. @return blocks computed or -errno.
 */
int64_t osd__sum_recompute(int fd, int sfd, uint64_t len, uint64_t lo, uint64_t hi)
{
	uint64_t end = nblocks(len);
	uint8_t *buf = malloc((size_t)CHUNK_BLOCKS * BLK), ent[4 * CHUNK_BLOCKS];
	int64_t done = 0;
	if (!buf)
		return -ENOMEM;
	if (hi > end)
		hi = end;
	uint64_t b = lo;
	while (b < hi) {
		off_t data = fd >= 0 ? lseek(fd, (off_t)(b * BLK), SEEK_DATA) : -1;
		uint64_t next = data < 0 ? hi : (uint64_t)data / BLK;
		if (next > b) { /* a hole: its entries become 0 */
			uint64_t h = next < hi ? next : hi;
			if (fallocate(sfd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
				      (off_t)ent_off(b), (off_t)(4 * (h - b))) != 0 &&
			    errno != EOPNOTSUPP) {
				done = -errno;
				break;
			}
			b = h;
			continue;
		}
		uint64_t k = hi - b < CHUNK_BLOCKS ? hi - b : CHUNK_BLOCKS;
		int r = pread_zero(fd, buf, (size_t)(k * BLK), b * BLK);
		/* bytes past the length read as zeros (the block's padding) */
		if (!r && (b + k) * BLK > len)
			memset(buf + (len - b * BLK), 0, (size_t)((b + k) * BLK - len));
		uint32_t crcs[CHUNK_BLOCKS];
		osd__crc32c_blocks(buf, BLK, (size_t)k, crcs);
		for (uint64_t i = 0; !r && i < k; i++)
			osd__put_be32(ent + 4 * i, enc(crcs[i]));
		if (!r)
			r = pwrite_all(sfd, ent, (size_t)(4 * k), ent_off(b));
		if (r) {
			done = r;
			break;
		}
		b += k;
		done += (int64_t)k;
	}
	free(buf);
	return done;
}

/* Recompute [lo, hi), cut entries past the length, make them durable, then clean. */
static int64_t rebuild(int fd, int sfd, uint64_t len, uint64_t lo, uint64_t hi)
{
	int64_t n = osd__sum_recompute(fd, sfd, len, lo, hi);
	if (n >= 0 && ftruncate(sfd, (off_t)ent_off(nblocks(len))) != 0)
		n = -errno;
	if (n >= 0 && fdatasync(sfd) != 0)
		n = -errno;
	if (n >= 0) {
		int r = osd__sum_hdr_write(sfd, len, 0, 0);
		if (r)
			n = r;
	}
	return n;
}

static void note_bad(struct osd__sum_scan *sc, struct osd__obj *o)
{
	char one[48];
	size_t n = strlen(sc->bad_names);
	snprintf(one, sizeof(one), "%s0x%" PRIx64 "/0x%" PRIx64, n ? " " : "", o->pid, o->oid);
	if (sc->bad_objs++ < 6 && n + strlen(one) < sizeof(sc->bad_names))
		memcpy(sc->bad_names + n, one, strlen(one) + 1);
}

/* Make the data file at least @p len long (missing or short: what is
 * missing then fails its checksums instead of reading as a shorter object). */
static int data_extend(struct osd_store *st, struct osd__obj *o, uint64_t len)
{
	char name[32];
	unsigned dir;
	osd__data_path(o->gen, name, &dir);
	int fd = openat(st->datafd, name, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	struct stat sb;
	int r = fstat(fd, &sb) == 0 ? 0 : -errno;
	if (!r && (uint64_t)sb.st_size < len && ftruncate(fd, (off_t)len) != 0)
		r = -errno;
	if (!r && fdatasync(fd) != 0)
		r = -errno;
	close(fd);
	o->has_file = 1;
	if (!r)
		o->length = len;
	return r;
}

/* By value: a replay may remove the object before the settle. */
static int settle_add(struct osd__sum_scan *sc, struct osd__obj *o)
{
	if (sc->nsettle == sc->settle_cap) {
		size_t cap = sc->settle_cap ? 2 * sc->settle_cap : 64;
		struct osd__sum_settle *v = realloc(sc->settle, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		sc->settle = v;
		sc->settle_cap = cap;
	}
	sc->settle[sc->nsettle++] = (struct osd__sum_settle){ o->gen, o->length };
	return 0;
}

int osd__sum_settle(struct osd_store *st, struct osd__sum_scan *sc)
{
	int r = 0;
	if (sc->nsettle && syncfs(st->datafd) != 0)
		r = -errno;
	for (size_t i = 0; !r && i < sc->nsettle; i++) {
		char name[40];
		osd__sum_path(sc->settle[i].gen, name);
		int sfd = openat(st->datafd, name, O_RDWR | O_CLOEXEC);
		/* gone: its object was removed (a later record of the replay) */
		r = sfd < 0 ? (errno == ENOENT ? 0 : -errno) :
			      osd__sum_hdr_write(sfd, sc->settle[i].length, 0, 0);
		if (sfd >= 0)
			close(sfd);
	}
	free(sc->settle);
	sc->settle = NULL;
	sc->nsettle = sc->settle_cap = 0;
	return r;
}

int osd__sum_attach(struct osd_store *st, struct osd__obj *o, int have_data,
		    struct osd__sum_scan *sc)
{
	char base[40], dname[32];
	unsigned dir;
	osd__data_path(o->gen, dname, &dir);
	osd__sum_path(o->gen, base);
	int dfd = st->datafd, fd = -1;
	int sfd = openat(dfd, base, O_RDWR | O_CLOEXEC);
	uint64_t len = 0, lo = 0, hi = 0;
	int r = sfd < 0 ? -errno : hdr_read(sfd, &len, &lo, &hi);
	int64_t n;
	/* the data only when it is read (a clean header needs none: an open
	 * after a crash attaches each object the log names) */
	if (have_data && (r || lo < hi)) {
		fd = openat(dfd, dname, O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			r = -errno;
			goto out;
		}
		/* no readahead: it would leave readahead marks in the page cache,
		 * and a later READ crossing one would read pages ahead unseen by
		 * read trust (trust.c) */
		(void)posix_fadvise(fd, 0, 0, POSIX_FADV_RANDOM);
	}
	if (r == -EUCLEAN && have_data && hdr_unwritten(sfd)) {
		/* made, written to, and a crash before its header (unsynced, see
		 * osd__sum_open) reached the disk: as dirty over everything */
		r = 0;
		lo = 0;
		hi = FRESH_HI;
	}
	if (r == -ENOENT || r == -EUCLEAN) {
		int empty = !have_data || !o->length;
		if (r == -ENOENT && empty) {
			r = 0; /* no data yet: made with the first write */
			goto out;
		}
		/* A crash between making the sidecar and writing its header
		 * leaves it empty, before any data: nothing to lose, start again. */
		if (!st->upgrading && !st->salvage && !empty) {
			o->sums_bad = 1; /* every read of it fails: nothing can be checked */
			note_bad(sc, o);
			r = 0;
			goto out;
		}
		/* upgrade, or salvage: checksums of the data as it is */
		if (sfd < 0)
			sfd = openat(dfd, base, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		if (sfd < 0) {
			r = -errno;
			goto out;
		}
		n = rebuild(fd, sfd, o->length, 0, UINT64_MAX);
		r = n < 0 ? (int)n : 0;
		if (!r && empty) {
			o->has_sums = 1;
		} else if (!r) {
			sc->built_objs++;
			sc->built_bytes += o->length;
			o->has_sums = 1;
		}
		goto out;
	}
	if (r)
		goto out;
	o->has_sums = 1;
	if (lo < hi) { /* changed since its last flush: the data as it is */
		/* entries now, made durable and the header clean for all such
		 * objects at once (osd__sum_settle): the header stays dirty until */
		n = osd__sum_recompute(fd, sfd, o->length, lo, hi);
		if (n >= 0 && ftruncate(sfd, (off_t)ent_off(nblocks(o->length))) != 0)
			n = -errno;
		r = n < 0 ? (int)n : settle_add(sc, o);
		if (n > 0) {
			sc->recomputed_objs++;
			sc->recomputed_blocks += (uint64_t)n;
		}
	} else if (len > o->length || !have_data) {
		/* clean, but the data file is short or gone */
		if (len) {
			note_bad(sc, o);
			/* a length the filesystem cannot hold: nothing can be checked */
			if (data_extend(st, o, len) != 0)
				o->sums_bad = 1;
		}
	}
out:
	if (fd >= 0)
		close(fd);
	if (sfd >= 0)
		close(sfd);
	return r;
}

void osd__sum_report(struct osd_store *st, const struct osd__sum_scan *sc)
{
	if (sc->recomputed_objs)
		osd__store_note(st, OSD_STORE_LOG_NOTICE, "%s: recomputed the checksums of %" PRIu64
				" block(s) of %" PRIu64 " object(s) changed since their last flush "
				"before the store was last stopped", st->path, sc->recomputed_blocks,
				sc->recomputed_objs);
	if (sc->built_objs)
		osd__store_note(st, st->upgrading ? OSD_STORE_LOG_NOTICE : OSD_STORE_LOG_WARNING,
				"%s: computed checksums for the data as it is of %" PRIu64
				" object(s), %" PRIu64 " bytes (%s)", st->path, sc->built_objs,
				sc->built_bytes, st->upgrading ? "store format upgrade"
				: "salvage: their checksums were missing or damaged");
	if (sc->bad_objs)
		osd__store_note(st, OSD_STORE_LOG_ERR, "%s: %" PRIu64 " object(s) with a missing or "
				"short data file or missing or damaged checksums: %s%s; their bad "
				"blocks fail with MEDIUM ERROR (salvage recomputes missing checksums "
				"from the data)", st->path, sc->bad_objs, sc->bad_names,
				sc->bad_objs > 6 ? " ..." : "");
}

/* ---- scrub ----------------------------------------------------------------------------- */

int osd__sum_scrub_range(int fd, int sfd, uint64_t len, uint64_t b, uint64_t k,
			 uint8_t *buf, uint64_t *bad)
{
	uint8_t ent[4 * CHUNK_BLOCKS];
	if (k > CHUNK_BLOCKS)
		k = CHUNK_BLOCKS;
	int r = pread_zero(fd, buf, (size_t)(k * BLK), b * BLK);
	if (!r)
		r = entries_read(sfd, b, k, ent);
	if (!r && (b + k) * BLK > len && len > b * BLK)
		memset(buf + (len - b * BLK), 0, (size_t)((b + k) * BLK - len));
	uint32_t crcs[CHUNK_BLOCKS];
	if (!r)
		osd__crc32c_blocks(buf, BLK, (size_t)k, crcs);
	for (uint64_t i = 0; !r && i < k; i++)
		if (enc(crcs[i]) != ent_get(ent, i)) {
			*bad = (b + i) * BLK;
			r = -EIO;
		}
	return r;
}

uint64_t osd__sum_chunk_blocks(void)
{
	return CHUNK_BLOCKS;
}
