/* iSCSI Basic Header Segment and whole-PDU codec (RFC 7143 section 11). */
#include "iscsi/pdu.h"

#include "proto/byteorder.h"

#include <errno.h>
#include <string.h>

int osd__iscsi_opcode_is_request(uint8_t opcode)
{
	return opcode < 0x20;
}

const char *osd__iscsi_opcode_name(uint8_t opcode)
{
	switch (opcode) {
	case OSD_ISCSI_OP_NOP_OUT: return "NOP-Out";
	case OSD_ISCSI_OP_SCSI_CMD: return "SCSI Command";
	case OSD_ISCSI_OP_TMF_REQ: return "Task Management Request";
	case OSD_ISCSI_OP_LOGIN_REQ: return "Login Request";
	case OSD_ISCSI_OP_TEXT_REQ: return "Text Request";
	case OSD_ISCSI_OP_DATA_OUT: return "SCSI Data-Out";
	case OSD_ISCSI_OP_LOGOUT_REQ: return "Logout Request";
	case OSD_ISCSI_OP_SNACK_REQ: return "SNACK Request";
	case OSD_ISCSI_OP_NOP_IN: return "NOP-In";
	case OSD_ISCSI_OP_SCSI_RSP: return "SCSI Response";
	case OSD_ISCSI_OP_TMF_RSP: return "Task Management Response";
	case OSD_ISCSI_OP_LOGIN_RSP: return "Login Response";
	case OSD_ISCSI_OP_TEXT_RSP: return "Text Response";
	case OSD_ISCSI_OP_DATA_IN: return "SCSI Data-In";
	case OSD_ISCSI_OP_LOGOUT_RSP: return "Logout Response";
	case OSD_ISCSI_OP_R2T: return "Ready To Transfer";
	case OSD_ISCSI_OP_ASYNC_MSG: return "Asynchronous Message";
	case OSD_ISCSI_OP_REJECT: return "Reject";
	default: return "unknown";
	}
}

static int opcode_known(uint8_t op)
{
	return strcmp(osd__iscsi_opcode_name(op), "unknown") != 0;
}

void osd__iscsi_lun_encode(uint8_t out[8], uint16_t lun)
{
	memset(out, 0, 8);
	if (lun < 256) {
		out[1] = (uint8_t)lun; /* peripheral device addressing */
	} else {
		out[0] = (uint8_t)(0x40 | ((lun >> 8) & 0x3F)); /* flat space */
		out[1] = (uint8_t)lun;
	}
}

int osd__iscsi_lun_decode(const uint8_t in[8])
{
	for (int i = 2; i < 8; i++)
		if (in[i])
			return -EINVAL;
	switch (in[0] >> 6) {
	case 0: /* peripheral: bus 0 only */
		return in[0] ? -EINVAL : in[1];
	case 1: /* flat space */
		return (in[0] & 0x3F) << 8 | in[1];
	default:
		return -EINVAL;
	}
}

/* Whether bytes 8-15 hold a LUN (reserved in Logout and Reject PDUs). */
static int has_lun(uint8_t op)
{
	return op != OSD_ISCSI_OP_LOGOUT_REQ && op != OSD_ISCSI_OP_LOGOUT_RSP &&
	       op != OSD_ISCSI_OP_REJECT;
}

/* Bytes 20-47, the opcode-specific part of the BHS. */
static void encode_specific(const struct osd__iscsi_bhs *h, uint8_t *b)
{
	switch (h->opcode) {
	case OSD_ISCSI_OP_LOGIN_REQ:
	case OSD_ISCSI_OP_LOGOUT_REQ:
		osd__put_be16(b + 20, h->cid);
		osd__put_be32(b + 24, h->cmd_sn);
		osd__put_be32(b + 28, h->exp_stat_sn);
		break;
	case OSD_ISCSI_OP_SCSI_CMD:
		osd__put_be32(b + 20, h->ttt); /* Expected Data Transfer Length */
		osd__put_be32(b + 24, h->cmd_sn);
		osd__put_be32(b + 28, h->exp_stat_sn);
		memcpy(b + 32, h->cdb, 16);
		break;
	case OSD_ISCSI_OP_TMF_REQ:
		osd__put_be32(b + 20, h->ttt); /* Referenced Task Tag */
		osd__put_be32(b + 24, h->cmd_sn);
		osd__put_be32(b + 28, h->exp_stat_sn);
		osd__put_be32(b + 32, h->ref_cmd_sn);
		osd__put_be32(b + 36, h->data_sn); /* ExpDataSN */
		break;
	case OSD_ISCSI_OP_NOP_OUT:
	case OSD_ISCSI_OP_TEXT_REQ:
	case OSD_ISCSI_OP_SNACK_REQ:
		osd__put_be32(b + 20, h->ttt);
		osd__put_be32(b + 24, h->cmd_sn);
		osd__put_be32(b + 28, h->exp_stat_sn);
		if (h->opcode == OSD_ISCSI_OP_SNACK_REQ) {
			osd__put_be32(b + 40, h->data_sn); /* BegRun */
			osd__put_be32(b + 44, h->length);  /* RunLength */
		}
		break;
	case OSD_ISCSI_OP_DATA_OUT:
		osd__put_be32(b + 20, h->ttt);
		osd__put_be32(b + 28, h->exp_stat_sn);
		osd__put_be32(b + 36, h->data_sn);
		osd__put_be32(b + 40, h->offset);
		break;
	default: /* target to initiator: StatSN, ExpCmdSN, MaxCmdSN */
		osd__put_be32(b + 20, h->ttt);
		osd__put_be32(b + 24, h->stat_sn);
		osd__put_be32(b + 28, h->exp_cmd_sn);
		osd__put_be32(b + 32, h->max_cmd_sn);
		switch (h->opcode) {
		case OSD_ISCSI_OP_LOGIN_RSP:
			osd__put_be32(b + 20, 0);
			b[36] = h->status_class;
			b[37] = h->status_detail;
			break;
		case OSD_ISCSI_OP_LOGOUT_RSP:
			osd__put_be32(b + 20, 0);
			osd__put_be16(b + 40, h->time2wait);
			osd__put_be16(b + 42, h->time2retain);
			break;
		case OSD_ISCSI_OP_ASYNC_MSG:
			osd__put_be32(b + 20, 0);
			b[36] = h->async_event;
			b[37] = h->async_vcode;
			for (int i = 0; i < 3; i++)
				osd__put_be16(b + 38 + 2 * i, h->async_param[i]);
			break;
		case OSD_ISCSI_OP_TMF_RSP:
			osd__put_be32(b + 20, 0);
			break;
		default: /* SCSI Rsp, Data-In, R2T, NOP-In, Text Rsp, Reject */
			osd__put_be32(b + 36, h->data_sn);
			osd__put_be32(b + 40, h->offset);
			osd__put_be32(b + 44, h->length);
			break;
		}
	}
}

int osd__iscsi_bhs_encode(const struct osd__iscsi_bhs *h, uint8_t out[OSD_ISCSI_BHS_LEN])
{
	if (!opcode_known(h->opcode) || h->data_len > OSD_ISCSI_MAX_DLEN)
		return -EINVAL;
	memset(out, 0, OSD_ISCSI_BHS_LEN);
	out[0] = (uint8_t)(h->opcode | (h->immediate && osd__iscsi_opcode_is_request(h->opcode)
					? 0x40 : 0));
	out[1] = h->flags;
	out[2] = h->response;
	out[3] = h->status;
	out[4] = h->ahs_words;
	osd__put_be24(out + 5, h->data_len);
	if (h->opcode == OSD_ISCSI_OP_LOGIN_REQ || h->opcode == OSD_ISCSI_OP_LOGIN_RSP) {
		memcpy(out + 8, h->isid, 6);
		osd__put_be16(out + 14, h->tsih);
	} else if (has_lun(h->opcode)) {
		memcpy(out + 8, h->lun, 8);
	}
	osd__put_be32(out + 16, h->itt);
	encode_specific(h, out);
	return 0;
}

static void decode_specific(struct osd__iscsi_bhs *h, const uint8_t *b)
{
	switch (h->opcode) {
	case OSD_ISCSI_OP_LOGIN_REQ:
	case OSD_ISCSI_OP_LOGOUT_REQ:
		h->cid = osd__get_be16(b + 20);
		h->cmd_sn = osd__get_be32(b + 24);
		h->exp_stat_sn = osd__get_be32(b + 28);
		break;
	case OSD_ISCSI_OP_SCSI_CMD:
		h->ttt = osd__get_be32(b + 20);
		h->cmd_sn = osd__get_be32(b + 24);
		h->exp_stat_sn = osd__get_be32(b + 28);
		memcpy(h->cdb, b + 32, 16);
		break;
	case OSD_ISCSI_OP_TMF_REQ:
		h->ttt = osd__get_be32(b + 20);
		h->cmd_sn = osd__get_be32(b + 24);
		h->exp_stat_sn = osd__get_be32(b + 28);
		h->ref_cmd_sn = osd__get_be32(b + 32);
		h->data_sn = osd__get_be32(b + 36);
		break;
	case OSD_ISCSI_OP_NOP_OUT:
	case OSD_ISCSI_OP_TEXT_REQ:
	case OSD_ISCSI_OP_SNACK_REQ:
		h->ttt = osd__get_be32(b + 20);
		h->cmd_sn = osd__get_be32(b + 24);
		h->exp_stat_sn = osd__get_be32(b + 28);
		if (h->opcode == OSD_ISCSI_OP_SNACK_REQ) {
			h->data_sn = osd__get_be32(b + 40);
			h->length = osd__get_be32(b + 44);
		}
		break;
	case OSD_ISCSI_OP_DATA_OUT:
		h->ttt = osd__get_be32(b + 20);
		h->exp_stat_sn = osd__get_be32(b + 28);
		h->data_sn = osd__get_be32(b + 36);
		h->offset = osd__get_be32(b + 40);
		break;
	default:
		h->stat_sn = osd__get_be32(b + 24);
		h->exp_cmd_sn = osd__get_be32(b + 28);
		h->max_cmd_sn = osd__get_be32(b + 32);
		switch (h->opcode) {
		case OSD_ISCSI_OP_LOGIN_RSP:
			h->status_class = b[36];
			h->status_detail = b[37];
			break;
		case OSD_ISCSI_OP_LOGOUT_RSP:
			h->time2wait = osd__get_be16(b + 40);
			h->time2retain = osd__get_be16(b + 42);
			break;
		case OSD_ISCSI_OP_ASYNC_MSG:
			h->async_event = b[36];
			h->async_vcode = b[37];
			for (int i = 0; i < 3; i++)
				h->async_param[i] = osd__get_be16(b + 38 + 2 * i);
			break;
		case OSD_ISCSI_OP_TMF_RSP:
			break;
		default:
			h->ttt = osd__get_be32(b + 20);
			h->data_sn = osd__get_be32(b + 36);
			h->offset = osd__get_be32(b + 40);
			h->length = osd__get_be32(b + 44);
			break;
		}
	}
}

int osd__iscsi_bhs_decode(struct osd__iscsi_bhs *h, const uint8_t in[OSD_ISCSI_BHS_LEN])
{
	memset(h, 0, sizeof(*h));
	h->opcode = in[0] & 0x3F;
	if (!opcode_known(h->opcode))
		return -EPROTO;
	if (in[0] & 0x80)
		return -EPROTO; /* the bit before I is reserved */
	h->immediate = osd__iscsi_opcode_is_request(h->opcode) && (in[0] & 0x40);
	h->flags = in[1];
	h->response = in[2];
	h->status = in[3];
	h->ahs_words = in[4];
	h->data_len = osd__get_be24(in + 5);
	if (h->opcode == OSD_ISCSI_OP_LOGIN_REQ || h->opcode == OSD_ISCSI_OP_LOGIN_RSP) {
		memcpy(h->isid, in + 8, 6);
		h->tsih = osd__get_be16(in + 14);
	} else if (has_lun(h->opcode)) {
		memcpy(h->lun, in + 8, 8);
	}
	h->itt = osd__get_be32(in + 16);
	decode_specific(h, in);
	return 0;
}

size_t osd__iscsi_pdu_rest_len(const struct osd__iscsi_bhs *h, const struct osd__iscsi_digests *dg)
{
	size_t n = (size_t)h->ahs_words * 4;
	if (dg && dg->header)
		n += OSD_ISCSI_DIGEST_LEN;
	if (h->data_len) {
		n += h->data_len + osd__iscsi_pad(h->data_len);
		if (dg && dg->data)
			n += OSD_ISCSI_DIGEST_LEN;
	}
	return n;
}

void osd__iscsi_digest(uint8_t out[4], const void *buf, size_t len)
{
	uint32_t c = osd__crc32c(0, buf, len);
	out[0] = (uint8_t)c;
	out[1] = (uint8_t)(c >> 8);
	out[2] = (uint8_t)(c >> 16);
	out[3] = (uint8_t)(c >> 24);
}

static int digest_ok(const uint8_t *seg, size_t len, const uint8_t *wire)
{
	uint8_t d[4];
	osd__iscsi_digest(d, seg, len);
	return memcmp(d, wire, 4) == 0;
}

long osd__iscsi_pdu_parse(struct osd__iscsi_pdu *out, const uint8_t *buf, size_t len,
			  const struct osd__iscsi_digests *dg, size_t max_data)
{
	memset(out, 0, sizeof(*out));
	if (len < OSD_ISCSI_BHS_LEN)
		return -EBADMSG;
	int rc = osd__iscsi_bhs_decode(&out->bhs, buf);
	if (rc)
		return rc;
	const struct osd__iscsi_bhs *h = &out->bhs;
	if (h->data_len > max_data)
		return -EBADMSG;
	size_t total = OSD_ISCSI_BHS_LEN + osd__iscsi_pdu_rest_len(h, dg);
	if (len < total)
		return -EBADMSG;
	size_t pos = OSD_ISCSI_BHS_LEN;
	out->ahs_len = (size_t)h->ahs_words * 4;
	out->ahs = out->ahs_len ? buf + pos : NULL;
	pos += out->ahs_len;
	if (dg && dg->header) {
		if (!digest_ok(buf, pos, buf + pos))
			return -EBADMSG;
		pos += OSD_ISCSI_DIGEST_LEN;
	}
	out->data_len = h->data_len;
	if (out->data_len) {
		out->data = buf + pos;
		size_t padded = out->data_len + osd__iscsi_pad(out->data_len);
		if (dg && dg->data && !digest_ok(buf + pos, padded, buf + pos + padded))
			return -EILSEQ;
	}
	return (long)total;
}

long osd__iscsi_pdu_build_head(uint8_t *out, size_t cap, struct osd__iscsi_bhs *h,
			       const uint8_t *ahs, size_t ahs_len, size_t data_len,
			       const struct osd__iscsi_digests *dg)
{
	if ((ahs_len & 3) || ahs_len > OSD_ISCSI_MAX_AHS_LEN || data_len > OSD_ISCSI_MAX_DLEN)
		return -EINVAL;
	h->ahs_words = (uint8_t)(ahs_len / 4);
	h->data_len = (uint32_t)data_len;
	size_t pos = OSD_ISCSI_BHS_LEN + ahs_len + (dg && dg->header ? OSD_ISCSI_DIGEST_LEN : 0);
	if (pos > cap)
		return -ENOSPC;
	int rc = osd__iscsi_bhs_encode(h, out);
	if (rc)
		return rc;
	if (ahs_len)
		memcpy(out + OSD_ISCSI_BHS_LEN, ahs, ahs_len);
	if (dg && dg->header)
		osd__iscsi_digest(out + pos - OSD_ISCSI_DIGEST_LEN, out, pos - OSD_ISCSI_DIGEST_LEN);
	return (long)pos;
}

size_t osd__iscsi_pdu_build_tail(uint8_t out[OSD_ISCSI_PDU_TAIL_MAX], const uint8_t *data,
				 size_t data_len, const struct osd__iscsi_digests *dg)
{
	static const uint8_t zero[3];
	size_t pad = osd__iscsi_pad(data_len);

	if (!data_len)
		return 0;
	memset(out, 0, pad);
	if (!dg || !dg->data)
		return pad;
	uint32_t c = osd__crc32c(osd__crc32c(0, data, data_len), zero, pad);
	out[pad] = (uint8_t)c;
	out[pad + 1] = (uint8_t)(c >> 8);
	out[pad + 2] = (uint8_t)(c >> 16);
	out[pad + 3] = (uint8_t)(c >> 24);
	return pad + OSD_ISCSI_DIGEST_LEN;
}

long osd__iscsi_pdu_build(uint8_t *out, size_t cap, struct osd__iscsi_bhs *h,
			  const uint8_t *ahs, size_t ahs_len,
			  const uint8_t *data, size_t data_len,
			  const struct osd__iscsi_digests *dg)
{
	long head = osd__iscsi_pdu_build_head(out, cap, h, ahs, ahs_len, data_len, dg);
	if (head < 0)
		return head;
	size_t pos = (size_t)head;
	if (OSD_ISCSI_BHS_LEN + osd__iscsi_pdu_rest_len(h, dg) > cap)
		return -ENOSPC;
	if (data_len)
		memcpy(out + pos, data, data_len);
	pos += data_len;
	uint8_t tail[OSD_ISCSI_PDU_TAIL_MAX];
	size_t tl = osd__iscsi_pdu_build_tail(tail, data, data_len, dg);
	memcpy(out + pos, tail, tl);
	return (long)(pos + tl);
}
