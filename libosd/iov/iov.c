/* iovec byte ranges (iov.h). */
#include "iov/iov.h"

#include <stdint.h>
#include <string.h>

size_t osd__iov_read(const struct iovec *iov, int cnt, size_t off, void *dst, size_t len)
{
	size_t done = 0;

	for (int i = 0; i < cnt && done < len; i++) {
		size_t l = iov[i].iov_len;

		if (off >= l) {
			off -= l;
			continue;
		}
		size_t n = l - off < len - done ? l - off : len - done;

		memcpy((uint8_t *)dst + done, (const uint8_t *)iov[i].iov_base + off, n);
		done += n;
		off = 0;
	}
	return done;
}

size_t osd__iov_write(const struct iovec *iov, int cnt, size_t off, const void *src, size_t len)
{
	size_t done = 0;

	for (int i = 0; i < cnt && done < len; i++) {
		size_t l = iov[i].iov_len;

		if (off >= l) {
			off -= l;
			continue;
		}
		size_t n = l - off < len - done ? l - off : len - done;
		uint8_t *d = (uint8_t *)iov[i].iov_base + off;

		if (src)
			memcpy(d, (const uint8_t *)src + done, n);
		else
			memset(d, 0, n);
		done += n;
		off = 0;
	}
	return done;
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
