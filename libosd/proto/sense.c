/*
 * Sense data: descriptor-format (72h/73h) decoding and encoding, fixed-format
 * (70h/71h) key and ASC only, errno mapping and human-readable messages.
 * The descriptor 06h command-function words are read big-endian, which puts
 * the OSD_CFUNC_* bits at the byte positions K defines (docs/protocol-choices.md).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <osd/sense.h>
#include "proto/byteorder.h"

#define RC_FIXED_CUR 0x70
#define RC_FIXED_DEF 0x71
#define RC_DESC_CUR 0x72
#define RC_DESC_DEF 0x73
#define DESC_HDR 8
#define FIXED_MIN 14 /* through the ASCQ at byte 13 */

#define D_INFO 0x00
#define D_CSI 0x01
#define D_SKS 0x02
#define D_OBJECT 0x06
#define D_RICV 0x07
#define D_ATTR 0x08

#define INFO_ADDL 0x0A
#define SKS_ADDL 0x06
#define OBJECT_ADDL 0x1E
#define ATTR_ADDL_MIN 0x06

/* CDB byte offsets of PARTITION_ID and the object id (same in both versions). */
#define FP_PARTITION 16
#define FP_OBJECT 24
#define FP_SERVICE_ACTION 8
/* Capability through request ICV in either version (80..183 / 160..179 / 184..215). */
#define FP_SECURITY_FIRST 80
#define FP_SECURITY_END 216

/* ---- decoding ---------------------------------------------------------- */

static int decode_fixed(const uint8_t *buf, size_t len, struct osd_sense *s)
{
	if (len < FIXED_MIN)
		return -EBADMSG;
	s->key = buf[2] & 0x0F;
	s->asc = osd__get_be16(buf + 12);
	return 0;
}

static void decode_object(const uint8_t *d, struct osd_sense *s)
{
	s->has_object = 1;
	s->not_initiated = osd__get_be32(d + 8);
	s->completed = osd__get_be32(d + 12);
	s->object.partition = osd__get_be64(d + 16);
	s->object.id = osd__get_be64(d + 24);
}

static void decode_attrs(const uint8_t *d, size_t n, struct osd_sense *s)
{
	s->num_attrs = 0;
	memset(s->attrs, 0, sizeof(s->attrs));
	for (size_t i = 0; i < n && s->num_attrs < OSD_SENSE_MAX_ATTRS; i++) {
		s->attrs[s->num_attrs].page = osd__get_be32(d + 8 + 8 * i);
		s->attrs[s->num_attrs].number = osd__get_be32(d + 12 + 8 * i);
		s->num_attrs++;
	}
}

/* One descriptor of @p addl bytes after its 2-byte header. */
static int decode_descriptor(const uint8_t *d, uint8_t addl, struct osd_sense *s)
{
	switch (d[0]) {
	case D_INFO:
	case D_CSI:
		if (addl < INFO_ADDL)
			return -EBADMSG;
		if (d[0] == D_INFO) {
			/* Without VALID the INFORMATION field means nothing. */
			s->has_info = (d[2] & 0x80) != 0;
			s->information = s->has_info ? osd__get_be64(d + 4) : 0;
		} else {
			s->has_csi = 1;
			s->csi = osd__get_be64(d + 4);
		}
		return 0;
	case D_SKS:
		if (addl < SKS_ADDL)
			return -EBADMSG;
		/* Without SKSV the sense-key specific bytes are not a field pointer. */
		s->has_field = (d[4] & 0x80) != 0;
		s->field_in_cdb = s->has_field && (d[4] & 0x40);
		s->bpv = s->has_field && (d[4] & 0x08);
		s->bit_pointer = s->bpv ? d[4] & 0x07 : 0;
		s->field_pointer = s->has_field ? osd__get_be16(d + 5) : 0;
		return 0;
	case D_OBJECT:
		if (addl < OBJECT_ADDL)
			return -EBADMSG;
		decode_object(d, s);
		return 0;
	case D_RICV:
		if (addl > sizeof(s->ricv))
			return -EBADMSG;
		s->has_ricv = 1;
		s->ricv_len = addl;
		memset(s->ricv, 0, sizeof(s->ricv)); /* a repeated descriptor replaces the first */
		memcpy(s->ricv, d + 2, addl);
		return 0;
	case D_ATTR:
		if (addl < ATTR_ADDL_MIN || (addl - ATTR_ADDL_MIN) % 8)
			return -EBADMSG;
		decode_attrs(d, (size_t)(addl - ATTR_ADDL_MIN) / 8, s);
		return 0;
	default:
		return 0; /* unknown descriptors are skipped */
	}
}

int osd_sense_decode(const uint8_t *buf, size_t len, struct osd_sense *s)
{
	size_t end, pos;

	memset(s, 0, sizeof(*s));
	if (len == 0)
		return -EBADMSG;
	s->response_code = buf[0] & 0x7F;
	if (s->response_code == RC_FIXED_CUR || s->response_code == RC_FIXED_DEF)
		return decode_fixed(buf, len, s);
	if (s->response_code != RC_DESC_CUR && s->response_code != RC_DESC_DEF)
		return -EBADMSG;
	if (len < DESC_HDR)
		return -EBADMSG;
	s->key = buf[1] & 0x0F;
	s->asc = osd__get_be16(buf + 2);
	/* A buffer shorter than ADDITIONAL SENSE LENGTH was cut by the transport. */
	end = DESC_HDR + buf[7];
	if (end > len)
		end = len;
	for (pos = DESC_HDR; pos < end;) {
		uint8_t addl;

		if (end - pos < 2)
			return -EBADMSG;
		addl = buf[pos + 1];
		if (end - pos - 2 < addl)
			return -EBADMSG;
		if (decode_descriptor(buf + pos, addl, s) < 0)
			return -EBADMSG;
		pos += 2 + (size_t)addl;
	}
	return 0;
}

/* ---- interpretation ---------------------------------------------------- */

static int field_is_object_id(const struct osd_sense *s)
{
	return s->has_field && s->field_in_cdb &&
	       (s->field_pointer == FP_PARTITION || s->field_pointer == FP_OBJECT);
}

static int field_is_security(const struct osd_sense *s)
{
	return s->has_field && s->field_in_cdb && s->field_pointer >= FP_SECURITY_FIRST &&
	       s->field_pointer < FP_SECURITY_END;
}

/* The CDB's SERVICE ACTION field (bytes 8-9 in both versions). */
static int field_is_service_action(const struct osd_sense *s)
{
	return s->has_field && s->field_in_cdb &&
	       (s->field_pointer == FP_SERVICE_ACTION || s->field_pointer == FP_SERVICE_ACTION + 1);
}

/*
 * 24h/00h: which field was wrong decides the errno. Only a field pointer at
 * the PARTITION_ID or OBJECT_ID says that the object is missing; without a
 * field pointer the sense does not say which field was wrong, and descriptor
 * 06h alone names the command's object, not a missing one (a target may send
 * it with every sense): -EINVAL (docs/protocol-choices.md).
 */
static int invalid_field_errno(const struct osd_sense *s)
{
	if (field_is_object_id(s))
		return -ENOENT;
	if (field_is_security(s))
		return -EACCES;
	/* SPC-4 r11 §4.5.2.4.2: the service action itself is not supported. */
	if (field_is_service_action(s))
		return -EOPNOTSUPP;
	return -EINVAL;
}

static int is_security_asc(uint16_t asc)
{
	return (asc >= OSD_ASC_SECURITY_AUDIT_FROZEN && asc <= OSD_ASC_NONCE_TIMESTAMP_OUT_OF_RANGE) ||
	       asc == OSD_ASC_INVALID_DATA_OUT_ICV;
}

int osd_sense_errno(const struct osd_sense *s)
{
	if (s->key == OSD_SK_NO_SENSE || s->key == OSD_SK_RECOVERED_ERROR)
		return 0;
	if (s->asc == OSD_ASC_QUOTA_ERROR || s->asc == OSD_ASC_SPACE_ALLOC_FAILED)
		return -ENOSPC;
	if (is_security_asc(s->asc))
		return -EACCES;
	switch (s->key) {
	case OSD_SK_ILLEGAL_REQUEST:
		/* An unimplemented command or service action; some targets give
		 * no additional sense at all for it (00h/00h). */
		if (s->asc == OSD_ASC_INVALID_OPCODE || s->asc == OSD_ASC_NONE)
			return -EOPNOTSUPP;
		if (s->asc == OSD_ASC_INVALID_FIELD_IN_CDB)
			return invalid_field_errno(s);
		if (s->asc == OSD_ASC_PARTITION_OR_COLLECTION_NOT_EMPTY)
			return -ENOTEMPTY;
		return -EINVAL;
	case OSD_SK_UNIT_ATTENTION:
	case OSD_SK_NOT_READY:
		return -EAGAIN;
	default:
		return -EIO;
	}
}

static int is_create(enum osd_action action)
{
	return action == OSD_ACT_CREATE || action == OSD_ACT_CREATE_PARTITION ||
	       action == OSD_ACT_CREATE_COLLECTION || action == OSD_ACT_CREATE_AND_WRITE ||
	       action == OSD_ACT_CREATE_USER_TRACKING_COLLECTION;
}

int osd_sense_errno_cmd(const struct osd_sense *s, enum osd_action action)
{
	int err = osd_sense_errno(s);

	/* An attribute named as the wrong field of a GET ATTRIBUTES' list is
	 * one the target does not provide (descriptor 08h, §11.2). */
	if (err == -EINVAL && action == OSD_ACT_GET_ATTRIBUTES &&
	    s->asc == OSD_ASC_INVALID_FIELD_IN_PARAM_LIST && s->num_attrs)
		return -EOPNOTSUPP;
	/* For a CREATE the named id is the one requested: it already exists. */
	if (err == -ENOENT && is_create(action))
		return -EEXIST;
	return err;
}

/* ---- text -------------------------------------------------------------- */

struct asc_name {
	uint16_t asc;
	const char *text;
};

static const struct asc_name asc_names[] = {
	{ OSD_ASC_NONE, "NO ADDITIONAL SENSE INFORMATION" },
	{ OSD_ASC_FORMAT_IN_PROGRESS, "LOGICAL UNIT NOT READY, FORMAT IN PROGRESS" },
	{ OSD_ASC_UNRECOVERED_READ_ERROR, "UNRECOVERED READ ERROR" },
	{ OSD_ASC_PARAM_LIST_LENGTH_ERROR, "PARAMETER LIST LENGTH ERROR" },
	{ OSD_ASC_INVALID_OPCODE, "INVALID COMMAND OPERATION CODE" },
	{ OSD_ASC_INVALID_FIELD_IN_CDB, "INVALID FIELD IN CDB" },
	{ OSD_ASC_SECURITY_AUDIT_FROZEN, "SECURITY AUDIT VALUE FROZEN" },
	{ OSD_ASC_SECURITY_WORKING_KEY_FROZEN, "SECURITY WORKING KEY FROZEN" },
	{ OSD_ASC_NONCE_NOT_UNIQUE, "NONCE NOT UNIQUE" },
	{ OSD_ASC_NONCE_TIMESTAMP_OUT_OF_RANGE, "NONCE TIMESTAMP OUT OF RANGE" },
	{ OSD_ASC_INVALID_FIELD_IN_PARAM_LIST, "INVALID FIELD IN PARAMETER LIST" },
	{ OSD_ASC_INVALID_DATA_OUT_ICV, "INVALID DATA-OUT BUFFER INTEGRITY CHECK VALUE" },
	{ OSD_ASC_POWER_ON_RESET, "POWER ON, RESET, OR BUS DEVICE RESET OCCURRED" },
	{ 0x2901, "POWER ON OCCURRED" },
	{ 0x2902, "SCSI BUS RESET OCCURRED" },
	{ 0x2903, "BUS DEVICE RESET FUNCTION OCCURRED" },
	{ 0x2904, "DEVICE INTERNAL RESET" },
	{ OSD_ASC_PARTITION_OR_COLLECTION_NOT_EMPTY, "PARTITION OR COLLECTION CONTAINS USER OBJECTS" },
	{ OSD_ASC_READ_PAST_END_OF_OBJECT, "READ PAST END OF USER OBJECT" },
	{ OSD_ASC_SYSTEM_RESOURCE_FAILURE, "SYSTEM RESOURCE FAILURE" },
	{ OSD_ASC_QUOTA_ERROR, "QUOTA ERROR" },
	{ OSD_ASC_SPACE_ALLOC_FAILED, "SPACE ALLOCATION FAILED WRITE PROTECT" },
};

#define UNKNOWN_ASC "UNKNOWN ADDITIONAL SENSE CODE"

const char *osd_asc_string(uint16_t asc)
{
	for (size_t i = 0; i < sizeof(asc_names) / sizeof(asc_names[0]); i++)
		if (asc_names[i].asc == asc)
			return asc_names[i].text;
	return UNKNOWN_ASC;
}

static int asc_known(uint16_t asc)
{
	return strcmp(osd_asc_string(asc), UNKNOWN_ASC) != 0;
}

static const char *const key_names[16] = {
	"NO SENSE", "RECOVERED ERROR", "NOT READY", "MEDIUM ERROR",
	"HARDWARE ERROR", "ILLEGAL REQUEST", "UNIT ATTENTION", "DATA PROTECT",
	"BLANK CHECK", "VENDOR SPECIFIC", "COPY ABORTED", "ABORTED COMMAND",
	"RESERVED", "VOLUME OVERFLOW", "MISCOMPARE", "COMPLETED",
};

/* snprintf that keeps appending after the buffer is full, counting only. */
struct out {
	char *buf;
	size_t len;
	size_t used;
};

static void append(struct out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void append(struct out *o, const char *fmt, ...)
{
	va_list ap;
	size_t room = o->used < o->len ? o->len - o->used : 0;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(room ? o->buf + o->used : NULL, room, fmt, ap);
	va_end(ap);
	if (n > 0)
		o->used += (size_t)n;
}

static void describe_details(const struct osd_sense *s, struct out *o)
{
	size_t base = o->used;

	if (s->has_object && osd_sense_errno(s) == -ENOENT) {
		if (s->object.id)
			append(o, ": object 0x%" PRIx64 " in partition 0x%" PRIx64 " does not exist",
			       s->object.id, s->object.partition);
		else
			append(o, ": partition 0x%" PRIx64 " does not exist", s->object.partition);
	} else if (s->has_object && (s->object.partition || s->object.id)) {
		append(o, ": object 0x%" PRIx64 " in partition 0x%" PRIx64,
		       s->object.id, s->object.partition);
	}
	if (s->has_info && s->key == OSD_SK_MEDIUM_ERROR)
		append(o, "%s at byte %" PRIu64, o->used > base ? "" : ":", s->information);
	if (s->has_field) {
		append(o, "%s field at %s byte %u", o->used > base ? "," : ":",
		       s->field_in_cdb ? "CDB" : "parameter", s->field_pointer);
		if (s->bpv)
			append(o, " bit %u", s->bit_pointer);
	}
	for (unsigned i = 0; i < s->num_attrs; i++)
		append(o, "%s 0x%" PRIx32 "/0x%" PRIx32, i ? "," : "; attributes",
		       s->attrs[i].page, s->attrs[i].number);
	if (s->has_csi)
		append(o, " (command-specific information %" PRIu64 ")", s->csi);
}

int osd_sense_describe(const struct osd_sense *s, char *buf, size_t len)
{
	struct out o = { .buf = buf, .len = len, .used = 0 };

	if (buf && len)
		buf[0] = '\0';
	append(&o, "%s: ", key_names[s->key & 0x0F]);
	if (asc_known(s->asc))
		append(&o, "%s", osd_asc_string(s->asc));
	else
		append(&o, "ASC %02Xh ASCQ %02Xh", s->asc >> 8, s->asc & 0xFF);
	describe_details(s, &o);
	return (int)o.used;
}

/* ---- encoding (target side) -------------------------------------------- */

static uint8_t *put_desc(uint8_t *p, uint8_t type, uint8_t addl)
{
	memset(p, 0, 2 + (size_t)addl);
	p[0] = type;
	p[1] = addl;
	return p;
}

static size_t encoded_len(const struct osd_sense *s)
{
	size_t n = DESC_HDR;
	unsigned attrs = s->num_attrs < OSD_SENSE_MAX_ATTRS ? s->num_attrs : OSD_SENSE_MAX_ATTRS;

	n += s->has_info ? 2 + INFO_ADDL : 0;
	n += s->has_csi ? 2 + INFO_ADDL : 0;
	n += s->has_field ? 2 + SKS_ADDL : 0;
	n += s->has_object ? 2 + OBJECT_ADDL : 0;
	n += s->has_ricv ? 2 + (size_t)s->ricv_len : 0;
	n += attrs ? 2 + ATTR_ADDL_MIN + 8 * (size_t)attrs : 0;
	return n;
}

static uint8_t *encode_sks_object(const struct osd_sense *s, uint8_t *p)
{
	if (s->has_field) {
		put_desc(p, D_SKS, SKS_ADDL);
		p[4] = (uint8_t)(0x80 | (s->field_in_cdb ? 0x40 : 0) |
				 (s->bpv ? 0x08 | (s->bit_pointer & 0x07) : 0));
		osd__put_be16(p + 5, s->field_pointer);
		p += 2 + SKS_ADDL;
	}
	if (s->has_object) {
		put_desc(p, D_OBJECT, OBJECT_ADDL);
		osd__put_be32(p + 8, s->not_initiated);
		osd__put_be32(p + 12, s->completed);
		osd__put_be64(p + 16, s->object.partition);
		osd__put_be64(p + 24, s->object.id);
		p += 2 + OBJECT_ADDL;
	}
	return p;
}

int osd_sense_encode(const struct osd_sense *s, uint8_t *buf, size_t len)
{
	size_t n = encoded_len(s);
	unsigned attrs = s->num_attrs < OSD_SENSE_MAX_ATTRS ? s->num_attrs : OSD_SENSE_MAX_ATTRS;
	uint8_t *p = buf + DESC_HDR;

	if (s->has_ricv && s->ricv_len > sizeof(s->ricv))
		return -EINVAL;
	if (len < n)
		return -ENOBUFS;
	memset(buf, 0, DESC_HDR);
	buf[0] = s->response_code == RC_DESC_DEF ? RC_DESC_DEF : RC_DESC_CUR;
	buf[1] = s->key & 0x0F;
	osd__put_be16(buf + 2, s->asc);
	buf[7] = (uint8_t)(n - DESC_HDR);
	if (s->has_info) {
		put_desc(p, D_INFO, INFO_ADDL)[2] = 0x80;
		osd__put_be64(p + 4, s->information);
		p += 2 + INFO_ADDL;
	}
	if (s->has_csi) {
		put_desc(p, D_CSI, INFO_ADDL);
		osd__put_be64(p + 4, s->csi);
		p += 2 + INFO_ADDL;
	}
	p = encode_sks_object(s, p);
	if (s->has_ricv) {
		put_desc(p, D_RICV, s->ricv_len);
		memcpy(p + 2, s->ricv, s->ricv_len);
		p += 2 + (size_t)s->ricv_len;
	}
	if (attrs) {
		put_desc(p, D_ATTR, (uint8_t)(ATTR_ADDL_MIN + 8 * attrs));
		for (unsigned i = 0; i < attrs; i++) {
			osd__put_be32(p + 8 + 8 * i, s->attrs[i].page);
			osd__put_be32(p + 12 + 8 * i, s->attrs[i].number);
		}
	}
	return (int)n;
}
