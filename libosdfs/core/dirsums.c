/*
 * Name summary snapshots (docs/osdfs-format.md 4.6). A directory larger
 * than the block cache is answered from its blocks' name summaries
 * (sums.c), which a fresh mount had to make by reading the whole
 * directory: 530 MB for 10M entries. At unmount, a directory with
 * summaries of (most of) its blocks stores them all past its last block,
 * and a stamp in its header vouches for them; the next mount loads them
 * with one read.
 *
 * A stale snapshot would hide names, so the stamp is voided on the backend,
 * and flushed, before the first change of the directory; a snapshot that
 * fails any check is ignored, never trusted. The read-only-compatible
 * feature bit keeps writers that do not know this from changing the
 * directory under a stamp.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "core/format.h"
#include "core/fs.h"

/* Smaller directories are read in a few runs anyway. */
#define DIRSUMS_MIN_BLOCKS 16u

static size_t snap_len(uint32_t nblocks, uint32_t sum_len)
{
	return OSDFS__DIRSUMS_HDR_LEN + (size_t)nblocks * sum_len;
}

int osdfs__dirsums_read(const struct osdfs_backend_ops *ops, void *impl, uint64_t ino,
			const struct osdfs__dirhdr *dh, uint32_t bsize, uint8_t **out)
{
	uint32_t sum_len = bsize / OSDFS__DIRSUMS_FACTOR;
	size_t len = snap_len(dh->nblocks, sum_len);
	uint8_t *snap = malloc(len);
	struct iovec iov = { snap, len };
	ssize_t got;

	if (!snap)
		return -ENOMEM;
	got = ops->read(impl, OSDFS__OID_BASE + ino, (uint64_t)dh->nblocks * bsize, &iov, 1);
	if (got >= 0 && (got != (ssize_t)len ||
			 osdfs__dirsums_verify(snap, len, dh->nblocks, sum_len, dh->sums_stamp) < 0))
		got = -EUCLEAN;
	if (got < 0) {
		free(snap);
		return (int)got;
	}
	*out = snap;
	return 0;
}

void osdfs__dirsums_load(osdfs *fs, struct osdfs__inode *dp)
{
	uint32_t n = dp->dh.nblocks;
	uint8_t *snap;

	dp->sums_valid = 0;
	if (!dp->dh.sums_stamp || !(fs->sb.ro_compat & OSDFS__RO_COMPAT_DIRSUMS) ||
	    n < DIRSUMS_MIN_BLOCKS || !osdfs__sums_fit(fs, n))
		return;
	if (osdfs__dirsums_read(fs->ops, fs->impl, dp->ino, &dp->dh, fs->bsize, &snap) < 0)
		return; /* never trusted, never an error: the blocks are read instead */
	dp->sums_valid = 1;
	osdfs__sums_import(fs, dp->ino, n, snap + OSDFS__DIRSUMS_HDR_LEN);
	free(snap);
}

/* dp's header as it is but for the stamp. */
static int hdr_write(osdfs *fs, const struct osdfs__inode *dp, uint64_t stamp)
{
	uint8_t hbuf[OSDFS__DIRHDR_LEN];
	struct osdfs__dirhdr dh = dp->dh;
	struct osdfs_attr a = { OSDFS__PAGE_DIR, OSDFS__ATTR_DIRHDR, hbuf, sizeof(hbuf) };

	dh.sums_stamp = stamp;
	osdfs__dirhdr_encode(hbuf, &dh);
	return fs->ops->set_attrs(fs->impl, OSDFS__OID_BASE + dp->ino, &a, 1);
}

int osdfs__dirsums_void(osdfs *fs, struct osdfs__inode *dp)
{
	int rc;

	if (!dp->dh.sums_stamp)
		return 0;
	rc = hdr_write(fs, dp, 0);
	if (rc == 0)
		rc = fs->ops->flush(fs->impl, OSDFS__OID_BASE + dp->ino);
	if (rc < 0)
		return osdfs__fail(fs, rc, "directory %llu: voiding its name summaries: %s",
				   (unsigned long long)dp->ino, strerror(-rc));
	dp->dh.sums_stamp = 0;
	dp->sums_valid = 0;
	return 0;
}

/* The superblock with the feature bit, written and flushed before any
 * stamp that needs it. */
static int feature_on(osdfs *fs)
{
	uint8_t sbuf[OSDFS__SUPER_LEN];
	struct osdfs__super sb = fs->sb;
	struct osdfs_attr a = { OSDFS__PAGE_SUPER, OSDFS__ATTR_SUPER, sbuf, sizeof(sbuf) };
	int rc;

	if (sb.ro_compat & OSDFS__RO_COMPAT_DIRSUMS)
		return 0;
	sb.ro_compat |= OSDFS__RO_COMPAT_DIRSUMS;
	osdfs__super_encode(sbuf, &sb);
	rc = fs->ops->set_attrs(fs->impl, OSDFS__SUPER_OID, &a, 1);
	if (rc == 0)
		rc = fs->ops->flush(fs->impl, OSDFS__SUPER_OID);
	if (rc == 0)
		fs->sb.ro_compat = sb.ro_compat;
	return rc;
}

/* Snapshot of dp if it has no good one: the summaries, flushed, then the
 * stamp in the header (a crash between leaves the old stamp, which the new
 * snapshot does not match). Blocks without a summary are read first, when
 * they are at most half of them: an unmount does not read a directory its
 * mount barely looked at. */
static int save_one(osdfs *fs, struct osdfs__inode *dp)
{
	uint32_t n, missing;
	size_t len;
	struct osdfs__dirsums_hdr h = { 0, (uint32_t)fs->sum_len, 0, 0 };
	uint8_t *snap, *sums;
	int rc;

	if (!OSDFS__IS_DIR(dp) || dp->deleted || fs->sum_len == 0 ||
	    osdfs__dir_load(fs, dp) < 0)
		return 0;
	n = dp->dh.nblocks;
	if ((dp->dh.sums_stamp && dp->sums_valid) || n < DIRSUMS_MIN_BLOCKS ||
	    !osdfs__sums_fit(fs, n))
		return 0;
	/* A random stamp: one left by an older snapshot never matches. */
	if (getrandom(&h.stamp, sizeof(h.stamp), 0) != (ssize_t)sizeof(h.stamp))
		return 0; /* an optimization: nothing lost without it */
	h.stamp |= 1;
	h.nblocks = n;
	len = snap_len(n, h.sum_len);
	snap = malloc(len);
	if (!snap)
		return 0;
	sums = snap + OSDFS__DIRSUMS_HDR_LEN;
	missing = osdfs__sums_export(fs, dp->ino, n, sums);
	if (missing && (missing > n / 2 || osdfs__dir_summarize(fs, dp) < 0 ||
			osdfs__sums_export(fs, dp->ino, n, sums))) {
		free(snap);
		return 0;
	}
	osdfs__dirsums_hdr_encode(snap, &h);
	h.crc = osdfs__dirsums_crc(snap, len);
	osdfs__dirsums_hdr_encode(snap, &h);
	rc = feature_on(fs);
	if (rc == 0) {
		struct iovec iov = { snap, len };
		ssize_t w = fs->ops->write(fs->impl, OSDFS__OID_BASE + dp->ino,
					   (uint64_t)n * fs->bsize, &iov, 1, NULL, 0);

		rc = w < 0 ? (int)w : (size_t)w == len ? 0 : -EIO;
	}
	if (rc == 0)
		rc = fs->ops->flush(fs->impl, OSDFS__OID_BASE + dp->ino);
	if (rc == 0)
		rc = hdr_write(fs, dp, h.stamp);
	free(snap);
	if (rc == -ENOSPC || rc == -EDQUOT)
		return 0; /* no stamp was written: the next mount reads runs */
	if (rc < 0)
		return osdfs__fail(fs, rc, "directory %llu: storing its name summaries: %s",
				   (unsigned long long)dp->ino, strerror(-rc));
	dp->dh.sums_stamp = h.stamp;
	dp->sums_valid = 1;
	return 0;
}

int osdfs__dirsums_save_all(osdfs *fs)
{
	uint64_t *ino = NULL;
	size_t n = osdfs__sums_dirs(fs, DIRSUMS_MIN_BLOCKS, &ino);
	int first = 0;

	/* Directories are found by their summaries, which outlive a directory's
	 * inode in the inode cache. */
	for (size_t i = 0; i < n; i++) {
		struct osdfs__inode *dp;
		int rc = osdfs__iget(fs, ino[i], &dp);

		if (rc == 0) {
			rc = save_one(fs, dp);
			osdfs__iput(fs, dp);
		}
		if (rc < 0 && rc != -ENOENT && first == 0)
			first = rc;
	}
	free(ino);
	return first;
}
