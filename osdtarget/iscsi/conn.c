/* One connection: its thread, whole-PDU receive and send, Reject. */
#include "iscsi/server.h"

#include "proto/byteorder.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/time.h>
#include <unistd.h>

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
/* Makes c->rx hold at least @p need bytes, reading whatever the socket has
 * (up to ISCSI_RX_AHEAD past @p need): with many commands in flight one
 * recv() brings several PDUs. */
static int rx_fill(struct iscsi_conn *c, size_t need)
{
	int rc = grow(&c->rx, &c->rx_cap, need + ISCSI_RX_AHEAD);
	while (rc == 0 && c->rx_have < need) {
		/* no more than ISCSI_RX_AHEAD past need: that much moves up later */
		ssize_t n = recv(c->fd, c->rx + c->rx_have, need + ISCSI_RX_AHEAD - c->rx_have, 0);
		if (n == 0)
			return -ECONNRESET;
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		c->rx_have += (size_t)n;
	}
	return rc;
}

/* Blocking read of exactly @p len bytes. */
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

/*
 * A Data-Out whose segment can go straight into its task's buffer (no copy
 * through c->rx): only the head stays in c->rx. Returns 0 with @p pdu
 * filled (pdu->data points into the task's buffer), 1 to take the normal
 * path, or -errno as osd__tgt_iscsi_conn_recv().
 */
static int recv_in_place(struct iscsi_conn *c, struct osd__iscsi_pdu *pdu, size_t total)
{
	size_t head = OSD_ISCSI_BHS_LEN + (c->dg.header ? OSD_ISCSI_DIGEST_LEN : 0);
	uint8_t tail[OSD_ISCSI_PDU_TAIL_MAX], d[OSD_ISCSI_DIGEST_LEN];
	int rc = rx_fill(c, head);
	if (rc)
		return rc;
	if (c->dg.header) {
		osd__iscsi_digest(d, c->rx, OSD_ISCSI_BHS_LEN);
		if (memcmp(d, c->rx + OSD_ISCSI_BHS_LEN, OSD_ISCSI_DIGEST_LEN))
			return 1; /* the normal path reports it */
	}
	struct osd__iscsi_bhs h;
	uint8_t *dst;
	if (osd__iscsi_bhs_decode(&h, c->rx) || !(dst = osd__tgt_iscsi_data_out_dest(c, &h)))
		return 1;
	size_t len = h.data_len, tail_len = total - head - len;
	/* bytes already read ahead: the segment, its tail, then the next PDU */
	size_t ahead = c->rx_have - head, take = ahead < len ? ahead : len;
	memcpy(dst, c->rx + head, take);
	size_t tl = ahead - take < tail_len ? ahead - take : tail_len;
	memcpy(tail, c->rx + head + take, tl);
	c->rx_have = head + ahead - take - tl;
	memmove(c->rx + head, c->rx + head + take + tl, c->rx_have - head);
	c->rx_used = head;
	if ((rc = read_full(c->fd, dst + take, len - take)) ||
	    (rc = read_full(c->fd, tail + tl, tail_len - tl)))
		return rc;
	memset(pdu, 0, sizeof(*pdu));
	pdu->bhs = h;
	pdu->data = dst;
	pdu->data_len = len;
	if (c->dg.data) {
		static const uint8_t zero[3];
		size_t pad = osd__iscsi_pad(len);
		uint32_t crc = osd__crc32c(osd__crc32c(0, dst, len), zero, pad);
		d[0] = (uint8_t)crc;
		d[1] = (uint8_t)(crc >> 8);
		d[2] = (uint8_t)(crc >> 16);
		d[3] = (uint8_t)(crc >> 24);
		if (memcmp(d, tail + pad, OSD_ISCSI_DIGEST_LEN)) {
			osd__tgt_iscsi_log(c->srv, OSD_TARGET_ISCSI_LOG_WARNING,
				       "%s: data digest error on Data-Out", c->peer);
			return -EILSEQ;
		}
	}
	osd__tgt_iscsi_log(c->srv, OSD_TARGET_ISCSI_LOG_DEBUG, "%s: <- Data-Out itt %#x len %zu in place",
		       c->peer, h.itt, len);
	return 0;
}

/* With header digests, the header (BHS, AHS, digest) is checked before any
 * length in it is trusted: a garbled DataSegmentLength would otherwise have
 * us wait for bytes that never come. */
static int header_check(struct iscsi_conn *c)
{
	size_t head = OSD_ISCSI_BHS_LEN + c->rx[4] * 4u + OSD_ISCSI_DIGEST_LEN;
	uint8_t d[OSD_ISCSI_DIGEST_LEN];
	int rc;

	if (!c->dg.header)
		return 0;
	if ((rc = rx_fill(c, head)))
		return rc;
	osd__iscsi_digest(d, c->rx, head - OSD_ISCSI_DIGEST_LEN);
	if (!memcmp(d, c->rx + head - OSD_ISCSI_DIGEST_LEN, OSD_ISCSI_DIGEST_LEN))
		return 0;
	osd__tgt_iscsi_log(c->srv, OSD_TARGET_ISCSI_LOG_WARNING, "%s: bad PDU (header digest)",
			   c->peer);
	return -EBADMSG;
}

int osd__tgt_iscsi_conn_recv(struct iscsi_conn *c, struct osd__iscsi_pdu *pdu)
{
	/* The previous PDU stayed at c->rx until now; what was read after it moves up. */
	c->rx_have -= c->rx_used;
	if (c->rx_have) /* rx is NULL before the first PDU */
		memmove(c->rx, c->rx + c->rx_used, c->rx_have);
	c->rx_used = 0;
	int rc = rx_fill(c, OSD_ISCSI_BHS_LEN);
	if (rc || (rc = header_check(c)))
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
	if (raw.ahs_words == 0 && raw.data_len && (c->rx[0] & 0x3F) == OSD_ISCSI_OP_DATA_OUT) {
		rc = recv_in_place(c, pdu, total);
		if (rc != 1)
			return rc;
	}
	if ((rc = rx_fill(c, total)))
		return rc;
	c->rx_used = total;
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

/* Sends all of iov (consumed in place), retrying short writes. */
static int writev_full(int fd, struct iovec *iov, int cnt)
{
	struct msghdr m = { .msg_iov = iov, .msg_iovlen = (size_t)cnt };

	while (m.msg_iovlen) {
		ssize_t n = sendmsg(fd, &m, MSG_NOSIGNAL);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		while (m.msg_iovlen && (size_t)n >= m.msg_iov->iov_len) {
			n -= (ssize_t)m.msg_iov->iov_len;
			m.msg_iov++;
			m.msg_iovlen--;
		}
		if (m.msg_iovlen) {
			m.msg_iov->iov_base = (uint8_t *)m.msg_iov->iov_base + n;
			m.msg_iov->iov_len -= (size_t)n;
		}
	}
	return 0;
}

/* Head, data and tail go out in one sendmsg() straight from the caller's
 * buffer: Data-In segments are not copied on their way to the socket. */
int osd__tgt_iscsi_conn_send(struct iscsi_conn *c, struct osd__iscsi_bhs *h, const uint8_t *data,
			 size_t data_len)
{
	uint8_t head[OSD_ISCSI_BHS_LEN + OSD_ISCSI_DIGEST_LEN], tail[OSD_ISCSI_PDU_TAIL_MAX];
	long n = osd__iscsi_pdu_build_head(head, sizeof(head), h, NULL, 0, data_len, &c->dg);
	if (n < 0)
		return (int)n;
	struct iovec iov[3] = {
		{ head, (size_t)n },
		{ (void *)(uintptr_t)data, data_len },
		{ tail, osd__iscsi_pdu_build_tail(tail, data, data_len, &c->dg) },
	};
	osd__tgt_iscsi_log(c->srv, OSD_TARGET_ISCSI_LOG_DEBUG, "%s: -> %s itt %#x len %zu", c->peer,
		       osd__iscsi_opcode_name(h->opcode), h->itt, data_len);
	return writev_full(c->fd, iov, 3);
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
		else if (rc == 0 && atomic_load(&c->superseded))
			rc = -ECONNABORTED; /* read ahead of the reinstatement: not run */
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
	free(c->in);
	c->rx = c->in = NULL;
	shutdown(c->fd, SHUT_RDWR);
	osd__tgt_iscsi_log(c->srv, OSD_TARGET_ISCSI_LOG_INFO, "%s: closed", c->peer);
	osd__tgt_iscsi_conn_finished(c);
	return NULL;
}
