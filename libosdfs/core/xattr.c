/*
 * Extended attributes: all of an inode's attributes are encoded in one
 * attribute (page OSDFS__PAGE_XATTR) of its object, rewritten together
 * with the inode (new ctime) in one backend operation.
 *
 * Encoding: u8 version (1), u8 reserved, u16 count, then per attribute
 * u8 name length, u8 reserved, u16 value length, name, value.
 *
 * Virtual attributes are computed, not kept in the blob, and not listed:
 * "osdfs.layout" is a regular file's data map on the layout backend
 * (docs/layout.md).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <osdfs/layout.h>

#include "core/fs.h"
#include "lebytes.h"

#define XBUF_MAX OSDFS_XATTR_TOTAL_MAX

struct xblob {
	uint8_t *buf;
	size_t len;
};

static int xload(osdfs *fs, struct osdfs__inode *ip, struct xblob *x)
{
	struct osdfs_attr a = { OSDFS__PAGE_XATTR, OSDFS__ATTR_XATTR, NULL, XBUF_MAX + 1 };
	int rc;

	x->buf = malloc(XBUF_MAX + 1);
	if (!x->buf)
		return -ENOMEM;
	a.value = x->buf;
	rc = fs->ops->get_attrs(fs->impl, OSDFS__OID_BASE + ip->ino, &a, 1);
	if (rc < 0)
		return osdfs__fail(fs, rc, "reading xattrs of inode %llu: %s",
				   (unsigned long long)ip->ino, strerror(-rc));
	x->len = a.len;
	if (x->len == 0) {
		x->buf[0] = 1;
		x->buf[1] = x->buf[2] = x->buf[3] = 0;
		x->len = 4;
		return 0;
	}
	if (osdfs__xattr_check(x->buf, x->len) < 0)
		return osdfs__fail(fs, -EUCLEAN, "xattrs of inode %llu are corrupt",
				   (unsigned long long)ip->ino);
	return 0;
}

int osdfs__xattr_check(const uint8_t *buf, size_t len)
{
	size_t off = 4;
	uint16_t count;

	if (len < 4 || len > XBUF_MAX || buf[0] != 1)
		return -EUCLEAN;
	count = osdfs__get_le16(buf + 2);
	for (uint16_t i = 0; i < count; i++) {
		if (len - off < 4)
			return -EUCLEAN;
		size_t nl = buf[off], vl = osdfs__get_le16(buf + off + 2);

		if (nl == 0 || len - off - 4 < nl + vl || memchr(buf + off + 4, 0, nl))
			return -EUCLEAN;
		off += 4 + nl + vl;
	}
	return off == len ? 0 : -EUCLEAN;
}

/* Offset of the entry called name, or -1. */
static long xfind(const struct xblob *x, const char *name, size_t nl)
{
	size_t off = 4;
	uint16_t count = osdfs__get_le16(x->buf + 2);

	for (uint16_t i = 0; i < count; i++) {
		size_t l = x->buf[off], vl = osdfs__get_le16(x->buf + off + 2);

		if (l == nl && memcmp(x->buf + off + 4, name, nl) == 0)
			return (long)off;
		off += 4 + l + vl;
	}
	return -1;
}

static int name_check(const char *name, size_t *nl)
{
	if (!name || !*name)
		return -ERANGE;
	*nl = strnlen(name, 256);
	return *nl > 255 ? -ERANGE : 0;
}

#define LAYOUT_XATTR "osdfs.layout"
#define LAYOUT_TEXT_MAX 128

static int is_virtual(const char *name)
{
	return strcmp(name, LAYOUT_XATTR) == 0;
}

/* The inode of a regular file, under fs->lock held by the caller. */
static int reg_iget(osdfs *fs, uint64_t ino, struct osdfs__inode **ip, int notreg)
{
	int rc = osdfs__iget(fs, ino, ip);

	if (rc == 0 && !S_ISREG((*ip)->d.mode)) {
		osdfs__iput(fs, *ip);
		rc = notreg;
	}
	return rc;
}

/* getxattr osdfs.layout: the map's text (osdfs_data_map_format()), no NUL. */
static ssize_t layout_get(osdfs *fs, uint64_t ino, void *value, size_t size)
{
	struct osdfs__inode *ip;
	struct osdfs_data_map m;
	char text[LAYOUT_TEXT_MAX];
	int rc, n;

	if (!osdfs_backend_is_layout(fs->be))
		return -ENODATA;
	pthread_rwlock_rdlock(&fs->lock);
	rc = reg_iget(fs, ino, &ip, -ENODATA);
	if (rc == 0) {
		rc = osdfs_layout_file_map(fs->be, OSDFS__OID_BASE + ino, &m);
		osdfs__iput(fs, ip);
	}
	pthread_rwlock_unlock(&fs->lock);
	n = rc < 0 ? rc : osdfs_data_map_format(&m, text, sizeof(text));
	if (n < 0 || size == 0)
		return n;
	if (size < (size_t)n)
		return -ERANGE;
	memcpy(value, text, (size_t)n);
	return n;
}

/* setxattr osdfs.layout: re-lay an empty regular file out with the map
 * the value names (osdfs_data_map_parse() text, a trailing NUL allowed). */
static int layout_set(osdfs *fs, uint64_t ino, const void *value, size_t size)
{
	uint8_t ibuf[OSDFS__INODE_MAX_LEN];
	struct osdfs__inode *ip;
	struct osdfs_data_map m;
	struct osdfs_attr a;
	char text[LAYOUT_TEXT_MAX], why[128];
	int rc;

	if (!osdfs_backend_is_layout(fs->be))
		return -EOPNOTSUPP;
	if (size >= sizeof(text) || (size && !value))
		return osdfs__fail(fs, -EINVAL, "%s: value too long", LAYOUT_XATTR);
	memcpy(text, value, size);
	text[size] = '\0';
	if (osdfs_data_map_parse(&m, text, why, sizeof(why)) < 0)
		return osdfs__fail(fs, -EINVAL, "%s: %s", LAYOUT_XATTR, why);
	if (fs->readonly)
		return -EROFS;
	pthread_rwlock_wrlock(&fs->lock);
	rc = reg_iget(fs, ino, &ip, -EINVAL);
	if (rc == 0) {
		if (ip->d.size != 0) {
			rc = osdfs__fail(fs, -EBUSY, "%s: inode %llu is not empty", LAYOUT_XATTR,
					 (unsigned long long)ino);
		} else {
			osdfs__now(&ip->d.ctime);
			osdfs__inode_attr(ip, &a, ibuf);
			rc = osdfs_layout_set_file_map(fs->be, OSDFS__OID_BASE + ino, &m, &a, 1);
			ip->dirty = rc < 0;
		}
		osdfs__iput(fs, ip);
	}
	pthread_rwlock_unlock(&fs->lock);
	return rc;
}

ssize_t osdfs_getxattr(osdfs *fs, uint64_t ino, const char *name, void *value, size_t size)
{
	struct osdfs__inode *ip;
	struct xblob x = { NULL, 0 };
	ssize_t rc;
	size_t nl;
	long off;

	osdfs__begin();
	if ((rc = name_check(name, &nl)) < 0)
		return osdfs__end(fs, (int)rc, "getxattr");
	if (is_virtual(name)) {
		rc = layout_get(fs, ino, value, size);
		return rc < 0 ? osdfs__end(fs, (int)rc, "getxattr") : rc;
	}
	pthread_rwlock_rdlock(&fs->lock);
	rc = osdfs__iget(fs, ino, &ip);
	if (rc == 0) {
		rc = xload(fs, ip, &x);
		osdfs__iput(fs, ip);
	}
	pthread_rwlock_unlock(&fs->lock);
	if (rc == 0) {
		off = xfind(&x, name, nl);
		if (off < 0) {
			rc = -ENODATA;
		} else {
			size_t vl = osdfs__get_le16(x.buf + off + 2);

			rc = (ssize_t)vl;
			if (size > 0 && size < vl)
				rc = -ERANGE;
			else if (size > 0)
				memcpy(value, x.buf + off + 4 + nl, vl);
		}
	}
	free(x.buf);
	return rc < 0 ? osdfs__end(fs, (int)rc, "getxattr") : rc;
}

ssize_t osdfs_listxattr(osdfs *fs, uint64_t ino, char *list, size_t size)
{
	struct osdfs__inode *ip;
	struct xblob x = { NULL, 0 };
	ssize_t rc;

	osdfs__begin();
	pthread_rwlock_rdlock(&fs->lock);
	rc = osdfs__iget(fs, ino, &ip);
	if (rc == 0) {
		rc = xload(fs, ip, &x);
		osdfs__iput(fs, ip);
	}
	pthread_rwlock_unlock(&fs->lock);
	if (rc == 0) {
		size_t off = 4, total = 0;
		uint16_t count = osdfs__get_le16(x.buf + 2);

		for (uint16_t i = 0; i < count; i++) {
			size_t nl = x.buf[off], vl = osdfs__get_le16(x.buf + off + 2);

			if (size > 0 && total + nl + 1 <= size) {
				memcpy(list + total, x.buf + off + 4, nl);
				list[total + nl] = '\0';
			}
			total += nl + 1;
			off += 4 + nl + vl;
		}
		rc = size > 0 && total > size ? -ERANGE : (ssize_t)total;
	}
	free(x.buf);
	return rc < 0 ? osdfs__end(fs, (int)rc, "listxattr") : rc;
}

/* Rewrites the blob: removes `name` if present, then appends value if set. */
static int xchange(osdfs *fs, struct osdfs__inode *ip, struct xblob *x, const char *name,
		   size_t nl, const void *value, size_t vl, int set)
{
	uint8_t ibuf[OSDFS__INODE_MAX_LEN];
	struct osdfs_attr a[2];
	long off = xfind(x, name, nl);
	uint16_t count = osdfs__get_le16(x->buf + 2);
	int rc;

	if (off >= 0) {
		size_t el = 4 + x->buf[off] + osdfs__get_le16(x->buf + off + 2);

		memmove(x->buf + off, x->buf + off + el, x->len - (size_t)off - el);
		x->len -= el;
		count--;
	}
	if (set) {
		if (vl > UINT16_MAX || x->len + 4 + nl + vl > XBUF_MAX || count == UINT16_MAX)
			return osdfs__fail(fs, -ENOSPC, "no room for xattr '%s'", name);
		x->buf[x->len] = (uint8_t)nl;
		x->buf[x->len + 1] = 0;
		osdfs__put_le16(x->buf + x->len + 2, (uint16_t)vl);
		memcpy(x->buf + x->len + 4, name, nl);
		if (vl)
			memcpy(x->buf + x->len + 4 + nl, value, vl);
		x->len += 4 + nl + vl;
		count++;
	}
	osdfs__put_le16(x->buf + 2, count);
	a[0] = (struct osdfs_attr){ OSDFS__PAGE_XATTR, OSDFS__ATTR_XATTR, x->buf,
				    count ? (uint32_t)x->len : 0 };
	osdfs__now(&ip->d.ctime);
	osdfs__inode_attr(ip, &a[1], ibuf);
	rc = fs->ops->set_attrs(fs->impl, OSDFS__OID_BASE + ip->ino, a, 2);
	if (rc < 0)
		return osdfs__fail(fs, rc, "writing xattrs of inode %llu: %s",
				   (unsigned long long)ip->ino, strerror(-rc));
	ip->dirty = 0;
	return 0;
}

static int xupdate(osdfs *fs, uint64_t ino, const char *name, const void *value,
		   size_t size, int flags, int set)
{
	struct osdfs__inode *ip;
	struct xblob x = { NULL, 0 };
	size_t nl;
	int rc;

	if ((rc = name_check(name, &nl)) < 0)
		return rc;
	if (flags & ~(OSDFS_XATTR_CREATE | OSDFS_XATTR_REPLACE))
		return -EINVAL;
	if (is_virtual(name))	/* a file always has a map: set only, flags ignored */
		return set ? layout_set(fs, ino, value, size) : -EOPNOTSUPP;
	if (fs->readonly)
		return -EROFS;
	pthread_rwlock_wrlock(&fs->lock);
	rc = osdfs__iget(fs, ino, &ip);
	if (rc == 0) {
		rc = xload(fs, ip, &x);
		if (rc == 0) {
			int exists = xfind(&x, name, nl) >= 0;

			if (set && exists && (flags & OSDFS_XATTR_CREATE))
				rc = -EEXIST;
			else if (!exists && (!set || (flags & OSDFS_XATTR_REPLACE)))
				rc = -ENODATA;
			else
				rc = xchange(fs, ip, &x, name, nl, value, size, set);
		}
		osdfs__iput(fs, ip);
	}
	pthread_rwlock_unlock(&fs->lock);
	free(x.buf);
	return rc;
}

int osdfs_setxattr(osdfs *fs, uint64_t ino, const char *name, const void *value, size_t size,
		   int flags)
{
	osdfs__begin();
	return osdfs__end(fs, xupdate(fs, ino, name, value, size, flags, 1), "setxattr");
}

int osdfs_removexattr(osdfs *fs, uint64_t ino, const char *name)
{
	osdfs__begin();
	return osdfs__end(fs, xupdate(fs, ino, name, NULL, 0, 0, 0), "removexattr");
}
