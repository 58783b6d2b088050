/* One connection: its thread, whole-PDU receive and send, Reject. */
#include "iscsi/server.h"

#include "proto/byteorder.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

static int read_full(int fd, uint8_t *buf, size_t len)
{
	while (len) {
		ssize_t n = recv(fd, buf, len, 0);
		if (n == 0)
			return -ECONNRESET;
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

static int write_full(int fd, const uint8_t *buf, size_t len)
{
	while (len) {
		ssize_t n = send(fd, buf, len, MSG_NOSIGNAL);
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

static int grow(uint8_t **buf, size_t *cap, size_t need)
{
	if (need <= *cap)
		return 0;
	uint8_t *b = realloc(*buf, need);
	if (!b)
		return -ENOMEM;
	*buf = b;
	*cap = need;
	return 0;
}

/*
 * Receive one PDU into c->rx. Returns 0; -EOPNOTSUPP for an unknown opcode
 * (the raw BHS is in c->rx, its segments were consumed); -EILSEQ for a data
 * digest error (pdu->bhs is valid); or another -errno when the connection
 * cannot go on (EOF, header digest error, oversized segment).
 */
int osd__tgt_iscsi_conn_recv(struct iscsi_conn *c, struct osd__iscsi_pdu *pdu)
{
	int rc = grow(&c->rx, &c->rx_cap, OSD_ISCSI_BHS_LEN);
	if (rc || (rc = read_full(c->fd, c->rx, OSD_ISCSI_BHS_LEN)))
		return rc;
	/* Lengths are opcode-independent: size the rest from the raw bytes. */
	struct osd__iscsi_bhs raw = { 0 };
	raw.ahs_words = c->rx[4];
	raw.data_len = osd__get_be24(c->rx + 5);
	if (raw.data_len > c->max_recv) {
		osd__tgt_iscsi_log(c->srv, OSD_TARGET_ISCSI_LOG_WARNING,
			       "%s: data segment of %u bytes exceeds %u", c->peer, raw.data_len,
			       c->max_recv);
		return -EMSGSIZE;
	}
	size_t total = OSD_ISCSI_BHS_LEN + osd__iscsi_pdu_rest_len(&raw, &c->dg);
	if ((rc = grow(&c->rx, &c->rx_cap, total)) ||
	    (rc = read_full(c->fd, c->rx + OSD_ISCSI_BHS_LEN, total - OSD_ISCSI_BHS_LEN)))
		return rc;
	long n = osd__iscsi_pdu_parse(pdu, c->rx, total, &c->dg, c->max_recv);
	if (n == -EPROTO)
		return -EOPNOTSUPP;
	if (n == -EILSEQ) {
		osd__tgt_iscsi_log(c->srv, OSD_TARGET_ISCSI_LOG_WARNING, "%s: data digest error on %s",
			       c->peer, osd__iscsi_opcode_name(pdu->bhs.opcode));
		return -EILSEQ;
	}
	if (n < 0) {
		osd__tgt_iscsi_log(c->srv, OSD_TARGET_ISCSI_LOG_WARNING, "%s: bad PDU (header digest)",
			       c->peer);
		return (int)n;
	}
	osd__tgt_iscsi_log(c->srv, OSD_TARGET_ISCSI_LOG_DEBUG, "%s: <- %s itt %#x len %u", c->peer,
		       osd__iscsi_opcode_name(pdu->bhs.opcode), pdu->bhs.itt, pdu->bhs.data_len);
	return 0;
}

int osd__tgt_iscsi_conn_send(struct iscsi_conn *c, struct osd__iscsi_bhs *h, const uint8_t *data,
			 size_t data_len)
{
	size_t need = OSD_ISCSI_BHS_LEN + 2 * OSD_ISCSI_DIGEST_LEN + data_len + 3;
	int rc = grow(&c->tx, &c->tx_cap, need);
	if (rc)
		return rc;
	long n = osd__iscsi_pdu_build(c->tx, c->tx_cap, h, NULL, 0, data, data_len, &c->dg);
	if (n < 0)
		return (int)n;
	osd__tgt_iscsi_log(c->srv, OSD_TARGET_ISCSI_LOG_DEBUG, "%s: -> %s itt %#x len %zu", c->peer,
		       osd__iscsi_opcode_name(h->opcode), h->itt, data_len);
	return write_full(c->fd, c->tx, (size_t)n);
}

void osd__tgt_iscsi_conn_stamp(struct iscsi_conn *c, struct osd__iscsi_bhs *h, int status_carrying)
{
	h->stat_sn = c->stat_sn;
	if (status_carrying)
		c->stat_sn++;
	h->exp_cmd_sn = c->exp_cmd_sn;
	h->max_cmd_sn = c->exp_cmd_sn + ISCSI_CMD_WINDOW - 1;
}

int osd__tgt_iscsi_conn_reject(struct iscsi_conn *c, uint8_t reason, const uint8_t *bhs)
{
	struct osd__iscsi_bhs h = { 0 };
	h.opcode = OSD_ISCSI_OP_REJECT;
	h.flags = OSD_ISCSI_F_FINAL;
	h.response = reason;
	h.itt = OSD_ISCSI_RSVD_TAG;
	osd__tgt_iscsi_conn_stamp(c, &h, 1);
	osd__tgt_iscsi_log(c->srv, OSD_TARGET_ISCSI_LOG_WARNING, "%s: reject %s (reason %#x)", c->peer,
		       osd__iscsi_opcode_name(bhs[0] & 0x3F), reason);
	return osd__tgt_iscsi_conn_send(c, &h, bhs, OSD_ISCSI_BHS_LEN);
}

static void set_recv_timeout(int fd, int seconds)
{
	struct timeval tv = { seconds, 0 };
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
}

static void serve(struct iscsi_conn *c)
{
	set_recv_timeout(c->fd, ISCSI_LOGIN_TIMEOUT_S);
	c->max_recv = ISCSI_LOGIN_DSL;
	if (osd__tgt_iscsi_login(c))
		return;
	set_recv_timeout(c->fd, 0);
	c->max_recv = c->srv->ours.max_recv_dsl_target;
	for (;;) {
		struct osd__iscsi_pdu pdu;
		int rc = osd__tgt_iscsi_conn_recv(c, &pdu);
		if (rc == -EOPNOTSUPP)
			rc = osd__tgt_iscsi_conn_reject(c, OSD_ISCSI_REJECT_NOT_SUPPORTED, c->rx);
		else if (rc == -EILSEQ)
			rc = osd__tgt_iscsi_data_digest_error(c, &pdu);
		else if (rc == 0)
			rc = osd__tgt_iscsi_ffp_pdu(c, &pdu);
		if (rc)
			break;
	}
}

void *osd__tgt_iscsi_conn_main(void *arg)
{
	struct iscsi_conn *c = arg;
	osd__tgt_iscsi_log(c->srv, OSD_TARGET_ISCSI_LOG_INFO, "%s: connected", c->peer);
	serve(c);
	osd__tgt_iscsi_tasks_drop(c, NULL);
	free(c->rx);
	free(c->tx);
	c->rx = c->tx = NULL;
	shutdown(c->fd, SHUT_RDWR);
	osd__tgt_iscsi_log(c->srv, OSD_TARGET_ISCSI_LOG_INFO, "%s: closed", c->peer);
	atomic_store(&c->finished, 1);
	return NULL;
}
