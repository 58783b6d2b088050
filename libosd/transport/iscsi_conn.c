/* The connection: TCP connect, PDU framing with optional CRC32C digests,
 * non-blocking send queue and receive assembly. */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
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
	osd__iscsi_rx_reset(s);
	s->last_rx_ms = osd__iscsi_now_ms();
	return 0;
}

static void free_sendq(struct osd__iscsi_sess *s)
{
	while (s->sendq) {
		struct osd__iscsi_opdu *n = s->sendq->next;

		free(s->sendq);
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
	osd__iscsi_rx_reset(s);
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

/* Lays the PDU out (codec: digests, padding, lengths) and queues it. */
int osd__iscsi_send(struct osd__iscsi_sess *s, struct osd__iscsi_bhs *h, const uint8_t *ahs,
		    size_t ahs_len, const uint8_t *data, size_t dlen)
{
	size_t len = OSD_ISCSI_BHS_LEN + ahs_len + 2 * OSD_ISCSI_DIGEST_LEN + dlen + 3;
	struct osd__iscsi_opdu *pdu = malloc(sizeof(*pdu) + len);
	long n;

	if (!pdu)
		return -ENOMEM;
	n = osd__iscsi_pdu_build(pdu->buf, len, h, ahs, ahs_len, data, dlen, &s->p.dg);
	if (n < 0) {
		free(pdu);
		return (int)n;
	}
	pdu->len = (size_t)n;
	pdu->sent = 0;
	enqueue(s, pdu);
	return 0;
}

/* Sends what the socket takes. Returns 0 (maybe with data left) or -errno. */
int osd__iscsi_flush(struct osd__iscsi_sess *s)
{
	while (s->sendq && s->fd >= 0) {
		struct osd__iscsi_opdu *p = s->sendq;
		ssize_t n = send(s->fd, p->buf + p->sent, p->len - p->sent, MSG_NOSIGNAL);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return 0;
			osd__iscsi_set_error(s, "send: %s", strerror(errno));
			return -errno;
		}
		p->sent += (size_t)n;
		if (p->sent < p->len)
			return 0;
		s->sendq = p->next;
		if (!s->sendq)
			s->sendq_tail = NULL;
		free(p);
	}
	return s->fd >= 0 ? 0 : -ENOTCONN;
}

void osd__iscsi_rx_reset(struct osd__iscsi_sess *s)
{
	s->rx.have = 0;
	s->rx.need = OSD_ISCSI_BHS_LEN;
	s->rx.have_bhs = 0;
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

/* Once the BHS is in: how long the whole PDU is; checks it is acceptable. */
static int rx_size_pdu(struct osd__iscsi_sess *s)
{
	struct osd__iscsi_bhs h;
	int rc = osd__iscsi_bhs_decode(&h, s->rx.buf);

	if (rc) {
		osd__iscsi_set_error(s, "malformed PDU header from the target");
		return -EPROTO;
	}
	if (h.data_len > s->p.max_recv_dsl) {
		osd__iscsi_set_error(s, "target sent a %u-byte data segment (limit %u)",
				     (unsigned)h.data_len, s->p.max_recv_dsl);
		return -EPROTO;
	}
	s->rx.need = OSD_ISCSI_BHS_LEN + osd__iscsi_pdu_rest_len(&h, &s->p.dg);
	s->rx.have_bhs = 1;
	return rx_reserve(s, s->rx.need);
}

/* Reads until one whole PDU is in rx. Returns 1 when one is ready, 0 when
 * the socket has no more for now, or a negative errno (connection lost). */
int osd__iscsi_recv(struct osd__iscsi_sess *s)
{
	long lrc;
	int rc;

	if (s->fd < 0)
		return -ENOTCONN;
	if (rx_reserve(s, OSD_ISCSI_BHS_LEN))
		return -ENOMEM;
	while (s->rx.have < s->rx.need) {
		ssize_t n = recv(s->fd, s->rx.buf + s->rx.have, s->rx.need - s->rx.have, 0);

		if (n == 0) {
			osd__iscsi_set_error(s, "connection closed by the target");
			return -ECONNRESET;
		}
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return 0;
			osd__iscsi_set_error(s, "recv: %s", strerror(errno));
			return -errno;
		}
		s->rx.have += (size_t)n;
		if (!s->rx.have_bhs && s->rx.have == OSD_ISCSI_BHS_LEN) {
			rc = rx_size_pdu(s);
			if (rc)
				return rc;
		}
	}
	lrc = osd__iscsi_pdu_parse(&s->rx.pdu, s->rx.buf, s->rx.have, &s->p.dg, s->p.max_recv_dsl);
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
 * for one whole PDU. Returns 0 or -errno (-ETIMEDOUT at the deadline). */
int osd__iscsi_wait_pdu(struct osd__iscsi_sess *s, uint64_t deadline)
{
	for (;;) {
		struct pollfd pfd = { .fd = s->fd, .events = POLLIN };
		int rc = osd__iscsi_flush(s), ms;

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
