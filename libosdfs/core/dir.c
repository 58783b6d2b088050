/*
 * Directories: an extendible hash of fixed-size blocks of ext2-style
 * records (docs/osdfs-format.md). A name's 55-bit keyed hash selects a
 * table slot (its top "depth" bits), the slot names a block of the
 * directory object, and the block holds the entry. Lookup, insert and
 * remove touch one block; a full block is split in two.
 *
 * The table is the only authority on where a hash lives: a record found in
 * a block the table does not route its hash to is stale (left by an
 * interrupted split) and is ignored. readdir walks the hash space in order,
 * and a cookie is the hash (plus a per-name collision byte) of the next
 * entry, so listings are stable across concurrent creates, unlinks and
 * splits. Every record is validated before use: a bad block yields
 * -EUCLEAN, never a loop.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "backends/create.h"
#include "core/fs.h"
#include "lebytes.h"

#define HBITS OSDFS__HASH_BITS
#define HLIMIT (1ULL << HBITS)
#define SPLIT_BATCH 64
/* A block missing from the cache, and never summarized, is read with the
 * others of its aligned run of this many (256 KiB of 4 KiB blocks), whose
 * name summaries are kept (sums.c): one backend read then answers lookups
 * of absent names in all of them. With runs of 16, 20,000 random lookups
 * in a directory of 10M entries left a twentieth of it unsummarized, and a
 * negative lookup there read a run. */
#define READ_AHEAD 64u

/* The run's length: READ_AHEAD blocks, but no more than a quarter of the
 * summaries kept (a power of two, so runs stay aligned; 1, no run, when
 * fewer than 8 are kept, none included). A run longer than
 * the summaries can hold evicts the ones it just made: with a cache of one
 * block (32 summaries), every lookup of a new name read and hashed 64
 * blocks. */
static uint32_t run_len(const osdfs *fs)
{
	uint32_t n = READ_AHEAD;

	while (n > 1 && n > fs->sums_max / 4)
		n /= 2;
	return n;
}

static uint64_t name_hash(const osdfs *fs, const char *name, size_t len)
{
	return osdfs__name_hash(&fs->sb, name, len);
}

static uint32_t slot_of(const struct osdfs__inode *dp, uint64_t h)
{
	return (uint32_t)(h >> (HBITS - dp->dh.depth));
}

static void blk_init(const osdfs *fs, const struct osdfs__inode *dp, uint8_t *buf)
{
	osdfs__dirblk_init(buf, fs->bsize, dp->ino);
}

static int bad_block(osdfs *fs, const struct osdfs__inode *dp, uint32_t blk, size_t off,
		     enum osdfs__dirblk_fault why)
{
	static const char *const text[] = {
		[OSDFS__DIRBLK_BAD_HEADER] = "bad block magic or version",
		[OSDFS__DIRBLK_OTHER_DIR] = "block belongs to another directory",
		[OSDFS__DIRBLK_BAD_REC_LEN] = "bad record length",
		[OSDFS__DIRBLK_BAD_NAME_LEN] = "bad name length",
		[OSDFS__DIRBLK_BAD_INO_FT] = "bad inode number or type",
		[OSDFS__DIRBLK_BAD_NAME] = "bad name",
		[OSDFS__DIRBLK_DOT_NAME] = "bad name",
	};

	return osdfs__fail(fs, -EUCLEAN, "directory %llu block %u offset %zu: %s",
			   (unsigned long long)dp->ino, blk, off, text[why]);
}

/* The first fault of a block, at *off; OSDFS__DIRBLK_OK if it is sound. */
static enum osdfs__dirblk_fault blk_fault(const osdfs *fs, const struct osdfs__inode *dp,
					  const uint8_t *buf, size_t *off)
{
	enum osdfs__dirblk_fault why = osdfs__dirblk_hdr_check(buf, dp->ino);

	*off = why == OSDFS__DIRBLK_OTHER_DIR ? 8 : 0;
	if (why != OSDFS__DIRBLK_OK)
		return why;
	for (*off = OSDFS__BLOCK_HDR_LEN; *off < fs->bsize;) {
		struct osdfs__rec r;

		why = osdfs__rec_parse(&r, buf, *off, fs->bsize);
		if (why != OSDFS__DIRBLK_OK)
			return why;
		*off += r.rec_len;
	}
	return OSDFS__DIRBLK_OK;
}

static int blk_check(osdfs *fs, const struct osdfs__inode *dp, uint32_t blk, const uint8_t *buf)
{
	size_t off;
	enum osdfs__dirblk_fault why = blk_fault(fs, dp, buf, &off);

	return why == OSDFS__DIRBLK_OK ? 0 : bad_block(fs, dp, blk, off, why);
}

/* Summaries of the sound blocks read ahead with blk (a bad one is reported
 * when it is itself read). */
static void blk_summarize_run(osdfs *fs, const struct osdfs__inode *dp, uint32_t blk,
			      uint32_t first, const uint8_t *win, size_t got)
{
	size_t off;

	for (uint32_t i = 0; (size_t)(i + 1) * fs->bsize <= got; i++) {
		const uint8_t *b = win + (size_t)i * fs->bsize;

		if (first + i != blk && !osdfs__sums_has(fs, dp->ino, first + i) &&
		    blk_fault(fs, dp, b, &off) == OSDFS__DIRBLK_OK)
			osdfs__sums_add(fs, dp->ino, first + i, b, 0);
	}
}

/* A run of blocks read ahead: from block first, got bytes. */
struct run {
	uint8_t *buf;
	uint32_t first;
	size_t got;
	int kept;                 /* buf is the filesystem's kept one */
};

/*
 * Reads the aligned run of run_len() blocks holding blk into rn (a buffer
 * kept between runs: a new one costs a page fault per block), blk copied
 * to @p buf. rn->buf NULL when it cannot (no summaries kept, no memory, a
 * read error or blk not in what came back): then blk is read alone, which
 * reports any error.
 */
static void blk_read_run(osdfs *fs, const struct osdfs__inode *dp, uint32_t blk, uint8_t *buf,
			 struct run *rn)
{
	uint32_t len = run_len(fs), n;
	size_t at;
	ssize_t r;

	rn->first = blk & ~(len - 1);
	n = dp->dh.nblocks - rn->first < len ? dp->dh.nblocks - rn->first : len;
	at = (size_t)(blk - rn->first) * fs->bsize;
	if (n < 2 || !(rn->buf = osdfs__bcache_run_buf(fs, (size_t)n * fs->bsize, &rn->kept)))
		return;
	struct iovec iov = { rn->buf, (size_t)n * fs->bsize };
	r = fs->ops->read(fs->impl, OSDFS__OID_BASE + dp->ino, (uint64_t)rn->first * fs->bsize,
			  &iov, 1);
	if (r < 0 || (size_t)r < at + fs->bsize) {
		osdfs__bcache_run_done(fs, rn->buf, rn->kept);
		rn->buf = NULL;
		return;
	}
	rn->got = (size_t)r;
	memcpy(buf, rn->buf + at, fs->bsize);
}

/*
 * Block blk into buf, through the cache. With OSDFS__DIR_AHEAD, a block
 * never summarized comes with its run (lookups, readdir, the emptiness
 * check); changes and the check before a create read it alone: they need
 * that block anyway, and a run read for each of them made the first creates
 * in a directory of 10M entries cost 250-700 us each.
 */
static int blk_read(osdfs *fs, struct osdfs__inode *dp, uint32_t blk, uint8_t *buf,
		    enum osdfs__dir_read how)
{
	struct run rn = { NULL, blk, 0, 0 };
	int rc = 0;

	if (blk >= dp->dh.nblocks)
		return osdfs__fail(fs, -EUCLEAN, "directory %llu: table names block %u of %u",
				   (unsigned long long)dp->ino, blk, dp->dh.nblocks);
	if (osdfs__bcache_get(fs, dp->ino, blk, buf))
		return 0;
	/* A block with a summary was read before: its run most likely was too. */
	if (how == OSDFS__DIR_AHEAD && !osdfs__sums_has(fs, dp->ino, blk))
		blk_read_run(fs, dp, blk, buf, &rn);
	if (!rn.buf)
		rc = osdfs__bcache_fetch(fs, dp->ino, blk, buf);
	if (rc == 0)
		rc = blk_check(fs, dp, blk, buf);
	if (rc == 0) {
		osdfs__bcache_fill(fs, dp->ino, blk, buf);
		if (rn.buf)
			blk_summarize_run(fs, dp, blk, rn.first, rn.buf, rn.got);
	}
	if (rn.buf)
		osdfs__bcache_run_done(fs, rn.buf, rn.kept);
	return rc;
}

/* Is the live record r routed to block blk by the table? */
static int rec_owned(const osdfs *fs, const struct osdfs__inode *dp, const struct osdfs__rec *r,
		     uint32_t blk, uint64_t *h)
{
	*h = name_hash(fs, r->name, r->name_len);
	return dp->table[slot_of(dp, *h)] == blk;
}

static int table_load(osdfs *fs, struct osdfs__inode *dp)
{
	size_t n = (size_t)1 << dp->dh.depth;
	uint32_t nchunks = (uint32_t)((n + OSDFS__DIRTAB_CHUNK - 1) / OSDFS__DIRTAB_CHUNK);
	uint8_t *buf = malloc(OSDFS__DIRTAB_CHUNK * 4);
	int rc = 0;

	dp->table = malloc(n * sizeof(uint32_t));
	if (!buf || !dp->table) {
		free(buf);
		return -ENOMEM;
	}
	for (uint32_t c = 0; c < nchunks && rc == 0; c++) {
		size_t cnt = n - (size_t)c * OSDFS__DIRTAB_CHUNK;
		struct osdfs_attr a = { OSDFS__PAGE_DIR, osdfs__dirtab_attr(dp->dh.depth, c), buf,
					OSDFS__DIRTAB_CHUNK * 4 };

		if (cnt > OSDFS__DIRTAB_CHUNK)
			cnt = OSDFS__DIRTAB_CHUNK;
		rc = fs->ops->get_attrs(fs->impl, OSDFS__OID_BASE + dp->ino, &a, 1);
		if (rc < 0)
			break;
		if (a.len != cnt * 4) {
			rc = osdfs__fail(fs, -EUCLEAN, "directory %llu: table chunk %u has %u bytes",
					 (unsigned long long)dp->ino, c, a.len);
			break;
		}
		for (size_t i = 0; i < cnt; i++) {
			uint32_t b = osdfs__get_le32(buf + 4 * i);

			if (b >= dp->dh.nblocks) {
				rc = osdfs__fail(fs, -EUCLEAN, "directory %llu: table names block %u",
						 (unsigned long long)dp->ino, b);
				break;
			}
			dp->table[(size_t)c * OSDFS__DIRTAB_CHUNK + i] = b;
		}
	}
	free(buf);
	return rc;
}

static int dir_load(osdfs *fs, struct osdfs__inode *dp)
{
	uint8_t buf[OSDFS__DIRHDR_LEN];
	struct osdfs_attr a = { OSDFS__PAGE_DIR, OSDFS__ATTR_DIRHDR, buf, sizeof(buf) };
	int rc = 0;

	if (!OSDFS__IS_DIR(dp))
		return -ENOTDIR;
	pthread_mutex_lock(&dp->mu);
	if (dp->dir_loaded)
		goto out;
	if (dp->deleted) {
		rc = -ENOENT;
		goto out;
	}
	rc = fs->ops->get_attrs(fs->impl, OSDFS__OID_BASE + dp->ino, &a, 1);
	if (rc < 0) {
		rc = osdfs__fail(fs, rc, "directory %llu: reading index: %s",
				 (unsigned long long)dp->ino, strerror(-rc));
		goto out;
	}
	if (a.len > sizeof(buf) || osdfs__dirhdr_decode(&dp->dh, buf, a.len) < 0) {
		rc = osdfs__fail(fs, -EUCLEAN, "directory %llu: corrupt index header",
				 (unsigned long long)dp->ino);
		goto out;
	}
	rc = table_load(fs, dp);
	if (rc < 0) {
		free(dp->table);
		dp->table = NULL;
		goto out;
	}
	osdfs__dirsums_load(fs, dp);
	dp->dir_loaded = 1;
out:
	pthread_mutex_unlock(&dp->mu);
	return rc;
}

void osdfs__dir_unload(osdfs *fs, struct osdfs__inode *dp)
{
	pthread_mutex_lock(&dp->mu);
	if (dp->dir_loaded)
		for (uint32_t b = 0; b < dp->dh.nblocks; b++)
			osdfs__bcache_forget(fs, dp->ino, b);
	free(dp->table);
	dp->table = NULL;
	dp->dir_loaded = 0;
	pthread_mutex_unlock(&dp->mu);
}

int osdfs__dir_load(osdfs *fs, struct osdfs__inode *dp)
{
	return dir_load(fs, dp);
}

int osdfs__dir_summarize(osdfs *fs, struct osdfs__inode *dp)
{
	uint8_t *buf;
	int rc = dir_load(fs, dp);

	if (rc < 0)
		return rc;
	buf = malloc(fs->bsize);
	if (!buf)
		return -ENOMEM;
	for (uint32_t b = 0; b < dp->dh.nblocks && rc == 0; b++)
		if (!osdfs__sums_has(fs, dp->ino, b))
			rc = blk_read(fs, dp, b, buf, OSDFS__DIR_AHEAD);
	free(buf);
	return rc;
}

/* Writes a block with nothing piggy-backed (new blocks nothing points at yet). */
static int blk_write(osdfs *fs, struct osdfs__inode *dp, uint32_t blk, const uint8_t *buf)
{
	struct iovec iov = { (void *)buf, fs->bsize };
	ssize_t n = fs->ops->write(fs->impl, OSDFS__OID_BASE + dp->ino, (uint64_t)blk * fs->bsize,
				   &iov, 1, NULL, 0);

	osdfs__used_stale(dp); /* a new block */

	return n < 0 ? (int)n : (size_t)n == fs->bsize ? 0 : -EIO;
}

static void dirhdr_attr(const struct osdfs__inode *dp, struct osdfs_attr *a,
			uint8_t buf[OSDFS__DIRHDR_LEN])
{
	osdfs__dirhdr_encode(buf, &dp->dh);
	a->page = OSDFS__PAGE_DIR;
	a->number = OSDFS__ATTR_DIRHDR;
	a->value = buf;
	a->len = OSDFS__DIRHDR_LEN;
}

/*
 * Writes block blk with the directory header and inode (new size, times)
 * in the same backend operation. On failure the in-memory index may be
 * ahead of the backend, so it is dropped and reloaded on next use.
 */
static int blk_commit(osdfs *fs, struct osdfs__inode *dp, uint32_t blk, const uint8_t *buf)
{
	uint8_t hbuf[OSDFS__DIRHDR_LEN], ibuf[OSDFS__INODE_MAX_LEN];
	struct osdfs_attr a[2];
	struct iovec iov = { (void *)buf, fs->bsize };
	ssize_t n;

	osdfs__now(&dp->d.mtime);
	dp->d.ctime = dp->d.mtime;
	dp->d.size = (uint64_t)dp->dh.nblocks * fs->bsize;
	dirhdr_attr(dp, &a[0], hbuf);
	osdfs__inode_attr(dp, &a[1], ibuf);
	n = fs->ops->write(fs->impl, OSDFS__OID_BASE + dp->ino, (uint64_t)blk * fs->bsize,
			   &iov, 1, a, 2);
	if (n >= 0 && (size_t)n != fs->bsize)
		n = -EIO;
	if (n < 0) {
		osdfs__bcache_forget(fs, dp->ino, blk);
		osdfs__dir_unload(fs, dp);
		return osdfs__fail(fs, (int)n, "directory %llu: writing block %u: %s",
				   (unsigned long long)dp->ino, blk, strerror((int)-n));
	}
	dp->dirty = 0;
	osdfs__bcache_store(fs, dp->ino, blk, buf);
	return 0;
}

int osdfs__dir_create(osdfs *fs, struct osdfs__inode *dp)
{
	uint8_t hbuf[OSDFS__DIRHDR_LEN], ibuf[OSDFS__INODE_MAX_LEN], tbuf[4] = { 0 };
	struct osdfs_attr a[3];
	uint8_t *buf = malloc(fs->bsize);
	int rc;

	if (!buf)
		return -ENOMEM;
	dp->table = calloc(1, sizeof(uint32_t));
	if (!dp->table) {
		free(buf);
		return -ENOMEM;
	}
	dp->dh = (struct osdfs__dirhdr){ .nblocks = 1 }; /* depth 0, no snapshot */
	dp->d.size = fs->bsize;
	dirhdr_attr(dp, &a[0], hbuf);
	osdfs__inode_attr(dp, &a[1], ibuf);
	a[2] = (struct osdfs_attr){ OSDFS__PAGE_DIR, osdfs__dirtab_attr(0, 0), tbuf, sizeof(tbuf) };
	rc = osdfs__create(fs->ops, fs->impl, OSDFS__OID_BASE + dp->ino, OSDFS_OBJ_META, a, 3);
	if (rc == 0) {
		blk_init(fs, dp, buf);
		rc = blk_write(fs, dp, 0, buf);
		if (rc < 0)
			fs->ops->remove(fs->impl, OSDFS__OID_BASE + dp->ino);
		else
			osdfs__bcache_store(fs, dp->ino, 0, buf);
	}
	free(buf);
	if (rc < 0) {
		free(dp->table);
		dp->table = NULL;
		return osdfs__fail(fs, rc, "creating directory %llu: %s",
				   (unsigned long long)dp->ino, strerror(-rc));
	}
	dp->dir_loaded = 1;
	return 0;
}

/* Offset of the record named name in buf (its owner block), or -ENOENT. */
static long blk_find(const uint8_t *buf, size_t bsize, const char *name, size_t len, long *prev)
{
	size_t off = OSDFS__BLOCK_HDR_LEN;
	long last = -1;

	while (off < bsize) {
		struct osdfs__rec r;

		osdfs__rec_get(&r, buf + off);
		if (r.ino && r.name_len == len && memcmp(r.name, name, len) == 0) {
			if (prev)
				*prev = last;
			return (long)off;
		}
		last = (long)off;
		off += r.rec_len;
	}
	return -ENOENT;
}

/* Loads dp's index and reads the block name hashes to, for a change:
 * first voiding a snapshot of dp's summaries, which the change would make
 * stale. */
static int dir_locate(osdfs *fs, struct osdfs__inode *dp, const char *name, size_t len,
		      uint8_t *buf, uint32_t *blk, uint64_t *h)
{
	int rc = dir_load(fs, dp);

	if (rc == 0)
		rc = osdfs__dirsums_void(fs, dp);
	if (rc < 0)
		return rc;
	*h = name_hash(fs, name, len);
	*blk = dp->table[slot_of(dp, *h)];
	return blk_read(fs, dp, *blk, buf, OSDFS__DIR_ALONE);
}

int osdfs__dir_lookup(osdfs *fs, struct osdfs__inode *dp, const char *name, size_t len,
		      uint64_t *ino, uint8_t *ft, enum osdfs__dir_read how)
{
	uint8_t *buf = NULL;
	uint32_t blk;
	uint64_t h;
	long off;
	int rc = dir_load(fs, dp);

	if (rc == 0) {
		h = name_hash(fs, name, len);
		blk = dp->table[slot_of(dp, h)];
		/* The summary of its block shows it absent: nothing to read. */
		if (osdfs__sums_absent(fs, dp->ino, blk, name, len))
			return -ENOENT;
		buf = malloc(fs->bsize);
		rc = buf ? blk_read(fs, dp, blk, buf, how) : -ENOMEM;
	}
	if (rc == 0) {
		off = blk_find(buf, fs->bsize, name, len, NULL);
		if (off < 0) {
			rc = -ENOENT;
		} else {
			struct osdfs__rec r;

			osdfs__rec_get(&r, buf + off);
			*ino = r.ino;
			if (ft)
				*ft = r.ft;
		}
	}
	free(buf);
	return rc;
}

/* Appends a record to a block being rebuilt; *last is the previous record. */
static void blk_append(const osdfs *fs, uint8_t *buf, size_t *off, long *last,
		       const struct osdfs__rec *r)
{
	size_t need = OSDFS__REC_NEED(r->name_len);

	osdfs__rec_put(buf + *off, r->ino, (uint16_t)(fs->bsize - *off), r->name, r->name_len,
		r->ft, r->coll);
	if (*last >= 0)
		osdfs__put_le16(buf + *last + 8, (uint16_t)(*off - (size_t)*last));
	*last = (long)*off;
	*off += need;
}

/* Writes the table slots [s, e) (or all of a new-depth table) and the header. */
static int table_write(osdfs *fs, struct osdfs__inode *dp, const uint32_t *table,
		       const struct osdfs__dirhdr *dh, size_t s, size_t e)
{
	uint32_t c0 = (uint32_t)(s / OSDFS__DIRTAB_CHUNK);
	uint32_t c1 = (uint32_t)((e + OSDFS__DIRTAB_CHUNK - 1) / OSDFS__DIRTAB_CHUNK);
	size_t n = (size_t)1 << dh->depth;
	uint8_t *buf = malloc((size_t)SPLIT_BATCH * OSDFS__DIRTAB_CHUNK * 4);
	struct osdfs_attr a[SPLIT_BATCH];
	int rc = 0;

	if (!buf)
		return -ENOMEM;
	if (c1 > (n + OSDFS__DIRTAB_CHUNK - 1) / OSDFS__DIRTAB_CHUNK)
		c1 = (uint32_t)((n + OSDFS__DIRTAB_CHUNK - 1) / OSDFS__DIRTAB_CHUNK);
	for (uint32_t c = c0; c < c1 && rc == 0;) {
		int k = 0;

		for (; k < SPLIT_BATCH && c < c1; k++, c++) {
			size_t first = (size_t)c * OSDFS__DIRTAB_CHUNK, cnt = n - first;
			uint8_t *p = buf + (size_t)k * OSDFS__DIRTAB_CHUNK * 4;

			if (cnt > OSDFS__DIRTAB_CHUNK)
				cnt = OSDFS__DIRTAB_CHUNK;
			for (size_t i = 0; i < cnt; i++)
				osdfs__put_le32(p + 4 * i, table[first + i]);
			a[k] = (struct osdfs_attr){ OSDFS__PAGE_DIR,
						    osdfs__dirtab_attr(dh->depth, c), p,
						    (uint32_t)(cnt * 4) };
		}
		rc = fs->ops->set_attrs(fs->impl, OSDFS__OID_BASE + dp->ino, a, k);
	}
	if (rc == 0) {
		uint8_t hbuf[OSDFS__DIRHDR_LEN];

		osdfs__dirhdr_encode(hbuf, dh);
		a[0] = (struct osdfs_attr){ OSDFS__PAGE_DIR, OSDFS__ATTR_DIRHDR, hbuf, sizeof(hbuf) };
		rc = fs->ops->set_attrs(fs->impl, OSDFS__OID_BASE + dp->ino, a, 1);
	}
	free(buf);
	return rc;
}

/* Deletes the table chunks of an abandoned depth (best effort: garbage only). */
static void table_drop(osdfs *fs, struct osdfs__inode *dp, unsigned int depth)
{
	uint32_t nchunks = (uint32_t)((((size_t)1 << depth) + OSDFS__DIRTAB_CHUNK - 1) /
				      OSDFS__DIRTAB_CHUNK);

	for (uint32_t c = 0; c < nchunks; c++) {
		struct osdfs_attr a = { OSDFS__PAGE_DIR, osdfs__dirtab_attr(depth, c), NULL, 0 };

		fs->ops->set_attrs(fs->impl, OSDFS__OID_BASE + dp->ino, &a, 1);
	}
}

/*
 * Rebuilds the records of block `old` into nbuf (those the new table routes
 * to block nb) and obuf (those it routes to blk); stale records are dropped.
 */
static void split_move(const osdfs *fs, const struct osdfs__inode *dp, const uint32_t *table,
		       unsigned int depth, uint32_t blk, uint32_t nb, const uint8_t *old,
		       uint8_t *nbuf, uint8_t *obuf)
{
	size_t noff = OSDFS__BLOCK_HDR_LEN, ooff = OSDFS__BLOCK_HDR_LEN, off;
	long nlast = -1, olast = -1;

	blk_init(fs, dp, nbuf);
	blk_init(fs, dp, obuf);
	for (off = OSDFS__BLOCK_HDR_LEN; off < fs->bsize;) {
		struct osdfs__rec r;
		uint32_t to;

		osdfs__rec_get(&r, old + off);
		off += r.rec_len;
		if (!r.ino)
			continue;
		to = table[name_hash(fs, r.name, r.name_len) >> (HBITS - depth)];
		if (to == nb)
			blk_append(fs, nbuf, &noff, &nlast, &r);
		else if (to == blk)
			blk_append(fs, obuf, &ooff, &olast, &r);
	}
}

/*
 * Splits the block serving slot `slot`: the upper half of its run of table
 * slots moves to a new block (doubling the table first if the run is one
 * slot). Order: new block, then table and header, then the rewritten old
 * block, so an interruption leaves every entry reachable.
 */
static int dir_split(osdfs *fs, struct osdfs__inode *dp, uint32_t blk, uint32_t slot,
		     const uint8_t *old)
{
	struct osdfs__dirhdr dh = dp->dh;
	size_t s = slot, e = slot + 1, n = (size_t)1 << dh.depth, mid;
	uint32_t nb = dh.nblocks, *table;
	uint8_t *nbuf, *obuf;
	int rc, doubled = 0;

	while (s > 0 && dp->table[s - 1] == blk)
		s--;
	while (e < n && dp->table[e] == blk)
		e++;
	if (e - s == 1) {
		if (dh.depth >= OSDFS__DIR_MAX_DEPTH)
			return osdfs__fail(fs, -ENOSPC, "directory %llu: hash index is full",
					   (unsigned long long)dp->ino);
		dh.depth++;
		doubled = 1;
		s *= 2;
		e = s + 2;
	}
	if (nb == UINT32_MAX || (uint64_t)(nb + 1) * fs->bsize > (1ULL << 62))
		return osdfs__fail(fs, -EFBIG, "directory %llu is too large",
				   (unsigned long long)dp->ino);
	table = malloc(((size_t)1 << dh.depth) * sizeof(uint32_t));
	nbuf = malloc(2 * (size_t)fs->bsize);
	if (!table || !nbuf) {
		free(table);
		free(nbuf);
		return -ENOMEM;
	}
	obuf = nbuf + fs->bsize;
	for (size_t i = 0; i < ((size_t)1 << dh.depth); i++)
		table[i] = doubled ? dp->table[i >> 1] : dp->table[i];
	mid = s + (e - s) / 2;
	for (size_t i = mid; i < e; i++)
		table[i] = nb;
	dh.nblocks = nb + 1;

	split_move(fs, dp, table, dh.depth, blk, nb, old, nbuf, obuf);
	rc = blk_write(fs, dp, nb, nbuf);
	if (rc == 0)
		rc = table_write(fs, dp, table, &dh, doubled ? 0 : mid,
				 doubled ? (size_t)1 << dh.depth : e);
	if (rc < 0) {
		free(table);
		free(nbuf);
		osdfs__dir_unload(fs, dp);
		return osdfs__fail(fs, rc, "directory %llu: splitting block %u: %s",
				   (unsigned long long)dp->ino, blk, strerror(-rc));
	}
	if (doubled)
		table_drop(fs, dp, dp->dh.depth);
	free(dp->table);
	dp->table = table;
	dp->dh = dh;
	osdfs__bcache_store(fs, dp->ino, nb, nbuf);
	rc = blk_commit(fs, dp, blk, obuf);
	free(nbuf);
	return rc;
}

/* Finds room for a record of `need` bytes; returns its offset or -1. */
static long blk_room(osdfs *fs, const struct osdfs__inode *dp, uint8_t *buf, uint32_t blk,
		     size_t need)
{
	size_t off = OSDFS__BLOCK_HDR_LEN;

	while (off < fs->bsize) {
		struct osdfs__rec r;
		uint64_t h;

		osdfs__rec_get(&r, buf + off);
		/* Too short to hold it whether free, stale or live: no need to
		 * hash its name (most records of a full block). */
		if (r.rec_len < need) {
			off += r.rec_len;
			continue;
		}
		if (!r.ino || !rec_owned(fs, dp, &r, blk, &h))
			return (long)off;
		if (r.rec_len - OSDFS__REC_NEED(r.name_len) >= need) {
			size_t used = OSDFS__REC_NEED(r.name_len);

			osdfs__rec_put(buf + off + used, 0, (uint16_t)(r.rec_len - used), NULL, 0, 0, 0);
			osdfs__put_le16(buf + off + 8, (uint16_t)used);
			return (long)(off + used);
		}
		off += r.rec_len;
	}
	return -1;
}

/* Smallest collision byte not used by another name with hash h, or -1.
 * A record with hash h is owned by the block h routes to, this one. */
static int free_coll(osdfs *fs, const uint8_t *buf, uint64_t h)
{
	uint8_t used[32] = { 0 };
	size_t off = OSDFS__BLOCK_HDR_LEN;

	while (off < fs->bsize) {
		struct osdfs__rec r;

		osdfs__rec_get(&r, buf + off);
		if (r.ino && name_hash(fs, r.name, r.name_len) == h)
			used[r.coll / 8] |= (uint8_t)(1u << (r.coll % 8));
		off += r.rec_len;
	}
	for (int c = 0; c < 256; c++)
		if (!(used[c / 8] & (1u << (c % 8))))
			return c;
	return -1;
}

int osdfs__dir_add(osdfs *fs, struct osdfs__inode *dp, const char *name, size_t len,
		   uint64_t ino, uint8_t ft)
{
	uint8_t *buf = malloc(fs->bsize);
	int rc = -ENOSPC;

	if (!buf)
		return -ENOMEM;
	for (int tries = 0; tries <= (int)OSDFS__DIR_MAX_DEPTH + 2; tries++) {
		uint32_t blk;
		uint64_t h;
		long off;
		int coll;

		rc = dir_locate(fs, dp, name, len, buf, &blk, &h);
		if (rc < 0)
			break;
		if (blk_find(buf, fs->bsize, name, len, NULL) >= 0) {
			rc = -EEXIST;
			break;
		}
		coll = free_coll(fs, buf, h);
		if (coll < 0) {
			rc = osdfs__fail(fs, -ENOSPC, "directory %llu: too many hash collisions",
					 (unsigned long long)dp->ino);
			break;
		}
		off = blk_room(fs, dp, buf, blk, OSDFS__REC_NEED(len));
		if (off < 0) {
			rc = dir_split(fs, dp, blk, slot_of(dp, h), buf);
			if (rc < 0)
				break;
			rc = -ENOSPC;
			continue;
		}
		osdfs__rec_put(buf + off, ino, osdfs__get_le16(buf + off + 8), name, (uint8_t)len, ft,
			(uint8_t)coll);
		dp->dh.nentries++;
		rc = blk_commit(fs, dp, blk, buf);
		break;
	}
	free(buf);
	return rc;
}

int osdfs__dir_remove(osdfs *fs, struct osdfs__inode *dp, const char *name, size_t len)
{
	uint8_t *buf = malloc(fs->bsize);
	uint32_t blk;
	uint64_t h;
	long off, prev;
	int rc;

	if (!buf)
		return -ENOMEM;
	rc = dir_locate(fs, dp, name, len, buf, &blk, &h);
	if (rc == 0 && (off = blk_find(buf, fs->bsize, name, len, &prev)) < 0)
		rc = -ENOENT;
	if (rc == 0) {
		uint16_t rl = osdfs__get_le16(buf + off + 8);

		if (prev >= 0) {
			uint16_t pl = osdfs__get_le16(buf + prev + 8);

			osdfs__put_le16(buf + prev + 8, (uint16_t)(pl + rl));
			memset(buf + off, 0, rl);
		} else {
			memset(buf + off, 0, rl);
			osdfs__rec_put(buf + off, 0, rl, NULL, 0, 0, 0);
		}
		if (dp->dh.nentries > 0)
			dp->dh.nentries--;
		rc = blk_commit(fs, dp, blk, buf);
	}
	free(buf);
	return rc;
}

int osdfs__dir_set(osdfs *fs, struct osdfs__inode *dp, const char *name, size_t len,
		   uint64_t ino, uint8_t ft)
{
	uint8_t *buf = malloc(fs->bsize);
	uint32_t blk;
	uint64_t h;
	long off;
	int rc;

	if (!buf)
		return -ENOMEM;
	rc = dir_locate(fs, dp, name, len, buf, &blk, &h);
	if (rc == 0 && (off = blk_find(buf, fs->bsize, name, len, NULL)) < 0)
		rc = -ENOENT;
	if (rc == 0) {
		osdfs__put_le64(buf + off, ino);
		buf[off + 11] = ft;
		rc = blk_commit(fs, dp, blk, buf);
	}
	free(buf);
	return rc;
}

int osdfs__dir_is_empty(osdfs *fs, struct osdfs__inode *dp)
{
	uint8_t *buf;
	int rc = dir_load(fs, dp);

	if (rc < 0)
		return rc;
	if (dp->dh.nentries > 0)
		return 0;
	buf = malloc(fs->bsize);
	if (!buf)
		return -ENOMEM;
	rc = 1;
	for (size_t i = 0; i < ((size_t)1 << dp->dh.depth) && rc == 1; i++) {
		uint32_t blk = dp->table[i];

		if (i > 0 && dp->table[i - 1] == blk)
			continue;
		rc = blk_read(fs, dp, blk, buf, OSDFS__DIR_AHEAD);
		if (rc < 0)
			break;
		rc = 1;
		for (size_t off = OSDFS__BLOCK_HDR_LEN; off < fs->bsize;) {
			struct osdfs__rec r;
			uint64_t h;

			osdfs__rec_get(&r, buf + off);
			if (r.ino && rec_owned(fs, dp, &r, blk, &h)) {
				rc = 0;
				break;
			}
			off += r.rec_len;
		}
	}
	free(buf);
	return rc;
}

struct sorted_rec {
	uint64_t key;
	size_t off;
};

static int key_cmp(const void *a, const void *b)
{
	uint64_t x = ((const struct sorted_rec *)a)->key, y = ((const struct sorted_rec *)b)->key;

	return x < y ? -1 : x > y;
}

static int emit(osdfs_readdir_cb cb, void *payload, uint64_t ino, const char *name,
		size_t len, unsigned int type, uint64_t next)
{
	char nm[OSDFS_NAME_MAX + 1];
	struct osdfs_dirent ent = { ino, next, nm, len, type };

	memcpy(nm, name, len);
	nm[len] = '\0';
	return cb(&ent, payload);
}

/*
 * Emits the entries of one run of table slots with keys in [key, end):
 * returns 1 if the callback stopped, 0 to continue, or an error.
 */
static int readdir_run(osdfs *fs, struct osdfs__inode *dp, uint32_t blk, uint64_t key,
		       uint64_t end, uint8_t *buf, struct sorted_rec *v,
		       osdfs_readdir_cb cb, void *payload)
{
	size_t n = 0;
	int rc = blk_read(fs, dp, blk, buf, OSDFS__DIR_AHEAD);

	if (rc < 0)
		return rc;
	for (size_t off = OSDFS__BLOCK_HDR_LEN; off < fs->bsize;) {
		struct osdfs__rec r;
		uint64_t h, k;

		osdfs__rec_get(&r, buf + off);
		if (r.ino && rec_owned(fs, dp, &r, blk, &h)) {
			k = h << 8 | r.coll;
			if (k >= key && k < end)
				v[n++] = (struct sorted_rec){ k, off };
		}
		off += r.rec_len;
	}
	qsort(v, n, sizeof(*v), key_cmp);
	for (size_t i = 0; i < n; i++) {
		struct osdfs__rec r;

		osdfs__rec_get(&r, buf + v[i].off);
		if (emit(cb, payload, r.ino, r.name, r.name_len, osdfs__dt_of_ft(r.ft),
			 v[i].key + 3))
			return 1;
	}
	return 0;
}

int osdfs__dir_readdir(osdfs *fs, struct osdfs__inode *dp, uint64_t cookie,
		       osdfs_readdir_cb cb, void *payload)
{
	struct sorted_rec *v;
	uint8_t *buf;
	uint64_t key;
	int rc = dir_load(fs, dp);

	if (rc < 0)
		return rc;
	if (cookie == 0 && emit(cb, payload, dp->ino, ".", 1, osdfs__dt_of_ft(OSDFS__FT_DIR), 1))
		return 0;
	if (cookie <= 1 && emit(cb, payload, dp->d.parent ? dp->d.parent : dp->ino, "..", 2,
				osdfs__dt_of_ft(OSDFS__FT_DIR), 2))
		return 0;
	if (cookie > (HLIMIT << 8) + 1)
		return 0;
	key = cookie < 2 ? 0 : cookie - 2;
	buf = malloc(fs->bsize);
	v = malloc(fs->bsize / OSDFS__REC_HDR_LEN * sizeof(*v));
	if (!buf || !v) {
		free(buf);
		free(v);
		return -ENOMEM;
	}
	while (key < (HLIMIT << 8)) {
		unsigned int shift = HBITS - dp->dh.depth;
		size_t n = (size_t)1 << dp->dh.depth, e = (size_t)((key >> 8) >> shift) + 1;
		uint32_t blk = dp->table[e - 1];
		uint64_t end;

		while (e < n && dp->table[e] == blk)
			e++;
		end = e == n ? HLIMIT << 8 : ((uint64_t)e << shift) << 8;
		rc = readdir_run(fs, dp, blk, key, end, buf, v, cb, payload);
		if (rc != 0)
			break;
		key = end;
	}
	free(buf);
	free(v);
	return rc < 0 ? rc : 0;
}
