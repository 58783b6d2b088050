/* iovec byte ranges (iov.h). */
#include "iov/iov.h"

#include <stdint.h>
#include <string.h>

/* Copy between @p buf and bytes [off, off + len) of @p iov: into the iovecs
 * when @p to_iov (zeros when @p buf is NULL), out of them otherwise. */
static size_t iov_copy(const struct iovec *iov, int cnt, size_t off, uint8_t *buf, size_t len,
		       int to_iov)
{
	size_t done = 0;

	for (int i = 0; i < cnt && done < len; i++) {
		size_t l = iov[i].iov_len;

		if (off >= l) {
			off -= l;
			continue;
		}
		size_t n = l - off < len - done ? l - off : len - done;
		uint8_t *p = (uint8_t *)iov[i].iov_base + off;

		if (!to_iov)
			memcpy(buf + done, p, n);
		else if (buf)
			memcpy(p, buf + done, n);
		else
			memset(p, 0, n);
		done += n;
		off = 0;
	}
	return done;
}

size_t osd__iov_read(const struct iovec *iov, int cnt, size_t off, void *dst, size_t len)
{
	return iov_copy(iov, cnt, off, dst, len, 0);
}

size_t osd__iov_write(const struct iovec *iov, int cnt, size_t off, const void *src, size_t len)
{
	/* iov_copy() only reads @p buf when copying into the iovecs */
	return iov_copy(iov, cnt, off, (uint8_t *)(uintptr_t)src, len, 1);
}

int osd__iov_slice(const struct iovec *iov, int cnt, size_t off, size_t len,
		   struct iovec *out, int max, size_t *got)
{
	int n = 0;
	size_t done = 0;

	for (int i = 0; i < cnt && done < len && n < max; i++) {
		size_t l = iov[i].iov_len;

		if (off >= l) {
			off -= l;
			continue;
		}
		size_t take = l - off < len - done ? l - off : len - done;

		out[n].iov_base = (uint8_t *)iov[i].iov_base + off;
		out[n].iov_len = take;
		n++;
		done += take;
		off = 0;
	}
	if (got)
		*got = done;
	return n;
}
