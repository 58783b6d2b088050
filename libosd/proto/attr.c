/*
 * Attribute list codec (list types 01h, 09h, 0Eh, 0Fh). OSD-1 lists have a
 * 4-byte header and unpadded entries; OSD-2 lists an 8-byte header and
 * entries padded to 8 bytes. Readers bound every access by the bytes they
 * were given; the sender's LIST LENGTH only ever shortens what is read.
 */
#include <errno.h>
#include <string.h>
#include <osd/attr.h>
#include "proto/byteorder.h"

#define GET_ENTRY_LEN 8
#define V1_SET_HDR 10    /* page, number, length */
#define V2_SET_HDR 16    /* page, number, 6 reserved, length */
#define MULTI_OBJ_HDR 16 /* 0Eh: object id, type, 5 reserved, list length */
#define CREATE_MULTI_ID 8 /* 0Fh: object id before each v1 entry */
#define V1_MAX_LIST 0xFFFF

static size_t pad8(size_t n)
{
	return (n + 7) & ~(size_t)7;
}

static int type_valid(enum osd_version version, unsigned type)
{
	switch (type) {
	case OSD_LIST_GET:
	case OSD_LIST_SET:
		return 1;
	case OSD_LIST_MULTI:
		return version == OSD_V2;
	case OSD_LIST_CREATE_MULTI:
		return version == OSD_V1;
	default:
		return 0;
	}
}

size_t osd_attr_header_len(enum osd_version version)
{
	return version == OSD_V1 ? 4 : 8;
}

/* Size of one 09h-style entry, undefined (0xFFFF) values carrying no bytes. */
static size_t set_entry_len(enum osd_version version, uint16_t value_len)
{
	size_t n = value_len == OSD_ATTR_LEN_UNDEFINED ? 0 : value_len;

	return version == OSD_V1 ? V1_SET_HDR + n : pad8(V2_SET_HDR + n);
}

size_t osd_attr_entry_len(enum osd_version version, enum osd_list_type type,
			  uint16_t value_len)
{
	switch (type) {
	case OSD_LIST_GET:
		return GET_ENTRY_LEN;
	case OSD_LIST_CREATE_MULTI:
		return CREATE_MULTI_ID + set_entry_len(OSD_V1, value_len);
	default:
		return set_entry_len(version, value_len);
	}
}

/* ---- writer ------------------------------------------------------------- */

int osd_attr_writer_init(struct osd_attr_writer *w, enum osd_version version,
			 enum osd_list_type type, void *buf, size_t cap)
{
	memset(w, 0, sizeof(*w));
	if ((version != OSD_V1 && version != OSD_V2) || !type_valid(version, type))
		return w->err = -EINVAL;
	w->version = version;
	w->type = type;
	w->buf = buf;
	w->cap = cap;
	w->len = osd_attr_header_len(version);
	if (cap < w->len)
		return w->err = -ENOBUFS;
	memset(w->buf, 0, w->len);
	w->buf[0] = (uint8_t)type;
	return 0;
}

/* Reserve @p n bytes at the end of the list, zeroed. */
static uint8_t *reserve(struct osd_attr_writer *w, size_t n)
{
	uint8_t *p;

	size_t max_body = w->version == OSD_V1 ? V1_MAX_LIST : UINT32_MAX;

	if (w->cap - w->len < n || w->len + n - osd_attr_header_len(w->version) > max_body) {
		w->err = -ENOBUFS;
		return NULL;
	}
	p = w->buf + w->len;
	memset(p, 0, n);
	w->len += n;
	return p;
}

/* Whether @p a is the explicit "undefined attribute" marker. */
static int is_undefined(const struct osd_attr *a)
{
	return a->length == OSD_ATTR_LEN_UNDEFINED && !a->value;
}

/*
 * Writes a 09h entry (either version) at @p p. Undefined is 0xFFFF in OSD-1
 * and length 0 in OSD-2; neither carries value bytes.
 */
static void put_set_entry(enum osd_version version, uint8_t *p, const struct osd_attr *a)
{
	uint16_t n = is_undefined(a) ? 0 : a->length;

	osd__put_be32(p, a->page);
	osd__put_be32(p + 4, a->number);
	if (version == OSD_V1) {
		osd__put_be16(p + 8, is_undefined(a) ? OSD_ATTR_LEN_UNDEFINED : n);
		if (n)
			memcpy(p + V1_SET_HDR, a->value, n);
	} else {
		osd__put_be16(p + 14, n);
		if (n)
			memcpy(p + V2_SET_HDR, a->value, n);
	}
}

static int add_multi(struct osd_attr_writer *w, const struct osd_attr *a)
{
	/* The open group's offset is kept: walking the groups to find it made a
	 * CREATE of 65,535 objects quadratic in its answer. */
	size_t n = set_entry_len(OSD_V2, a->length), g = w->group;
	uint8_t *p;

	if (g == 0 || osd__get_be64(w->buf + g) != a->object_id) {
		p = reserve(w, MULTI_OBJ_HDR);
		if (!p)
			return w->err;
		osd__put_be64(p, a->object_id);
		p[8] = OSD_OBJ_USER;
		g = w->group = (size_t)(p - w->buf);
	}
	if ((size_t)osd__get_be16(w->buf + g + 14) + n > 0xFFFF) {
		w->err = -ENOBUFS;
		return w->err;
	}
	p = reserve(w, n);
	if (!p)
		return w->err;
	put_set_entry(OSD_V2, p, a);
	osd__put_be16(w->buf + g + 14, (uint16_t)(osd__get_be16(w->buf + g + 14) + n));
	return 0;
}

int osd_attr_writer_add(struct osd_attr_writer *w, const struct osd_attr *a)
{
	uint8_t *p;

	if (w->err)
		return w->err;
	if (w->type != OSD_LIST_GET && !is_undefined(a) &&
	    (a->length > OSD_ATTR_MAX_LEN || (a->length && !a->value)))
		return -EINVAL;
	switch (w->type) {
	case OSD_LIST_GET:
		p = reserve(w, GET_ENTRY_LEN);
		if (!p)
			return w->err;
		osd__put_be32(p, a->page);
		osd__put_be32(p + 4, a->number);
		return 0;
	case OSD_LIST_MULTI:
		return add_multi(w, a);
	case OSD_LIST_CREATE_MULTI:
		p = reserve(w, osd_attr_entry_len(OSD_V1, w->type, a->length));
		if (!p)
			return w->err;
		osd__put_be64(p, a->object_id);
		put_set_entry(OSD_V1, p + CREATE_MULTI_ID, a);
		return 0;
	default:
		p = reserve(w, set_entry_len(w->version, a->length));
		if (!p)
			return w->err;
		put_set_entry(w->version, p, a);
		return 0;
	}
}

long osd_attr_writer_finish(struct osd_attr_writer *w)
{
	size_t body;

	if (w->err)
		return w->err;
	body = w->type == OSD_LIST_GET ? 0 : w->len - osd_attr_header_len(w->version);
	if (w->version == OSD_V1)
		osd__put_be16(w->buf + 2, (uint16_t)body);
	else
		osd__put_be32(w->buf + 4, (uint32_t)body);
	return (long)w->len;
}

/* ---- reader ------------------------------------------------------------- */

int osd_attr_reader_init(struct osd_attr_reader *r, enum osd_version version,
			 const void *buf, size_t len)
{
	size_t hdr = osd_attr_header_len(version);
	const uint8_t *p = buf;

	memset(r, 0, sizeof(*r));
	if ((version != OSD_V1 && version != OSD_V2) || len < hdr)
		return -EBADMSG;
	if (!type_valid(version, p[0] & 0x0F))
		return -EBADMSG;
	r->version = version;
	r->type = (enum osd_list_type)(p[0] & 0x0F);
	r->buf = p;
	r->pos = hdr;
	r->list_length = version == OSD_V1 ? osd__get_be16(p + 2) : osd__get_be32(p + 4);
	r->end = len;
	/* Initiators send get lists with LIST LENGTH 0: the buffer length rules. */
	if (!(r->type == OSD_LIST_GET && r->list_length == 0) && r->list_length < len - hdr)
		r->end = hdr + r->list_length;
	return 0;
}

int osd_attr_reader_truncated(const struct osd_attr_reader *r)
{
	size_t have = r->end - osd_attr_header_len(r->version);

	return r->list_length > have;
}

/*
 * A piece that does not fit before @p limit: the natural end of a list cut
 * short by the allocation length (stop), or a malformed entry.
 */
static int short_entry(const struct osd_attr_reader *r)
{
	return osd_attr_reader_truncated(r) ? 0 : -EBADMSG;
}

/* Reads a 09h entry of @p version at r->pos, bounded by @p limit. */
static int read_set_entry(struct osd_attr_reader *r, enum osd_version version,
			  size_t limit, struct osd_attr *a)
{
	size_t hdr = version == OSD_V1 ? V1_SET_HDR : V2_SET_HDR;
	const uint8_t *p = r->buf + r->pos;
	uint16_t n;
	size_t size;

	if (limit - r->pos < hdr)
		return -EAGAIN;
	n = osd__get_be16(p + (version == OSD_V1 ? 8 : 14));
	size = set_entry_len(version, n);
	if (limit - r->pos < size)
		return -EAGAIN;
	a->page = osd__get_be32(p);
	a->number = osd__get_be32(p + 4);
	if (n == 0 || n == OSD_ATTR_LEN_UNDEFINED) {
		a->length = 0;
		a->value = NULL;
	} else {
		a->length = n;
		a->value = p + hdr;
	}
	r->pos += size;
	return 1;
}

/* 0Eh: step into the next object group when the current one is used up. */
static int next_group(struct osd_attr_reader *r)
{
	while (r->pos >= r->group_end) {
		const uint8_t *p = r->buf + r->pos;

		if (r->pos == r->end)
			return 0;
		if (r->end - r->pos < MULTI_OBJ_HDR)
			return -EAGAIN;
		r->cur_object = osd__get_be64(p);
		r->group_end = r->pos + MULTI_OBJ_HDR + osd__get_be16(p + 14);
		r->pos += MULTI_OBJ_HDR;
		if (r->group_end > r->end) {
			if (!osd_attr_reader_truncated(r))
				return -EBADMSG;
			r->group_end = r->end;
		}
	}
	return 1;
}

static int read_entry(struct osd_attr_reader *r, struct osd_attr *a)
{
	const uint8_t *p = r->buf + r->pos;
	int rc;

	switch (r->type) {
	case OSD_LIST_GET:
		if (r->end - r->pos < GET_ENTRY_LEN)
			return -EAGAIN;
		a->page = osd__get_be32(p);
		a->number = osd__get_be32(p + 4);
		r->pos += GET_ENTRY_LEN;
		return 1;
	case OSD_LIST_MULTI:
		rc = next_group(r);
		if (rc <= 0)
			return rc;
		a->object_id = r->cur_object;
		return read_set_entry(r, OSD_V2, r->group_end, a);
	case OSD_LIST_CREATE_MULTI:
		if (r->end - r->pos < CREATE_MULTI_ID + V1_SET_HDR)
			return -EAGAIN;
		a->object_id = osd__get_be64(p);
		r->pos += CREATE_MULTI_ID;
		rc = read_set_entry(r, OSD_V1, r->end, a);
		if (rc < 0)
			r->pos -= CREATE_MULTI_ID;
		return rc;
	default:
		return read_set_entry(r, r->version, r->end, a);
	}
}

int osd_attr_reader_next(struct osd_attr_reader *r, struct osd_attr *a)
{
	int rc;

	memset(a, 0, sizeof(*a));
	if (r->pos >= r->end && r->type != OSD_LIST_MULTI)
		return 0;
	rc = read_entry(r, a);
	if (rc == -EAGAIN) {
		/* An incomplete entry: the end of a truncated list, else malformed. */
		rc = short_entry(r);
		if (rc == 0 && r->type == OSD_LIST_MULTI && r->group_end < r->end &&
		    r->pos < r->group_end)
			rc = -EBADMSG;
		if (rc == 0)
			r->pos = r->end;
		memset(a, 0, sizeof(*a));
	}
	return rc;
}

uint64_t osd_attr_get_u64(const struct osd_attr *a, uint64_t dflt)
{
	return a->length == 8 && a->value ? osd__get_be64(a->value) : dflt;
}

uint32_t osd_attr_get_u32(const struct osd_attr *a, uint32_t dflt)
{
	return a->length == 4 && a->value ? osd__get_be32(a->value) : dflt;
}
