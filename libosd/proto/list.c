/*
 * LIST / LIST COLLECTION (24-byte header) and QUERY (12-byte header, format
 * byte at 11 - the Wireshark OSD-2 layout; docs/protocol-choices.md) results.
 * The id count is bounded by both ADDITIONAL LENGTH and the bytes present.
 */
#include <errno.h>
#include <string.h>
#include <osd/list.h>
#include "proto/byteorder.h"

#define ID_LEN 8
#define LIST_HDR_AFTER_ADDL (OSD_LIST_HEADER_LEN - 8) /* header bytes counted in ADDITIONAL LENGTH */
#define QUERY_HDR_LEN 12
#define QUERY_HDR_AFTER_ADDL (QUERY_HDR_LEN - 8)
#define QUERY_FORMAT_BYTE 11
#define V1_ROOT 0x01
#define LSTCHG 0x02
#define FORMAT_SHIFT 2
#define ADDL_SATURATED UINT64_MAX

/* ids the sender says follow, or -1 when ADDITIONAL LENGTH is inconsistent. */
static int64_t announced_ids(uint64_t addl, uint64_t hdr_after_addl)
{
	if (addl == ADDL_SATURATED)
		return INT64_MAX;
	if (addl < hdr_after_addl || (addl - hdr_after_addl) % ID_LEN)
		return -1;
	return (int64_t)((addl - hdr_after_addl) / ID_LEN);
}

static void set_ids(struct osd_list_result *res, const uint8_t *buf, size_t len,
		    size_t hdr, int64_t announced)
{
	size_t present = (len - hdr) / ID_LEN;

	res->num_ids = (uint64_t)announced < present ? (size_t)announced : present;
	res->ids = res->num_ids ? buf + hdr : NULL;
}

static int v2_format_ok(uint8_t format)
{
	switch (format) {
	case OSD_LIST_FMT_PARTITIONS:
	case OSD_LIST_FMT_COLLECTIONS:
	case OSD_LIST_FMT_USER_OBJECTS:
		return 0;
	case OSD_LIST_FMT_PARTITIONS_ATTRS:
	case OSD_LIST_FMT_COLLECTIONS_ATTRS:
	case OSD_LIST_FMT_USER_OBJECTS_ATTRS:
		return -ENOTSUP;
	default:
		return -EBADMSG;
	}
}

int osd_list_decode(enum osd_version version, const uint8_t *buf, size_t len,
		    struct osd_list_result *res)
{
	int64_t announced;
	uint8_t flags;
	int rc;

	memset(res, 0, sizeof(*res));
	if ((version != OSD_V1 && version != OSD_V2) || len < OSD_LIST_HEADER_LEN)
		return -EBADMSG;
	res->additional_length = osd__get_be64(buf);
	res->continuation_id = osd__get_be64(buf + 8);
	res->list_id = osd__get_be32(buf + 16);
	flags = buf[23];
	res->lstchg = (flags & LSTCHG) != 0;
	if (version == OSD_V1) {
		res->root = (flags & V1_ROOT) != 0;
	} else {
		res->format = flags >> FORMAT_SHIFT;
		rc = v2_format_ok(res->format);
		if (rc < 0)
			return rc;
	}
	announced = announced_ids(res->additional_length, LIST_HDR_AFTER_ADDL);
	if (announced < 0)
		return -EBADMSG;
	set_ids(res, buf, len, OSD_LIST_HEADER_LEN, announced);
	return 0;
}

uint64_t osd_list_id(const struct osd_list_result *res, size_t i)
{
	return osd__get_be64(res->ids + ID_LEN * i);
}

/* ADDITIONAL LENGTH for @p total ids, saturating at all-ones. */
static uint64_t addl_for(size_t total, size_t hdr_after_addl)
{
	if (total > (ADDL_SATURATED - hdr_after_addl) / ID_LEN)
		return ADDL_SATURATED;
	return hdr_after_addl + (uint64_t)total * ID_LEN;
}

static size_t put_ids(uint8_t *dst, size_t room, const uint64_t *ids, size_t n)
{
	size_t fit = room / ID_LEN < n ? room / ID_LEN : n;

	for (size_t i = 0; i < fit; i++)
		osd__put_be64(dst + ID_LEN * i, ids[i]);
	return fit * ID_LEN;
}

int osd_list_encode(enum osd_version version, uint8_t format, int root_bit,
		    uint64_t continuation_id, uint32_t list_id,
		    const uint64_t *ids, size_t n, size_t total_ids,
		    uint8_t *buf, size_t len)
{
	if ((version != OSD_V1 && version != OSD_V2) || n > total_ids ||
	    (version == OSD_V2 && format > 0x3F))
		return -EINVAL;
	if (len < OSD_LIST_HEADER_LEN)
		return -ENOBUFS;
	memset(buf, 0, OSD_LIST_HEADER_LEN);
	osd__put_be64(buf, addl_for(total_ids, LIST_HDR_AFTER_ADDL));
	osd__put_be64(buf + 8, continuation_id);
	osd__put_be32(buf + 16, list_id);
	if (version == OSD_V1)
		buf[23] = root_bit ? V1_ROOT : 0;
	else
		buf[23] = (uint8_t)(format << FORMAT_SHIFT);
	return (int)(OSD_LIST_HEADER_LEN +
		     put_ids(buf + OSD_LIST_HEADER_LEN, len - OSD_LIST_HEADER_LEN, ids, n));
}

int osd_query_result_decode(const uint8_t *buf, size_t len, struct osd_list_result *res)
{
	int64_t announced;

	memset(res, 0, sizeof(*res));
	if (len < QUERY_HDR_LEN)
		return -EBADMSG;
	res->additional_length = osd__get_be64(buf);
	res->format = buf[QUERY_FORMAT_BYTE] >> FORMAT_SHIFT;
	if (res->format != OSD_LIST_FMT_USER_OBJECTS)
		return -EBADMSG;
	announced = announced_ids(res->additional_length, QUERY_HDR_AFTER_ADDL);
	if (announced < 0)
		return -EBADMSG;
	set_ids(res, buf, len, QUERY_HDR_LEN, announced);
	return 0;
}

int osd_query_result_encode(const uint64_t *ids, size_t n, size_t total_ids,
			    uint8_t *buf, size_t len)
{
	if (n > total_ids)
		return -EINVAL;
	if (len < QUERY_HDR_LEN)
		return -ENOBUFS;
	memset(buf, 0, QUERY_HDR_LEN);
	osd__put_be64(buf, addl_for(total_ids, QUERY_HDR_AFTER_ADDL));
	buf[QUERY_FORMAT_BYTE] = OSD_LIST_FMT_USER_OBJECTS << FORMAT_SHIFT;
	return (int)(QUERY_HDR_LEN + put_ids(buf + QUERY_HDR_LEN, len - QUERY_HDR_LEN, ids, n));
}
