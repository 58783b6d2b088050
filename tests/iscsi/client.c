/* The test initiator (see client.h). */
#include "client.h"

#include "proto/byteorder.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

int tc_connect(struct tc *c, int port)
{
	return tc_connect_from(c, port, NULL);
}

int tc_connect_from(struct tc *c, int port, const char *source)
{
	memset(c, 0, sizeof(*c));
	c->fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (c->fd < 0)
		return -errno;
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	struct timeval tv = { 10, 0 };
	setsockopt(c->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	int one = 1;
	setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	struct sockaddr_in src = { .sin_family = AF_INET };
	if (source && (inet_pton(AF_INET, source, &src.sin_addr) != 1 ||
		       bind(c->fd, (struct sockaddr *)&src, sizeof(src)))) {
		close(c->fd);
		c->fd = -1;
		return -EADDRNOTAVAIL;
	}
	if (connect(c->fd, (struct sockaddr *)&a, sizeof(a))) {
		int err = -errno;
		close(c->fd);
		c->fd = -1;
		return err;
	}
	c->itt = 0x100;
	c->cmd_sn = 1;
	osd__iscsi_params_default(&c->params);
	return 0;
}

void tc_close(struct tc *c)
{
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
	free(c->rx);
	c->rx = NULL;
	c->rx_cap = 0;
}

int tc_send_raw(struct tc *c, const uint8_t *buf, size_t len)
{
	while (len) {
		ssize_t n = send(c->fd, buf, len, MSG_NOSIGNAL);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

int tc_send(struct tc *c, struct osd__iscsi_bhs *h, const uint8_t *ahs, size_t ahs_len,
	    const uint8_t *data, size_t data_len)
{
	size_t cap = OSD_ISCSI_BHS_LEN + ahs_len + data_len + 16;
	uint8_t *buf = malloc(cap);
	if (!buf)
		return -ENOMEM;
	long n = osd__iscsi_pdu_build(buf, cap, h, ahs, ahs_len, data, data_len, &c->dg);
	int rc = n < 0 ? (int)n : tc_send_raw(c, buf, (size_t)n);
	free(buf);
	return rc;
}

static int read_full(int fd, uint8_t *buf, size_t len)
{
	while (len) {
		ssize_t n = recv(fd, buf, len, 0);
		if (n == 0)
			return -ECONNRESET;
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return errno == EAGAIN || errno == EWOULDBLOCK ? -ETIMEDOUT : -errno;
		}
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

int tc_recv(struct tc *c, struct osd__iscsi_pdu *pdu)
{
	uint8_t bhs[OSD_ISCSI_BHS_LEN];
	int rc = read_full(c->fd, bhs, sizeof(bhs));
	if (rc)
		return rc;
	struct osd__iscsi_bhs raw = { 0 };
	raw.ahs_words = bhs[4];
	raw.data_len = osd__get_be24(bhs + 5);
	size_t total = OSD_ISCSI_BHS_LEN + osd__iscsi_pdu_rest_len(&raw, &c->dg);
	if (total > c->rx_cap) {
		uint8_t *b = realloc(c->rx, total);
		if (!b)
			return -ENOMEM;
		c->rx = b;
		c->rx_cap = total;
	}
	memcpy(c->rx, bhs, sizeof(bhs));
	rc = read_full(c->fd, c->rx + OSD_ISCSI_BHS_LEN, total - OSD_ISCSI_BHS_LEN);
	if (rc)
		return rc;
	long n = osd__iscsi_pdu_parse(pdu, c->rx, total, &c->dg, OSD_ISCSI_MAX_DLEN);
	if (n < 0)
		return (int)n;
	const struct osd__iscsi_bhs *h = &pdu->bhs;
	if (h->opcode != OSD_ISCSI_OP_R2T &&
	    !(h->opcode == OSD_ISCSI_OP_DATA_IN && !(h->flags & OSD_ISCSI_F_STATUS)))
		c->exp_stat_sn = h->stat_sn + 1;
	c->exp_cmd_sn = h->exp_cmd_sn;
	c->max_cmd_sn = h->max_cmd_sn;
	return 0;
}

static void login_bhs(struct tc *c, struct osd__iscsi_bhs *h, const struct tc_login *o,
		      int transit, int csg, int nsg)
{
	/* the socket tells concurrent sessions apart: one ISID would be one
	 * session, which a new login reinstates (RFC 7143 6.3.5) */
	const uint8_t isid[6] = { 0x80, 0x12, 0x34, 0x56, (uint8_t)(c->fd >> 8), (uint8_t)c->fd };
	memset(h, 0, sizeof(*h));
	h->opcode = OSD_ISCSI_OP_LOGIN_REQ;
	h->immediate = 1;
	h->flags = OSD_ISCSI_LOGIN_FLAGS(transit, 0, csg, nsg);
	h->status = o->version_min;
	memcpy(h->isid, o->isid ? o->isid : isid, 6);
	h->tsih = o->tsih;
	h->itt = c->itt;
	h->cmd_sn = c->cmd_sn;
	h->exp_stat_sn = c->exp_stat_sn;
}

/* One login exchange; returns status or -errno, leaves the answer in *pdu. */
static int login_xchg(struct tc *c, struct osd__iscsi_bhs *h, struct osd__iscsi_text *t,
		      struct osd__iscsi_pdu *pdu)
{
	int rc = tc_send(c, h, NULL, 0, t->data, t->len);
	t->len = 0;
	if (rc || (rc = tc_recv(c, pdu)))
		return rc;
	if (pdu->bhs.opcode != OSD_ISCSI_OP_LOGIN_RSP)
		return -EPROTO;
	return pdu->bhs.status_class << 8 | pdu->bhs.status_detail;
}

static int find_key(const struct osd__iscsi_pdu *pdu, const char *key, char *val, size_t cap)
{
	struct osd__iscsi_kv kv;
	size_t pos = 0;
	while (osd__iscsi_text_next(&kv, pdu->data, pdu->data_len, &pos) == 1) {
		if (osd__iscsi_kv_is(&kv, key) && kv.value_len < cap) {
			memcpy(val, kv.value, kv.value_len);
			val[kv.value_len] = 0;
			return 1;
		}
	}
	return 0;
}

static int chap_exchange(struct tc *c, const struct tc_login *o, struct osd__iscsi_text *t,
			 struct osd__iscsi_pdu *pdu)
{
	struct osd__iscsi_bhs h;
	char id[8], chal[600], resp[40];
	uint8_t chal_bin[256], digest[16];
	osd__iscsi_text_add(t, "CHAP_A", "5");
	login_bhs(c, &h, o, 0, 0, 0);
	int st = login_xchg(c, &h, t, pdu);
	if (st)
		return st;
	if (!find_key(pdu, "CHAP_I", id, sizeof(id)) || !find_key(pdu, "CHAP_C", chal, sizeof(chal)))
		return -EPROTO;
	long n = osd__iscsi_binary_decode(chal_bin, sizeof(chal_bin), chal, strlen(chal));
	if (n < 0)
		return -EPROTO;
	osd__iscsi_chap_response(digest, (uint8_t)atoi(id), (const uint8_t *)o->chap_secret,
				 strlen(o->chap_secret), chal_bin, (size_t)n);
	osd__iscsi_binary_encode(resp, digest, sizeof(digest));
	osd__iscsi_text_add(t, "CHAP_N", o->chap_user);
	osd__iscsi_text_add(t, "CHAP_R", resp);
	login_bhs(c, &h, o, 1, 0, 1);
	return login_xchg(c, &h, t, pdu);
}

static int apply_answers(struct tc *c, const struct osd__iscsi_pdu *pdu)
{
	struct osd__iscsi_kv kv;
	size_t pos = 0;
	int rc;
	while ((rc = osd__iscsi_text_next(&kv, pdu->data, pdu->data_len, &pos)) == 1) {
		int r = osd__iscsi_negotiate_answer(&c->params, &kv);
		if (r && r != -ENOENT)
			return r;
	}
	return rc;
}

static void operational_keys(const struct tc_login *o, struct osd__iscsi_params *p,
			     struct osd__iscsi_text *t)
{
	const char *dig = o->digests ? "CRC32C,None" : "None";
	p->max_recv_dsl_initiator = o->max_recv_dsl ? o->max_recv_dsl : 4096;
	p->first_burst = o->first_burst ? o->first_burst : 8192;
	p->max_burst = o->max_burst ? o->max_burst : 16384;
	p->initial_r2t = o->initial_r2t > 0;
	p->immediate_data = 1;
	p->header_digest = p->data_digest = o->digests;
	osd__iscsi_text_add(t, "HeaderDigest", dig);
	osd__iscsi_text_add(t, "DataDigest", dig);
	osd__iscsi_text_add_num(t, "MaxRecvDataSegmentLength", p->max_recv_dsl_initiator);
	if (o->discovery)
		return;
	osd__iscsi_text_add_num(t, "FirstBurstLength", p->first_burst);
	osd__iscsi_text_add_num(t, "MaxBurstLength", p->max_burst);
	osd__iscsi_text_add(t, "InitialR2T", p->initial_r2t ? "Yes" : "No");
	osd__iscsi_text_add(t, "ImmediateData", "Yes");
	osd__iscsi_text_add(t, "MaxOutstandingR2T", "1");
	osd__iscsi_text_add(t, "ErrorRecoveryLevel", "0");
	osd__iscsi_text_add(t, "DefaultTime2Wait", "2");
	osd__iscsi_text_add(t, "DefaultTime2Retain", "0");
	osd__iscsi_text_add(t, "IFMarker", "No");
	osd__iscsi_text_add(t, "OFMarker", "No");
}

int tc_login(struct tc *c, int port, const struct tc_login *o)
{
	struct osd__iscsi_text t = { 0 };
	struct osd__iscsi_bhs h;
	struct osd__iscsi_pdu pdu;
	int st = tc_connect_from(c, port, o->source);
	if (st)
		return st;
	osd__iscsi_text_add(&t, "InitiatorName",
			    o->initiator ? o->initiator : "iqn.2026-12.org.osd:test-client");
	osd__iscsi_text_add(&t, "SessionType", o->discovery ? "Discovery" : "Normal");
	if (o->target)
		osd__iscsi_text_add(&t, "TargetName", o->target);
	osd__iscsi_text_add(&t, "AuthMethod", o->auth_method ? o->auth_method
					    : o->chap_user ? "CHAP,None" : "None");
	login_bhs(c, &h, o, 1, 0, 1);
	st = login_xchg(c, &h, &t, &pdu);
	if (st == 0 && o->chap_user && !(pdu.bhs.flags & OSD_ISCSI_F_TRANSIT))
		st = chap_exchange(c, o, &t, &pdu);
	if (st == 0 && !(pdu.bhs.flags & OSD_ISCSI_F_TRANSIT))
		st = -EACCES; /* the target refused to leave security negotiation */
	if (st == 0) {
		operational_keys(o, &c->params, &t);
		login_bhs(c, &h, o, 1, 1, 3);
		st = login_xchg(c, &h, &t, &pdu);
	}
	if (st == 0 && !(pdu.bhs.flags & OSD_ISCSI_F_TRANSIT))
		st = -EPROTO;
	if (st == 0)
		st = apply_answers(c, &pdu);
	if (st == 0) {
		c->tsih = pdu.bhs.tsih;
		c->dg.header = c->params.header_digest;
		c->dg.data = c->params.data_digest;
		c->itt++;
	}
	osd__iscsi_text_free(&t);
	return st;
}

static int send_data_out(struct tc *c, struct tc_cmd *cmd, uint32_t itt, uint32_t ttt,
			 size_t off, size_t len)
{
	uint32_t data_sn = 0;
	size_t end = off + len;
	while (off < end) {
		size_t n = end - off;
		if (n > c->params.max_recv_dsl_target)
			n = c->params.max_recv_dsl_target;
		struct osd__iscsi_bhs h = { 0 };
		h.opcode = OSD_ISCSI_OP_DATA_OUT;
		h.flags = off + n == end ? OSD_ISCSI_F_FINAL : 0;
		osd__iscsi_lun_encode(h.lun, (uint16_t)cmd->lun);
		h.itt = itt;
		h.ttt = ttt;
		h.exp_stat_sn = c->exp_stat_sn;
		h.data_sn = data_sn++;
		h.offset = (uint32_t)off;
		int rc = tc_send(c, &h, NULL, 0, cmd->out + off, n);
		if (rc)
			return rc;
		off += n;
	}
	return 0;
}

static int start_command_attr(struct tc *c, struct tc_cmd *cmd, uint32_t itt, uint8_t attr);

static int start_command(struct tc *c, struct tc_cmd *cmd, uint32_t itt)
{
	return start_command_attr(c, cmd, itt, OSD_ISCSI_ATTR_SIMPLE);
}

int tc_start(struct tc *c, struct tc_cmd *cmd, uint8_t attr, uint32_t *itt)
{
	*itt = c->itt++;
	return start_command_attr(c, cmd, *itt, attr);
}

static int start_command_attr(struct tc *c, struct tc_cmd *cmd, uint32_t itt, uint8_t attr)
{
	uint8_t ahs[300];
	int bidi = cmd->out_len && cmd->in_len;
	long ahs_len = osd__iscsi_ahs_build(ahs, sizeof(ahs), cmd->cdb, cmd->cdb_len, bidi,
					    (uint32_t)cmd->in_len);
	if (ahs_len < 0)
		return (int)ahs_len;
	struct osd__iscsi_bhs h = { 0 };
	h.opcode = OSD_ISCSI_OP_SCSI_CMD;
	h.flags = attr | (cmd->in_len ? OSD_ISCSI_F_READ : 0) |
		  (cmd->out_len ? OSD_ISCSI_F_WRITE : 0);
	osd__iscsi_lun_encode(h.lun, (uint16_t)cmd->lun);
	h.itt = itt;
	h.ttt = (uint32_t)(cmd->out_len ? cmd->out_len : cmd->in_len); /* EDTL */
	h.cmd_sn = c->cmd_sn++;
	h.exp_stat_sn = c->exp_stat_sn;
	memcpy(h.cdb, cmd->cdb, cmd->cdb_len < 16 ? cmd->cdb_len : 16);
	size_t first = c->params.first_burst < cmd->out_len ? c->params.first_burst : cmd->out_len;
	size_t imm = first < c->params.max_recv_dsl_target ? first : c->params.max_recv_dsl_target;
	int unsolicited = !c->params.initial_r2t && imm < first;
	if (!unsolicited)
		h.flags |= OSD_ISCSI_F_FINAL;
	int rc = tc_send(c, &h, ahs, (size_t)ahs_len, cmd->out, imm);
	if (!rc && unsolicited)
		rc = send_data_out(c, cmd, itt, OSD_ISCSI_RSVD_TAG, imm, first - imm);
	return rc;
}

static void take_status(struct tc_cmd *cmd, const struct osd__iscsi_pdu *pdu)
{
	const struct osd__iscsi_bhs *h = &pdu->bhs;
	cmd->rsp_flags = h->flags;
	cmd->status = h->status;
	cmd->residual = h->length;
	if (h->opcode == OSD_ISCSI_OP_SCSI_RSP) {
		cmd->response = h->response;
		cmd->bidi_residual = h->offset;
		if (pdu->data_len >= 2) {
			size_t n = osd__get_be16(pdu->data);
			if (n > pdu->data_len - 2)
				n = pdu->data_len - 2;
			if (n > sizeof(cmd->sense))
				n = sizeof(cmd->sense);
			memcpy(cmd->sense, pdu->data + 2, n);
			cmd->sense_len = n;
		}
	}
}

uint32_t tc_sense_code(const struct tc_cmd *cmd)
{
	const uint8_t *s = cmd->sense;
	if (cmd->sense_len >= 4 && (s[0] & 0x7E) == 0x72)
		return (uint32_t)(s[1] & 0x0F) << 16 | (uint32_t)s[2] << 8 | s[3];
	if (cmd->sense_len >= 14 && (s[0] & 0x7E) == 0x70)
		return (uint32_t)(s[2] & 0x0F) << 16 | (uint32_t)s[12] << 8 | s[13];
	return 0;
}

static int run_command(struct tc *c, struct tc_cmd *cmd);

int tc_command(struct tc *c, struct tc_cmd *cmd)
{
	int rc = run_command(c, cmd);
	/* The target reports POWER ON (29h) once per LUN of a new session
	 * (SAM-5 5.14) instead of executing the command: send it again. */
	if (rc == 0 && !c->see_ua && cmd->status == 0x02 &&
	    (tc_sense_code(cmd) & 0xFFFF00) == 0x062900) {
		struct tc_cmd again = *cmd;
		again.response = again.status = again.rsp_flags = 0;
		again.residual = again.bidi_residual = 0;
		again.sense_len = 0;
		again.in_got = 0;
		again.datain_pdus = again.r2ts = again.status_in_datain = 0;
		memset(again.sense, 0, sizeof(again.sense));
		rc = run_command(c, &again);
		*cmd = again;
	}
	return rc;
}

int tc_clear_ua(struct tc *c, int lun)
{
	static const uint8_t tur[6] = { 0 };
	struct tc_cmd cmd = { .lun = lun, .cdb = tur, .cdb_len = 6 };
	int see = c->see_ua, rc;
	c->see_ua = 0;
	rc = tc_command(c, &cmd);
	c->see_ua = see;
	return rc ? rc : cmd.status ? -EIO : 0;
}

static int run_command(struct tc *c, struct tc_cmd *cmd)
{
	uint32_t itt = c->itt++;
	int rc = start_command(c, cmd, itt);
	while (!rc) {
		struct osd__iscsi_pdu pdu;
		if ((rc = tc_recv(c, &pdu)))
			break;
		const struct osd__iscsi_bhs *h = &pdu.bhs;
		if (h->itt != itt)
			return -EPROTO;
		if (h->opcode == OSD_ISCSI_OP_R2T) {
			cmd->r2ts++;
			if ((size_t)h->offset + h->length > cmd->out_len)
				return -EPROTO;
			rc = send_data_out(c, cmd, itt, h->ttt, h->offset, h->length);
		} else if (h->opcode == OSD_ISCSI_OP_DATA_IN) {
			if ((size_t)h->offset + pdu.data_len > cmd->in_len)
				return -EPROTO;
			memcpy(cmd->in + h->offset, pdu.data, pdu.data_len);
			if (h->offset + pdu.data_len > cmd->in_got)
				cmd->in_got = h->offset + pdu.data_len;
			cmd->datain_pdus++;
			if (h->flags & OSD_ISCSI_F_STATUS) {
				cmd->status_in_datain = 1;
				take_status(cmd, &pdu);
				return 0;
			}
		} else if (h->opcode == OSD_ISCSI_OP_SCSI_RSP) {
			take_status(cmd, &pdu);
			return 0;
		} else {
			return -EPROTO;
		}
	}
	return rc;
}

int tc_logout(struct tc *c)
{
	struct osd__iscsi_bhs h = { 0 };
	struct osd__iscsi_pdu pdu;
	h.opcode = OSD_ISCSI_OP_LOGOUT_REQ;
	h.immediate = 1;
	h.flags = OSD_ISCSI_F_FINAL | OSD_ISCSI_LOGOUT_SESSION;
	h.itt = c->itt++;
	h.cmd_sn = c->cmd_sn;
	h.exp_stat_sn = c->exp_stat_sn;
	int rc = tc_send(c, &h, NULL, 0, NULL, 0);
	if (rc || (rc = tc_recv(c, &pdu)))
		return rc;
	if (pdu.bhs.opcode != OSD_ISCSI_OP_LOGOUT_RSP || pdu.bhs.itt != h.itt)
		return -EPROTO;
	return pdu.bhs.response;
}

void tc_nop_out(struct tc *c, struct osd__iscsi_bhs *h, int immediate)
{
	memset(h, 0, sizeof(*h));
	h->opcode = OSD_ISCSI_OP_NOP_OUT;
	h->immediate = (uint8_t)immediate;
	h->flags = OSD_ISCSI_F_FINAL;
	h->itt = c->itt++;
	h->ttt = OSD_ISCSI_RSVD_TAG;
	h->cmd_sn = immediate ? c->cmd_sn : c->cmd_sn++;
	h->exp_stat_sn = c->exp_stat_sn;
}
