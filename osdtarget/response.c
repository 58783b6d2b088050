/* Data-in, status and sense of a command exchange. */
#include "response.h"

#include <string.h>

static void extend_xferred(struct osd_xfer *x, size_t end)
{
	if (end > x->in_len)
		end = x->in_len;
	if (end > x->in_xferred)
		x->in_xferred = end;
}

void osd__resp_data(struct osd_xfer *x, size_t off, const void *buf, size_t len)
{
	if (off >= x->in_len || !len)
		return;
	if (len > x->in_len - off)
		len = x->in_len - off;
	osd__iov_write(x->in_iov, x->in_iovcnt, off, buf, len);
	extend_xferred(x, off + len);
}

void osd__resp_zero(struct osd_xfer *x, size_t from, size_t to)
{
	if (to > from)
		osd__resp_data(x, from, NULL, to - from);
}

void osd__resp_good(struct osd_xfer *x)
{
	x->status = OSD_STATUS_GOOD;
	x->sense_len = 0;
}

int osd__resp_sense(struct osd_xfer *x, const struct osd_sense *s)
{
	int n = osd_sense_encode(s, x->sense, sizeof(x->sense));

	if (n < 0) {
		/* Too many descriptors: fall back to the bare header, never lose the key. */
		struct osd_sense bare = { .response_code = 0x72, .key = s->key, .asc = s->asc };

		n = osd_sense_encode(&bare, x->sense, sizeof(x->sense));
		if (n < 0)
			n = 0;
	}
	x->sense_len = (uint8_t)n;
	x->status = OSD_STATUS_CHECK_CONDITION;
	return 0;
}

int osd__resp_error(struct osd_xfer *x, uint8_t key, uint16_t asc, int field)
{
	struct osd_sense s = { .response_code = 0x72, .key = key, .asc = asc };

	if (field >= 0) {
		s.has_field = 1;
		s.field_in_cdb = 1;
		s.field_pointer = (uint16_t)field;
	}
	return osd__resp_sense(x, &s);
}
