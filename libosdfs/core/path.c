/*
 * Symbolic links, directory listing and path resolution for tools.
 * Resolution follows at most OSDFS_SYMLOOP_MAX links in total (-ELOOP
 * beyond), so a cycle of links always terminates.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/fs.h"

int osdfs__read_link(osdfs *fs, struct osdfs__inode *ip, char *buf)
{
	struct iovec iov = { buf, (size_t)ip->d.size };
	ssize_t n;

	if (!S_ISLNK(ip->d.mode))
		return -EINVAL;
	if (ip->d.size == 0 || ip->d.size > OSDFS_SYMLINK_MAX)
		return osdfs__fail(fs, -EUCLEAN, "symlink %llu has a bad length",
				   (unsigned long long)ip->ino);
	if (ip->d.inline_len) {
		if (ip->d.inline_len != ip->d.size)
			return osdfs__fail(fs, -EUCLEAN, "symlink %llu: inline length mismatch",
					   (unsigned long long)ip->ino);
		memcpy(buf, ip->d.inline_data, ip->d.inline_len);
	} else {
		n = fs->ops->read(fs->impl, OSDFS__OID_BASE + ip->ino, 0, &iov, 1);
		if (n < 0)
			return osdfs__fail(fs, (int)n, "reading symlink %llu: %s",
					   (unsigned long long)ip->ino, strerror((int)-n));
		if ((uint64_t)n != ip->d.size || memchr(buf, 0, (size_t)n))
			return osdfs__fail(fs, -EUCLEAN, "symlink %llu: target is damaged",
					   (unsigned long long)ip->ino);
	}
	buf[ip->d.size] = '\0';
	return (int)ip->d.size;
}

ssize_t osdfs_readlink(osdfs *fs, uint64_t ino, char *buf, size_t size)
{
	char target[OSDFS_SYMLINK_MAX + 1];
	struct osdfs__inode *ip;
	int rc;

	osdfs__begin();
	pthread_rwlock_rdlock(&fs->lock);
	rc = osdfs__iget(fs, ino, &ip);
	if (rc == 0) {
		rc = osdfs__read_link(fs, ip, target);
		osdfs__iput(fs, ip);
	}
	pthread_rwlock_unlock(&fs->lock);
	if (rc < 0)
		return osdfs__end(fs, rc, "readlink");
	if (size > 0)
		memcpy(buf, target, (size_t)rc < size ? (size_t)rc + 1 : size);
	return rc;
}

int osdfs_readdir(osdfs *fs, uint64_t ino, uint64_t cookie, osdfs_readdir_cb cb,
		  void *payload)
{
	struct osdfs__inode *dp;
	int rc;

	osdfs__begin();
	pthread_rwlock_rdlock(&fs->lock);
	rc = osdfs__iget(fs, ino, &dp);
	if (rc == 0) {
		rc = OSDFS__IS_DIR(dp) ? osdfs__dir_readdir(fs, dp, cookie, cb, payload) : -ENOTDIR;
		osdfs__iput(fs, dp);
	}
	pthread_rwlock_unlock(&fs->lock);
	return osdfs__end(fs, rc, "readdir");
}

/* One step: the inode named by name in directory dir. */
static int step(osdfs *fs, uint64_t dir, const char *name, size_t len, uint64_t *child)
{
	struct osdfs__inode *dp;
	int rc = osdfs__iget(fs, dir, &dp);

	if (rc < 0)
		return rc;
	if (!OSDFS__IS_DIR(dp))
		rc = -ENOTDIR;
	else
		rc = osdfs__lookup_ino(fs, dp, name, len, child, NULL, OSDFS__DIR_AHEAD);
	osdfs__iput(fs, dp);
	return rc;
}

static int walk(osdfs *fs, uint64_t start, const char *path, int follow, int *links,
		uint64_t *out);

/* If ino is a symlink to follow, replaces it by what it points at (from dir). */
static int follow_link(osdfs *fs, uint64_t dir, uint64_t *ino, int *links)
{
	struct osdfs__inode *ip;
	char *target;
	int rc = osdfs__iget(fs, *ino, &ip);

	if (rc < 0)
		return rc == -ENOENT ? -EUCLEAN : rc;
	if (!S_ISLNK(ip->d.mode)) {
		osdfs__iput(fs, ip);
		return 0;
	}
	if (++*links > OSDFS_SYMLOOP_MAX) {
		osdfs__iput(fs, ip);
		return -ELOOP;
	}
	target = malloc(OSDFS_SYMLINK_MAX + 1);
	rc = target ? osdfs__read_link(fs, ip, target) : -ENOMEM;
	osdfs__iput(fs, ip);
	if (rc >= 0)
		rc = walk(fs, dir, target, 1, links, ino);
	free(target);
	return rc;
}

static int walk(osdfs *fs, uint64_t start, const char *path, int follow, int *links,
		uint64_t *out)
{
	uint64_t cur = *path == '/' ? OSDFS_ROOT_INO : start;
	const char *p = path;
	int rc;

	for (;;) {
		const char *e, *rest;
		uint64_t child;
		size_t len;
		int last;

		while (*p == '/')
			p++;
		if (!*p)
			break;
		e = strchrnul(p, '/');
		len = (size_t)(e - p);
		if (len > OSDFS_NAME_MAX)
			return -ENAMETOOLONG;
		for (rest = e; *rest == '/'; rest++)
			;
		last = !*rest;
		rc = step(fs, cur, p, len, &child);
		if (rc < 0)
			return rc;
		if (!last || follow || *e == '/') {
			rc = follow_link(fs, cur, &child, links);
			if (rc < 0)
				return rc;
		}
		if (last && *e == '/') {
			struct osdfs__inode *ip;

			if ((rc = osdfs__iget(fs, child, &ip)) < 0)
				return rc;
			rc = OSDFS__IS_DIR(ip) ? 0 : -ENOTDIR;
			osdfs__iput(fs, ip);
			if (rc < 0)
				return rc;
		}
		cur = child;
		p = e;
	}
	*out = cur;
	return 0;
}

static int resolve_locked(osdfs *fs, const char *path, int follow, uint64_t *ino)
{
	int links = 0;

	if (!path)
		return -EINVAL;
	if (strnlen(path, OSDFS_PATH_MAX) >= OSDFS_PATH_MAX)
		return -ENAMETOOLONG;
	return walk(fs, OSDFS_ROOT_INO, path, follow, &links, ino);
}

int osdfs_resolve(osdfs *fs, const char *path, int follow, uint64_t *ino)
{
	int rc;

	osdfs__begin();
	pthread_rwlock_rdlock(&fs->lock);
	rc = resolve_locked(fs, path, follow, ino);
	pthread_rwlock_unlock(&fs->lock);
	return osdfs__end(fs, rc, "resolve");
}

int osdfs_stat_path(osdfs *fs, const char *path, int follow, struct osdfs_stat *out)
{
	uint64_t ino;
	int rc = osdfs_resolve(fs, path, follow, &ino);

	return rc < 0 ? rc : osdfs_getattr(fs, ino, out);
}

int osdfs_resolve_parent(osdfs *fs, const char *path, uint64_t *parent, char *name,
			 size_t size)
{
	char *copy, *slash, *base;
	size_t len;
	int rc;

	osdfs__begin();
	if (!path)
		return osdfs__end(fs, -EINVAL, "resolve");
	len = strnlen(path, OSDFS_PATH_MAX);
	if (len >= OSDFS_PATH_MAX)
		return osdfs__end(fs, -ENAMETOOLONG, "resolve");
	copy = strdup(path);
	if (!copy)
		return -ENOMEM;
	while (len > 1 && copy[len - 1] == '/')
		copy[--len] = '\0';
	slash = strrchr(copy, '/');
	base = slash ? slash + 1 : copy;
	if (!*base)
		rc = -EINVAL;
	else if (strlen(base) > OSDFS_NAME_MAX)
		rc = -ENAMETOOLONG;
	else if (strlen(base) >= size)
		rc = -ERANGE;
	else {
		strcpy(name, base);
		if (slash == copy)
			slash[1] = '\0';
		else if (slash)
			*slash = '\0';
		else
			copy[0] = '\0';
		rc = osdfs_resolve(fs, copy, 1, parent);
		if (rc == 0) {
			struct osdfs_stat st;

			rc = osdfs_getattr(fs, *parent, &st);
			if (rc == 0 && !S_ISDIR(st.mode))
				rc = -ENOTDIR;
		}
	}
	free(copy);
	return osdfs__end(fs, rc, "resolve");
}
