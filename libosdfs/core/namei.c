/*
 * Namespace operations: lookup, creation of every inode type, link,
 * unlink, rmdir and rename. All changes run under the filesystem lock held
 * exclusively. A new inode's object is created together with its inode
 * attributes in one backend operation before the directory entry naming it
 * is written, and an entry is removed before the link count drops, so an
 * interruption can leave an unreferenced object (for fsck) but never an
 * entry pointing at nothing.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "backends/create.h"
#include "core/fs.h"

#define LINK_MAX_COUNT 0xFFFFFF00u

int osdfs__check_name(osdfs *fs, const char *name, size_t *len)
{
	(void)fs;
	if (!name || !*name)
		return -ENOENT;
	*len = strnlen(name, OSDFS_NAME_MAX + 1);
	if (*len > OSDFS_NAME_MAX)
		return -ENAMETOOLONG;
	if (memchr(name, '/', *len))
		return -EINVAL;
	return 0;
}

static int is_dot(const char *name, size_t len)
{
	return name[0] == '.' && (len == 1 || (len == 2 && name[1] == '.'));
}

static int wr_lock(osdfs *fs)
{
	if (fs->readonly)
		return -EROFS;
	pthread_rwlock_wrlock(&fs->lock);
	return 0;
}

static int get_dir(osdfs *fs, uint64_t ino, struct osdfs__inode **out)
{
	int rc = osdfs__iget(fs, ino, out);

	if (rc == 0 && !OSDFS__IS_DIR(*out)) {
		osdfs__iput(fs, *out);
		return -ENOTDIR;
	}
	if (rc == 0 && (*out)->d.nlink == 0) {
		osdfs__iput(fs, *out);
		return -ENOENT;
	}
	return rc;
}

/* Lookup in dp including "." and ".." (shared or exclusive lock held). */
int osdfs__lookup_ino(osdfs *fs, struct osdfs__inode *dp, const char *name, size_t len,
		      uint64_t *ino, uint8_t *ft, enum osdfs__dir_read how)
{
	if (is_dot(name, len)) {
		*ino = len == 1 || !dp->d.parent ? dp->ino : dp->d.parent;
		if (ft)
			*ft = OSDFS__FT_DIR;
		return 0;
	}
	return osdfs__dir_lookup(fs, dp, name, len, ino, ft, how);
}

int osdfs_lookup(osdfs *fs, uint64_t parent, const char *name, struct osdfs_stat *out)
{
	struct osdfs__inode *dp, *ip;
	uint64_t ino;
	size_t len;
	int rc;

	osdfs__begin();
	rc = osdfs__check_name(fs, name, &len);
	if (rc < 0)
		return osdfs__end(fs, rc, "lookup");
	pthread_rwlock_rdlock(&fs->lock);
	rc = get_dir(fs, parent, &dp);
	if (rc == 0) {
		rc = osdfs__lookup_ino(fs, dp, name, len, &ino, NULL, OSDFS__DIR_AHEAD);
		osdfs__iput(fs, dp);
	}
	if (rc == 0) {
		rc = osdfs__iget(fs, ino, &ip);
		if (rc == -ENOENT)
			rc = osdfs__fail(fs, -EUCLEAN, "entry '%s' names missing inode %llu", name,
					 (unsigned long long)ino);
		if (rc == 0) {
			if (out)
				osdfs__stat_fill_locked(fs, ip, out);
			osdfs__iput(fs, ip);
		}
	}
	pthread_rwlock_unlock(&fs->lock);
	return osdfs__end(fs, rc, "lookup");
}

struct node_spec {
	uint32_t mode;
	uint64_t rdev;
	const char *target;
	size_t target_len;
};

/* Creates the object of a new non-directory inode with its attributes. */
static int object_create(osdfs *fs, struct osdfs__inode *ip, const struct node_spec *ns)
{
	uint8_t ibuf[OSDFS__INODE_MAX_LEN];
	struct osdfs_attr a;
	int rc;

	if (S_ISDIR(ns->mode))
		return osdfs__dir_create(fs, ip);
	osdfs__inode_attr(ip, &a, ibuf);
	rc = osdfs__create(fs->ops, fs->impl, OSDFS__OID_BASE + ip->ino,
			   S_ISREG(ns->mode) ? OSDFS_OBJ_DATA : OSDFS_OBJ_META, &a, 1);
	if (rc == 0 && S_ISLNK(ns->mode) && ip->d.inline_len == 0) {
		struct iovec iov = { (void *)ns->target, ns->target_len };
		ssize_t n = fs->ops->write(fs->impl, OSDFS__OID_BASE + ip->ino, 0, &iov, 1, NULL, 0);

		rc = n < 0 ? (int)n : (size_t)n == ns->target_len ? 0 : -EIO;
		if (rc < 0)
			fs->ops->remove(fs->impl, OSDFS__OID_BASE + ip->ino);
	}
	if (rc < 0)
		return osdfs__fail(fs, rc, "creating object of inode %llu: %s",
				   (unsigned long long)ip->ino, strerror(-rc));
	return 0;
}

/* Creates name in parent (exclusive lock held); returns the new inode. */
static int make_node(osdfs *fs, uint64_t parent, const char *name, size_t len,
		     const struct node_spec *ns, const struct osdfs_cred *cred,
		     struct osdfs__inode **out)
{
	struct osdfs__inode *dp, *ip;
	uint64_t ino;
	int rc = get_dir(fs, parent, &dp);

	if (rc < 0)
		return rc;
	rc = osdfs__lookup_ino(fs, dp, name, len, &ino, NULL, OSDFS__DIR_ALONE);
	if (rc == 0)
		rc = -EEXIST;
	else if (rc == -ENOENT)
		rc = 0;
	if (rc == 0 && S_ISDIR(ns->mode) && dp->d.nlink >= LINK_MAX_COUNT)
		rc = -EMLINK;
	if (rc == 0)
		rc = osdfs__ialloc(fs, ns->mode, cred, dp, &ip);
	if (rc < 0)
		goto out;
	if (S_ISCHR(ns->mode) || S_ISBLK(ns->mode)) {
		ip->d.rdev_major = major(ns->rdev);
		ip->d.rdev_minor = minor(ns->rdev);
	}
	if (S_ISLNK(ns->mode)) {
		ip->d.size = ns->target_len;
		if (ns->target_len <= OSDFS__INLINE_MAX) {
			ip->d.inline_len = (uint16_t)ns->target_len;
			memcpy(ip->d.inline_data, ns->target, ns->target_len);
		}
	}
	rc = object_create(fs, ip, ns);
	if (rc < 0) {
		osdfs__iabandon(fs, ip);
		goto out;
	}
	if (S_ISDIR(ns->mode))
		dp->d.nlink++;
	rc = osdfs__dir_add(fs, dp, name, len, ip->ino, osdfs__ft_of_mode(ns->mode));
	if (rc < 0) {
		if (S_ISDIR(ns->mode))
			dp->d.nlink--;
		osdfs__ifree(fs, ip);
		osdfs__iput(fs, ip);
		goto out;
	}
	*out = ip;
out:
	osdfs__iput(fs, dp);
	return rc;
}

static int create_common(osdfs *fs, uint64_t parent, const char *name,
			 const struct node_spec *ns, const struct osdfs_cred *cred,
			 struct osdfs_stat *out, const char *op)
{
	struct osdfs__inode *ip;
	size_t len;
	int rc;

	osdfs__begin();
	rc = osdfs__check_name(fs, name, &len);
	if (rc == 0)
		rc = wr_lock(fs);
	if (rc < 0)
		return osdfs__end(fs, rc, op);
	rc = make_node(fs, parent, name, len, ns, cred, &ip);
	if (rc == 0) {
		if (out)
			osdfs__stat_fill(fs, ip, out);
		osdfs__iput(fs, ip);
	}
	pthread_rwlock_unlock(&fs->lock);
	return osdfs__end(fs, rc, op);
}

int osdfs_mknod(osdfs *fs, uint64_t parent, const char *name, uint32_t mode, uint64_t rdev,
		const struct osdfs_cred *cred, struct osdfs_stat *out)
{
	struct node_spec ns = { mode & (S_IFMT | 07777), rdev, NULL, 0 };

	switch (mode & S_IFMT) {
	case S_IFREG: case S_IFIFO: case S_IFSOCK: case S_IFCHR: case S_IFBLK:
		break;
	case 0:
		ns.mode |= S_IFREG;
		break;
	default:
		osdfs__begin();
		return osdfs__end(fs, -EINVAL, "mknod: bad file type");
	}
	return create_common(fs, parent, name, &ns, cred, out, "mknod");
}

int osdfs_mkdir(osdfs *fs, uint64_t parent, const char *name, uint32_t mode,
		const struct osdfs_cred *cred, struct osdfs_stat *out)
{
	struct node_spec ns = { S_IFDIR | (mode & 07777), 0, NULL, 0 };

	return create_common(fs, parent, name, &ns, cred, out, "mkdir");
}

int osdfs_symlink(osdfs *fs, uint64_t parent, const char *name, const char *target,
		  const struct osdfs_cred *cred, struct osdfs_stat *out)
{
	struct node_spec ns = { S_IFLNK | 0777, 0, target, 0 };

	if (!target || !*target) {
		osdfs__begin();
		return osdfs__end(fs, -ENOENT, "symlink: empty target");
	}
	ns.target_len = strnlen(target, OSDFS_SYMLINK_MAX + 1);
	if (ns.target_len > OSDFS_SYMLINK_MAX) {
		osdfs__begin();
		return osdfs__end(fs, -ENAMETOOLONG, "symlink: target too long");
	}
	return create_common(fs, parent, name, &ns, cred, out, "symlink");
}

int osdfs_create(osdfs *fs, uint64_t parent, const char *name, uint32_t mode, int flags,
		 const struct osdfs_cred *cred, struct osdfs_stat *out, osdfs_file **fh)
{
	struct node_spec ns = { S_IFREG | (mode & 07777), 0, NULL, 0 };
	struct osdfs__inode *ip = NULL, *dp;
	uint64_t ino;
	size_t len;
	int rc;

	osdfs__begin();
	*fh = NULL;
	rc = osdfs__check_name(fs, name, &len);
	if (rc == 0)
		rc = wr_lock(fs);
	if (rc < 0)
		return osdfs__end(fs, rc, "create");
	rc = get_dir(fs, parent, &dp);
	if (rc == 0) {
		rc = osdfs__lookup_ino(fs, dp, name, len, &ino, NULL, OSDFS__DIR_ALONE);
		osdfs__iput(fs, dp);
	}
	if (rc == 0 && (flags & O_EXCL))
		rc = -EEXIST;
	else if (rc == 0)
		rc = osdfs__iget(fs, ino, &ip);
	else if (rc == -ENOENT)
		rc = make_node(fs, parent, name, len, &ns, cred, &ip);
	if (rc == 0) {
		rc = osdfs__open_inode(fs, ip, flags, fh);
		if (rc == 0 && out)
			osdfs__stat_fill(fs, ip, out);
		osdfs__iput(fs, ip);
	}
	pthread_rwlock_unlock(&fs->lock);
	return osdfs__end(fs, rc, "create");
}

int osdfs_link(osdfs *fs, uint64_t ino, uint64_t newparent, const char *newname,
	       struct osdfs_stat *out)
{
	struct osdfs__inode *ip, *dp;
	uint64_t other;
	size_t len;
	int rc;

	osdfs__begin();
	rc = osdfs__check_name(fs, newname, &len);
	if (rc == 0)
		rc = wr_lock(fs);
	if (rc < 0)
		return osdfs__end(fs, rc, "link");
	rc = osdfs__iget(fs, ino, &ip);
	if (rc < 0)
		goto unlock;
	if (OSDFS__IS_DIR(ip))
		rc = -EPERM;
	else if (ip->d.nlink == 0)
		rc = -ENOENT;
	else if (ip->d.nlink >= LINK_MAX_COUNT)
		rc = -EMLINK;
	if (rc == 0)
		rc = get_dir(fs, newparent, &dp);
	if (rc < 0)
		goto put;
	rc = osdfs__lookup_ino(fs, dp, newname, len, &other, NULL, OSDFS__DIR_ALONE);
	rc = rc == 0 ? -EEXIST : rc == -ENOENT ? 0 : rc;
	if (rc == 0) {
		/* Count the link first: a crash may leave nlink one too high,
		 * never an entry whose inode can be freed under it. */
		ip->d.nlink++;
		osdfs__now(&ip->d.ctime);
		rc = osdfs__iwrite(fs, ip);
		if (rc == 0)
			rc = osdfs__dir_add(fs, dp, newname, len, ip->ino,
					    osdfs__ft_of_mode(ip->d.mode));
		if (rc < 0) {
			ip->d.nlink--;
			osdfs__iwrite(fs, ip);
		}
	}
	osdfs__iput(fs, dp);
	if (rc == 0 && out)
		osdfs__stat_fill(fs, ip, out);
put:
	osdfs__iput(fs, ip);
unlock:
	pthread_rwlock_unlock(&fs->lock);
	return osdfs__end(fs, rc, "link");
}

/* Removes a non-directory (want_dir 0) or an empty directory (want_dir 1). */
static int remove_entry(osdfs *fs, uint64_t parent, const char *name, int want_dir)
{
	struct osdfs__inode *dp, *ip;
	uint64_t ino;
	size_t len;
	int rc = osdfs__check_name(fs, name, &len);

	if (rc == 0 && is_dot(name, len))
		rc = !want_dir ? -EISDIR : len == 1 ? -EINVAL : -ENOTEMPTY;
	if (rc == 0)
		rc = wr_lock(fs);
	if (rc < 0)
		return rc;
	rc = get_dir(fs, parent, &dp);
	if (rc < 0)
		goto unlock;
	rc = osdfs__dir_lookup(fs, dp, name, len, &ino, NULL, OSDFS__DIR_ALONE);
	if (rc == 0)
		rc = osdfs__iget(fs, ino, &ip);
	if (rc < 0)
		goto put_dir;
	if (!want_dir && OSDFS__IS_DIR(ip))
		rc = -EISDIR;
	else if (want_dir && !OSDFS__IS_DIR(ip))
		rc = -ENOTDIR;
	else if (want_dir)
		rc = osdfs__dir_is_empty(fs, ip) == 1 ? 0 : -ENOTEMPTY;
	if (rc == 0) {
		if (want_dir)
			dp->d.nlink--;
		rc = osdfs__dir_remove(fs, dp, name, len);
		if (rc < 0 && want_dir)
			dp->d.nlink++;
	}
	if (rc == 0)
		rc = osdfs__idrop_link(fs, ip);
	osdfs__iput(fs, ip);
put_dir:
	osdfs__iput(fs, dp);
unlock:
	pthread_rwlock_unlock(&fs->lock);
	return rc;
}

int osdfs_unlink(osdfs *fs, uint64_t parent, const char *name)
{
	osdfs__begin();
	return osdfs__end(fs, remove_entry(fs, parent, name, 0), "unlink");
}

int osdfs_rmdir(osdfs *fs, uint64_t parent, const char *name)
{
	osdfs__begin();
	return osdfs__end(fs, remove_entry(fs, parent, name, 1), "rmdir");
}

/* 1 if directory anc is dir or one of its ancestors, 0 if not, or an error. */
static int is_ancestor(osdfs *fs, uint64_t anc, uint64_t dir)
{
	for (unsigned int steps = 0; steps < (1u << 20); steps++) {
		struct osdfs__inode *ip;
		uint64_t up;
		int rc;

		if (dir == anc)
			return 1;
		if (dir == OSDFS_ROOT_INO)
			return 0;
		rc = osdfs__iget(fs, dir, &ip);
		if (rc < 0)
			return rc == -ENOENT ? -EUCLEAN : rc;
		up = ip->d.parent;
		osdfs__iput(fs, ip);
		if (up == 0 || up == dir)
			return osdfs__fail(fs, -EUCLEAN, "directory %llu has a bad parent",
					   (unsigned long long)dir);
		dir = up;
	}
	return osdfs__fail(fs, -EUCLEAN, "directory parent chain loops");
}

struct rename_ctx {
	struct osdfs__inode *dp1, *dp2, *sp, *tp;
	const char *n1, *n2;
	size_t l1, l2;
	uint8_t ft1, ft2;
};

/*
 * A non-directory about to be named twice for a moment (a rename's new entry
 * before the old one goes) gets the extra link counted first, so that a crash
 * in between leaves its count one too high, never too low (docs/crash-model.md).
 */
static int count_extra_link(osdfs *fs, struct osdfs__inode *ip)
{
	int rc;

	if (OSDFS__IS_DIR(ip))
		return 0;
	ip->d.nlink++;
	rc = osdfs__iwrite(fs, ip);
	if (rc < 0)
		ip->d.nlink--;
	return rc;
}

/* Takes back count_extra_link() (written by the caller's next inode write). */
static void uncount_extra_link(struct osdfs__inode *ip)
{
	if (!OSDFS__IS_DIR(ip))
		ip->d.nlink--;
}

static int rename_exchange(osdfs *fs, struct rename_ctx *c)
{
	int sdir = OSDFS__IS_DIR(c->sp), tdir = OSDFS__IS_DIR(c->tp), rc;

	rc = count_extra_link(fs, c->tp); /* named by n1 and n2 between the two sets */
	if (rc < 0)
		return rc;
	if (c->dp1 != c->dp2 && sdir != tdir) {
		c->dp1->d.nlink += sdir ? -1 : 1;
		c->dp2->d.nlink += sdir ? 1 : -1;
	}
	rc = osdfs__dir_set(fs, c->dp1, c->n1, c->l1, c->tp->ino, c->ft2);
	if (rc == 0)
		rc = osdfs__dir_set(fs, c->dp2, c->n2, c->l2, c->sp->ino, c->ft1);
	uncount_extra_link(c->tp);
	if (rc < 0) {
		osdfs__iwrite(fs, c->tp);
		return rc;
	}
	if (sdir)
		c->sp->d.parent = c->dp2->ino;
	if (tdir)
		c->tp->d.parent = c->dp1->ino;
	osdfs__now(&c->sp->d.ctime);
	c->tp->d.ctime = c->sp->d.ctime;
	rc = osdfs__iwrite(fs, c->sp);
	return rc ? rc : osdfs__iwrite(fs, c->tp);
}

static int rename_move(osdfs *fs, struct rename_ctx *c)
{
	int sdir = OSDFS__IS_DIR(c->sp), rc;

	if (c->tp) {
		int tdir = OSDFS__IS_DIR(c->tp);

		if (sdir && !tdir)
			return -ENOTDIR;
		if (!sdir && tdir)
			return -EISDIR;
		if (tdir && (rc = osdfs__dir_is_empty(fs, c->tp)) != 1)
			return rc < 0 ? rc : -ENOTEMPTY;
	}
	rc = count_extra_link(fs, c->sp);
	if (rc < 0)
		return rc;
	if (c->tp) {
		rc = osdfs__dir_set(fs, c->dp2, c->n2, c->l2, c->sp->ino, c->ft1);
	} else {
		if (sdir && c->dp1 != c->dp2)
			c->dp2->d.nlink++;
		rc = osdfs__dir_add(fs, c->dp2, c->n2, c->l2, c->sp->ino, c->ft1);
		if (rc < 0 && sdir && c->dp1 != c->dp2)
			c->dp2->d.nlink--;
	}
	if (rc < 0) {
		uncount_extra_link(c->sp);
		osdfs__iwrite(fs, c->sp);
		return rc;
	}
	/* the source leaves dp1; a replaced directory target leaves dp2 */
	if (sdir && (c->dp1 != c->dp2 || c->tp))
		c->dp1->d.nlink--;
	rc = osdfs__dir_remove(fs, c->dp1, c->n1, c->l1);
	if (rc < 0)
		return rc; /* named twice, and counted so */
	uncount_extra_link(c->sp);
	if (sdir)
		c->sp->d.parent = c->dp2->ino;
	osdfs__now(&c->sp->d.ctime);
	rc = osdfs__iwrite(fs, c->sp);
	if (rc == 0 && c->tp)
		rc = osdfs__idrop_link(fs, c->tp);
	return rc;
}

static int rename_locked(osdfs *fs, struct rename_ctx *c, uint64_t p1, uint64_t p2,
			 unsigned int flags)
{
	uint64_t i1, i2;
	int rc, have_target;

	rc = osdfs__dir_lookup(fs, c->dp1, c->n1, c->l1, &i1, &c->ft1, OSDFS__DIR_ALONE);
	if (rc < 0)
		return rc;
	rc = osdfs__dir_lookup(fs, c->dp2, c->n2, c->l2, &i2, &c->ft2, OSDFS__DIR_ALONE);
	if (rc < 0 && rc != -ENOENT)
		return rc;
	if (rc == 0 && i1 == i2)
		return 0; /* both names are links to one inode: nothing to do */
	if (rc == 0 && (flags & OSDFS_RENAME_NOREPLACE))
		return -EEXIST;
	if (rc == -ENOENT && (flags & OSDFS_RENAME_EXCHANGE))
		return -ENOENT;
	have_target = rc == 0;
	rc = osdfs__iget(fs, i1, &c->sp);
	if (rc == 0 && have_target)
		rc = osdfs__iget(fs, i2, &c->tp);
	if (rc < 0)
		return rc == -ENOENT ? -EUCLEAN : rc;
	/* a directory may not move into its own subtree */
	if (OSDFS__IS_DIR(c->sp) && p1 != p2 && (rc = is_ancestor(fs, i1, p2)) != 0)
		return rc < 0 ? rc : -EINVAL;
	if (c->tp && (flags & OSDFS_RENAME_EXCHANGE) && OSDFS__IS_DIR(c->tp) && p1 != p2 &&
	    (rc = is_ancestor(fs, i2, p1)) != 0)
		return rc < 0 ? rc : -EINVAL;
	if (flags & OSDFS_RENAME_EXCHANGE)
		return rename_exchange(fs, c);
	return rename_move(fs, c);
}

int osdfs_rename(osdfs *fs, uint64_t parent, const char *name, uint64_t newparent,
		 const char *newname, unsigned int flags)
{
	struct rename_ctx c = { NULL, NULL, NULL, NULL, name, newname, 0, 0, 0, 0 };
	int rc;

	osdfs__begin();
	if ((flags & ~(OSDFS_RENAME_NOREPLACE | OSDFS_RENAME_EXCHANGE)) ||
	    flags == (OSDFS_RENAME_NOREPLACE | OSDFS_RENAME_EXCHANGE))
		return osdfs__end(fs, -EINVAL, "rename: bad flags");
	rc = osdfs__check_name(fs, name, &c.l1);
	if (rc == 0)
		rc = osdfs__check_name(fs, newname, &c.l2);
	if (rc == 0 && (is_dot(name, c.l1) || is_dot(newname, c.l2)))
		rc = -EINVAL;
	if (rc == 0)
		rc = wr_lock(fs);
	if (rc < 0)
		return osdfs__end(fs, rc, "rename");
	rc = get_dir(fs, parent, &c.dp1);
	if (rc == 0) {
		rc = get_dir(fs, newparent, &c.dp2);
		if (rc == 0)
			rc = rename_locked(fs, &c, parent, newparent, flags);
	}
	osdfs__iput(fs, c.tp);
	osdfs__iput(fs, c.sp);
	osdfs__iput(fs, c.dp2);
	osdfs__iput(fs, c.dp1);
	pthread_rwlock_unlock(&fs->lock);
	return osdfs__end(fs, rc, "rename");
}
