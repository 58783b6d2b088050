/* The connection: TCP connect, PDU framing with optional CRC32C digests,
 * non-blocking send queue and receive assembly. */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include "iov/iov.h"
#include "transport/iscsi_private.h"

#define RX_INITIAL 4096

uint64_t osd__iscsi_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

void osd__iscsi_set_error(struct osd__iscsi_sess *s, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(s->err, sizeof(s->err), fmt, ap);
	va_end(ap);
}

static int poll_ms_left(uint64_t deadline)
{
	uint64_t now;

	if (!deadline)
		return 1000;
	now = osd__iscsi_now_ms();
	if (now >= deadline)
		return 0;
	return deadline - now > 1000 ? 1000 : (int)(deadline - now);
}

/* Non-blocking connect to one address, waiting until @p deadline. */
static int connect_one(const struct addrinfo *ai, uint64_t deadline)
{
	int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC,
			ai->ai_protocol);
	int one = 1, soerr = 0;
	socklen_t sl = sizeof(soerr);

	if (fd < 0)
		return -errno;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0)
		return fd;
	if (errno != EINPROGRESS) {
		soerr = errno;
		close(fd);
		return -soerr;
	}
	for (;;) {
		struct pollfd pfd = { .fd = fd, .events = POLLOUT };
		int ms = poll_ms_left(deadline), n;

		if (ms == 0) {
			close(fd);
			return -ETIMEDOUT;
		}
		n = poll(&pfd, 1, ms);
		if (n < 0 && errno != EINTR) {
			soerr = errno;
			close(fd);
			return -soerr;
		}
		if (n > 0)
			break;
	}
	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) < 0)
		soerr = errno;
	if (soerr) {
		close(fd);
		return -soerr;
	}
	return fd;
}

int osd__iscsi_connect(struct osd__iscsi_sess *s, uint64_t deadline)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM, .ai_family = AF_UNSPEC };
	struct addrinfo *res = NULL;
	char port[8];
	int rc, fd = -ENOENT;

	snprintf(port, sizeof(port), "%u", s->url.port);
	rc = getaddrinfo(s->url.host, port, &hints, &res);
	if (rc) {
		osd__iscsi_set_error(s, "cannot resolve %s: %s", s->url.host, gai_strerror(rc));
		return -EHOSTUNREACH;
	}
	for (struct addrinfo *ai = res; ai; ai = ai->ai_next) {
		fd = connect_one(ai, deadline);
		if (fd >= 0 || fd == -ETIMEDOUT)
			break;
	}
	freeaddrinfo(res);
	if (fd < 0) {
		osd__iscsi_set_error(s, "connect to %s:%u: %s", s->url.host, s->url.port,
				     strerror(-fd));
		return fd;
	}
	s->fd = fd;
	osd__iscsi_rx_clear(s);
	s->last_rx_ms = osd__iscsi_now_ms();
	return 0;
}

static void opdu_free(struct osd__iscsi_sess *s, struct osd__iscsi_opdu *p)
{
	s->sendq_mem -= p->mem;
	s->nop_answer_bytes -= p->nop_answer;
	free(p->own);
	free(p);
}

static void free_sendq(struct osd__iscsi_sess *s)
{
	while (s->sendq) {
		struct osd__iscsi_opdu *n = s->sendq->next;

		opdu_free(s, s->sendq);
		s->sendq = n;
	}
	s->sendq_tail = NULL;
}

void osd__iscsi_disconnect(struct osd__iscsi_sess *s)
{
	if (s->fd >= 0)
		close(s->fd);
	s->fd = -1;
	free_sendq(s);
	osd__iscsi_rx_clear(s);
}

static void enqueue(struct osd__iscsi_sess *s, struct osd__iscsi_opdu *pdu)
{
	pdu->next = NULL;
	if (s->sendq_tail)
		s->sendq_tail->next = pdu;
	else
		s->sendq = pdu;
	s->sendq_tail = pdu;
}

/* Lays out head and tail (codec: digests, padding, lengths); the data
 * segment is at @p data, copied into the PDU when @p copy. */
static int queue_pdu(struct osd__iscsi_sess *s, struct osd__iscsi_bhs *h, const uint8_t *ahs,
		     size_t ahs_len, const uint8_t *data, size_t dlen, int copy,
		     const struct osd__iscsi_task *t, uint8_t *owned)
{
	size_t room = OSD_ISCSI_BHS_LEN + ahs_len + OSD_ISCSI_DIGEST_LEN + OSD_ISCSI_PDU_TAIL_MAX;
	size_t mem = sizeof(struct osd__iscsi_opdu) + room + (copy || owned ? dlen : 0);
	struct osd__iscsi_opdu *pdu;
	long n;

	/* A target that sends but does not read must not make us queue
	 * without end (docs/iscsi-initiator.md, "Bounds against a hostile
	 * target"). Copied PDUs (answers, keepalives, task management,
	 * login) are what the target can provoke; a command's own PDUs are
	 * bounded by the caller's commands, and R2T answers are checked
	 * in on_r2t(). */
	if (copy && s->sendq_mem + mem > OSD_ISCSI_SENDQ_MAX) {
		osd__iscsi_set_error(s, "send queue full: %zu bytes queued, limit %u",
				     s->sendq_mem, OSD_ISCSI_SENDQ_MAX);
		free(owned);
		return -ENOBUFS;
	}
	pdu = malloc(sizeof(*pdu) + room + (copy ? dlen : 0));
	if (!pdu) {
		free(owned);
		return -ENOMEM;
	}
	n = osd__iscsi_pdu_build_head(pdu->buf, room, h, ahs, ahs_len, dlen, &s->p.dg);
	if (n < 0) {
		free(owned);
		free(pdu);
		return (int)n;
	}
	pdu->own = owned;
	pdu->mem = mem;
	pdu->nop_answer = 0;
	s->sendq_mem += mem;
	pdu->task = owned || copy ? NULL : t;
	pdu->iov[0] = (struct iovec){ pdu->buf, (size_t)n };
	pdu->iov[2].iov_base = pdu->buf + n;
	pdu->iov[2].iov_len = osd__iscsi_pdu_build_tail(pdu->iov[2].iov_base, data, dlen, &s->p.dg);
	if (copy && dlen) {
		uint8_t *d = pdu->buf + room;

		memcpy(d, data, dlen);
		data = d;
	}
	pdu->iov[1] = (struct iovec){ (void *)(uintptr_t)data, dlen };
	enqueue(s, pdu);
	return 0;
}

int osd__iscsi_send(struct osd__iscsi_sess *s, struct osd__iscsi_bhs *h, const uint8_t *ahs,
		    size_t ahs_len, const uint8_t *data, size_t dlen)
{
	return queue_pdu(s, h, ahs, ahs_len, data, dlen, 1, NULL, NULL);
}

int osd__iscsi_send_borrowed(struct osd__iscsi_sess *s, struct osd__iscsi_bhs *h,
			     const uint8_t *ahs, size_t ahs_len, const uint8_t *data, size_t dlen,
			     const struct osd__iscsi_task *t, uint8_t *owned)
{
	return queue_pdu(s, h, ahs, ahs_len, data, dlen, 0, t, owned);
}

/* The answer to a ping (RFC 7143 §11.18, §11.19) echoes its data. A target
 * that pings without reading the answers would have them pile up: beyond
 * OSD_ISCSI_NOP_ANSWER_MAX queued answer bytes they are dropped, which
 * costs the target nothing it did not already lose by not reading. */
int osd__iscsi_send_nop_answer(struct osd__iscsi_sess *s, struct osd__iscsi_bhs *h,
			       const uint8_t *data, size_t dlen)
{
	size_t bytes = OSD_ISCSI_BHS_LEN + dlen;
	int rc;

	if (s->nop_answer_bytes + bytes > OSD_ISCSI_NOP_ANSWER_MAX) {
		s->nop_answers_dropped++;
		return 1;
	}
	rc = osd__iscsi_send(s, h, NULL, 0, data, dlen);
	if (rc)
		return rc;
	s->sendq_tail->nop_answer = bytes;
	s->nop_answer_bytes += bytes;
	return 0;
}

/* The task's buffers may go away once it completes (a target that ends a
 * command early, an abort, the submitter giving up): what is still queued
 * from them is copied. If
 * that copy cannot be made the connection is dropped (nothing of the PDU
 * may be skipped without breaking the stream). */
void osd__iscsi_sendq_release(struct osd__iscsi_sess *s, const struct osd__iscsi_task *t)
{
	for (struct osd__iscsi_opdu *p = s->sendq; p; p = p->next) {
		if (p->task != t)
			continue;
		p->task = NULL;
		if (!p->iov[1].iov_len)
			continue;
		p->own = malloc(p->iov[1].iov_len);
		if (p->own) {
			p->mem += p->iov[1].iov_len;
			s->sendq_mem += p->iov[1].iov_len;
		} else {
			osd__iscsi_set_error(s, "out of memory keeping a queued PDU");
			shutdown(s->fd, SHUT_RDWR);
			free_sendq(s);
			return;
		}
		memcpy(p->own, p->iov[1].iov_base, p->iov[1].iov_len);
		p->iov[1].iov_base = p->own;
	}
}

#define SEND_BATCH 64 /* iovecs per sendmsg(): several queued PDUs go out at once */

/* Marks @p n bytes sent from the head of the queue; frees finished PDUs. */
static void consume(struct osd__iscsi_sess *s, size_t n)
{
	while (s->sendq) {
		struct osd__iscsi_opdu *p = s->sendq;

		for (int i = 0; i < 3; i++) {
			size_t l = p->iov[i].iov_len < n ? p->iov[i].iov_len : n;

			if (!l)
				continue; /* an absent segment's base is NULL: no arithmetic on it */
			p->iov[i].iov_base = (uint8_t *)p->iov[i].iov_base + l;
			p->iov[i].iov_len -= l;
			n -= l;
		}
		if (p->iov[0].iov_len || p->iov[1].iov_len || p->iov[2].iov_len)
			return;
		s->sendq = p->next;
		if (!s->sendq)
			s->sendq_tail = NULL;
		opdu_free(s, p);
	}
}

/* Sends what the socket takes. Returns 0 (maybe with data left) or -errno. */
int osd__iscsi_flush(struct osd__iscsi_sess *s)
{
	while (s->sendq && s->fd >= 0) {
		struct iovec iov[SEND_BATCH];
		struct msghdr m = { .msg_iov = iov };
		ssize_t n;

		for (struct osd__iscsi_opdu *p = s->sendq; p && m.msg_iovlen + 3 <= SEND_BATCH;
		     p = p->next)
			for (int i = 0; i < 3; i++)
				if (p->iov[i].iov_len)
					iov[m.msg_iovlen++] = p->iov[i];
		n = sendmsg(s->fd, &m, MSG_NOSIGNAL);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return 0;
			osd__iscsi_set_error(s, "send: %s", strerror(errno));
			return -errno;
		}
		consume(s, (size_t)n);
	}
	return s->fd >= 0 ? 0 : -ENOTCONN;
}

#define RX_AHEAD 16384 /* read ahead of the current PDU: several small PDUs per recv() */

/* The PDU in rx was handled: the next read starts after it. Its bytes stay
 * valid until then (callers look at pdu.data after resetting). */
void osd__iscsi_rx_reset(struct osd__iscsi_sess *s)
{
	s->rx.consumed = s->rx.have_bhs && s->rx.need <= s->rx.have ? s->rx.need : 0;
	s->rx.need = OSD_ISCSI_BHS_LEN;
	s->rx.have_bhs = 0;
	s->rx.direct = NULL;
}

/* Task @p t completes while its Data-In segment is being received (only an
 * outside event can do that): its buffers may go, so the stream cannot be
 * followed any further. The connection is shut down and lost next read. */
void osd__iscsi_rx_forget(struct osd__iscsi_sess *s, const struct osd__iscsi_task *t)
{
	if (s->rx.direct != t || s->fd < 0)
		return;
	osd__iscsi_set_error(s, "command completed while its data was arriving");
	s->rx.direct = NULL;
	s->rx.have_bhs = 0;
	s->rx.have = s->rx.consumed = 0;
	shutdown(s->fd, SHUT_RDWR);
}

/* A new or lost connection: nothing read so far counts. */
void osd__iscsi_rx_clear(struct osd__iscsi_sess *s)
{
	osd__iscsi_rx_reset(s);
	s->rx.have = s->rx.consumed = 0;
}

static int rx_reserve(struct osd__iscsi_sess *s, size_t need)
{
	uint8_t *nb;
	size_t cap = s->rx.cap ? s->rx.cap : RX_INITIAL;

	if (need <= s->rx.cap)
		return 0;
	while (cap < need)
		cap *= 2;
	nb = realloc(s->rx.buf, cap);
	if (!nb)
		return -ENOMEM;
	s->rx.buf = nb;
	s->rx.cap = cap;
	return 0;
}

/* One readv() on the connection, retried on EINTR. Returns the bytes read,
 * 0 when the socket has nothing for now, or a negative errno with the
 * reason recorded (-ECONNRESET when the target closed the connection). */
static ssize_t rx_read(struct osd__iscsi_sess *s, const struct iovec *iov, int cnt)
{
	if (s->rx.no_read)
		return 0; /* this service call's budget is spent */
	for (;;) {
		ssize_t n = readv(s->fd, iov, cnt);

		if (n > 0) {
			s->rx.bytes_read += (size_t)n;
			return n;
		}
		if (n == 0) {
			osd__iscsi_set_error(s, "connection closed by the target");
			return -ECONNRESET;
		}
		if (errno == EINTR)
			continue;
		if (errno == EAGAIN || errno == EWOULDBLOCK)
			return 0;
		osd__iscsi_set_error(s, "recv: %s", strerror(errno));
		return -errno;
	}
}

/* Fills @p out (at most @p max entries) with where segment bytes
 * [off, off + len) of the direct task go: its in_iov, or for a cancelled
 * task (no xfer) the sink, whose bytes are dropped (at most its size per
 * call). Returns the count. */
static int rx_slice(struct osd__iscsi_sess *s, size_t off, size_t len, struct iovec *out,
		    int max)
{
	const struct osd_xfer *x = s->rx.direct->xfer;

	if (x)
		return osd__iov_slice(x->in_iov, x->in_iovcnt, off, len, out, max, NULL);
	if (!len || max < 1)
		return 0;
	out[0] = (struct iovec){ s->rx.sink, len < sizeof(s->rx.sink) ? len : sizeof(s->rx.sink) };
	return 1;
}

/* A Data-In segment with a known task and in its buffer goes there directly. */
static void rx_maybe_direct(struct osd__iscsi_sess *s, size_t head)
{
	const struct osd__iscsi_bhs *h = &s->rx.bhs;
	struct osd__iscsi_task *t;

	if (h->opcode != OSD_ISCSI_OP_DATA_IN || h->ahs_words || !h->data_len)
		return;
	t = osd__iscsi_find_task(s, h->itt);
	if (!t || (t->xfer && (h->offset > t->xfer->in_len ||
			       h->data_len > t->xfer->in_len - h->offset ||
			       h->offset != t->in_got ||
			       !osd__iscsi_task_sn_ok(t, h->data_sn, t->in_pdus))))
		return; /* the normal path reports it, before placing anything */
	s->rx.direct = t;
	s->rx.d_done = 0;
	s->rx.tail_have = 0;
	s->rx.tail_len = osd__iscsi_pdu_rest_len(h, &s->p.dg) - (head - OSD_ISCSI_BHS_LEN) -
			 h->data_len;
	s->rx.need = head;
}

/* Bytes of the header (BHS, AHS, header digest) of the PDU in rx. */
static size_t rx_head_len(const struct osd__iscsi_sess *s)
{
	return OSD_ISCSI_BHS_LEN + s->rx.buf[4] * 4u + (s->p.dg.header ? OSD_ISCSI_DIGEST_LEN : 0);
}

/* Once the header is in: checks its digest before trusting any length in
 * it (a garbled DataSegmentLength would otherwise have us wait for bytes
 * that never come), then sizes the whole PDU and checks it is acceptable. */
static int rx_size_pdu(struct osd__iscsi_sess *s, size_t head)
{
	struct osd__iscsi_bhs *h = &s->rx.bhs;
	uint8_t d[OSD_ISCSI_DIGEST_LEN];
	int rc;

	if (s->p.dg.header) {
		osd__iscsi_digest(d, s->rx.buf, head - OSD_ISCSI_DIGEST_LEN);
		if (memcmp(d, s->rx.buf + head - OSD_ISCSI_DIGEST_LEN, OSD_ISCSI_DIGEST_LEN)) {
			osd__iscsi_set_error(s, "bad header digest from the target");
			return -EPROTO;
		}
	}
	rc = osd__iscsi_bhs_decode(h, s->rx.buf);
	if (rc) {
		osd__iscsi_set_error(s, "malformed PDU header from the target");
		osd__iscsi_proto_error(s, OSD_ISCSI_RSVD_TAG, 0);
		return -EPROTO;
	}
	if (h->data_len > s->p.max_recv_dsl) {
		osd__iscsi_set_error(s, "target sent a %u-byte data segment (limit %u)",
				     (unsigned)h->data_len, s->p.max_recv_dsl);
		/* RFC 7143 §13.12: above what we declared */
		osd__iscsi_proto_error(s, OSD_ISCSI_RSVD_TAG, 0);
		return -EPROTO;
	}
	s->rx.need = OSD_ISCSI_BHS_LEN + osd__iscsi_pdu_rest_len(h, &s->p.dg);
	s->rx.have_bhs = 1;
	rx_maybe_direct(s, head);
	return rx_reserve(s, s->rx.need);
}

/* Drops the last PDU's bytes, keeping what was read ahead of it. */
static void rx_compact(struct osd__iscsi_sess *s)
{
	if (!s->rx.consumed)
		return;
	s->rx.have -= s->rx.consumed;
	memmove(s->rx.buf, s->rx.buf + s->rx.consumed, s->rx.have);
	s->rx.consumed = 0;
}

/* Moves read-ahead bytes behind the head of a direct PDU into place. */
static void rx_direct_ahead(struct osd__iscsi_sess *s)
{
	struct osd__iscsi_rx *r = &s->rx;
	size_t extra = r->have - r->need, take = r->bhs.data_len - r->d_done, tl;
	const uint8_t *src = r->buf + r->need;
	struct iovec iov[8];

	if (take > extra)
		take = extra;
	while (take) {
		int n = rx_slice(s, r->bhs.offset + r->d_done, take, iov, 8);

		if (n == 0)
			break; /* cannot happen: the segment was checked against in_len */
		for (int i = 0; i < n; i++) {
			memcpy(iov[i].iov_base, src, iov[i].iov_len);
			src += iov[i].iov_len;
			r->d_done += iov[i].iov_len;
			take -= iov[i].iov_len;
			extra -= iov[i].iov_len;
		}
	}
	tl = r->tail_len - r->tail_have < extra ? r->tail_len - r->tail_have : extra;
	memcpy(r->tail + r->tail_have, src, tl);
	r->tail_have += tl;
	src += tl;
	extra -= tl;
	memmove(r->buf + r->need, src, extra);
	r->have = r->need + extra;
}

/* Reads the rest of a direct segment and its tail with readv(). Returns 1
 * when all is in, 0 for "not yet", or a negative errno. */
static int rx_direct_read(struct osd__iscsi_sess *s)
{
	struct osd__iscsi_rx *r = &s->rx;

	while (r->d_done < r->bhs.data_len || r->tail_have < r->tail_len) {
		struct iovec iov[16];
		int n = rx_slice(s, r->bhs.offset + r->d_done, r->bhs.data_len - r->d_done, iov,
				 15);
		ssize_t got;

		if (r->tail_have < r->tail_len)
			iov[n++] = (struct iovec){ r->tail + r->tail_have, r->tail_len - r->tail_have };
		got = rx_read(s, iov, n);
		if (got <= 0)
			return (int)got;
		size_t d = r->bhs.data_len - r->d_done < (size_t)got ? r->bhs.data_len - r->d_done
								     : (size_t)got;
		r->d_done += d;
		r->tail_have += (size_t)got - d;
	}
	return 1;
}

/* Data digest of a direct PDU (rx_size_pdu() checked the header's): the
 * segment is in the task's buffers, padding and data digest in tail. The
 * dropped segment of a cancelled task is not checked: none of it is kept,
 * and the header digest has vouched for its length. */
static int rx_direct_check(struct osd__iscsi_sess *s)
{
	struct osd__iscsi_rx *r = &s->rx;
	uint8_t d[OSD_ISCSI_DIGEST_LEN];
	size_t pad = osd__iscsi_pad(r->bhs.data_len);

	if (s->p.dg.data && r->direct->xfer) {
		struct iovec iov[64];
		size_t off = 0;
		uint32_t c = 0;

		while (off < r->bhs.data_len) {
			int n = rx_slice(s, r->bhs.offset + off, r->bhs.data_len - off, iov, 64);

			for (int i = 0; i < n; i++) {
				c = osd__crc32c(c, iov[i].iov_base, iov[i].iov_len);
				off += iov[i].iov_len;
			}
		}
		c = osd__crc32c(c, r->tail, pad);
		d[0] = (uint8_t)c;
		d[1] = (uint8_t)(c >> 8);
		d[2] = (uint8_t)(c >> 16);
		d[3] = (uint8_t)(c >> 24);
		if (memcmp(d, r->tail + pad, OSD_ISCSI_DIGEST_LEN)) {
			osd__iscsi_set_error(s, "data digest mismatch from the target");
			return -EPROTO;
		}
	}
	r->direct = NULL; /* all in: completing the task no longer concerns us */
	memset(&r->pdu, 0, sizeof(r->pdu));
	r->pdu.bhs = r->bhs;
	r->pdu.data_len = r->bhs.data_len;
	return 1;
}

/* Reads until one whole PDU is in rx. Returns 1 when one is ready, 0 when
 * the socket has no more for now, or a negative errno (connection lost). */
int osd__iscsi_recv(struct osd__iscsi_sess *s)
{
	long lrc;
	int rc;

	if (s->fd < 0)
		return -ENOTCONN;
	rx_compact(s);
	if (rx_reserve(s, OSD_ISCSI_BHS_LEN + RX_AHEAD))
		return -ENOMEM;
	for (;;) {
		if (!s->rx.have_bhs && s->rx.have >= OSD_ISCSI_BHS_LEN) {
			size_t head = rx_head_len(s);

			if (s->rx.have < head)
				s->rx.need = head; /* the AHS and header digest first */
			else if ((rc = rx_size_pdu(s, head)))
				return rc;
		}
		if (s->rx.have >= s->rx.need)
			break;
		/* read what this PDU lacks, plus up to RX_AHEAD of what follows */
		size_t want = s->rx.need - s->rx.have + RX_AHEAD;
		if (s->rx.direct || want > s->rx.cap - s->rx.have)
			want = s->rx.direct ? s->rx.need - s->rx.have : s->rx.cap - s->rx.have;
		struct iovec iov = { s->rx.buf + s->rx.have, want };
		ssize_t n = rx_read(s, &iov, 1);

		if (n <= 0)
			return (int)n;
		s->rx.have += (size_t)n;
	}
	if (s->rx.direct) {
		if (s->rx.have > s->rx.need)
			rx_direct_ahead(s);
		rc = rx_direct_read(s);
		if (rc == 1)
			rc = rx_direct_check(s);
		if (rc == 1)
			s->last_rx_ms = osd__iscsi_now_ms();
		return rc;
	}
	lrc = osd__iscsi_pdu_parse(&s->rx.pdu, s->rx.buf, s->rx.need, &s->p.dg, s->p.max_recv_dsl);
	if (lrc < 0) {
		osd__iscsi_set_error(s, "%s from the target", lrc == -EILSEQ ? "data digest mismatch" :
				     lrc == -EBADMSG ? "bad header digest or malformed PDU" :
				     "unknown opcode");
		return -EPROTO;
	}
	s->last_rx_ms = osd__iscsi_now_ms();
	return 1;
}

/* Blocking helper for login and logout: flushes the send queue and waits
 * for one whole PDU. Returns 0 or -errno (-ETIMEDOUT at the deadline). The
 * deadline is checked before each PDU too: a target that keeps sending
 * (endless Login Responses, a NOP-In flood during logout) must not keep
 * the caller past it. */
int osd__iscsi_wait_pdu(struct osd__iscsi_sess *s, uint64_t deadline)
{
	for (;;) {
		struct pollfd pfd = { .fd = s->fd, .events = POLLIN };
		int rc, ms;

		if (deadline && osd__iscsi_now_ms() >= deadline) {
			osd__iscsi_set_error(s, "no answer from the target in time");
			return -ETIMEDOUT;
		}
		rc = osd__iscsi_flush(s);
		if (rc)
			return rc;
		rc = osd__iscsi_recv(s);
		if (rc < 0)
			return rc;
		if (rc == 1)
			return 0;
		if (s->sendq)
			pfd.events |= POLLOUT;
		ms = poll_ms_left(deadline);
		if (ms == 0) {
			osd__iscsi_set_error(s, "no answer from the target in time");
			return -ETIMEDOUT;
		}
		if (poll(&pfd, 1, ms) < 0 && errno != EINTR)
			return -errno;
	}
}
