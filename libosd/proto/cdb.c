/*
 * OSD CDB codec. Every field position comes from a per-version layout table
 * (OSD-1 200 bytes, OSD-2 236 bytes) and a per-command table saying which
 * operand slots a service action uses; no OSD-2 offset is ever applied to an
 * OSD-1 CDB. Which reserved bytes the decoder rejects is documented in
 * docs/protocol-choices.md.
 */
#include <errno.h>
#include <string.h>
#include <osd/cdb.h>
#include <osd/offset.h>
#include "proto/byteorder.h"
#include "proto/command.h"

#define OSD_OPCODE 0x7F

/* Byte positions that are the same in both versions. */
#define OFF_CONTROL 1
#define OFF_ADDL_LEN 7
#define OFF_ACTION 8
#define OFF_OPTIONS 10
#define OFF_CMD_OPTIONS 11
#define OFF_TIMESTAMPS 12
#define OFF_DUP_METHOD 14
#define OFF_PARTITION 16
#define OFF_OBJECT 24
#define OFF_ATTR 52
#define OFF_CAP 80

#define CDBFMT_SHIFT 4
#define CDBFMT_MASK 0x30
#define FLUSH_SCOPE_MASK 0x03
#define CDB_MODE_MAX_LEN 18

/*
 * Per-version positions: osd-r10 §5.2 and osd2r03 §5.2.1 (field map),
 * osd2r03 §5.2.8 (security parameters); docs/protocol.md §3.1, §3.5, §3.7.
 */
struct cdb_layout {
	size_t len;
	uint8_t addl_len;
	size_t length;      /* LEN slot */
	size_t start;       /* SBA slot */
	size_t list_id;     /* LIST IDENTIFIER */
	size_t cont_len;    /* CDB CONTINUATION LENGTH, 0 = none */
	size_t num_objects; /* CREATE: NUMBER OF USER OBJECTS */
	size_t map_type;    /* READ MAP: REQUESTED MAP TYPE, 0 = none */
	size_t cap_len;
	size_t icv;
	size_t icv_len;
	size_t nonce;
	size_t din_icv;
	size_t dout_icv;
	uint8_t options_mask; /* byte 10 bits a command may set */
};

static const struct cdb_layout layout_v1 = {
	.len = OSD_CDB_V1_LEN, .addl_len = OSD_CDB_V1_LEN - 8,
	.length = 36, .start = 44, .list_id = 32, .cont_len = 0,
	.num_objects = 36, .map_type = 0,
	.cap_len = OSD_CAP_V1_LEN, .icv = 160, .icv_len = OSD_ICV_V1_LEN,
	.nonce = 180, .din_icv = 192, .dout_icv = 196,
	.options_mask = OSD_OPT_DPO | OSD_OPT_FUA,
};

static const struct cdb_layout layout_v2 = {
	.len = OSD_CDB_V2_LEN, .addl_len = OSD_CDB_V2_LEN - 8,
	.length = 32, .start = 40, .list_id = 48, .cont_len = 48,
	.num_objects = 32, .map_type = 48,
	.cap_len = OSD_CAP_V2_LEN, .icv = 184, .icv_len = OSD_ICV_V2_LEN,
	.nonce = 216, .din_icv = 228, .dout_icv = 232,
	.options_mask = OSD_OPT_DPO | OSD_OPT_FUA | 0x07,
};

static const struct cdb_layout *layout_of(enum osd_version version)
{
	if (version == OSD_V1)
		return &layout_v1;
	if (version == OSD_V2)
		return &layout_v2;
	return NULL;
}

/* Which byte-11 bits (other than CDBFMT) a command may set. */
static uint8_t cmd_opt_mask(const struct osd__cmd_desc *ci, enum osd_version version)
{
	return version == OSD_V1 ? ci->opt_v1 : ci->opt_v2;
}

/* OSD-1 FLUSH has no range scope (2); everything else in the family has 0..2. */
static uint8_t max_flush_scope(const struct osd__cmd_desc *ci, enum osd_version version)
{
	if (ci->action == OSD_ACT_FLUSH && version == OSD_V1)
		return 1;
	return ci->max_scope;
}

static int uses_ccl(const struct osd__cmd_desc *ci, enum osd_version version)
{
	return version == OSD_V2 && (ci->uses & OSD__U_CCL);
}

size_t osd_cdb_cap_offset(enum osd_version version)
{
	(void)version;
	return OFF_CAP;
}

size_t osd_cdb_icv_offset(enum osd_version version)
{
	return version == OSD_V1 ? layout_v1.icv : layout_v2.icv;
}

size_t osd_cdb_icv_len(enum osd_version version)
{
	return version == OSD_V1 ? OSD_ICV_V1_LEN : OSD_ICV_V2_LEN;
}

void osd_cdb_init(struct osd_cdb *cdb, enum osd_version version, enum osd_action action)
{
	memset(cdb, 0, sizeof(*cdb));
	cdb->version = version;
	cdb->action = action;
	cdb->attr_mode = OSD_ATTR_MODE_LIST;
	cdb->attr.list.get_list_offset = OSD_OFFSET_NONE;
	cdb->attr.list.retrieved_offset = OSD_OFFSET_NONE;
	cdb->attr.list.set_list_offset = OSD_OFFSET_NONE;
	cdb->data_in_icv_offset = OSD_OFFSET_NONE;
	cdb->data_out_icv_offset = OSD_OFFSET_NONE;
}

/* ---- encoding ---------------------------------------------------------- */

/* Writes an offset field; an offset that needs rounding is a caller bug. */
static int put_offset(enum osd_version version, uint8_t *p, uint64_t offset)
{
	uint32_t enc;
	uint64_t rounded;

	if (offset == OSD_OFFSET_NONE) {
		osd__put_be32(p, OSD_OFFSET_UNUSED);
		return 0;
	}
	if (osd_offset_encode(version, offset, &enc, &rounded) < 0 || rounded != offset)
		return -EINVAL;
	osd__put_be32(p, enc);
	return 0;
}

static int encode_attr_page(enum osd_version v, const struct osd_cdb_attr_page *a, uint8_t *p)
{
	osd__put_be32(p + 0, a->get_page);
	osd__put_be32(p + 4, a->get_alloc);
	osd__put_be32(p + 12, a->set_page);
	osd__put_be32(p + 16, a->set_number);
	osd__put_be32(p + 20, a->set_length);
	if (put_offset(v, p + 8, a->retrieved_offset) < 0 ||
	    put_offset(v, p + 24, a->set_offset) < 0)
		return -EINVAL;
	return 0;
}

static int encode_attr_list(enum osd_version v, const struct osd_cdb_attr_list *a, uint8_t *p)
{
	osd__put_be32(p + 0, a->get_list_length);
	osd__put_be32(p + 8, a->get_alloc);
	osd__put_be32(p + 16, a->set_list_length);
	if (put_offset(v, p + 4, a->get_list_offset) < 0 ||
	    put_offset(v, p + 12, a->retrieved_offset) < 0 ||
	    put_offset(v, p + 20, a->set_list_offset) < 0)
		return -EINVAL;
	return 0;
}

static int encode_attr(const struct osd_cdb *cdb, uint8_t *out)
{
	uint8_t *p = out + OFF_ATTR;
	enum osd_attr_mode mode = cdb->attr_mode;

	switch (mode) {
	case OSD_ATTR_MODE_NONE:
		osd__put_be32(p + 4, OSD_OFFSET_UNUSED);
		osd__put_be32(p + 12, OSD_OFFSET_UNUSED);
		osd__put_be32(p + 20, OSD_OFFSET_UNUSED);
		mode = OSD_ATTR_MODE_LIST;
		break;
	case OSD_ATTR_MODE_CDB:
		if (cdb->version == OSD_V1)
			return -ENOTSUP;
		if (cdb->attr.one.length > CDB_MODE_MAX_LEN)
			return -EINVAL;
		osd__put_be32(p + 0, cdb->attr.one.page);
		osd__put_be32(p + 4, cdb->attr.one.number);
		osd__put_be16(p + 8, cdb->attr.one.length);
		memcpy(p + 10, cdb->attr.one.value, cdb->attr.one.length);
		break;
	case OSD_ATTR_MODE_PAGE:
		if (encode_attr_page(cdb->version, &cdb->attr.page, p) < 0)
			return -EINVAL;
		break;
	case OSD_ATTR_MODE_LIST:
		if (encode_attr_list(cdb->version, &cdb->attr.list, p) < 0)
			return -EINVAL;
		break;
	default:
		return -EINVAL;
	}
	out[OFF_CMD_OPTIONS] |= (uint8_t)(mode << CDBFMT_SHIFT);
	return 0;
}

/* Bytes 10-12: options, command options, timestamps control. */
static int encode_control_bytes(const struct osd_cdb *cdb, const struct osd__cmd_desc *ci,
				const struct cdb_layout *l, uint8_t *out)
{
	if (ci->uses & OSD__U_FLUSH) {
		if (cdb->options || cdb->flush_scope > max_flush_scope(ci, cdb->version))
			return -EINVAL;
		out[OFF_OPTIONS] = cdb->flush_scope;
	} else {
		uint8_t iso = cdb->options & 0x07;

		if ((cdb->options & ~l->options_mask) || cdb->flush_scope || iso == 3 || iso == 6)
			return -EINVAL;
		out[OFF_OPTIONS] = cdb->options;
	}
	if (cdb->cmd_options & ~cmd_opt_mask(ci, cdb->version))
		return -EINVAL;
	out[OFF_CMD_OPTIONS] = cdb->cmd_options;
	if (ci->action == OSD_ACT_SET_KEY && cdb->cmd_options == 0)
		return -EINVAL; /* KEY TO SET 00b is reserved */
	if (cdb->timestamps_control != OSD_TIMESTAMPS_NORMAL &&
	    cdb->timestamps_control != OSD_TIMESTAMPS_BYPASS)
		return -EINVAL;
	out[OFF_TIMESTAMPS] = cdb->timestamps_control;
	return 0;
}

static int encode_operands(const struct osd_cdb *cdb, const struct osd__cmd_desc *ci,
			   const struct cdb_layout *l, uint8_t *out)
{
	if (cdb->cont_length) {
		if (cdb->version == OSD_V1)
			return -ENOTSUP;
		if (!uses_ccl(ci, cdb->version))
			return -EINVAL;
		osd__put_be32(out + l->cont_len, cdb->cont_length);
	}
	osd__put_be64(out + OFF_PARTITION, cdb->obj.partition);
	if (ci->uses & OSD__U_KEY) {
		if (cdb->key_version > 0xF)
			return -EINVAL;
		out[24] = cdb->key_version;
		memcpy(out + 25, cdb->key_id, OSD_KEY_ID_LEN);
		memcpy(out + 32, cdb->seed, OSD_SEED_LEN);
		return 0;
	}
	if (ci->uses & OSD__U_MKEY) {
		memcpy(out + 25, cdb->key_id, OSD_KEY_ID_LEN);
		osd__put_be32(out + 32, cdb->param_list_length);
		osd__put_be32(out + 36, cdb->alloc_length);
		return 0;
	}
	osd__put_be64(out + OFF_OBJECT, cdb->obj.id);
	if (ci->uses & OSD__U_DUP)
		out[OFF_DUP_METHOD] = cdb->duplication_method;
	if (ci->uses & OSD__U_LEN)
		osd__put_be64(out + l->length, cdb->length);
	if (ci->uses & OSD__U_SBA)
		osd__put_be64(out + l->start, cdb->start);
	if (ci->uses & OSD__U_NOBJ)
		osd__put_be16(out + l->num_objects, cdb->num_objects);
	if (ci->uses & OSD__U_LID)
		osd__put_be32(out + l->list_id, cdb->list_id);
	if (ci->uses & OSD__U_MAP)
		osd__put_be16(out + l->map_type, cdb->map_type);
	return 0;
}

static int encode_security(const struct osd_cdb *cdb, const struct cdb_layout *l, uint8_t *out)
{
	int rc = osd_capability_encode(cdb->version, &cdb->cap, out + OFF_CAP, l->cap_len);

	if (rc < 0)
		return rc;
	memcpy(out + l->icv, cdb->req_icv, l->icv_len);
	memcpy(out + l->nonce, cdb->nonce, OSD_NONCE_LEN);
	if (put_offset(cdb->version, out + l->din_icv, cdb->data_in_icv_offset) < 0 ||
	    put_offset(cdb->version, out + l->dout_icv, cdb->data_out_icv_offset) < 0)
		return -EINVAL;
	return 0;
}

int osd_cdb_encode(const struct osd_cdb *cdb, uint8_t *out, size_t outlen)
{
	const struct cdb_layout *l = layout_of(cdb->version);
	const struct osd__cmd_desc *ci = osd__cmd_desc_of(cdb->action);
	int code, rc;

	if (!l)
		return -EINVAL;
	if (outlen < l->len)
		return -ENOBUFS;
	code = osd_action_code(cdb->version, cdb->action);
	if (code < 0 || !ci)
		return -ENOTSUP;
	memset(out, 0, l->len);
	out[0] = OSD_OPCODE;
	out[OFF_ADDL_LEN] = l->addl_len;
	osd__put_be16(out + OFF_ACTION, (uint16_t)code);
	rc = encode_control_bytes(cdb, ci, l, out);
	if (rc == 0)
		rc = encode_operands(cdb, ci, l, out);
	if (rc == 0)
		rc = encode_attr(cdb, out);
	if (rc == 0)
		rc = encode_security(cdb, l, out);
	if (rc < 0) {
		memset(out, 0, l->len);
		return rc;
	}
	return (int)l->len;
}

/* ---- decoding ---------------------------------------------------------- */

/* Decoder state: the failing field's offset travels with the error. */
struct dec {
	const uint8_t *in;
	const struct cdb_layout *l;
	struct osd_cdb *cdb;
	uint16_t bad;
};

static int fail(struct dec *d, size_t offset)
{
	d->bad = (uint16_t)offset;
	return -EBADMSG;
}

static int get_offset(struct dec *d, size_t off, uint64_t *val)
{
	if (osd_offset_decode(d->cdb->version, osd__get_be32(d->in + off), val) < 0)
		return fail(d, off);
	return 0;
}

/* Index of the first non-zero byte of @p n at @p p, or @p n if all are zero. */
static size_t first_nonzero(const uint8_t *p, size_t n)
{
	size_t i = 0;

	while (i < n && !p[i])
		i++;
	return i;
}

/* Opcode, length byte and service action; sets version and action. */
static int decode_header(struct dec *d, size_t len)
{
	enum osd_action action;
	enum osd_version version;
	uint16_t code;

	if (len == 0 || d->in[0] != OSD_OPCODE)
		return fail(d, 0);
	if (len < 10)
		return fail(d, OFF_ADDL_LEN);
	if (len == OSD_CDB_V1_LEN && d->in[OFF_ADDL_LEN] == layout_v1.addl_len)
		d->l = &layout_v1;
	else if (len == OSD_CDB_V2_LEN && d->in[OFF_ADDL_LEN] == layout_v2.addl_len)
		d->l = &layout_v2;
	else
		return fail(d, OFF_ADDL_LEN);
	d->cdb->version = d->l == &layout_v1 ? OSD_V1 : OSD_V2;
	if (d->in[OFF_CONTROL] != 0)
		return fail(d, OFF_CONTROL);
	if (first_nonzero(d->in + 2, 5) < 5)
		return fail(d, 2 + first_nonzero(d->in + 2, 5));
	code = osd__get_be16(d->in + OFF_ACTION);
	if (osd_action_from_code(code, &action, &version) < 0) {
		d->bad = OFF_ACTION;
		/* A code in the OSD range we do not know: valid but unsupported. */
		return code >= 0x8800 && code <= 0x8FFF ? -ENOTSUP : -EBADMSG;
	}
	if (version != d->cdb->version)
		return fail(d, OFF_ACTION);
	d->cdb->action = action;
	return 0;
}

static int decode_control_bytes(struct dec *d, const struct osd__cmd_desc *ci)
{
	struct osd_cdb *cdb = d->cdb;
	uint8_t b10 = d->in[OFF_OPTIONS], b11 = d->in[OFF_CMD_OPTIONS];
	uint8_t b12 = d->in[OFF_TIMESTAMPS];

	if (ci->uses & OSD__U_FLUSH) {
		if ((b10 & ~FLUSH_SCOPE_MASK) || b10 > max_flush_scope(ci, cdb->version))
			return fail(d, OFF_OPTIONS);
		cdb->flush_scope = b10;
	} else {
		uint8_t iso = b10 & 0x07;

		if ((b10 & ~d->l->options_mask) || iso == 3 || iso == 6)
			return fail(d, OFF_OPTIONS);
		cdb->options = b10;
	}
	cdb->cmd_options = b11 & (uint8_t)~CDBFMT_MASK;
	if (cdb->cmd_options & ~cmd_opt_mask(ci, cdb->version))
		return fail(d, OFF_CMD_OPTIONS);
	if (ci->action == OSD_ACT_SET_KEY && cdb->cmd_options == 0)
		return fail(d, OFF_CMD_OPTIONS);
	if (b12 != OSD_TIMESTAMPS_NORMAL && b12 != OSD_TIMESTAMPS_BYPASS)
		return fail(d, OFF_TIMESTAMPS);
	cdb->timestamps_control = b12;
	if (d->in[13] || d->in[15])
		return fail(d, d->in[13] ? 13 : 15);
	if (ci->uses & OSD__U_DUP)
		cdb->duplication_method = d->in[OFF_DUP_METHOD];
	else if (d->in[OFF_DUP_METHOD])
		return fail(d, OFF_DUP_METHOD);
	return 0;
}

static void decode_operands(struct dec *d, const struct osd__cmd_desc *ci)
{
	struct osd_cdb *cdb = d->cdb;
	const uint8_t *in = d->in;
	const struct cdb_layout *l = d->l;

	cdb->obj.partition = osd__get_be64(in + OFF_PARTITION);
	if (ci->uses & OSD__U_KEY) {
		cdb->key_version = in[24] & 0x0F;
		memcpy(cdb->key_id, in + 25, OSD_KEY_ID_LEN);
		memcpy(cdb->seed, in + 32, OSD_SEED_LEN);
		return;
	}
	if (ci->uses & OSD__U_MKEY) {
		memcpy(cdb->key_id, in + 25, OSD_KEY_ID_LEN);
		cdb->param_list_length = osd__get_be32(in + 32);
		cdb->alloc_length = osd__get_be32(in + 36);
		return;
	}
	cdb->obj.id = osd__get_be64(in + OFF_OBJECT);
	if (ci->uses & OSD__U_LEN)
		cdb->length = osd__get_be64(in + l->length);
	if (ci->uses & OSD__U_SBA)
		cdb->start = osd__get_be64(in + l->start);
	if (ci->uses & OSD__U_NOBJ)
		cdb->num_objects = osd__get_be16(in + l->num_objects);
	if (ci->uses & OSD__U_LID)
		cdb->list_id = osd__get_be32(in + l->list_id);
	if (ci->uses & OSD__U_MAP)
		cdb->map_type = osd__get_be16(in + l->map_type);
	if (uses_ccl(ci, cdb->version))
		cdb->cont_length = osd__get_be32(in + l->cont_len);
}

static int decode_attr(struct dec *d)
{
	struct osd_cdb *cdb = d->cdb;
	const uint8_t *p = d->in + OFF_ATTR;
	unsigned fmt = (d->in[OFF_CMD_OPTIONS] & CDBFMT_MASK) >> CDBFMT_SHIFT;

	if (fmt == 0 || (fmt == OSD_ATTR_MODE_CDB && cdb->version == OSD_V1))
		return fail(d, OFF_CMD_OPTIONS);
	cdb->attr_mode = (enum osd_attr_mode)fmt;
	if (fmt == OSD_ATTR_MODE_CDB) {
		struct osd_cdb_attr_one *a = &cdb->attr.one;

		a->page = osd__get_be32(p + 0);
		a->number = osd__get_be32(p + 4);
		a->length = osd__get_be16(p + 8);
		if (a->length > CDB_MODE_MAX_LEN)
			return fail(d, OFF_ATTR + 8);
		memcpy(a->value, p + 10, a->length);
		return 0;
	}
	if (fmt == OSD_ATTR_MODE_PAGE) {
		struct osd_cdb_attr_page *a = &cdb->attr.page;

		a->get_page = osd__get_be32(p + 0);
		a->get_alloc = osd__get_be32(p + 4);
		a->set_page = osd__get_be32(p + 12);
		a->set_number = osd__get_be32(p + 16);
		a->set_length = osd__get_be32(p + 20);
		if (get_offset(d, OFF_ATTR + 8, &a->retrieved_offset) < 0 ||
		    get_offset(d, OFF_ATTR + 24, &a->set_offset) < 0)
			return -EBADMSG;
		return 0;
	}
	cdb->attr.list.get_list_length = osd__get_be32(p + 0);
	cdb->attr.list.get_alloc = osd__get_be32(p + 8);
	cdb->attr.list.set_list_length = osd__get_be32(p + 16);
	if (get_offset(d, OFF_ATTR + 4, &cdb->attr.list.get_list_offset) < 0 ||
	    get_offset(d, OFF_ATTR + 12, &cdb->attr.list.retrieved_offset) < 0 ||
	    get_offset(d, OFF_ATTR + 20, &cdb->attr.list.set_list_offset) < 0)
		return -EBADMSG;
	return 0;
}

static int decode_security(struct dec *d)
{
	struct osd_cdb *cdb = d->cdb;
	const struct cdb_layout *l = d->l;

	if (osd_capability_decode(cdb->version, d->in + OFF_CAP, l->cap_len, &cdb->cap) < 0)
		return fail(d, OFF_CAP);
	memcpy(cdb->req_icv, d->in + l->icv, l->icv_len);
	memcpy(cdb->nonce, d->in + l->nonce, OSD_NONCE_LEN);
	if (get_offset(d, l->din_icv, &cdb->data_in_icv_offset) < 0 ||
	    get_offset(d, l->dout_icv, &cdb->data_out_icv_offset) < 0)
		return -EBADMSG;
	return 0;
}

int osd_cdb_decode(const uint8_t *in, size_t len, struct osd_cdb *cdb, uint16_t *field_offset)
{
	struct dec d = { .in = in, .cdb = cdb, .bad = 0 };
	const struct osd__cmd_desc *ci;
	int rc;

	memset(cdb, 0, sizeof(*cdb));
	rc = decode_header(&d, len);
	if (rc == 0) {
		ci = osd__cmd_desc_of(cdb->action);
		rc = ci ? decode_control_bytes(&d, ci) : -ENOTSUP;
		if (rc == 0)
			decode_operands(&d, ci);
	}
	if (rc == 0)
		rc = decode_attr(&d);
	if (rc == 0)
		rc = decode_security(&d);
	if (rc < 0) {
		if (field_offset)
			*field_offset = d.bad;
		return rc;
	}
	return 0;
}
