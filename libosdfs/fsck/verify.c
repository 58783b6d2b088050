/*
 * Data verification (osdfs_fsck_options.verify_data): every byte of every
 * regular file is read through the backend, so a data checksum mismatch on
 * a target (MEDIUM ERROR, -EIO) or a component a layout cannot rebuild is
 * reported with the file's path. On a layout a read that succeeds from
 * redundancy is not a finding: the layout repairs and counts it itself.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>

#include "fsck/fsck_state.h"

#define VERIFY_CHUNK (1u << 20)

/* "/dir/name" of a file from the first kept entry naming it, or "#ino". */
static const char *file_path(struct fsck *f, const struct fsck_inode *ip, char *buf,
			     size_t size)
{
	for (size_t i = 0; i < f->ninodes; i++) {
		const struct fsck_inode *dp = &f->inodes[i];

		for (size_t j = 0; j < fsck_nents(dp); j++) {
			const struct fsck_entry *e = &dp->dir->ents[j];
			size_t n;

			if (e->ino != ip->ino || e->drop)
				continue;
			osdfs__fsck_dir_path(f, dp, buf, size);
			n = strlen(buf);
			snprintf(buf + n, size - n, "%s%s", n == 1 ? "" : "/",
				 fsck_ent_name(dp->dir, e));
			return buf;
		}
	}
	snprintf(buf, size, "#%llu", (unsigned long long)ip->ino);
	return buf;
}

static void verify_file(struct fsck *f, const struct fsck_inode *ip, uint8_t *buf)
{
	uint64_t size = ip->d.size < ip->objlen ? ip->d.size : ip->objlen;
	char path[512];

	for (uint64_t off = 0; off < size; off += VERIFY_CHUNK) {
		size_t len = size - off < VERIFY_CHUNK ? (size_t)(size - off) : VERIFY_CHUNK;
		struct iovec iov = { buf, len };
		ssize_t n = f->ops->read(f->impl, OSDFS__OID_BASE + ip->ino, off, &iov, 1);

		if (n >= 0) {
			f->rep->data_bytes += (uint64_t)n;
			continue;
		}
		f->data_bad++;
		osdfs__fsck_finding(f, OSDFS_FSCK_DATA_IO, "%s (inode %llu): %s reading bytes %llu-%llu",
			      file_path(f, ip, path, sizeof(path)), (unsigned long long)ip->ino,
			      strerror((int)-n), (unsigned long long)off,
			      (unsigned long long)(off + len - 1));
	}
}

int osdfs__fsck_verify_data(struct fsck *f)
{
	uint8_t *buf = malloc(VERIFY_CHUNK);

	if (!buf)
		return -ENOMEM;
	for (size_t i = 0; i < f->ninodes; i++) {
		const struct fsck_inode *ip = &f->inodes[i];

		if (!ip->bad && !ip->remove && S_ISREG(ip->d.mode))
			verify_file(f, ip, buf);
	}
	free(buf);
	return 0;
}
