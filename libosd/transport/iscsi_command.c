/* SCSI Command PDUs (Extended CDB and Bidirectional AHS, immediate and
 * unsolicited data), Data-Out in answer to R2T, and Data-In placement. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <osd/types.h>
#include "iov/iov.h"
#include "transport/iscsi_private.h"

/* Whether a command may be sent again after a reconnect: what the
 * submitter set in the xfer (libosd from the command's descriptor,
 * proto/command.c); never for an xfer that predates the field or holds a
 * value this build does not know. The transport does not parse the CDB. */
int osd__iscsi_cmd_idempotent(const struct osd_xfer *xfer)
{
	if (!OSD_XFER_HAS(xfer, resend) || xfer->resend > OSD_XFER_RESEND_REPEATABLE)
		return OSD_ISCSI_RESEND_NEVER;
	return xfer->resend;
}

/* A pointer to @p len contiguous data-out bytes at @p off: inside the
 * caller's buffer when one iovec holds them, else copied into @p *tmp. */
static const uint8_t *out_bytes(const struct osd_xfer *x, size_t off, size_t len, uint8_t **tmp)
{
	size_t o = off;

	*tmp = NULL;
	for (int i = 0; i < x->out_iovcnt; i++) {
		if (o < x->out_iov[i].iov_len) {
			if (x->out_iov[i].iov_len - o >= len)
				return (const uint8_t *)x->out_iov[i].iov_base + o;
			break;
		}
		o -= x->out_iov[i].iov_len;
	}
	*tmp = malloc(len ? len : 1);
	if (!*tmp)
		return NULL;
	osd__iov_read(x->out_iov, x->out_iovcnt, off, *tmp, len);
	return *tmp;
}

static int send_data_pdu(struct osd__iscsi_sess *s, struct osd__iscsi_task *t, uint32_t ttt,
			 size_t off, size_t len, int final)
{
	struct osd__iscsi_bhs h;
	uint8_t *tmp;
	const uint8_t *d = out_bytes(t->xfer, off, len, &tmp);

	if (!d)
		return -ENOMEM;
	memset(&h, 0, sizeof(h));
	h.opcode = OSD_ISCSI_OP_DATA_OUT;
	h.flags = final ? OSD_ISCSI_F_FINAL : 0;
	osd__iscsi_lun_encode(h.lun, (uint16_t)s->url.lun);
	h.itt = t->itt;
	h.ttt = ttt;
	h.exp_stat_sn = s->expstatsn;
	h.data_sn = t->data_sn++;
	h.offset = (uint32_t)off;
	return osd__iscsi_send_borrowed(s, &h, NULL, 0, d, len, t, tmp);
}

/* One Data-Out sequence: [off, off+len) in PDUs of at most the target's
 * MaxRecvDataSegmentLength, the last with F. */
int osd__iscsi_data_out(struct osd__iscsi_sess *s, struct osd__iscsi_task *t, uint32_t ttt,
			size_t off, size_t len)
{
	size_t end = off + len;
	int rc = 0;

	t->data_sn = 0;
	while (off < end && rc == 0) {
		size_t n = end - off > s->p.max_send_dsl ? s->p.max_send_dsl : end - off;

		rc = send_data_pdu(s, t, ttt, off, n, off + n == end);
		off += n;
	}
	return rc;
}

static size_t min_sz(size_t a, size_t b)
{
	return a < b ? a : b;
}

int osd__iscsi_cmd_send(struct osd__iscsi_sess *s, struct osd__iscsi_task *t)
{
	const struct osd_xfer *x = t->xfer;
	struct osd__iscsi_bhs h;
	uint8_t ahs[OSD_ISCSI_MAX_AHS_LEN], *tmp = NULL;
	const uint8_t *imm = NULL;
	size_t imm_len = 0, unsol = 0;
	int bidi = x->out_len && x->in_len, rc;
	long ahs_len;

	ahs_len = osd__iscsi_ahs_build(ahs, sizeof(ahs), x->cdb, x->cdb_len, bidi,
				       (uint32_t)x->in_len);
	if (ahs_len < 0)
		return (int)ahs_len;
	/* unsolicited data: immediate, then Data-Out, within FirstBurstLength */
	if (x->out_len && !s->p.initial_r2t)
		unsol = min_sz(x->out_len, s->p.first_burst);
	if (x->out_len && s->p.immediate_data) {
		imm_len = min_sz(min_sz(x->out_len, s->p.first_burst), s->p.max_send_dsl);
		if (unsol < imm_len)
			unsol = imm_len;
		imm = out_bytes(x, 0, imm_len, &tmp);
		if (!imm)
			return -ENOMEM;
	}
	memset(&h, 0, sizeof(h));
	h.opcode = OSD_ISCSI_OP_SCSI_CMD;
	h.flags = OSD_ISCSI_ATTR_SIMPLE | (x->in_len ? OSD_ISCSI_F_READ : 0) |
		  (x->out_len ? OSD_ISCSI_F_WRITE : 0) | (unsol > imm_len ? 0 : OSD_ISCSI_F_FINAL);
	osd__iscsi_lun_encode(h.lun, (uint16_t)s->url.lun);
	h.itt = t->itt;
	h.ttt = (uint32_t)(x->out_len ? x->out_len : x->in_len); /* EDTL */
	t->cmdsn = s->cmdsn++;
	h.cmd_sn = t->cmdsn;
	h.exp_stat_sn = s->expstatsn;
	memcpy(h.cdb, x->cdb, min_sz(x->cdb_len, 16));
	/* the data segments borrow the caller's buffers (no copy) */
	rc = osd__iscsi_send_borrowed(s, &h, ahs, (size_t)ahs_len, imm, imm_len, t, tmp);
	if (rc == 0 && unsol > imm_len)
		rc = osd__iscsi_data_out(s, t, OSD_ISCSI_RSVD_TAG, imm_len, unsol - imm_len);
	return rc;
}

/* GOOD, CONDITION MET, INTERMEDIATE, INTERMEDIATE-CONDITION MET (SAM-5
 * status codes): the statuses without an exception. */
static int status_in_data_in_ok(uint8_t status)
{
	return status == 0x00 || status == 0x04 || status == 0x10 || status == 0x14;
}

/* Places one Data-In segment; with S the command is over. Returns 1 when
 * the task completed, 0 when more is expected, -EPROTO for a segment
 * outside the buffer (osd__iscsi_proto_error() told which task). A cancelled task (no xfer) keeps nothing. */
int osd__iscsi_data_in(struct osd__iscsi_sess *s, struct osd__iscsi_task *t,
		       const struct osd__iscsi_pdu *p)
{
	const struct osd_xfer *x = t->xfer;
	size_t off = p->bhs.offset, len = p->data_len;
	const uint8_t *src = p->data;

	if (!x)
		return p->bhs.flags & OSD_ISCSI_F_STATUS ? 1 : 0;
	/* Status in a Data-In only for a command that ended without an
	 * exception (RFC 7143 §11.7.1): a CHECK CONDITION would come without
	 * its sense, which only a SCSI Response carries. */
	if ((p->bhs.flags & OSD_ISCSI_F_STATUS) && !status_in_data_in_ok(p->bhs.status)) {
		osd__iscsi_set_error(s, "Data-In carrying status 0x%02x (task 0x%x)",
				     p->bhs.status, (unsigned)t->itt);
		osd__iscsi_proto_error(s, t->itt, 0);
		return -EPROTO;
	}
	if (!x->in_len && len) {
		/* makes no sense for this command at all (RFC 7143 §11.7) */
		osd__iscsi_set_error(s, "Data-In for a command without data-in (task 0x%x)",
				     (unsigned)t->itt);
		osd__iscsi_proto_error(s, t->itt, 1);
		return -EPROTO;
	}
	/* DataPDUInOrder and DataSequenceInOrder are Yes (we offer Yes, the
	 * result is the OR, RFC 7143 §13.19, §13.20): each Data-In starts
	 * where the last ended, numbered from DataSN 0 (§11.7.4). Another is
	 * a PDU lost, repeated or made up (§7.9); counting a repeat twice
	 * would claim bytes never received. */
	if (!osd__iscsi_task_sn_ok(t, p->bhs.data_sn, t->in_pdus)) {
		osd__iscsi_set_error(s, "Data-In with DataSN %u, expected %u (task 0x%x)",
				     (unsigned)p->bhs.data_sn, (unsigned)t->in_pdus, (unsigned)t->itt);
		osd__iscsi_proto_error(s, t->itt, 0);
		return -EPROTO;
	}
	if (off > x->in_len || len > x->in_len - off) {
		osd__iscsi_set_error(s, "Data-In [%zu, +%zu) outside the %zu-byte buffer (task 0x%x)",
				     off, len, x->in_len, (unsigned)t->itt);
		osd__iscsi_proto_error(s, t->itt, 0);
		return -EPROTO;
	}
	if (off != t->in_got) {
		osd__iscsi_set_error(s, "Data-In at offset %zu, expected %zu (task 0x%x)", off,
				     t->in_got, (unsigned)t->itt);
		osd__iscsi_proto_error(s, t->itt, 0);
		return -EPROTO;
	}
	t->in_pdus++;
	t->in_got += len;
	if (!src) /* placed by the receive path already */
		len = 0;
	for (int i = 0; i < x->in_iovcnt && len; i++) {
		size_t l = x->in_iov[i].iov_len;

		if (off >= l) {
			off -= l;
			continue;
		}
		l = min_sz(l - off, len);
		memcpy((uint8_t *)x->in_iov[i].iov_base + off, src, l);
		src += l;
		len -= l;
		off = 0;
	}
	if (!(p->bhs.flags & OSD_ISCSI_F_STATUS))
		return 0;
	t->xfer->status = p->bhs.status;
	t->xfer->sense_len = 0;
	return 1;
}

int osd__iscsi_task_sn_ok(const struct osd__iscsi_task *t, uint32_t sn, uint32_t own)
{
	return sn == own || sn == t->in_pdus + t->r2ts;
}

/* Fills the xfer from a SCSI Response: status and sense (nothing for a
 * cancelled task). Its ExpDataSN counts the Data-In (and R2T) PDUs the
 * target sent (RFC 7143 §11.4.8); more than we received means Data-In
 * lost, or still to come after the status (§7.9): -EPROTO, the connection
 * drops, instead of completing with data missing. */
int osd__iscsi_scsi_rsp(struct osd__iscsi_sess *s, struct osd__iscsi_task *t,
			const struct osd__iscsi_pdu *p)
{
	struct osd_xfer *x = t->xfer;

	if (!x)
		return 0;
	if (!osd__iscsi_task_sn_ok(t, p->bhs.data_sn, t->in_pdus)) {
		osd__iscsi_set_error(s, "SCSI Response after %u of %u Data-In PDUs (task 0x%x)",
				     (unsigned)t->in_pdus, (unsigned)p->bhs.data_sn,
				     (unsigned)t->itt);
		osd__iscsi_proto_error(s, t->itt, 0);
		return -EPROTO;
	}
	x->status = p->bhs.status;
	x->sense_len = 0;
	if (p->data_len >= 2) {
		size_t sl = (size_t)p->data[0] << 8 | p->data[1];

		sl = min_sz(min_sz(sl, p->data_len - 2), sizeof(x->sense));
		memcpy(x->sense, p->data + 2, sl);
		x->sense_len = (uint8_t)sl;
	}
	return 0;
}
