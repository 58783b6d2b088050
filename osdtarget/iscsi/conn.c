/* One connection: its thread, whole-PDU receive and send, Reject. */
#include "iscsi/server.h"

#include "proto/byteorder.h"

#include <errno.h>
#include <poll.h>
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

/* Waits until @p fd is readable (0) or the monotonic @p deadline passes
 * (-ETIMEDOUT). */
static int wait_readable(int fd, uint64_t deadline)
{
	for (;;) {
		uint64_t now = osd__tgt_iscsi_now_ms();
		if (now >= deadline)
			return -ETIMEDOUT;
		uint64_t left = deadline - now;
		struct pollfd p = { fd, POLLIN, 0 };
		int n = poll(&p, 1, left > INT32_MAX ? INT32_MAX : (int)left);
		if (n > 0)
			return 0;
		if (n < 0 && errno != EINTR)
			return -errno;
	}
}

/* The bytes being read are overdue: a slow or stalled peer is closed,
 * whatever pace it trickles at (the deadline is not moved by bytes). */
static int overdue(struct iscsi_conn *c, int rc)
{
	if (rc == -ETIMEDOUT)
		osd__tgt_iscsi_refused(c->srv, "%s: %s not complete in time", c->peer,
				       atomic_load(&c->logging_in) ? "login" : "PDU");
	return rc;
}

/* recv() that waits no longer than c->deadline_ms. */
static ssize_t recv_by_deadline(struct iscsi_conn *c, void *buf, size_t len)
{
	int rc = overdue(c, wait_readable(c->fd, c->deadline_ms));
	if (rc) {
		errno = -rc;
		return -1;
	}
	return recv(c->fd, buf, len, MSG_DONTWAIT);
}

/*
 * Receive one PDU into c->rx. Returns 0; -EOPNOTSUPP for an unknown opcode
 * (the raw BHS is in c->rx, its segments were consumed); -EILSEQ for a data
 * digest error (pdu->bhs is valid); or another -errno when the connection
 * cannot go on (EOF, header digest error, oversized segment, deadline).
 */
/* Makes c->rx hold at least @p need bytes, reading whatever the socket has
 * (up to ISCSI_RX_AHEAD past @p need): with many commands in flight one
 * recv() brings several PDUs. */
static int rx_fill(struct iscsi_conn *c, size_t need)
{
	int rc = grow(&c->rx, &c->rx_cap, need + ISCSI_RX_AHEAD);
	while (rc == 0 && c->rx_have < need) {
		/* no more than ISCSI_RX_AHEAD past need: that much moves up later */
		ssize_t n = recv_by_deadline(c, c->rx + c->rx_have,
					     need + ISCSI_RX_AHEAD - c->rx_have);
		if (n == 0)
			return -ECONNRESET;
		if (n < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			return -errno;
		}
		c->rx_have += (size_t)n;
	}
	return rc;
}

/* Read of exactly @p len bytes, by c->deadline_ms. */
static int read_full(struct iscsi_conn *c, uint8_t *buf, size_t len)
{
	while (len) {
		ssize_t n = recv_by_deadline(c, buf, len);
		if (n == 0)
			return -ECONNRESET;
		if (n < 0) {
			if (errno == EINTR || errno == EAGAIN)
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
	if ((rc = read_full(c, dst + take, len - take)) ||
	    (rc = read_full(c, tail + tl, tail_len - tl)))
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

/* Our NOP-In ping (RFC 7143 11.19): a TTT the initiator must echo in a
 * NOP-Out; no StatSN is used up. */
static int send_ping(struct iscsi_conn *c, uint64_t now)
{
	struct osd__iscsi_bhs h = { 0 };
	if (++c->next_ttt == OSD_ISCSI_RSVD_TAG)
		c->next_ttt = 1;
	h.opcode = OSD_ISCSI_OP_NOP_IN;
	h.flags = OSD_ISCSI_F_FINAL;
	h.itt = OSD_ISCSI_RSVD_TAG;
	h.ttt = c->next_ttt;
	c->ping_ttt = h.ttt;
	c->ping_deadline_ms = now + c->srv->nop_ms;
	return osd__tgt_iscsi_conn_reply(c, &h, SN_KEEP, NULL, 0);
}

/*
 * Full feature phase, between PDUs: wait for the next one. After
 * idle_ms of silence a NOP-In ping goes out; a peer that sends nothing
 * (the answer or anything else) within nop_ms is closed. Tasks whose
 * Data-Out is overdue are ended on the way.
 */
static int idle_wait(struct iscsi_conn *c)
{
	struct osd_target_iscsi *srv = c->srv;
	for (;;) {
		uint64_t now = osd__tgt_iscsi_now_ms(), next;
		int rc = osd__tgt_iscsi_tasks_expire(c, now, &next);
		if (rc)
			return rc;
		int pinging = c->ping_ttt != OSD_ISCSI_RSVD_TAG;
		uint64_t until = pinging ? c->ping_deadline_ms : c->last_rx_ms + srv->idle_ms;
		if (now >= until) {
			if (pinging) {
				osd__tgt_iscsi_refused(srv, "%s: NOP-In ping unanswered", c->peer);
				return -ETIMEDOUT;
			}
			if ((rc = send_ping(c, now)))
				return rc;
			continue;
		}
		uint64_t wake = next && next < until ? next : until;
		/* Commands of ours queued behind busy workers: look again soon,
		 * and wake another worker if they are still there. */
		int queued = osd__tgt_iscsi_conn_queued(c);
		if (queued && wake > now + ISCSI_RESCUE_MS)
			wake = now + ISCSI_RESCUE_MS;
		rc = wait_readable(c->fd, wake);
		if (rc != -ETIMEDOUT)
			return rc;
		if (queued && osd__tgt_iscsi_conn_queued(c))
			osd__tgt_iscsi_pool_kick(srv);
	}
}

int osd__tgt_iscsi_conn_recv(struct iscsi_conn *c, struct osd__iscsi_pdu *pdu)
{
	/* The previous PDU stayed at c->rx until now; what was read after it moves up. */
	c->rx_have -= c->rx_used;
	if (c->rx_have) /* rx is NULL before the first PDU */
		memmove(c->rx, c->rx + c->rx_used, c->rx_have);
	c->rx_used = 0;
	int rc = 0;
	if (!atomic_load(&c->logging_in)) {
		/* A PDU is due whole within idle + nop of the wait for it ending. */
		if (c->rx_have < OSD_ISCSI_BHS_LEN)
			rc = idle_wait(c);
		c->deadline_ms = osd__tgt_iscsi_now_ms() + c->srv->idle_ms + c->srv->nop_ms;
	}
	if (rc || (rc = rx_fill(c, OSD_ISCSI_BHS_LEN)))
		return rc;
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

/* A whole PDU came in: the peer is alive (any PDU answers a ping). */
static void alive(struct iscsi_conn *c)
{
	c->last_rx_ms = osd__tgt_iscsi_now_ms();
	c->ping_ttt = OSD_ISCSI_RSVD_TAG;
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

int osd__tgt_iscsi_conn_reply(struct iscsi_conn *c, struct osd__iscsi_bhs *h, int sn,
			      const uint8_t *data, size_t data_len)
{
	pthread_mutex_lock(&c->send_mu);
	h->stat_sn = sn == SN_ZERO ? 0 : c->stat_sn;
	if (sn == SN_ADVANCE)
		c->stat_sn++;
	pthread_mutex_lock(&c->mu);
	h->exp_cmd_sn = c->exp_cmd_sn;
	h->max_cmd_sn = osd__tgt_iscsi_max_cmd_sn(c);
	pthread_mutex_unlock(&c->mu);
	int rc = osd__tgt_iscsi_conn_send(c, h, data, data_len);
	/* A PDU cut short leaves the stream unusable, whichever thread sent
	 * it: the connection thread sees the shutdown and ends it. */
	if (rc)
		shutdown(c->fd, SHUT_RDWR);
	pthread_mutex_unlock(&c->send_mu);
	return rc;
}

int osd__tgt_iscsi_conn_reject(struct iscsi_conn *c, uint8_t reason, const uint8_t *bhs)
{
	struct osd__iscsi_bhs h = { 0 };
	h.opcode = OSD_ISCSI_OP_REJECT;
	h.flags = OSD_ISCSI_F_FINAL;
	h.response = reason;
	h.itt = OSD_ISCSI_RSVD_TAG;
	osd__tgt_iscsi_log(c->srv, OSD_TARGET_ISCSI_LOG_WARNING, "%s: reject %s (reason %#x)", c->peer,
		       osd__iscsi_opcode_name(bhs[0] & 0x3F), reason);
	return osd__tgt_iscsi_conn_reply(c, &h, SN_ADVANCE, bhs, OSD_ISCSI_BHS_LEN);
}

/* A peer that does not read cannot hold the thread in send() for longer
 * than it may stay silent. */
static void set_send_timeout(struct iscsi_conn *c)
{
	unsigned ms = c->srv->idle_ms + c->srv->nop_ms;
	if (ms < c->srv->login_ms)
		ms = c->srv->login_ms;
	struct timeval tv = { (time_t)(ms / 1000u), (suseconds_t)(ms % 1000u) * 1000 };
	setsockopt(c->fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
}

static void serve(struct iscsi_conn *c)
{
	set_send_timeout(c);
	/* The whole login phase has one deadline, not one per byte or PDU. */
	c->deadline_ms = c->accepted_ms + c->srv->login_ms;
	c->max_recv = ISCSI_LOGIN_DSL;
	c->ping_ttt = OSD_ISCSI_RSVD_TAG;
	int rc = osd__tgt_iscsi_login(c);
	atomic_store(&c->logging_in, 0);
	if (rc)
		return;
	c->max_recv = c->srv->ours.max_recv_dsl_target;
	c->last_rx_ms = osd__tgt_iscsi_now_ms();
	for (;;) {
		struct osd__iscsi_pdu pdu;
		rc = osd__tgt_iscsi_conn_recv(c, &pdu);
		if (rc == 0 || rc == -EILSEQ || rc == -EOPNOTSUPP)
			alive(c);
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
	/* Commands not yet started are not run; those a worker holds finish
	 * (their answers may fail to go out) before the connection is done. */
	shutdown(c->fd, SHUT_RDWR);
	osd__tgt_iscsi_tasks_drop(c, NULL);
	osd__tgt_iscsi_sched_drop(c, NULL, OSD_ISCSI_RSVD_TAG);
	osd__tgt_iscsi_sched_quiesce(c);
	free(c->rx);
	c->rx = NULL;
	osd__tgt_iscsi_log(c->srv, OSD_TARGET_ISCSI_LOG_INFO, "%s: closed", c->peer);
	osd__tgt_iscsi_conn_finished(c);
	return NULL;
}
