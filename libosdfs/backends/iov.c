/* iovec helpers shared by the backends (see iov.h). */
#include <errno.h>
#include <limits.h>
#include <string.h>

#include "backends/iov.h"

int osdfs__iov_total(const struct iovec *iov, int iovcnt, size_t *total)
{
	size_t sum = 0;

	if (iovcnt < 0 || (iovcnt > 0 && !iov))
		return -EINVAL;
	for (int i = 0; i < iovcnt; i++) {
		if (iov[i].iov_len && !iov[i].iov_base)
			return -EINVAL;
		if (iov[i].iov_len > (size_t)SSIZE_MAX - sum)
			return -EINVAL;
		sum += iov[i].iov_len;
	}
	*total = sum;
	return 0;
}

void osdfs__iov_copy(struct osdfs__iov_cursor *c, void *buf, size_t n, bool to_iov)
{
	unsigned char *p = buf;

	while (n && c->i < c->cnt) {
		size_t room = c->iov[c->i].iov_len - c->off;
		size_t take = room < n ? room : n;
		unsigned char *base = (unsigned char *)c->iov[c->i].iov_base + c->off;

		if (to_iov && p)
			memcpy(base, p, take);
		else if (to_iov)
			memset(base, 0, take);
		else
			memcpy(p, base, take);
		if (p)
			p += take;
		n -= take;
		c->off += take;
		if (c->off == c->iov[c->i].iov_len) {
			c->i++;
			c->off = 0;
		}
	}
}
