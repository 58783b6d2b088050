/*
 * Shared by the osdfs format fuzzers (fuzz_fs_dir, fuzz_fs_inode,
 * fuzz_fs_super): a small filesystem built on a fresh mem backend for every
 * input, a way to overwrite one stored structure through the backend, and a
 * walk that drives every decoder through the public API.
 *
 * The filesystem (FZFS_BSIZE-byte blocks, fixed uuid and hash keys so
 * directory layouts are the same in every run):
 *   /            root (inode 1): the entries below
 *   /d           directory holding FZFS_DIR_NAMES long names, so it has
 *                several blocks and a table depth above 0
 *   /f           regular file with data and an extended attribute
 *   /s, /l       fast (inline) and slow (data) symbolic links
 *   /p, /c       fifo and character device
 * Inode numbers follow creation order: see enum fzfs_ino. It is built once
 * per process and then copied object by object onto each new backend.
 */
#ifndef FUZZ_FS_COMMON_H
#define FUZZ_FS_COMMON_H

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <osdfs/backends.h>
#include <osdfs/fsck.h>
#include <osdfs/osdfs.h>

#include "core/format.h"

#define FZFS_BSIZE 1024u
#define FZFS_DIR_NAMES 20
#define FZFS_MAX_ATTR 0xFFFEu /* the OSD attribute value limit */
#define FZFS_CACHE 64         /* inode and block cache sizes: small, and cheap to set up */

/* Inode numbers of the built filesystem (creation order). */
enum fzfs_ino {
	FZFS_ROOT = 1,
	FZFS_DIR = 2,
	FZFS_FILE = 3,
	FZFS_FAST = 4,
	FZFS_SLOW = 5,
	FZFS_FIFO = 6,
	FZFS_CHR = 7,
	FZFS_DIR_FIRST = 8 /* first of the FZFS_DIR_NAMES files in /d */
};

struct fzfs {
	osdfs_backend *be;
	const struct osdfs_backend_ops *ops;
	void *impl;
};

static inline void fzfs_fail(const char *what, long rc)
{
	fprintf(stderr, "fuzz_fs: %s: %ld\n", what, rc);
	abort();
}

static inline uint64_t fzfs_oid(uint64_t ino)
{
	return OSDFS__OID_BASE + ino;
}

/* Read one attribute into @p buf (at most @p cap bytes); returns its length. */
static inline uint32_t fzfs_get_attr(struct fzfs *f, uint64_t ino, uint32_t page, uint32_t num,
				     void *buf, uint32_t cap)
{
	struct osdfs_attr a = { page, num, buf, cap };
	int rc = f->ops->get_attrs(f->impl, fzfs_oid(ino), &a, 1);

	if (rc < 0)
		fzfs_fail("get_attrs", rc);
	return a.len;
}

/* Replace (or with @p len 0 delete) one attribute of inode @p ino (0 = superblock). */
static inline void fzfs_set_attr(struct fzfs *f, uint64_t ino, uint32_t page, uint32_t num,
				 const void *val, size_t len)
{
	struct osdfs_attr a = { page, num, (void *)val, 0 };
	int rc;

	a.len = (uint32_t)(len > FZFS_MAX_ATTR ? FZFS_MAX_ATTR : len);
	rc = f->ops->set_attrs(f->impl, fzfs_oid(ino), &a, 1);
	if (rc < 0)
		fzfs_fail("set_attrs", rc);
}

/* Replace the whole data of inode @p ino's object. */
static inline void fzfs_set_data(struct fzfs *f, uint64_t ino, const uint8_t *data, size_t len)
{
	struct iovec v = { (void *)data, len };
	int rc = f->ops->truncate(f->impl, fzfs_oid(ino), 0);

	if (rc == 0 && len)
		rc = (int)f->ops->write(f->impl, fzfs_oid(ino), 0, &v, 1, NULL, 0);
	if (rc < 0)
		fzfs_fail("write", rc);
}

static inline void fzfs_super_get(struct fzfs *f, struct osdfs__super *sb)
{
	uint8_t buf[OSDFS__SUPER_LEN];

	if (fzfs_get_attr(f, 0, OSDFS__PAGE_SUPER, OSDFS__ATTR_SUPER, buf, sizeof(buf)) !=
		    OSDFS__SUPER_LEN ||
	    osdfs__super_decode(sb, buf, sizeof(buf)) != 0)
		fzfs_fail("superblock after mkfs", -EUCLEAN);
}

static inline void fzfs_super_put(struct fzfs *f, const struct osdfs__super *sb)
{
	uint8_t buf[OSDFS__SUPER_LEN];

	osdfs__super_encode(buf, sb);
	fzfs_set_attr(f, 0, OSDFS__PAGE_SUPER, OSDFS__ATTR_SUPER, buf, sizeof(buf));
}

/* Fixed uuid and directory hash keys instead of mkfs's random ones (the fs is still empty). */
static inline void fzfs_fix_super(struct fzfs *f)
{
	struct osdfs__super sb;

	fzfs_super_get(f, &sb);
	memset(sb.uuid, 0x5A, sizeof(sb.uuid));
	sb.hash_k0 = 0x0123456789ABCDEFULL;
	sb.hash_k1 = 0xFEDCBA9876543210ULL;
	sb.mkfs_sec = 1764720000;
	sb.mkfs_nsec = 0;
	fzfs_super_put(f, &sb);
}

static inline void fzfs_expect(const char *what, int rc, uint64_t got, uint64_t want)
{
	if (rc != 0 || got != want)
		fzfs_fail(what, rc ? rc : (long)got);
}

static inline void fzfs_populate(osdfs *fs)
{
	static const struct osdfs_cred cred = { 1000, 1000 };
	static const char slow[] = "a-symbolic-link-target-that-is-longer-than-the-inline-limit/"
				   "a-symbolic-link-target-that-is-longer-than-the-inline-limit/"
				   "a-symbolic-link-target-that-is-longer-than-the-inline-limit";
	struct osdfs_stat st;
	osdfs_file *fh;
	char name[128];
	int rc;

	rc = osdfs_mkdir(fs, FZFS_ROOT, "d", 0755, &cred, &st);
	fzfs_expect("mkdir d", rc, st.ino, FZFS_DIR);
	rc = osdfs_create(fs, FZFS_ROOT, "f", 0644, O_RDWR, &cred, &st, &fh);
	fzfs_expect("create f", rc, st.ino, FZFS_FILE);
	if (osdfs_write(fs, fh, "file contents\n", 14, 0) != 14 ||
	    osdfs_setxattr(fs, FZFS_FILE, "user.fuzz", "value", 5, 0) != 0 ||
	    osdfs_release(fs, fh) != 0)
		fzfs_fail("fill f", -EIO);
	rc = osdfs_symlink(fs, FZFS_ROOT, "s", "f", &cred, &st);
	fzfs_expect("symlink s", rc, st.ino, FZFS_FAST);
	rc = osdfs_symlink(fs, FZFS_ROOT, "l", slow, &cred, &st);
	fzfs_expect("symlink l", rc, st.ino, FZFS_SLOW);
	rc = osdfs_mknod(fs, FZFS_ROOT, "p", S_IFIFO | 0600, 0, &cred, &st);
	fzfs_expect("mknod p", rc, st.ino, FZFS_FIFO);
	rc = osdfs_mknod(fs, FZFS_ROOT, "c", S_IFCHR | 0600, (1u << 8) | 3u, &cred, &st);
	fzfs_expect("mknod c", rc, st.ino, FZFS_CHR);
	/* Long names fill 1 KiB blocks quickly, so /d splits into several blocks. */
	for (int i = 0; i < FZFS_DIR_NAMES; i++) {
		snprintf(name, sizeof(name), "entry-%02d-%s", i,
			 "padding-padding-padding-padding-padding-padding-padding-padding-padding");
		rc = osdfs_mknod(fs, FZFS_DIR, name, S_IFREG | 0644, 0, &cred, &st);
		fzfs_expect("mknod in d", rc, st.ino, FZFS_DIR_FIRST + (uint64_t)i);
	}
}

/* Build the filesystem described above on @p f's fresh backend (the slow way). */
static inline void fzfs_make(struct fzfs *f)
{
	struct osdfs_mkfs_options mk = OSDFS_MKFS_OPTIONS_INIT;
	struct osdfs_mount_options mo = OSDFS_MOUNT_OPTIONS_INIT;
	osdfs *fs;
	int rc;

	mk.block_size = FZFS_BSIZE;
	mk.label = "fuzz";
	rc = osdfs_mkfs(f->be, &mk);
	if (rc)
		fzfs_fail("mkfs", rc);
	fzfs_fix_super(f);
	mo.flags = OSDFS_MOUNT_KEEP_BACKEND;
	mo.host = "fuzz";
	mo.inode_cache = FZFS_CACHE;
	mo.dir_cache = FZFS_CACHE;
	rc = osdfs_mount(&fs, f->be, &mo);
	if (rc)
		fzfs_fail("mount", rc);
	fzfs_populate(fs);
	rc = osdfs_unmount(fs);
	if (rc)
		fzfs_fail("unmount", rc);
}

/*
 * The built filesystem as raw objects, so later inputs get it by a few
 * backend calls instead of mkfs and 26 creates (which would also flood
 * libFuzzer's feature counters with the same paths every run).
 */
#define FZFS_NOBJ (FZFS_DIR_FIRST + FZFS_DIR_NAMES)
#define FZFS_OBJ_ATTRS (8 + OSDFS__DIR_MAX_DEPTH + 1)

struct fzfs_obj {
	uint8_t *data;
	size_t len;
	int nattrs;
	struct osdfs_attr attrs[FZFS_OBJ_ATTRS];
};

static struct fzfs_obj fzfs_image[FZFS_NOBJ];
static int fzfs_have_image;

static inline void fzfs_image_free(void)
{
	for (size_t i = 0; i < FZFS_NOBJ; i++) {
		free(fzfs_image[i].data);
		for (int j = 0; j < fzfs_image[i].nattrs; j++)
			free(fzfs_image[i].attrs[j].value);
	}
	memset(fzfs_image, 0, sizeof(fzfs_image));
	fzfs_have_image = 0;
}

static inline void fzfs_image_attr(struct fzfs *f, struct fzfs_obj *o, uint64_t ino,
				   uint32_t page, uint32_t num)
{
	uint8_t *buf = malloc(FZFS_MAX_ATTR);
	uint32_t len;

	if (!buf)
		fzfs_fail("malloc", -ENOMEM);
	len = fzfs_get_attr(f, ino, page, num, buf, FZFS_MAX_ATTR);
	if (!len || o->nattrs == FZFS_OBJ_ATTRS) {
		free(buf);
		return;
	}
	o->attrs[o->nattrs++] = (struct osdfs_attr){ page, num, buf, len };
}

/* Every object and every attribute osdfs may have put on it (chunk 0 of each depth). */
static inline void fzfs_image_take(struct fzfs *f)
{
	for (uint64_t ino = 0; ino < FZFS_NOBJ; ino++) {
		struct fzfs_obj *o = &fzfs_image[ino];
		struct iovec v;
		uint64_t len = 0;
		int rc = f->ops->size(f->impl, fzfs_oid(ino), &len);

		if (rc || len > (1u << 20))
			fzfs_fail("image object size", rc ? rc : -EFBIG);
		o->data = malloc(len ? len : 1);
		o->len = len;
		v = (struct iovec){ o->data, len };
		if (!o->data || (len && f->ops->read(f->impl, fzfs_oid(ino), 0, &v, 1) != (ssize_t)len))
			fzfs_fail("image object read", -EIO);
		for (uint32_t n = OSDFS__ATTR_SUPER; ino == 0 && n <= OSDFS__ATTR_ORPHANS; n++)
			fzfs_image_attr(f, o, ino, OSDFS__PAGE_SUPER, n);
		if (ino == 0)
			continue;
		fzfs_image_attr(f, o, ino, OSDFS__PAGE_INODE, OSDFS__ATTR_INODE);
		fzfs_image_attr(f, o, ino, OSDFS__PAGE_DIR, OSDFS__ATTR_DIRHDR);
		for (uint32_t d = 0; d <= OSDFS__DIR_MAX_DEPTH; d++)
			fzfs_image_attr(f, o, ino, OSDFS__PAGE_DIR, OSDFS__ATTR_DIRTAB0 + (d << 12));
		fzfs_image_attr(f, o, ino, OSDFS__PAGE_XATTR, OSDFS__ATTR_XATTR);
	}
	fzfs_have_image = 1;
	atexit(fzfs_image_free);
}

/* A fresh mem backend holding the filesystem described above, unmounted. */
static inline void fzfs_build(struct fzfs *f)
{
	int rc = osdfs_backend_mem_new(&f->be, 0);

	if (rc)
		fzfs_fail("mem backend", rc);
	f->ops = osdfs_backend_ops_of(f->be);
	f->impl = osdfs_backend_impl(f->be);
	if (!fzfs_have_image) {
		fzfs_make(f);
		fzfs_image_take(f);
		osdfs_backend_free(f->be);
		rc = osdfs_backend_mem_new(&f->be, 0);
		if (rc)
			fzfs_fail("mem backend", rc);
		f->ops = osdfs_backend_ops_of(f->be);
		f->impl = osdfs_backend_impl(f->be);
	}
	rc = f->ops->format(f->impl, 0);
	for (uint64_t ino = 0; !rc && ino < FZFS_NOBJ; ino++) {
		const struct fzfs_obj *o = &fzfs_image[ino];
		struct iovec v = { o->data, o->len };

		rc = f->ops->create(f->impl, fzfs_oid(ino), o->attrs, o->nattrs);
		if (!rc && o->len)
			rc = f->ops->write(f->impl, fzfs_oid(ino), 0, &v, 1, NULL, 0) ==
					 (ssize_t)o->len ? 0 : -EIO;
	}
	if (rc)
		fzfs_fail("restore image", rc);
}

static inline void fzfs_free(struct fzfs *f)
{
	osdfs_backend_free(f->be);
	f->be = NULL;
}

/* ---- the walk ----------------------------------------------------------- */

/* The error codes a call documents in include/osdfs/osdfs.h (0-terminated list). */
static const int fzfs_mount_errors[] = { EBUSY, EUCLEAN, EPROTONOSUPPORT, EROFS, ENOMEM, EIO, 0 };
static const int fzfs_readdir_errors[] = { ENOTDIR, ENOENT, EUCLEAN, EIO, 0 };
static const int fzfs_lookup_errors[] = { ENOENT, ENOTDIR, ENAMETOOLONG, EUCLEAN, EIO, 0 };
/* include/osdfs/fsck.h; EBUSY: a repair while the mount record's holder
 * ("fuzz", this process) looks alive. */
static const int fzfs_fsck_errors[] = { EUCLEAN, EPROTONOSUPPORT, EROFS, EBUSY, ENOMEM, EIO,
					0 };

/* A damaged structure must give one of the documented errors. */
static inline void fzfs_check_rc(const char *call, int rc, const int *allowed)
{
	if (rc == 0)
		return;
	for (; *allowed; allowed++)
		if (rc == -*allowed)
			return;
	fprintf(stderr, "fuzz_fs: %s returned %d (%s), not a documented error\n", call, rc,
		strerror(rc < 0 ? -rc : rc));
	abort();
}

#define FZFS_WALK_ENTRIES 64 /* entries taken from one directory */
#define FZFS_WALK_DEPTH 2

struct fzfs_names {
	size_t n;
	uint64_t ino[FZFS_WALK_ENTRIES];
	unsigned int type[FZFS_WALK_ENTRIES];
	uint64_t last_cookie;
	char name[FZFS_WALK_ENTRIES][OSDFS_NAME_MAX + 1];
};

static inline int fzfs_collect(const struct osdfs_dirent *e, void *payload)
{
	struct fzfs_names *nm = payload;

	if (e->namelen != strlen(e->name) || e->namelen > OSDFS_NAME_MAX)
		fzfs_fail("readdir name length", (long)e->namelen);
	if (nm->n == FZFS_WALK_ENTRIES)
		return 1;
	nm->ino[nm->n] = e->ino;
	nm->type[nm->n] = e->type;
	memcpy(nm->name[nm->n], e->name, e->namelen + 1);
	nm->last_cookie = e->next;
	nm->n++;
	return 0;
}

static inline void fzfs_touch_file(osdfs *fs, uint64_t ino)
{
	char buf[2048];
	osdfs_file *fh;
	ssize_t n;

	if (osdfs_open(fs, ino, O_RDONLY, &fh) != 0)
		return;
	n = osdfs_read(fs, fh, buf, sizeof(buf), 0);
	if (n > (ssize_t)sizeof(buf))
		fzfs_fail("read length", (long)n);
	(void)osdfs_read(fs, fh, buf, 16, UINT64_C(1) << 40);
	osdfs_release(fs, fh);
}

static inline void fzfs_touch_inode(osdfs *fs, uint64_t ino)
{
	char buf[OSDFS_SYMLINK_MAX + 1], list[512];
	struct osdfs_stat st;
	ssize_t n;

	if (osdfs_getattr(fs, ino, &st) != 0)
		return;
	if (st.ino != ino)
		fzfs_fail("getattr inode number", (long)st.ino);
	switch (st.mode & S_IFMT) {
	case S_IFLNK:
		n = osdfs_readlink(fs, ino, buf, sizeof(buf));
		if (n > (ssize_t)sizeof(buf))
			fzfs_fail("readlink length", (long)n);
		break;
	case S_IFREG:
		fzfs_touch_file(fs, ino);
		break;
	default:
		break;
	}
	n = osdfs_getxattr(fs, ino, "user.fuzz", buf, sizeof(buf));
	if (n > (ssize_t)sizeof(buf))
		fzfs_fail("getxattr length", (long)n);
	n = osdfs_listxattr(fs, ino, list, sizeof(list));
	if (n > (ssize_t)sizeof(list))
		fzfs_fail("listxattr length", (long)n);
}

/* List @p dir (then once more from a cookie), and visit each entry. */
static inline void fzfs_walk_dir(osdfs *fs, uint64_t dir, int depth)
{
	struct fzfs_names *nm = calloc(1, sizeof(*nm));
	struct osdfs_stat st;

	if (!nm)
		fzfs_fail("calloc", -ENOMEM);
	int rc = osdfs_readdir(fs, dir, 0, fzfs_collect, nm);

	fzfs_check_rc("osdfs_readdir", rc, fzfs_readdir_errors);
	if (rc == 0 && nm->n > 2) {
		size_t keep = nm->n;

		/* Resume from the last entry's cookie into the spare slots: whatever a
		 * damaged block does, resuming must stay within the directory. */
		nm->n = keep > FZFS_WALK_ENTRIES - 4 ? keep : FZFS_WALK_ENTRIES - 4;
		rc = osdfs_readdir(fs, dir, nm->last_cookie, fzfs_collect, nm);
		fzfs_check_rc("osdfs_readdir from a cookie", rc, fzfs_readdir_errors);
		nm->n = keep;
	}
	for (size_t i = 0; i < nm->n; i++) {
		if (!strcmp(nm->name[i], ".") || !strcmp(nm->name[i], ".."))
			continue;
		rc = osdfs_lookup(fs, dir, nm->name[i], &st);
		fzfs_check_rc("osdfs_lookup", rc, fzfs_lookup_errors);
		if (rc != 0)
			continue;
		fzfs_touch_inode(fs, st.ino);
		if (S_ISDIR(st.mode) && depth < FZFS_WALK_DEPTH && st.ino != dir)
			fzfs_walk_dir(fs, st.ino, depth + 1);
	}
	free(nm);
}

/* Changes that read and rewrite directory blocks, inodes and the counters. */
static inline void fzfs_mutate(osdfs *fs)
{
	static const struct osdfs_cred cred = { 0, 0 };
	struct osdfs_stat st;
	osdfs_file *fh;

	if (osdfs_mknod(fs, FZFS_ROOT, "new", S_IFREG | 0644, 0, &cred, &st) == 0)
		(void)osdfs_rename(fs, FZFS_ROOT, "new", FZFS_DIR, "moved", 0);
	(void)osdfs_mknod(fs, FZFS_DIR, "another-new-name", S_IFREG | 0644, 0, &cred, &st);
	(void)osdfs_unlink(fs, FZFS_DIR, "moved");
	if (osdfs_mkdir(fs, FZFS_DIR, "sub", 0755, &cred, &st) == 0)
		(void)osdfs_rmdir(fs, FZFS_DIR, "sub");
	if (osdfs_open(fs, FZFS_FILE, O_RDWR, &fh) == 0) {
		(void)osdfs_write(fs, fh, "more", 4, 100);
		osdfs_release(fs, fh);
	}
	(void)osdfs_setxattr(fs, FZFS_FILE, "user.more", "x", 1, 0);
	(void)osdfs_unlink(fs, FZFS_ROOT, "p");
	(void)osdfs_sync(fs);
}

/*
 * osdfs_fsck() on what the mount left (libosdfs/fsck): with file data read
 * too, and with @p repair a repair, after which a check must find nothing
 * when the repair said the filesystem is clean (its documented promise).
 */
static inline void fzfs_fsck(struct fzfs *f, int repair)
{
	struct osdfs_fsck_options o = OSDFS_FSCK_OPTIONS_INIT;
	struct osdfs_fsck_report r;
	int rc;

	o.repair = repair;
	o.verify_data = 1;
	rc = osdfs_fsck(f->be, &o, &r);
	fzfs_check_rc("osdfs_fsck", rc, fzfs_fsck_errors);
	if (rc || !repair)
		return;
	o.repair = 0;
	rc = osdfs_fsck(f->be, &o, &r);
	if (rc)
		fzfs_fail("fsck after a repair that left the filesystem clean", rc);
}

/*
 * Mount with @p flags (plus KEEP_BACKEND), walk everything, and with a
 * read-write mount change a few things; then fsck what is left (a repair
 * after a read-write mount). Returns the mount's result.
 */
static inline int fzfs_exercise(struct fzfs *f, unsigned int flags)
{
	static const char *const paths[] = { "/d/../s", "/s", "/l", "d/entry-00", "/c/x" };
	struct osdfs_mount_options mo = OSDFS_MOUNT_OPTIONS_INIT;
	struct osdfs_statfs sf;
	struct osdfs_info info;
	struct osdfs_stat st;
	char err[256];
	uint64_t ino;
	osdfs *fs;
	int rc;

	mo.flags = flags | OSDFS_MOUNT_KEEP_BACKEND;
	mo.host = "fuzz";
	mo.inode_cache = FZFS_CACHE;
	mo.dir_cache = FZFS_CACHE;
	mo.error = err;
	mo.error_size = sizeof(err);
	rc = osdfs_mount(&fs, f->be, &mo);
	fzfs_check_rc("osdfs_mount", rc, fzfs_mount_errors);
	if (rc) {
		fzfs_fsck(f, !(flags & OSDFS_MOUNT_RDONLY));
		return rc;
	}
	(void)osdfs_get_info(fs, &info);
	(void)osdfs_statfs(fs, &sf);
	fzfs_touch_inode(fs, FZFS_ROOT);
	fzfs_walk_dir(fs, FZFS_ROOT, 0);
	for (uint64_t i = FZFS_ROOT; i < FZFS_DIR_FIRST + 2; i++)
		fzfs_touch_inode(fs, i);
	fzfs_check_rc("osdfs_lookup", osdfs_lookup(fs, FZFS_DIR, "no-such-name", &st),
		      fzfs_lookup_errors);
	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++)
		(void)osdfs_resolve(fs, paths[i], 1, &ino);
	if (!(flags & OSDFS_MOUNT_RDONLY))
		fzfs_mutate(fs);
	rc = osdfs_unmount(fs);
	if (rc > 0)
		fzfs_fail("unmount result", rc);
	fzfs_fsck(f, !(flags & OSDFS_MOUNT_RDONLY));
	return 0;
}

#endif
