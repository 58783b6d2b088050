/* Reading data-out: attribute lists, values and the CDB continuation segment. */
#include "exec/exec.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "proto/byteorder.h"
#include "response.h"

#define CONT_HEADER_LEN 40
#define CONT_DESC_HEADER 8
#define CONT_FORMAT 0x01
#define CONT_DESC_END 0x0000
#define CONT_DESC_SG 0x0001
#define CONT_DESC_QUERY 0x0002
#define SG_ENTRY_LEN 16

int osd__dout_copy(struct osd__cmd *c, uint64_t off, size_t len, uint8_t **out)
{
	const struct osd_xfer *x = c->x;

	*out = NULL;
	if (off == OSD_OFFSET_NONE || off > x->out_len || len > x->out_len - off)
		return osd__fail(c, OSD_SK_ILLEGAL_REQUEST, OSD_ASC_PARAM_LIST_LENGTH_ERROR);
	uint8_t *buf = malloc(len ? len : 1);

	if (!buf)
		return osd__fail(c, OSD_SK_HARDWARE_ERROR, OSD_ASC_SYSTEM_RESOURCE_FAILURE);
	if (osd__iov_read(x->out_iov, x->out_iovcnt, (size_t)off, buf, len) != len) {
		free(buf);
		return osd__fail(c, OSD_SK_ILLEGAL_REQUEST, OSD_ASC_PARAM_LIST_LENGTH_ERROR);
	}
	*out = buf;
	return 0;
}

static int bad_segment(struct osd__cmd *c)
{
	return osd__fail(c, OSD_SK_ILLEGAL_REQUEST, OSD_ASC_INVALID_FIELD_IN_PARAM_LIST);
}

static int take_sg(struct osd__cmd *c, const uint8_t *p, size_t len, uint8_t pad)
{
	if (c->sg || pad || len % SG_ENTRY_LEN || !len)
		return bad_segment(c);
	c->nsg = len / SG_ENTRY_LEN;
	c->sg = calloc(c->nsg, sizeof(*c->sg));
	if (!c->sg)
		return osd__fail(c, OSD_SK_HARDWARE_ERROR, OSD_ASC_SYSTEM_RESOURCE_FAILURE);
	uint64_t total = 0;

	for (size_t i = 0; i < c->nsg; i++) {
		c->sg[i].offset = osd__get_be64(p + i * SG_ENTRY_LEN);
		c->sg[i].length = osd__get_be64(p + i * SG_ENTRY_LEN + 8);
		if (c->sg[i].length > UINT64_MAX - total ||
		    c->sg[i].length > UINT64_MAX - c->sg[i].offset)
			return bad_segment(c);
		total += c->sg[i].length;
	}
	/* The CDB LENGTH is the sum of the extents. */
	if (total != c->cdb.length)
		return osd__fail_field(c, OSD_ASC_INVALID_FIELD_IN_CDB, osd__fp_length(c));
	return 0;
}

static int take_query(struct osd__cmd *c, const uint8_t *p, size_t len, uint8_t pad)
{
	if (c->query || pad || len < 4)
		return bad_segment(c);
	c->query = malloc(len);
	if (!c->query)
		return osd__fail(c, OSD_SK_HARDWARE_ERROR, OSD_ASC_SYSTEM_RESOURCE_FAILURE);
	memcpy(c->query, p, len);
	c->query_len = len;
	return 0;
}

static int parse_descriptors(struct osd__cmd *c, const uint8_t *seg, size_t len)
{
	size_t pos = CONT_HEADER_LEN;

	while (pos + CONT_DESC_HEADER <= len) {
		uint16_t type = osd__get_be16(seg + pos);
		uint8_t pad = seg[pos + 3] & 0x7;
		uint32_t dlen = osd__get_be32(seg + pos + 4);
		const uint8_t *body = seg + pos + CONT_DESC_HEADER;
		int rc;

		if (type == CONT_DESC_END)
			return 0;
		if (dlen > len - pos - CONT_DESC_HEADER ||
		    pad > len - pos - CONT_DESC_HEADER - dlen || (dlen + pad) % 8)
			return bad_segment(c);
		if (type == CONT_DESC_SG && c->cdb.action != OSD_ACT_QUERY)
			rc = take_sg(c, body, dlen, pad);
		else if (type == CONT_DESC_QUERY && c->cdb.action == OSD_ACT_QUERY)
			rc = take_query(c, body, dlen, pad);
		else
			rc = bad_segment(c);
		if (rc)
			return rc;
		pos += CONT_DESC_HEADER + dlen + pad;
	}
	return 0;
}

int osd__parse_continuation(struct osd__cmd *c)
{
	uint32_t len = c->cdb.cont_length;
	uint8_t *seg;
	int rc;

	if (len < CONT_HEADER_LEN || len % 8 || len > OSD__MAX_CONT_LEN || len > c->x->out_len)
		return osd__fail_field(c, OSD_ASC_INVALID_FIELD_IN_CDB, 48);
	rc = osd__dout_copy(c, 0, len, &seg);
	if (rc)
		return rc;
	if (seg[0] != CONT_FORMAT || osd__get_be16(seg + 2) != (uint16_t)c->cdb.action)
		rc = bad_segment(c);
	else
		rc = parse_descriptors(c, seg, len);
	free(seg);
	c->cont_len = len;
	return rc;
}
