/*
 * The orphan list: inodes whose last link went away while they were still
 * open. They are recorded in the superblock object so that, should the
 * filesystem not be unmounted cleanly, the next read-write mount frees them
 * instead of leaking their objects. Recording is best effort: a list that
 * cannot be written (or is full) only leaves the object for fsck.
 *
 * Encoding (page 0x10000, number 4): u8 version (1), 7 reserved bytes,
 * u64 count, then count u64 inode numbers.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/fs.h"
#include "lebytes.h"

#define ORPHAN_HDR 16u
#define ORPHAN_MAX ((0xFFFEu - ORPHAN_HDR) / 8u)

static int orphan_write(osdfs *fs)
{
	size_t len = fs->norphans ? ORPHAN_HDR + 8 * fs->norphans : 0;
	uint8_t *buf = calloc(1, len ? len : 1);
	struct osdfs_attr a = { OSDFS__PAGE_SUPER, OSDFS__ATTR_ORPHANS, buf, (uint32_t)len };
	int rc;

	if (!buf)
		return -ENOMEM;
	if (len) {
		buf[0] = 1;
		osdfs__put_le64(buf + 8, fs->norphans);
		for (size_t i = 0; i < fs->norphans; i++)
			osdfs__put_le64(buf + ORPHAN_HDR + 8 * i, fs->orphans[i]);
	}
	rc = fs->ops->set_attrs(fs->impl, OSDFS__SUPER_OID, &a, 1);
	free(buf);
	return rc;
}

void osdfs__orphan_add(osdfs *fs, uint64_t ino)
{
	uint64_t *v;

	if (fs->norphans >= ORPHAN_MAX)
		return;
	v = realloc(fs->orphans, (fs->norphans + 1) * sizeof(*v));
	if (!v)
		return;
	fs->orphans = v;
	fs->orphans[fs->norphans++] = ino;
	if (orphan_write(fs) < 0)
		fs->norphans--;
}

void osdfs__orphan_remove(osdfs *fs, uint64_t ino)
{
	for (size_t i = 0; i < fs->norphans; i++) {
		if (fs->orphans[i] != ino)
			continue;
		fs->orphans[i] = fs->orphans[--fs->norphans];
		orphan_write(fs);
		return;
	}
}

/* Frees the inodes a previous mount left orphaned (read-write mount). */
int osdfs__orphan_recover(osdfs *fs)
{
	uint8_t *buf = malloc(0xFFFE);
	struct osdfs_attr a = { OSDFS__PAGE_SUPER, OSDFS__ATTR_ORPHANS, buf, 0xFFFE };
	uint64_t n;
	int rc;

	if (!buf)
		return -ENOMEM;
	rc = fs->ops->get_attrs(fs->impl, OSDFS__SUPER_OID, &a, 1);
	if (rc < 0 || a.len == 0) {
		free(buf);
		return rc;
	}
	n = a.len >= ORPHAN_HDR && buf[0] == 1 ? osdfs__get_le64(buf + 8) : UINT64_MAX;
	if (n > (a.len - ORPHAN_HDR) / 8 || a.len > 0xFFFE)
		n = 0; /* malformed: drop the list, fsck finds the objects */
	for (uint64_t i = 0; i < n; i++) {
		struct osdfs__inode *ip;

		if (osdfs__iget(fs, osdfs__get_le64(buf + ORPHAN_HDR + 8 * i), &ip) < 0)
			continue;
		if (ip->d.nlink == 0 && !OSDFS__IS_DIR(ip))
			osdfs__ifree(fs, ip);
		osdfs__iput(fs, ip);
	}
	free(buf);
	fs->norphans = 0;
	return orphan_write(fs);
}
