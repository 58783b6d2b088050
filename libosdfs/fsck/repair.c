/*
 * fsck repairs. Object-level fixes (mount record, counters, removing bad
 * inodes and empty orphans, object lengths) go straight to the backend;
 * everything that edits directories or inodes runs on a mount of the
 * filesystem through the core's internal functions (core/fs.h), so the
 * result is written exactly as the core writes it.
 *
 * The core has no "reset a directory to empty" entry point (osdfs__dir_create
 * creates the object), so dir_reset() below writes an empty directory over an
 * existing object, its block made by the core's osdfs__dirblk_init().
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/fs.h"
#include "fsck/fsck_state.h"

/* Zeroes the stamp of a directory's header (bytes 16..23), before any
 * mount could load the snapshot it vouched for. */
static int void_sums(struct fsck *f, uint64_t oid)
{
	uint8_t hbuf[64];
	struct osdfs_attr a = { OSDFS__PAGE_DIR, OSDFS__ATTR_DIRHDR, hbuf, sizeof(hbuf) };
	int rc = f->ops->get_attrs(f->impl, oid, &a, 1);

	if (rc < 0)
		return rc;
	if (a.len < OSDFS__DIRHDR_LEN || a.len > sizeof(hbuf))
		return 0; /* a corrupt header: the directory is rebuilt */
	memset(hbuf + 16, 0, 8);
	return f->ops->set_attrs(f->impl, oid, &a, 1);
}

static int raw_fixes(struct fsck *f)
{
	int rc = 0;

	if (f->mount_rec) {
		struct osdfs_attr a = { OSDFS__PAGE_SUPER, OSDFS__ATTR_MOUNT, NULL, 0 };

		rc = f->ops->set_attrs(f->impl, OSDFS__SUPER_OID, &a, 1);
	}
	if (rc == 0 && f->fix_counters) {
		uint8_t buf[OSDFS__COUNTERS_LEN];
		struct osdfs__counters c = f->ctr;
		struct osdfs_attr a = { OSDFS__PAGE_SUPER, OSDFS__ATTR_COUNTERS, buf, sizeof(buf) };

		if (c.next_ino <= f->max_ino)
			c.next_ino = f->max_ino + 1;
		if (c.next_ino < OSDFS__FIRST_INO)
			c.next_ino = OSDFS__FIRST_INO;
		for (size_t i = 0; i < f->ninodes; i++)
			if (!f->inodes[i].bad && f->inodes[i].d.generation >= c.next_gen)
				c.next_gen = f->inodes[i].d.generation + 1;
		osdfs__counters_encode(buf, &c);
		rc = f->ops->set_attrs(f->impl, OSDFS__SUPER_OID, &a, 1);
	}
	for (size_t i = 0; i < f->ninodes; i++) {
		struct fsck_inode *ip = &f->inodes[i];
		uint64_t oid = OSDFS__OID_BASE + ip->ino;
		int r = 0;

		if (ip->remove) {
			r = f->ops->remove(f->impl, oid);
			if (r == -ENOENT)
				r = 0;
		} else if (ip->fix_objlen) {
			r = f->ops->truncate(f->impl, oid, ip->d.size);
		}
		if (!ip->remove && ip->sums_void && r == 0)
			r = void_sums(f, oid);
		if (!ip->remove && ip->bad_xattr && r == 0) {
			struct osdfs_attr a = { OSDFS__PAGE_XATTR, OSDFS__ATTR_XATTR, NULL, 0 };

			r = f->ops->set_attrs(f->impl, oid, &a, 1);
		}
		if (rc == 0)
			rc = r; /* go on: the verifying pass reports what is left */
	}
	return rc;
}

static int fix_inode(osdfs *fs, const struct fsck_inode *fi)
{
	struct osdfs__inode *ip;
	int rc = osdfs__iget(fs, fi->ino, &ip);

	if (rc < 0)
		return rc;
	if (fi->want_nlink)
		ip->d.nlink = fi->want_nlink;
	if (fi->dir && fi->dir->want_parent)
		ip->d.parent = fi->dir->want_parent;
	if (fi->fix_size)
		ip->d.size = fi->objlen;
	rc = osdfs__iwrite(fs, ip);
	osdfs__iput(fs, ip);
	return rc;
}

/* Deletes the index table chunks of every possible depth. */
static int drop_tables(osdfs *fs, uint64_t oid)
{
	struct osdfs_attr a[64];
	int k = 0, rc = 0;

	for (unsigned int d = 0; d <= OSDFS__DIR_MAX_DEPTH && rc == 0; d++) {
		uint32_t nchunks = (uint32_t)((((size_t)1 << d) + OSDFS__DIRTAB_CHUNK - 1) /
					      OSDFS__DIRTAB_CHUNK);

		for (uint32_t c = 0; c < nchunks && rc == 0; c++) {
			a[k++] = (struct osdfs_attr){ OSDFS__PAGE_DIR, osdfs__dirtab_attr(d, c),
						      NULL, 0 };
			if (k == 64) {
				rc = fs->ops->set_attrs(fs->impl, oid, a, k);
				k = 0;
			}
		}
	}
	if (rc == 0 && k > 0)
		rc = fs->ops->set_attrs(fs->impl, oid, a, k);
	return rc;
}

/* Makes dp an empty directory: one empty block, a depth-0 index. */
static int dir_reset(osdfs *fs, struct osdfs__inode *dp)
{
	uint64_t oid = OSDFS__OID_BASE + dp->ino;
	uint8_t hbuf[OSDFS__DIRHDR_LEN], ibuf[OSDFS__INODE_MAX_LEN], tbuf[4] = { 0 };
	struct osdfs_attr a[3];
	struct iovec iov;
	uint8_t *blk;
	ssize_t n;
	int rc;

	osdfs__dir_unload(fs, dp);
	rc = drop_tables(fs, oid);
	if (rc == 0)
		rc = fs->ops->truncate(fs->impl, oid, 0);
	if (rc < 0)
		return rc;
	blk = malloc(fs->bsize);
	dp->table = calloc(1, sizeof(uint32_t));
	if (!blk || !dp->table) {
		free(blk);
		return -ENOMEM;
	}
	osdfs__dirblk_init(blk, fs->bsize, dp->ino);
	dp->dh = (struct osdfs__dirhdr){ .nblocks = 1 }; /* depth 0, no snapshot */
	dp->d.size = fs->bsize;
	osdfs__dirhdr_encode(hbuf, &dp->dh);
	a[0] = (struct osdfs_attr){ OSDFS__PAGE_DIR, OSDFS__ATTR_DIRHDR, hbuf, sizeof(hbuf) };
	a[1] = (struct osdfs_attr){ OSDFS__PAGE_DIR, osdfs__dirtab_attr(0, 0), tbuf, sizeof(tbuf) };
	osdfs__inode_attr(dp, &a[2], ibuf);
	iov = (struct iovec){ blk, fs->bsize };
	n = fs->ops->write(fs->impl, oid, 0, &iov, 1, a, 3);
	rc = n < 0 ? (int)n : (size_t)n == fs->bsize ? 0 : -EIO;
	if (rc == 0) {
		osdfs__bcache_store(fs, dp->ino, 0, blk);
		dp->dir_loaded = 1;
	}
	free(blk);
	return rc;
}

static uint8_t entry_ft(const struct fsck_entry *e)
{
	return e->to ? osdfs__ft_of_mode(e->to->d.mode) : e->ft;
}

/* Rebuilds a directory from its kept entries, or just removes dropped ones. */
static int fix_dir(osdfs *fs, const struct fsck_inode *fi)
{
	struct osdfs__inode *dp;
	int rc = osdfs__iget(fs, fi->ino, &dp);

	if (rc < 0)
		return rc;
	if (fi->dir_rebuild)
		rc = dir_reset(fs, dp);
	for (size_t i = 0; rc == 0 && i < fsck_nents(fi); i++) {
		const struct fsck_entry *e = &fi->dir->ents[i];

		if (fi->dir_rebuild && !e->drop)
			rc = osdfs__dir_add(fs, dp, fsck_ent_name(fi->dir, e), e->namelen, e->ino,
					    entry_ft(e));
		else if (!fi->dir_rebuild && e->drop)
			rc = osdfs__dir_remove(fs, dp, fsck_ent_name(fi->dir, e), e->namelen);
		if (rc == -EEXIST || rc == -ENOENT)
			rc = 0;
	}
	osdfs__iput(fs, dp);
	return rc;
}

static int lost_found(osdfs *fs, uint64_t *ino)
{
	struct osdfs_stat st;
	int rc = osdfs_lookup(fs, OSDFS_ROOT_INO, "lost+found", &st);

	if (rc == -ENOENT)
		rc = osdfs_mkdir(fs, OSDFS_ROOT_INO, "lost+found", 0700, NULL, &st);
	if (rc == 0 && !S_ISDIR(st.mode))
		rc = -ENOTDIR;
	*ino = st.ino;
	return rc;
}

/* Links an orphan into lost+found as "#<ino>". */
static int adopt(osdfs *fs, uint64_t lf_ino, const struct fsck_inode *fi)
{
	struct osdfs__inode *lf, *ip;
	char name[32];
	int rc = osdfs__iget(fs, lf_ino, &lf);

	if (rc < 0)
		return rc;
	rc = osdfs__iget(fs, fi->ino, &ip);
	if (rc < 0) {
		osdfs__iput(fs, lf);
		return rc;
	}
	snprintf(name, sizeof(name), "#%llu", (unsigned long long)fi->ino);
	rc = osdfs__dir_add(fs, lf, name, strlen(name), fi->ino, osdfs__ft_of_mode(ip->d.mode));
	if (rc == 0 && OSDFS__IS_DIR(ip)) {
		ip->d.parent = lf_ino;
		lf->d.nlink++;
		rc = osdfs__iwrite(fs, lf);
	}
	if (rc == 0)
		rc = osdfs__iwrite(fs, ip);
	osdfs__iput(fs, ip);
	osdfs__iput(fs, lf);
	return rc;
}

/* Every repair is tried; the first error is returned (the verifying pass
 * reports what is left). */
static int mounted_fixes(struct fsck *f, osdfs *fs)
{
	uint64_t lf = 0;
	int rc = 0, r;

	for (size_t i = 0; i < f->ninodes; i++) {
		if (f->inodes[i].fix_inode && !f->inodes[i].remove) {
			r = fix_inode(fs, &f->inodes[i]);
			rc = rc ? rc : r;
		}
	}
	for (size_t i = 0; i < f->ninodes; i++) {
		struct fsck_inode *ip = &f->inodes[i];

		if (!ip->remove && (ip->dir_rebuild || ip->dir_edit)) {
			r = fix_dir(fs, ip);
			rc = rc ? rc : r;
		}
	}
	for (size_t i = 0; i < f->ninodes; i++) {
		if (!f->inodes[i].to_lost_found)
			continue;
		r = lf ? 0 : lost_found(fs, &lf);
		if (r == 0)
			r = adopt(fs, lf, &f->inodes[i]);
		rc = rc ? rc : r;
		if (lf == 0)
			break; /* no lost+found: nowhere to put the others */
	}
	return rc;
}

int osdfs__fsck_repair(struct fsck *f)
{
	struct osdfs_mount_options mo = OSDFS_MOUNT_OPTIONS_INIT;
	osdfs *fs;
	int rc = raw_fixes(f), r;

	if (rc < 0 && f->mount_rec)
		return rc; /* the mount below would find the record again */
	mo.flags = OSDFS_MOUNT_KEEP_BACKEND | OSDFS_MOUNT_FORCE;
	mo.host = "osdfs-fsck";
	r = osdfs_mount(&fs, f->be, &mo);
	if (r < 0)
		return rc ? rc : r;
	r = mounted_fixes(f, fs);
	rc = rc ? rc : r;
	r = osdfs_unmount(fs);
	return rc ? rc : r;
}
