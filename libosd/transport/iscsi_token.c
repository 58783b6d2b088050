/*
 * The channel's security token (OSD-2 Security Token VPD page B1h,
 * docs/protocol.md §12.2): what a CAPKEY request ICV is computed over. It
 * is read from the target with INQUIRY right after each login, before any
 * queued command is sent, so a token the target makes fresh per session
 * (ours: random bytes) binds every CAPKEY request to the session it was
 * signed for. A target without the page leaves the token empty.
 */
#include <errno.h>
#include <string.h>

#include "iscsi_private.h"

#define INQUIRY 0x12
#define INQUIRY_EVPD 0x01
#define VPD_SECURITY_TOKEN 0xB1
#define VPD_HDR 4u

/* Take the page from Data-In @p p into @p page; *@p next is where the
 * next Data-In starts. Returns the bytes held so far, or -1 when @p p does
 * not start at *@p next: DataPDUInOrder=Yes (RFC 7143 §13.19) leaves no
 * gap, and a gap would leave bytes of the page unset. */
static long place(const struct osd__iscsi_pdu *p, uint8_t *page, size_t cap, size_t *next)
{
	size_t off = p->bhs.offset, len = p->data_len;

	if (!p->data)
		return (long)(*next < cap ? *next : cap);
	if (off != *next)
		return -1;
	*next += len;
	if (off < cap)
		memcpy(page + off, p->data, len < cap - off ? len : cap - off);
	return (long)(*next < cap ? *next : cap);
}

/* Keep the token of a GOOD answer; anything else means no token. */
static void keep_token(struct osd__iscsi_sess *s, int good, const uint8_t *page, size_t have)
{
	size_t n;

	s->token_len = 0;
	if (!good || have < VPD_HDR || page[1] != VPD_SECURITY_TOKEN)
		return;
	n = (size_t)page[2] << 8 | page[3];
	if (n > have - VPD_HDR)
		n = have - VPD_HDR;
	if (n > sizeof(s->token))
		n = sizeof(s->token);
	memcpy(s->token, page + VPD_HDR, n);
	s->token_len = n;
}

int osd__iscsi_read_token(struct osd__iscsi_sess *s, uint64_t deadline)
{
	uint8_t page[VPD_HDR + OSD_ISCSI_TOKEN_MAX];
	struct osd__iscsi_bhs h;
	size_t have = 0, next = 0;
	long got = 0;
	int rc;

	memset(&h, 0, sizeof(h));
	h.opcode = OSD_ISCSI_OP_SCSI_CMD;
	h.immediate = 1; /* takes no CmdSN: the first queued command keeps its own */
	h.flags = OSD_ISCSI_F_FINAL | OSD_ISCSI_F_READ | OSD_ISCSI_ATTR_SIMPLE;
	osd__iscsi_lun_encode(h.lun, (uint16_t)s->url.lun);
	h.itt = osd__iscsi_new_itt(s);
	h.ttt = sizeof(page); /* expected data transfer length */
	h.cmd_sn = s->cmdsn;
	h.exp_stat_sn = s->expstatsn;
	h.cdb[0] = INQUIRY;
	h.cdb[1] = INQUIRY_EVPD;
	h.cdb[2] = VPD_SECURITY_TOKEN;
	h.cdb[3] = (uint8_t)(sizeof(page) >> 8);
	h.cdb[4] = (uint8_t)sizeof(page);
	rc = osd__iscsi_send(s, &h, NULL, 0, NULL, 0);
	while (rc == 0 && (rc = osd__iscsi_wait_pdu(s, deadline)) == 0) {
		const struct osd__iscsi_pdu *p = &s->rx.pdu;
		int done = 0;

		if (p->bhs.opcode == OSD_ISCSI_OP_NOP_IN) {
			/* a ping while we wait (RFC 7143 §11.19): answered as any other */
			if (p->bhs.ttt != OSD_ISCSI_RSVD_TAG)
				osd__iscsi_send_nop_out(s, OSD_ISCSI_RSVD_TAG, p->bhs.ttt, p->bhs.lun,
							p->data, p->data_len);
		} else if (p->bhs.itt != h.itt) {
			osd__iscsi_set_error(s, "unexpected %s while reading the security token",
					     osd__iscsi_opcode_name(p->bhs.opcode));
			rc = -EPROTO;
		} else if (p->bhs.opcode == OSD_ISCSI_OP_DATA_IN &&
			   (got = place(p, page, sizeof(page), &next)) < 0) {
			osd__iscsi_set_error(s, "Data-In at offset %u, expected %zu, answering the "
					     "INQUIRY of the security token", (unsigned)p->bhs.offset,
					     next);
			rc = -EPROTO;
		} else if (p->bhs.opcode == OSD_ISCSI_OP_DATA_IN) {
			have = (size_t)got;
			if (p->bhs.flags & OSD_ISCSI_F_STATUS) {
				keep_token(s, p->bhs.status == 0, page, have);
				done = 1;
			}
		} else if (p->bhs.opcode == OSD_ISCSI_OP_SCSI_RSP) {
			keep_token(s, p->bhs.response == 0 && p->bhs.status == 0, page, have);
			done = 1;
		} else {
			osd__iscsi_set_error(s, "unexpected %s answering INQUIRY",
					     osd__iscsi_opcode_name(p->bhs.opcode));
			rc = -EPROTO;
		}
		if (p->bhs.opcode == OSD_ISCSI_OP_SCSI_RSP ||
		    (p->bhs.opcode == OSD_ISCSI_OP_DATA_IN && (p->bhs.flags & OSD_ISCSI_F_STATUS)))
			s->expstatsn = p->bhs.stat_sn + 1;
		osd__iscsi_rx_reset(s);
		if (done)
			break;
	}
	return rc;
}
