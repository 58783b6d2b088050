/*
 * Strict checks of answers (proto/answer.h). The decoders in attr.c and
 * list.c stay lenient on purpose: they bound every read by the buffer and
 * take a LIST LENGTH or ADDITIONAL LENGTH larger than the buffer for a
 * list cut by the allocation length. Only the caller knows whether that
 * can be true: a target cuts an answer at the allocation length (osd2r05
 * §7.1.3.1 for attribute lists, docs/protocol.md §10.1 for LIST), so a
 * length that promises more while the allocation was not filled is a lie,
 * and so is one that no set of requested attributes could reach.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include "proto/answer.h"
#include "proto/byteorder.h"

#define ID_LEN 8
#define QUERY_HDR_LEN 12
#define LIST_FORMAT_BYTE 23
#define QUERY_FORMAT_BYTE 11
#define FORMAT_SHIFT 2
#define ADDL_SATURATED UINT64_MAX

static int refuse(int err, char *why, size_t why_len, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int refuse(int err, char *why, size_t why_len, const char *fmt, ...)
{
	va_list ap;

	if (why && why_len) {
		va_start(ap, fmt);
		vsnprintf(why, why_len, fmt, ap);
		va_end(ap);
	}
	return err;
}

/* OSD-2 09h entries are padded to 8 and 0Eh groups are made of them. */
static int length_aligned(enum osd_version version, uint32_t list_length)
{
	return version == OSD_V1 || list_length % 8 == 0;
}

int osd__attr_answer_check(enum osd_version version, const uint8_t *buf, size_t received,
			   size_t alloc, uint64_t max_list, char *why, size_t why_len)
{
	size_t hdr = osd_attr_header_len(version), at;
	struct osd_attr_reader r;
	struct osd_attr a;
	int rc;

	if (received > alloc)
		return refuse(-EPROTO, why, why_len,
			      "retrieved attributes: %zu bytes received for a %zu-byte allocation",
			      received, alloc);
	if (received < hdr)
		return refuse(-EBADMSG, why, why_len,
			      "retrieved attributes list of %zu bytes is shorter than its %zu-byte header",
			      received, hdr);
	/* A get list (01h) is never an answer. */
	if ((buf[0] & 0x0F) == OSD_LIST_GET || osd_attr_reader_init(&r, version, buf, received) < 0)
		return refuse(-EBADMSG, why, why_len,
			      "retrieved attributes list type 0x%02x is not a retrieved-attributes list",
			      buf[0] & 0x0F);
	if (!length_aligned(version, r.list_length))
		return refuse(-EBADMSG, why, why_len,
			      "retrieved attributes list length %" PRIu32 " is not a multiple of 8",
			      r.list_length);
	/* More than arrived is only the full length of a list the allocation cut. */
	if (r.list_length > received - hdr && received < alloc)
		return refuse(-EBADMSG, why, why_len,
			      "retrieved attributes list length %" PRIu32
			      " exceeds the %zu bytes received", r.list_length, received);
	if (r.list_length > max_list)
		return refuse(-EBADMSG, why, why_len,
			      "retrieved attributes list length %" PRIu32
			      " exceeds the %" PRIu64 " bytes the requested attributes can take",
			      r.list_length, max_list);
	/* The reader stops at the last whole entry of a cut list and fails on
	 * an entry that overruns a list that was not cut. */
	do {
		at = r.pos;
		rc = osd_attr_reader_next(&r, &a);
	} while (rc == 1);
	if (rc < 0)
		return refuse(-EBADMSG, why, why_len,
			      "retrieved attributes list entry at byte %zu runs past the list"
			      " (list length %" PRIu32 ", %zu bytes received)",
			      at, r.list_length, received);
	return 0;
}

/* ADDITIONAL LENGTH must be the header bytes after it plus 8 per id. */
static int addl_aligned(uint64_t addl, size_t hdr)
{
	return addl == ADDL_SATURATED || (addl >= hdr - 8 && (addl - (hdr - 8)) % ID_LEN == 0);
}

/* Why the decoder refused a header it could read whole. */
static int bad_header(int query, const uint8_t *buf, size_t hdr, char *why, size_t why_len)
{
	const char *name = query ? "QUERY" : "LIST";
	uint64_t addl = osd__get_be64(buf);

	if (!addl_aligned(addl, hdr))
		return refuse(-EBADMSG, why, why_len,
			      "%s ADDITIONAL LENGTH %" PRIu64 " is not %zu plus 8 per object id",
			      name, addl, hdr - 8);
	return refuse(-EBADMSG, why, why_len, "%s object descriptor format 0x%02x is unknown",
		      name, buf[query ? QUERY_FORMAT_BYTE : LIST_FORMAT_BYTE] >> FORMAT_SHIFT);
}

int osd__list_answer_check(enum osd_version version, int query, const uint8_t *buf,
			   size_t received, size_t alloc, char *why, size_t why_len)
{
	const char *name = query ? "QUERY" : "LIST";
	size_t hdr = query ? QUERY_HDR_LEN : OSD_LIST_HEADER_LEN, got, room;
	struct osd_list_result res;
	uint64_t claimed;
	int rc;

	if (received > alloc)
		return refuse(-EPROTO, why, why_len,
			      "%s answer: %zu bytes received for a %zu-byte allocation",
			      name, received, alloc);
	if (received < hdr)
		return refuse(-EBADMSG, why, why_len,
			      "%s answer of %zu bytes is shorter than its %zu-byte header",
			      name, received, hdr);
	rc = query ? osd_query_result_decode(buf, received, &res)
		   : osd_list_decode(version, buf, received, &res);
	if (rc == -ENOTSUP)
		return 0;
	if (rc < 0)
		return bad_header(query, buf, hdr, why, why_len);
	got = (received - hdr) / ID_LEN;
	room = (alloc - hdr) / ID_LEN;
	if ((received - hdr) % ID_LEN && got < room)
		return refuse(-EBADMSG, why, why_len,
			      "%s answer of %zu bytes ends inside an object id", name, received);
	/* All ones: the target does not know the total (O); only what arrived counts. */
	if (res.additional_length == ADDL_SATURATED)
		return 0;
	claimed = (res.additional_length - (hdr - 8)) / ID_LEN;
	if (claimed <= got)
		return 0;
	if (got < room)
		return refuse(-EBADMSG, why, why_len,
			      "%s ADDITIONAL LENGTH %" PRIu64 " claims %" PRIu64
			      " object ids but the %zu bytes received carry %zu",
			      name, res.additional_length, claimed, received, got);
	/* Cut by the allocation: LIST must say where to resume, or the ids
	 * after the cut would be lost without a word (osd_list_foreach). */
	if (!query && res.continuation_id == 0)
		return refuse(-EBADMSG, why, why_len,
			      "LIST ADDITIONAL LENGTH %" PRIu64 " claims %" PRIu64
			      " object ids, %zu fit in the allocation and CONTINUATION OBJECT_ID is 0",
			      res.additional_length, claimed, got);
	return 0;
}
