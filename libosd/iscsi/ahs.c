/* Additional Header Segments of SCSI Commands (RFC 7143 11.2.2.1-11.2.2.3). */
#include "iscsi/pdu.h"

#include "proto/byteorder.h"

#include <errno.h>
#include <string.h>

int osd__iscsi_ahs_parse(struct osd__iscsi_ahs_info *out, const uint8_t *ahs, size_t len)
{
	memset(out, 0, sizeof(*out));
	if (len & 3)
		return -EBADMSG;
	size_t pos = 0;
	while (pos < len) {
		if (len - pos < 4)
			return -EBADMSG;
		size_t alen = osd__get_be16(ahs + pos);
		uint8_t type = ahs[pos + 2] & 0x3F;
		/* AHSLength counts the specific field (from byte 3), no padding */
		size_t seg = 3 + alen;
		seg += osd__iscsi_pad(seg);
		if (alen == 0 || seg > len - pos)
			return -EBADMSG;
		const uint8_t *p = ahs + pos + 3;
		switch (type) {
		case OSD_ISCSI_AHS_EXT_CDB:
			if (out->ext_cdb || alen < 2 || 16 + alen - 1 > OSD_ISCSI_MAX_CDB)
				return -EPROTO;
			out->ext_cdb = p + 1; /* byte 3 is reserved */
			out->ext_cdb_len = alen - 1;
			break;
		case OSD_ISCSI_AHS_BIDI_READ:
			if (out->has_bidi_read || alen != 5)
				return -EPROTO;
			out->has_bidi_read = 1;
			out->bidi_read_len = osd__get_be32(p + 1);
			break;
		default:
			return -EPROTO;
		}
		pos += seg;
	}
	return 0;
}

long osd__iscsi_ahs_build(uint8_t *out, size_t cap, const uint8_t *cdb, size_t cdb_len,
			  int bidi, uint32_t bidi_read_len)
{
	size_t pos = 0;
	if (cdb_len > OSD_ISCSI_MAX_CDB)
		return -EINVAL;
	if (cdb_len > 16) {
		size_t alen = cdb_len - 16 + 1;
		size_t seg = 3 + alen + osd__iscsi_pad(3 + alen);
		if (seg > cap)
			return -ENOSPC;
		memset(out, 0, seg);
		osd__put_be16(out, (uint16_t)alen);
		out[2] = OSD_ISCSI_AHS_EXT_CDB;
		memcpy(out + 4, cdb + 16, cdb_len - 16);
		pos = seg;
	}
	if (bidi) {
		if (cap - pos < 8)
			return -ENOSPC;
		osd__put_be16(out + pos, 5);
		out[pos + 2] = OSD_ISCSI_AHS_BIDI_READ;
		out[pos + 3] = 0;
		osd__put_be32(out + pos + 4, bidi_read_len);
		pos += 8;
	}
	return (long)pos;
}

long osd__iscsi_cdb_join(uint8_t *out, size_t cap, const struct osd__iscsi_bhs *h,
			 const struct osd__iscsi_ahs_info *ahs)
{
	size_t n = 16 + (ahs ? ahs->ext_cdb_len : 0);
	if (n > cap)
		return -EBADMSG;
	memcpy(out, h->cdb, 16);
	if (ahs && ahs->ext_cdb_len)
		memcpy(out + 16, ahs->ext_cdb, ahs->ext_cdb_len);
	return (long)n;
}
