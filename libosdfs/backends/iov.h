/*
 * iovec helpers shared by the backends (internal).
 */
#ifndef OSDFS_BACKENDS_IOV_H
#define OSDFS_BACKENDS_IOV_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/uio.h>

/* Sum of the iovec lengths: 0, or -EINVAL for a negative count, a NULL
 * array or base with bytes, or a sum beyond SSIZE_MAX. */
int osdfs__iov_total(const struct iovec *iov, int iovcnt, size_t *total);

/* A position in an iovec array; start with { iov, iovcnt, 0, 0 }. */
struct osdfs__iov_cursor {
	const struct iovec *iov;
	int cnt;
	int i;
	size_t off;
};

/* Copy @n bytes between the cursor and @buf: into the iovecs when @to_iov
 * (zeros when @buf is NULL), out of them otherwise; advances the cursor. */
void osdfs__iov_copy(struct osdfs__iov_cursor *c, void *buf, size_t n, bool to_iov);

#endif
