/*
 * Hole punching on any backend: the backend's PUNCH where it deallocates as
 * standard (the PUNCH clause of osd2r03: the range reads as zeros, the
 * logical length stays), zero-filling WRITEs where it does not. Which one a
 * filesystem uses is decided once, by a probe at mkfs, and recorded in the
 * superblock (OSDFS__RO_COMPAT_PUNCH_ZEROES, docs/osdfs-format.md).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "backends/create.h"
#include "core/fs.h"

#define ZERO_CHUNK (64u << 10) /* bytes of the shared zero buffer */
#define ZERO_IOVS 16           /* ... times this many per WRITE */
#define PROBE_PIECE 4096u      /* the probe object: three pieces A, B, C */

static const unsigned char zeros[ZERO_CHUNK];

/* Write zeros over [off, off + len) of @p oid, 1 MiB per WRITE; past the
 * object's length it already reads as zeros, and stays unallocated. */
static int zero_fill(osdfs *fs, uint64_t oid, uint64_t off, uint64_t len)
{
	struct iovec iov[ZERO_IOVS];
	uint64_t size;
	int rc = fs->ops->size(fs->impl, oid, &size);

	if (rc < 0)
		return rc;
	if (off >= size)
		return 0;
	if (len > size - off)
		len = size - off;

	while (len) {
		uint64_t n = len < (uint64_t)ZERO_IOVS * ZERO_CHUNK ? len
								    : (uint64_t)ZERO_IOVS * ZERO_CHUNK;
		int cnt = 0;
		ssize_t w;

		for (uint64_t left = n; left; cnt++) {
			iov[cnt].iov_base = (void *)zeros; /* only read by write */
			iov[cnt].iov_len = left < ZERO_CHUNK ? (size_t)left : ZERO_CHUNK;
			left -= iov[cnt].iov_len;
		}
		w = fs->ops->write(fs->impl, oid, off, iov, cnt, NULL, 0);
		if (w < 0)
			return (int)w;
		off += n;
		len -= n;
	}
	return 0;
}

int osdfs__punch(osdfs *fs, uint64_t oid, uint64_t off, uint64_t len)
{
	int rc;

	if (fs->sb.ro_compat & OSDFS__RO_COMPAT_PUNCH_ZEROES)
		return zero_fill(fs, oid, off, len);
	rc = fs->ops->punch(fs->impl, oid, off, len);
	/* A filesystem made before the probe existed, on a target without
	 * PUNCH: zeros are as durable, only slower. */
	return rc == -EOPNOTSUPP ? zero_fill(fs, oid, off, len) : rc;
}

/* Whether the probe object reads back A, zeros, C at its full length. */
static int probe_intact(const unsigned char *buf, ssize_t got)
{
	if (got != 3 * (ssize_t)PROBE_PIECE)
		return 0;
	for (size_t i = 0; i < PROBE_PIECE; i++)
		if (buf[i] != 'A' || buf[PROBE_PIECE + i] || buf[2 * PROBE_PIECE + i] != 'C')
			return 0;
	return 1;
}

static int probe_on(osdfs *fs, uint64_t oid, unsigned char *buf)
{
	struct iovec iov = { buf, 3 * PROBE_PIECE };
	ssize_t n;
	int rc;

	memset(buf, 'A', PROBE_PIECE);
	memset(buf + PROBE_PIECE, 'B', PROBE_PIECE);
	memset(buf + 2 * PROBE_PIECE, 'C', PROBE_PIECE);
	n = fs->ops->write(fs->impl, oid, 0, &iov, 1, NULL, 0);
	if (n < 0)
		return (int)n;
	rc = fs->ops->punch(fs->impl, oid, PROBE_PIECE, PROBE_PIECE);
	if (rc == -EOPNOTSUPP)
		return 0;
	if (rc < 0)
		return rc;
	memset(buf, 0xEE, 3 * PROBE_PIECE);
	n = fs->ops->read(fs->impl, oid, 0, &iov, 1);
	if (n < 0)
		return (int)n;
	return probe_intact(buf, n);
}

int osdfs__punch_probe(osdfs *fs, uint64_t scratch_oid)
{
	unsigned char *buf = malloc(3 * PROBE_PIECE);
	int rc, r;

	if (!buf)
		return -ENOMEM;
	/* file data is what gets punched */
	rc = osdfs__create(fs->ops, fs->impl, scratch_oid, OSDFS_OBJ_DATA, NULL, 0);
	if (rc == 0) {
		rc = probe_on(fs, scratch_oid, buf);
		r = fs->ops->remove(fs->impl, scratch_oid);
		rc = rc < 0 ? rc : r < 0 ? r : rc;
	}
	free(buf);
	return rc;
}
