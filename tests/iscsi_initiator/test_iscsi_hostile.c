/* The initiator against a hostile target (docs/iscsi-initiator.md, "Bounds
 * against a hostile target"): a NOP-In flood during a READ drops the
 * connection with a named error and the READ is resent; a flood of stray
 * PDUs does not keep one service call reading; pings whose answers the
 * target never reads do not make the send queue grow past its limit, nor
 * do R2Ts without end; a login that never completes fails with a named
 * error, within its budget. */
#include <check.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <osd/iscsi.h>
#include "fake_target.h"
#include "transport/iscsi_private.h"

#define TARGET "iqn.2026-01.org.libosd:fake"
#define WAIT_MS 10000
#define FLOOD_MS 10000        /* the longest a flood goes on if nobody stops it */
#define ACT_READ 0x8885
#define ACT_WRITE 0x8886      /* repeatable: resent after a drop */
#define RD_LEN 64

struct done_rec {
	int called, err;
};

static void xfer_done(struct osd_xfer *x, int err)
{
	struct done_rec *r = x->priv;

	r->called++;
	r->err = err;
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static void fill(uint8_t *p, size_t n, unsigned seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(i * 7 + seed);
}

static struct ft *ft_new(void)
{
	struct ft *ft = calloc(1, sizeof(*ft));

	ck_assert_ptr_nonnull(ft);
	return ft;
}

static int open_tp_rc(struct ft *ft, struct osd_transport *tp, struct osd_iscsi_options *o,
		      char *err, size_t errlen)
{
	char url[128];
	int rc;

	snprintf(url, sizeof(url), "iscsi://127.0.0.1:%u/" TARGET "/0", ft->port);
	o->errbuf = err;
	o->errbuf_len = errlen;
	rc = osd_iscsi_transport_new(tp, url, o);
	o->errbuf = NULL;
	return rc;
}

static void open_tp(struct ft *ft, struct osd_transport *tp, struct osd_iscsi_options *o)
{
	char err[256] = "";
	int rc = open_tp_rc(ft, tp, o, err, sizeof(err));

	ck_assert_msg(rc == 0, "transport_new: %d %s / target: %s", rc, err, ft->fail);
}

/* A READ of RD_LEN bytes (OSD READ, 236-byte CDB). */
struct cmd {
	uint8_t cdb[236];
	uint8_t in[RD_LEN];
	struct iovec iiov;
	struct osd_xfer x;
	struct done_rec dr;
};

static void read_init(struct cmd *c)
{
	memset(c, 0, sizeof(*c));
	osd_xfer_init(&c->x);
	c->x.resend = OSD_XFER_RESEND_ALWAYS; /* a READ */
	c->cdb[0] = 0x7F;
	c->cdb[7] = sizeof(c->cdb) - 8;
	c->cdb[8] = ACT_READ >> 8;
	c->cdb[9] = ACT_READ & 0xFF;
	c->iiov = (struct iovec){ c->in, RD_LEN };
	c->x.cdb = c->cdb;
	c->x.cdb_len = sizeof(c->cdb);
	c->x.in_iov = &c->iiov;
	c->x.in_iovcnt = 1;
	c->x.in_len = RD_LEN;
	c->x.done = xfer_done;
	c->x.priv = &c->dr;
}

/* Turns @p c into a WRITE of @p len bytes from @p buf. */
static void write_init(struct cmd *c, uint8_t *buf, size_t len)
{
	static struct iovec oiov;

	c->cdb[9] = ACT_WRITE & 0xFF;
	fill(buf, len, 11);
	oiov = (struct iovec){ buf, len };
	c->x.in_iov = NULL;
	c->x.in_iovcnt = 0;
	c->x.in_len = 0;
	c->x.out_iov = &oiov;
	c->x.out_iovcnt = 1;
	c->x.out_len = len;
}

static int send_read_answer(struct ft *ft, uint32_t itt, unsigned seed)
{
	struct osd__iscsi_bhs h;
	uint8_t d[RD_LEN];

	fill(d, sizeof(d), seed);
	memset(&h, 0, sizeof(h));
	h.opcode = OSD_ISCSI_OP_DATA_IN;
	h.flags = OSD_ISCSI_F_FINAL | OSD_ISCSI_F_STATUS;
	h.itt = itt;
	h.ttt = OSD_ISCSI_RSVD_TAG;
	ft_rsp_sn(ft, &h, 1);
	return ft_send(ft, &h, NULL, 0, d, sizeof(d));
}

/* Receives the READ (skipping keepalives), opens the CmdSN window past it. */
static int recv_read(struct ft *ft, uint32_t *itt)
{
	do {
		if (ft_recv(ft))
			return -1;
	} while (ft->pdu.bhs.opcode == OSD_ISCSI_OP_NOP_OUT);
	FT_CHECK_RC(ft, ft->pdu.bhs.opcode == OSD_ISCSI_OP_SCSI_CMD &&
		    ((ft->pdu.bhs.cdb[8] << 8 | ft->pdu.bhs.cdb[9]) == ACT_READ ||
		     (ft->pdu.bhs.cdb[8] << 8 | ft->pdu.bhs.cdb[9]) == ACT_WRITE),
		    "READ or WRITE expected");
	*itt = ft->pdu.bhs.itt;
	ft->expcmdsn = ft->pdu.bhs.cmd_sn + 1;
	ft->maxcmdsn = ft->expcmdsn + 8;
	return 0;
}

/* @p count copies of the PDU @p h (no data) in one buffer. */
static uint8_t *pdu_train(struct ft *ft, struct osd__iscsi_bhs *h, unsigned count, size_t *len)
{
	uint8_t one[OSD_ISCSI_BHS_LEN + 16], *b;
	long n = osd__iscsi_pdu_build(one, sizeof(one), h, NULL, 0, NULL, 0, &ft->dg);

	if (n <= 0 || !(b = malloc((size_t)n * count)))
		return NULL;
	for (unsigned i = 0; i < count; i++)
		memcpy(b + (size_t)n * i, one, (size_t)n);
	*len = (size_t)n * count;
	return b;
}

/* ---- a NOP-In flood during a READ ---- */

struct flood_rec {
	unsigned long sent;   /* NOP-Ins the target got out before the drop */
};

/* Floods unsolicited NOP-Ins (ITT and TTT 0xFFFFFFFF, RFC 7143 §11.19) as
 * fast as the socket takes them until the initiator drops the connection,
 * then accepts the new login and answers the resent READ. */
static void script_nop_flood(struct ft *ft)
{
	struct flood_rec *r = ft->user;
	struct osd__iscsi_bhs h;
	uint64_t end;
	uint32_t itt;
	uint8_t *train;
	size_t len;

	if (ft_accept(ft) || ft_login(ft) || recv_read(ft, &itt))
		return;
	memset(&h, 0, sizeof(h));
	h.opcode = OSD_ISCSI_OP_NOP_IN;
	h.flags = OSD_ISCSI_F_FINAL;
	h.itt = OSD_ISCSI_RSVD_TAG;
	h.ttt = OSD_ISCSI_RSVD_TAG;
	memset(h.lun, 0, 8);
	ft_rsp_sn(ft, &h, 0);
	train = pdu_train(ft, &h, 64, &len);
	FT_CHECK(ft, train != NULL, "out of memory");
	end = now_ms() + FLOOD_MS;
	while (now_ms() < end) {
		ssize_t w = send(ft->fd, train, len, MSG_NOSIGNAL);

		if (w < 0)
			break; /* the initiator dropped the connection */
		r->sent += (size_t)w / OSD_ISCSI_BHS_LEN;
	}
	free(train);
	FT_CHECK(ft, now_ms() < end, "the initiator let the flood go on for %u ms", FLOOD_MS);
	if (ft_accept(ft) || ft_login(ft) || recv_read(ft, &itt) || send_read_answer(ft, itt, 5))
		return;
	ft_logout(ft);
}

START_TEST(nop_flood_during_read)
{
	struct ft *ft = ft_new();
	struct flood_rec r = { 0 };
	struct osd_iscsi_options o = OSD_ISCSI_OPTIONS_INIT;
	struct osd_transport tp;
	struct cmd *c = malloc(sizeof(*c));
	const struct osd__iscsi_sess *s;
	uint8_t want[RD_LEN];
	uint64_t start, longest = 0;
	unsigned n = 0, ms = 0;

	ck_assert_ptr_nonnull(c);
	o.connect_timeout_ms = 2000;
	ft->user = &r;
	ft_start(ft, script_nop_flood);
	open_tp(ft, &tp, &o);
	s = tp.impl;
	read_init(c);
	start = now_ms();
	ck_assert_int_eq(tp.ops->submit(tp.impl, &c->x), 0);
	while (!c->dr.called && now_ms() - start < WAIT_MS) {
		struct pollfd pfd = { .fd = tp.ops->get_fd(tp.impl),
				      .events = (short)tp.ops->which_events(tp.impl) };
		uint64_t t0;

		if (pfd.fd >= 0)
			poll(&pfd, 1, 50);
		t0 = now_ms();
		ck_assert_int_eq(tp.ops->service(tp.impl, pfd.revents), 0);
		if (now_ms() - t0 > longest)
			longest = now_ms() - t0;
	}
	/* done well within the READ's resend: the drop, one login, the answer */
	ck_assert_int_eq(c->dr.called, 1);
	ck_assert_int_eq(c->dr.err, 0);
	fill(want, sizeof(want), 5);
	ck_assert_mem_eq(c->in, want, RD_LEN);
	ck_assert_uint_lt(now_ms() - start, 3000);
	ck_assert_uint_lt(longest, 2000);
	ck_assert_msg(sscanf(s->err, "NOP-In flood: %u in %u ms", &n, &ms) == 2,
		      "error: %s", s->err);
	ck_assert_uint_eq(n, OSD_ISCSI_UNSOLICITED_MAX + 1);
	ck_assert_uint_lt(ms, OSD_ISCSI_UNSOLICITED_WINDOW_MS);
	ck_assert_uint_gt(r.sent, OSD_ISCSI_UNSOLICITED_MAX);
	tp.ops->destroy(tp.impl);
	ck_assert_msg(ft_join(ft)[0] == 0, "%s", ft->fail);
	ck_assert_int_eq(ft->logins, 2);
	free(c);
	free(ft);
}
END_TEST

/* ---- stray PDUs: one service call reads a bounded amount ---- */

#define STRAYS 2000u  /* SCSI Responses for a task that does not exist: 96000 bytes */

static void script_strays(struct ft *ft)
{
	struct osd__iscsi_bhs h;
	uint32_t itt;
	uint8_t *train;
	size_t len;
	int rc;

	if (ft_accept(ft) || ft_login(ft) || recv_read(ft, &itt))
		return;
	memset(&h, 0, sizeof(h));
	h.opcode = OSD_ISCSI_OP_SCSI_RSP;
	h.flags = OSD_ISCSI_F_FINAL;
	h.itt = itt + 1000; /* no such task: ignored, but read and parsed */
	ft_rsp_sn(ft, &h, 0);
	train = pdu_train(ft, &h, STRAYS, &len);
	FT_CHECK(ft, train != NULL, "out of memory");
	rc = ft_send_raw(ft, train, len);
	free(train);
	if (rc)
		return;
	ft_step_set(ft, 1);
	if (ft_step_wait(ft, 2) || send_read_answer(ft, itt, 9))
		return;
	ft_logout(ft);
}

static int readable(int fd)
{
	int n = 0;

	return ioctl(fd, FIONREAD, &n) == 0 ? n : -1;
}

START_TEST(service_budget)
{
	struct ft *ft = ft_new();
	struct osd_iscsi_options o = OSD_ISCSI_OPTIONS_INIT;
	struct osd_transport tp;
	struct cmd *c = malloc(sizeof(*c));
	uint64_t end;
	int fd, left;

	ck_assert_ptr_nonnull(c);
	ft_start(ft, script_strays);
	open_tp(ft, &tp, &o);
	fd = tp.ops->get_fd(tp.impl);
	read_init(c);
	ck_assert_int_eq(tp.ops->submit(tp.impl, &c->x), 0);
	ck_assert_int_eq(ft_step_wait(ft, 1), 0);
	/* all strays are in our socket before the service call */
	end = now_ms() + WAIT_MS;
	while (readable(fd) < (int)(STRAYS * OSD_ISCSI_BHS_LEN) && now_ms() < end) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };

		poll(&pfd, 1, 10);
	}
	ck_assert_int_eq(readable(fd), STRAYS * OSD_ISCSI_BHS_LEN);
	ck_assert_int_eq(tp.ops->service(tp.impl, POLLIN), 0);
	/* the budget: OSD_ISCSI_SERVICE_MAX_PDUS PDUs, then the read-ahead */
	left = readable(fd);
	ck_assert_int_gt(left, 0);
	ck_assert_int_le(left, (int)((STRAYS - OSD_ISCSI_SERVICE_MAX_PDUS) * OSD_ISCSI_BHS_LEN));
	ck_assert_int_ge(left, (int)((STRAYS - OSD_ISCSI_SERVICE_MAX_PDUS) * OSD_ISCSI_BHS_LEN -
				     16384 - OSD_ISCSI_BHS_LEN));
	ck_assert_int_eq(c->dr.called, 0);
	ft_step_set(ft, 2);
	end = now_ms() + WAIT_MS;
	while (!c->dr.called && now_ms() < end) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };

		poll(&pfd, 1, 50);
		ck_assert_int_eq(tp.ops->service(tp.impl, pfd.revents), 0);
	}
	ck_assert_int_eq(c->dr.called, 1);
	ck_assert_int_eq(c->dr.err, 0);
	tp.ops->destroy(tp.impl);
	ck_assert_msg(ft_join(ft)[0] == 0, "%s", ft->fail);
	ck_assert_int_eq(ft->logins, 1);
	free(c);
	free(ft);
}
END_TEST

/* ---- pings whose answers are never read ---- */

#define PINGS 40u
#define PING_LEN (64u << 10)

static void script_pings(struct ft *ft)
{
	struct osd__iscsi_bhs h;
	uint8_t *d = malloc(PING_LEN);
	int small = 4096;

	FT_CHECK(ft, d != NULL, "out of memory");
	fill(d, PING_LEN, 1);
	if (ft_accept(ft) == 0)
		setsockopt(ft->fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small));
	if (ft->fd < 0 || ft_login(ft)) {
		free(d);
		return;
	}
	ft_step_set(ft, 1);
	/* pings, well under the flood rate; their answers are never read */
	for (unsigned i = 0; i < PINGS; i++) {
		memset(&h, 0, sizeof(h));
		h.opcode = OSD_ISCSI_OP_NOP_IN;
		h.flags = OSD_ISCSI_F_FINAL;
		h.itt = OSD_ISCSI_RSVD_TAG;
		h.ttt = 0x1000 + i;
		ft_rsp_sn(ft, &h, 0);
		if (ft_send(ft, &h, NULL, 0, d, PING_LEN))
			break;
	}
	free(d);
	__atomic_store_n(&ft->progress, 1, __ATOMIC_SEQ_CST);
	ft_step_wait(ft, 2); /* then close, unread */
}

START_TEST(ping_answers_bounded)
{
	struct ft *ft = ft_new();
	struct osd_iscsi_options o = OSD_ISCSI_OPTIONS_INIT;
	struct osd_transport tp;
	const struct osd__iscsi_sess *s;
	size_t max_answers = 0, max_mem = 0;
	uint64_t end;
	int fd, small = 4096;

	o.connect_timeout_ms = 1000; /* the logout at destroy gets no answer */
	ft_start(ft, script_pings);
	open_tp(ft, &tp, &o);
	s = tp.impl;
	fd = tp.ops->get_fd(tp.impl);
	setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &small, sizeof(small));
	ck_assert_int_eq(ft_step_wait(ft, 1), 0);
	end = now_ms() + WAIT_MS;
	while (!(__atomic_load_n(&ft->progress, __ATOMIC_SEQ_CST) && readable(fd) == 0 &&
		 s->rx.have == s->rx.consumed) && now_ms() < end) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };

		poll(&pfd, 1, 20);
		ck_assert_int_eq(tp.ops->service(tp.impl, pfd.revents), 0);
		if (s->nop_answer_bytes > max_answers)
			max_answers = s->nop_answer_bytes;
		if (s->sendq_mem > max_mem)
			max_mem = s->sendq_mem;
	}
	ck_assert_int_eq(__atomic_load_n(&ft->progress, __ATOMIC_SEQ_CST), 1);
	ck_assert_int_eq(tp.ops->get_fd(tp.impl), fd); /* no drop: under the flood rate */
	/* the queue holds as many whole answers as fit, the rest were dropped */
	ck_assert_uint_le(max_answers, OSD_ISCSI_NOP_ANSWER_MAX);
	ck_assert_uint_eq(s->nop_answer_bytes,
			  OSD_ISCSI_NOP_ANSWER_MAX / (OSD_ISCSI_BHS_LEN + PING_LEN) *
			  (OSD_ISCSI_BHS_LEN + PING_LEN));
	ck_assert_uint_le(max_mem, OSD_ISCSI_NOP_ANSWER_MAX + 4096);
	ck_assert_uint_ge(s->nop_answers_dropped, PINGS / 2);
	ck_assert_uint_le(s->nop_answers_dropped,
			  PINGS - OSD_ISCSI_NOP_ANSWER_MAX / (OSD_ISCSI_BHS_LEN + PING_LEN));
	ft_step_set(ft, 2);
	tp.ops->destroy(tp.impl);
	ck_assert_msg(ft_join(ft)[0] == 0, "%s", ft->fail);
	free(ft);
}
END_TEST

/* ---- R2Ts that never end while the target does not read ---- */

#define ACT_APPEND 0x8887     /* not repeatable: fails with -EIO after a drop */
#define WR_LEN (64u << 10)
#define R2T_MAX 200000u       /* the most the script sends (about 9.6 MB) */

struct r2t_rec {
	unsigned long sent;   /* R2Ts the target got out before the drop */
};

/* Answers the APPEND with R2Ts for the same range, again and again,
 * reading nothing, until the initiator drops the connection; then takes
 * the new login and waits for the logout. */
static void script_r2t_flood(struct ft *ft)
{
	struct r2t_rec *r = ft->user;
	struct osd__iscsi_bhs h;
	uint8_t one[OSD_ISCSI_BHS_LEN], *train;
	size_t per = 256;

	if (ft_accept(ft) || ft_login(ft) || ft_recv(ft))
		return;
	FT_CHECK(ft, ft->pdu.bhs.opcode == OSD_ISCSI_OP_SCSI_CMD, "APPEND expected");
	ft->expcmdsn = ft->pdu.bhs.cmd_sn + 1;
	ft->maxcmdsn = ft->expcmdsn + 8;
	memset(&h, 0, sizeof(h));
	h.opcode = OSD_ISCSI_OP_R2T;
	h.flags = OSD_ISCSI_F_FINAL;
	h.itt = ft->pdu.bhs.itt;
	h.ttt = 0x55;
	ft_rsp_sn(ft, &h, 0);
	h.offset = 512;
	h.length = WR_LEN - 512;
	train = malloc(sizeof(one) * per);
	FT_CHECK(ft, train != NULL, "out of memory");
	while (r->sent < R2T_MAX) {
		ssize_t w;

		/* R2TSN in sequence (RFC 7143 §11.8.5): only the queue stops them */
		for (size_t i = 0; i < per; i++) {
			h.data_sn = (uint32_t)(r->sent + i);
			if (osd__iscsi_pdu_build(one, sizeof(one), &h, NULL, 0, NULL, 0, &ft->dg) !=
			    OSD_ISCSI_BHS_LEN)
				break;
			memcpy(train + sizeof(one) * i, one, sizeof(one));
		}
		w = send(ft->fd, train, sizeof(one) * per, MSG_NOSIGNAL);
		if (w < (ssize_t)(sizeof(one) * per))
			break; /* the initiator dropped the connection */
		r->sent += per;
	}
	free(train);
	FT_CHECK(ft, r->sent < R2T_MAX, "the initiator took %u R2Ts without dropping", R2T_MAX);
	if (ft_accept(ft) || ft_login(ft))
		return;
	ft_logout(ft);
}

START_TEST(r2t_flood_bounded)
{
	struct ft *ft = ft_new();
	struct r2t_rec r = { 0 };
	struct osd_iscsi_options o = OSD_ISCSI_OPTIONS_INIT;
	struct osd_transport tp;
	struct cmd *c = malloc(sizeof(*c));
	static uint8_t out[WR_LEN];
	struct iovec oiov = { out, WR_LEN };
	const struct osd__iscsi_sess *s;
	size_t max_mem = 0, n = 0;
	unsigned lim = 0;
	uint64_t end;

	ck_assert_ptr_nonnull(c);
	o.connect_timeout_ms = 2000;
	ft->user = &r;
	ft_start(ft, script_r2t_flood);
	open_tp(ft, &tp, &o);
	s = tp.impl;
	read_init(c);
	c->cdb[9] = ACT_APPEND & 0xFF;
	c->x.resend = OSD_XFER_RESEND_NEVER;
	c->x.in_iov = NULL;
	c->x.in_iovcnt = 0;
	c->x.in_len = 0;
	c->x.out_iov = &oiov;
	c->x.out_iovcnt = 1;
	c->x.out_len = WR_LEN;
	ck_assert_int_eq(tp.ops->submit(tp.impl, &c->x), 0);
	end = now_ms() + WAIT_MS;
	while (!c->dr.called && now_ms() < end) {
		struct pollfd pfd = { .fd = tp.ops->get_fd(tp.impl),
				      .events = (short)tp.ops->which_events(tp.impl) };

		if (pfd.fd >= 0)
			poll(&pfd, 1, 50);
		ck_assert_int_eq(tp.ops->service(tp.impl, pfd.revents), 0);
		if (s->sendq_mem > max_mem)
			max_mem = s->sendq_mem;
	}
	ck_assert_int_eq(c->dr.called, 1);
	ck_assert_int_eq(c->dr.err, -EIO); /* dropped, and an APPEND is not resent */
	ck_assert_msg(sscanf(s->err, "send queue full: %zu bytes queued, limit %u", &n, &lim) == 2,
		      "error: %s", s->err);
	ck_assert_uint_eq(lim, OSD_ISCSI_SENDQ_MAX);
	ck_assert_uint_gt(n, OSD_ISCSI_SENDQ_MAX);
	/* one R2T's answer past the limit at most: 8 Data-Out heads */
	ck_assert_uint_le(max_mem, OSD_ISCSI_SENDQ_MAX + 8 * 256);
	tp.ops->destroy(tp.impl);
	ck_assert_msg(ft_join(ft)[0] == 0, "%s", ft->fail);
	ck_assert_int_eq(ft->logins, 2);
	free(c);
	free(ft);
}
END_TEST

/* ---- a login that never completes ---- */

struct login_rec {
	int with_text;          /* _i: 1 = C bit and 4000 bytes of text each time */
	unsigned answered;      /* Login Responses sent */
};

#define JUNK_LEN 4000

/* Answers every Login Request with a Login Response that neither transits
 * nor ends (RFC 7143 §11.13: T never set; with text, C set as well). */
static void script_no_transit(struct ft *ft)
{
	struct login_rec *r = ft->user;
	static uint8_t junk[JUNK_LEN];
	struct osd__iscsi_bhs h;

	memcpy(junk, "X-junk=", 7);
	memset(junk + 7, 'j', JUNK_LEN - 8);
	junk[JUNK_LEN - 1] = 0;
	if (ft_accept(ft))
		return;
	for (unsigned i = 0; i < 100000; i++) {
		if (ft_recv(ft)) {
			ft->fail[0] = 0; /* the initiator gave up: expected, counted below */
			return;
		}
		FT_CHECK(ft, ft->pdu.bhs.opcode == OSD_ISCSI_OP_LOGIN_REQ, "Login Request expected");
		memset(&h, 0, sizeof(h));
		h.opcode = OSD_ISCSI_OP_LOGIN_RSP;
		h.flags = OSD_ISCSI_LOGIN_FLAGS(0, r->with_text, 0, 1);
		memcpy(h.isid, ft->pdu.bhs.isid, 6);
		h.itt = ft->pdu.bhs.itt;
		ft->expcmdsn = ft->pdu.bhs.cmd_sn;
		ft->maxcmdsn = ft->pdu.bhs.cmd_sn + 8;
		ft_rsp_sn(ft, &h, 1);
		if (ft_send(ft, &h, NULL, 0, r->with_text ? junk : NULL, r->with_text ? JUNK_LEN : 0))
			return;
		r->answered++;
	}
	ft_failf(ft, "the login went on for 100000 rounds");
}

static long vm_hwm_kb(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	long kb = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmHWM: %ld kB", &kb) == 1)
			break;
	fclose(f);
	return kb;
}

START_TEST(login_never_transits)
{
	struct ft *ft = ft_new();
	struct login_rec r = { .with_text = _i };
	struct osd_iscsi_options o = OSD_ISCSI_OPTIONS_INIT;
	struct osd_transport tp;
	size_t each = OSD_ISCSI_BHS_LEN + (_i ? JUNK_LEN : 0);
	unsigned rounds = OSD_ISCSI_LOGIN_BUDGET / each + 1;
	char err[256] = "", want[256];
	long hwm0 = vm_hwm_kb(), hwm1;
	uint64_t start;
	int rc;

	o.connect_timeout_ms = 5000;
	ft->user = &r;
	ft_start(ft, script_no_transit);
	start = now_ms();
	rc = open_tp_rc(ft, &tp, &o, err, sizeof(err));
	ck_assert_int_eq(rc, -EPROTO);
	ck_assert_uint_lt(now_ms() - start, o.connect_timeout_ms);
	snprintf(want, sizeof(want), "login not complete after %zu bytes of Login Responses "
		 "(limit %u)", rounds * each, OSD_ISCSI_LOGIN_BUDGET);
	ck_assert_str_eq(err, want);
	ck_assert_msg(ft_join(ft)[0] == 0, "%s", ft->fail);
	ck_assert_uint_eq(r.answered, rounds);
	hwm1 = vm_hwm_kb();
	ck_assert_int_ge(hwm0, 0);
	ck_assert_int_lt(hwm1 - hwm0, 8192); /* peak memory grew by less than 8 MiB */
	free(ft);
}
END_TEST

/* ---- protocol errors: a bounded number of resends, then -EPROTO ---- */

enum proto_mode {
	PM_R2T_FOR_READ,     /* an R2T for a READ */
	PM_DATA_IN_BEYOND,   /* Data-In past the end of the buffer */
	PM_DATA_IN_WRAP,     /* Data-In whose offset wraps */
	PM_ASYNC_DROP,       /* Async Message "connection will drop" (event 2) */
	PM_ASYNC_DROP_SESS,  /* Async Message "all connections will drop" (event 3) */
	PM_STATSN_AHEAD,     /* the status's StatSN 2^20 past ExpStatSN */
	PM_STATSN_BEHIND,    /* ... 2^20 before it */
	PM_DATA_AFTER_RSP,   /* the SCSI Response (ExpDataSN 1), then the Data-In */
	PM_DATA_IN_DUP,      /* the first Data-In twice */
	PM_DATA_IN_SKIP,     /* the second half of the data, DataSN 0 */
	PM_R2T_SN,           /* an R2T for a WRITE with R2TSN 5 instead of 0 */
	PM_DATA_IN_CHECK,    /* the final Data-In with status CHECK CONDITION */
};

#define STATSN_JUMP 0x100000u

#define GOOD_MARK 0x5A       /* cdb[12] of a READ the target answers properly */

struct proto_rec {
	enum proto_mode mode;
	unsigned bad_cmds;   /* READs the target broke the protocol for */
	unsigned good;       /* well-behaved READs to answer before the logout */
	uint32_t bad_itt;    /* ITT of the last of them */
};

/* A SCSI Response counting one Data-In (ExpDataSN 1, RFC 7143 §11.4.8),
 * then that Data-In, in one write. */
static int send_rsp_then_data(struct ft *ft, struct osd__iscsi_bhs *h)
{
	uint8_t b[2 * (OSD_ISCSI_BHS_LEN + RD_LEN + 16)], d[RD_LEN];
	long n1, n2;

	fill(d, sizeof(d), 3);
	h->opcode = OSD_ISCSI_OP_SCSI_RSP;
	h->data_sn = 1;
	ft_rsp_sn(ft, h, 1);
	n1 = osd__iscsi_pdu_build(b, sizeof(b), h, NULL, 0, NULL, 0, &ft->dg);
	h->opcode = OSD_ISCSI_OP_DATA_IN;
	h->data_sn = 0;
	ft_rsp_sn(ft, h, 0);
	n2 = n1 > 0 ? osd__iscsi_pdu_build(b + n1, sizeof(b) - (size_t)n1, h, NULL, 0, d, RD_LEN,
					   &ft->dg) : -1;
	FT_CHECK_RC(ft, n1 > 0 && n2 > 0, "cannot build the PDUs");
	return ft_send_raw(ft, b, (size_t)(n1 + n2));
}

/* Breaks the protocol for every READ not marked GOOD_MARK, as a relay that
 * rewrites the target's PDUs would; each time accepts the initiator's new
 * login. Answers marked READs properly; ends with the logout. */
static void script_proto(struct ft *ft)
{
	struct proto_rec *r = ft->user;
	struct osd__iscsi_bhs h;
	uint8_t d[RD_LEN];
	uint32_t itt;

	if (ft_accept(ft) || ft_login(ft))
		return;
	for (unsigned good = 0; good < r->good;) {
		if (recv_read(ft, &itt))
			return;
		if (ft->pdu.bhs.cdb[12] == GOOD_MARK) {
			if (send_read_answer(ft, itt, 9))
				return;
			good++;
			continue;
		}
		r->bad_cmds++;
		r->bad_itt = itt;
		memset(&h, 0, sizeof(h));
		h.flags = OSD_ISCSI_F_FINAL;
		h.itt = itt;
		h.ttt = OSD_ISCSI_RSVD_TAG;
		switch (r->mode) {
		case PM_R2T_FOR_READ:
			h.opcode = OSD_ISCSI_OP_R2T;
			h.ttt = 0x77;
			h.length = RD_LEN;
			ft_rsp_sn(ft, &h, 0);
			break;
		case PM_DATA_IN_BEYOND:
		case PM_DATA_IN_WRAP:
			h.opcode = OSD_ISCSI_OP_DATA_IN;
			h.offset = r->mode == PM_DATA_IN_WRAP ? 0xFFFFFFF0u : RD_LEN - 16;
			ft_rsp_sn(ft, &h, 0);
			break;
		case PM_ASYNC_DROP:
		case PM_ASYNC_DROP_SESS:
			h.opcode = OSD_ISCSI_OP_ASYNC_MSG;
			h.async_event = r->mode == PM_ASYNC_DROP ? 2 : 3;
			ft_rsp_sn(ft, &h, 1);
			break;
		case PM_STATSN_AHEAD:
		case PM_STATSN_BEHIND:
			h.opcode = OSD_ISCSI_OP_DATA_IN;
			h.flags |= OSD_ISCSI_F_STATUS;
			ft->statsn += r->mode == PM_STATSN_AHEAD ? STATSN_JUMP : -STATSN_JUMP;
			ft_rsp_sn(ft, &h, 1);
			break;
		case PM_DATA_AFTER_RSP:
			/* both in one write: the initiator drops the connection
			 * at the first, the second must not fail our send */
			if (send_rsp_then_data(ft, &h))
				return;
			h.opcode = 0;
			break;
		case PM_DATA_IN_DUP:
		case PM_DATA_IN_SKIP:
			h.opcode = OSD_ISCSI_OP_DATA_IN;
			h.flags = 0;
			ft_rsp_sn(ft, &h, 0);
			fill(d, sizeof(d), 3);
			if (r->mode == PM_DATA_IN_DUP &&
			    ft_send(ft, &h, NULL, 0, d, RD_LEN / 2))
				return;
			if (r->mode == PM_DATA_IN_SKIP)
				h.offset = RD_LEN / 2;
			break;
		case PM_DATA_IN_CHECK:
			h.opcode = OSD_ISCSI_OP_DATA_IN;
			h.flags |= OSD_ISCSI_F_STATUS;
			h.status = 0x02;
			ft_rsp_sn(ft, &h, 1);
			break;
		case PM_R2T_SN:
			h.opcode = OSD_ISCSI_OP_R2T;
			h.ttt = 0x78;
			h.data_sn = 5;
			h.offset = 512; /* beyond the immediate data */
			h.length = RD_LEN;
			ft_rsp_sn(ft, &h, 0);
			break;
		}
		fill(d, sizeof(d), 3);
		if (h.opcode && ft_send(ft, &h, NULL, 0, d, h.opcode != OSD_ISCSI_OP_DATA_IN ? 0 :
			    r->mode == PM_DATA_IN_DUP || r->mode == PM_DATA_IN_SKIP ? RD_LEN / 2 :
			    RD_LEN))
			return;
		/* the initiator drops the connection and logs in again */
		if (ft_accept(ft) || ft_login(ft))
			return;
	}
	ft_logout(ft);
}

/* Services @p tp until @p c completes or WAIT_MS pass. */
static void run_until_done(struct osd_transport *tp, struct cmd *c)
{
	uint64_t start = now_ms();

	while (!c->dr.called && now_ms() - start < WAIT_MS) {
		struct pollfd pfd = { .fd = tp->ops->get_fd(tp->impl),
				      .events = (short)tp->ops->which_events(tp->impl) };

		if (pfd.fd >= 0)
			poll(&pfd, 1, 50);
		ck_assert_int_eq(tp->ops->service(tp->impl, pfd.revents), 0);
	}
}

/* Each protocol error in turn, on every try of a READ: the READ fails with
 * -EPROTO naming the cause after at most OSD_ISCSI_PROTO_RESENDS resends
 * (none for an R2T for a READ), in well under a second, with one login per
 * try; the next READ, which the target answers, works on the session. */
START_TEST(proto_error_bounded)
{
	static const struct {
		enum proto_mode mode;
		unsigned tries;
		const char *fmt;    /* the error, %x the READ's ITT */
	} cases[] = {
		{ PM_R2T_FOR_READ, 1, "R2T for a READ (task 0x%x)" },
		{ PM_DATA_IN_BEYOND, OSD_ISCSI_PROTO_RESENDS + 1,
		  "Data-In [48, +64) outside the 64-byte buffer (task 0x%x)" },
		{ PM_DATA_IN_WRAP, OSD_ISCSI_PROTO_RESENDS + 1,
		  "Data-In [4294967280, +64) outside the 64-byte buffer (task 0x%x)" },
		{ PM_ASYNC_DROP, OSD_ISCSI_PROTO_RESENDS + 1,
		  "target announced it drops the connection" },
		{ PM_ASYNC_DROP_SESS, OSD_ISCSI_PROTO_RESENDS + 1,
		  "target announced it drops the connection" },
		{ PM_STATSN_AHEAD, OSD_ISCSI_PROTO_RESENDS + 1,
		  "StatSN 1048576 ahead of ExpStatSN (SCSI Data-In, task 0x%x)" },
		{ PM_STATSN_BEHIND, OSD_ISCSI_PROTO_RESENDS + 1,
		  "StatSN 1048576 behind ExpStatSN (SCSI Data-In, task 0x%x)" },
		{ PM_DATA_AFTER_RSP, OSD_ISCSI_PROTO_RESENDS + 1,
		  "SCSI Response after 0 of 1 Data-In PDUs (task 0x%x)" },
		{ PM_DATA_IN_DUP, OSD_ISCSI_PROTO_RESENDS + 1,
		  "Data-In with DataSN 0, expected 1 (task 0x%x)" },
		{ PM_DATA_IN_SKIP, OSD_ISCSI_PROTO_RESENDS + 1,
		  "Data-In at offset 32, expected 0 (task 0x%x)" },
		{ PM_R2T_SN, OSD_ISCSI_PROTO_RESENDS + 1,
		  "R2T with R2TSN 5, expected 0 (task 0x%x)" },
		{ PM_DATA_IN_CHECK, OSD_ISCSI_PROTO_RESENDS + 1,
		  "Data-In carrying status 0x02 (task 0x%x)" },
	};
	struct ft *ft = ft_new();
	struct proto_rec r = { .mode = cases[_i].mode, .good = 1 };
	struct osd_iscsi_options o = OSD_ISCSI_OPTIONS_INIT;
	struct osd_transport tp;
	struct cmd *c = malloc(sizeof(*c));
	const struct osd__iscsi_sess *s;
	uint8_t want[RD_LEN], wr[1024];
	char msg[128];
	uint64_t start;

	ck_assert_ptr_nonnull(c);
	o.connect_timeout_ms = 2000;
	ft->user = &r;
	ft_start(ft, script_proto);
	open_tp(ft, &tp, &o);
	s = tp.impl;
	read_init(c);
	if (cases[_i].mode == PM_R2T_SN)
		write_init(c, wr, sizeof(wr));
	start = now_ms();
	ck_assert_int_eq(tp.ops->submit(tp.impl, &c->x), 0);
	run_until_done(&tp, c);
	ck_assert_int_eq(c->dr.called, 1);
	ck_assert_int_eq(c->dr.err, -EPROTO);
	ck_assert_uint_lt(now_ms() - start, 1000);
	if (cases[_i].mode != PM_R2T_SN) /* nothing placed from a failed answer survives */
		ck_assert_int_eq((int)c->x.in_xferred, 0);
	snprintf(msg, sizeof(msg), cases[_i].fmt, (unsigned)r.bad_itt);
	ck_assert_str_eq(s->err, msg);
	ck_assert_uint_eq(r.bad_cmds, cases[_i].tries);
	/* one login per try (the last one for the READ below) */
	ck_assert_int_eq(__atomic_load_n(&ft->logins, __ATOMIC_SEQ_CST), 1 + (int)cases[_i].tries);
	ck_assert_uint_le(cases[_i].tries, OSD_ISCSI_PROTO_LOGIN_MAX);
	ck_assert_uint_eq(s->proto_backoff_ms, 0);

	read_init(c);
	c->cdb[12] = GOOD_MARK;
	ck_assert_int_eq(tp.ops->submit(tp.impl, &c->x), 0);
	run_until_done(&tp, c);
	ck_assert_int_eq(c->dr.called, 1);
	ck_assert_int_eq(c->dr.err, 0);
	fill(want, sizeof(want), 9);
	ck_assert_mem_eq(c->in, want, RD_LEN);
	tp.ops->destroy(tp.impl);
	ck_assert_msg(ft_join(ft)[0] == 0, "%s", ft->fail);
	ck_assert_int_eq(ft->logins, 1 + (int)cases[_i].tries);
	free(c);
	free(ft);
}
END_TEST

/* Async "drop" for 3 READs in a row: 9 logins after protocol errors. The
 * first OSD_ISCSI_PROTO_LOGIN_MAX go at once, the 4 after them wait 100,
 * 200, 400 and 800 ms; each READ still fails with -EPROTO, and a READ the
 * target answers works. */
START_TEST(proto_login_backoff)
{
	struct ft *ft = ft_new();
	struct proto_rec r = { .mode = PM_ASYNC_DROP, .good = 1 };
	struct osd_iscsi_options o = OSD_ISCSI_OPTIONS_INIT;
	struct osd_transport tp;
	struct cmd *c = malloc(sizeof(*c));
	const struct osd__iscsi_sess *s;
	uint64_t start, ms;

	ck_assert_ptr_nonnull(c);
	o.connect_timeout_ms = 2000;
	ft->user = &r;
	ft_start(ft, script_proto);
	open_tp(ft, &tp, &o);
	s = tp.impl;
	start = now_ms();
	for (int i = 0; i < 3; i++) {
		read_init(c);
		ck_assert_int_eq(tp.ops->submit(tp.impl, &c->x), 0);
		run_until_done(&tp, c);
		ck_assert_int_eq(c->dr.called, 1);
		ck_assert_int_eq(c->dr.err, -EPROTO);
		ck_assert_str_eq(s->err, "target announced it drops the connection");
	}
	ms = now_ms() - start;
	ck_assert_uint_eq(r.bad_cmds, 3 * (OSD_ISCSI_PROTO_RESENDS + 1));
	ck_assert_uint_eq(s->proto_logins_total, 9);
	ck_assert_uint_eq(s->proto_backoff_ms, 800);
	ck_assert_uint_ge(ms, 100 + 200 + 400 + 800);
	ck_assert_uint_lt(ms, 100 + 200 + 400 + 800 + 1500);
	read_init(c);
	c->cdb[12] = GOOD_MARK;
	ck_assert_int_eq(tp.ops->submit(tp.impl, &c->x), 0);
	run_until_done(&tp, c);
	ck_assert_int_eq(c->dr.err, 0);
	tp.ops->destroy(tp.impl);
	ck_assert_msg(ft_join(ft)[0] == 0, "%s", ft->fail);
	ck_assert_int_eq(ft->logins, 10);
	free(c);
	free(ft);
}
END_TEST

/* ---- Reject (RFC 7143 §11.17) ---- */

struct reject_case {
	uint8_t reason;
	int with_header;     /* carries the rejected header (§11.17.4) */
	int then_response;   /* a SCSI Response (CHECK CONDITION) for it follows */
	const char *err;     /* the session's error after it */
};

static const struct reject_case reject_cases[] = {
	{ 0x04, 1, 1, "target rejected a SCSI Command: protocol error (reason 0x04)" },
	{ 0x05, 1, 0, "target rejected a SCSI Command: command not supported (reason 0x05)" },
	{ 0x09, 1, 0, "target rejected a SCSI Command: invalid PDU field (reason 0x09)" },
	{ 0x09, 0, 0, "target rejected a PDU it does not name: invalid PDU field (reason 0x09)" },
};

/* Rejects the first READ (then maybe a SCSI Response for it); a Reject
 * that names nothing is followed by the READ's answer. The next READ is
 * answered. */
static void script_reject(struct ft *ft)
{
	const struct reject_case *rc = ft->user;
	static const uint8_t sense[] = { 0x00, 0x08, 0x72, 0x05, 0x24, 0x00, 0, 0, 0, 0 };
	struct osd__iscsi_bhs h;
	uint8_t rejected[OSD_ISCSI_BHS_LEN];
	uint32_t itt;

	if (ft_accept(ft) || ft_login(ft) || recv_read(ft, &itt))
		return;
	memcpy(rejected, ft->buf, sizeof(rejected));
	memset(&h, 0, sizeof(h));
	h.opcode = OSD_ISCSI_OP_REJECT;
	h.flags = OSD_ISCSI_F_FINAL;
	h.response = rc->reason;
	h.itt = OSD_ISCSI_RSVD_TAG;
	ft_rsp_sn(ft, &h, 1); /* a Reject advances StatSN (§11.17.3) */
	if (ft_send(ft, &h, NULL, 0, rc->with_header ? rejected : NULL,
		    rc->with_header ? sizeof(rejected) : 0))
		return;
	if (rc->then_response) {
		memset(&h, 0, sizeof(h));
		h.opcode = OSD_ISCSI_OP_SCSI_RSP;
		h.flags = OSD_ISCSI_F_FINAL;
		h.status = 0x02;
		h.itt = itt;
		ft_rsp_sn(ft, &h, 1);
		if (ft_send(ft, &h, NULL, 0, sense, sizeof(sense)))
			return;
	}
	if (!rc->with_header && send_read_answer(ft, itt, 4))
		return;
	if (recv_read(ft, &itt) || send_read_answer(ft, itt, 9))
		return;
	ft_logout(ft);
}

/* The rejected READ fails at once with -EIO and the reason named; a
 * SCSI Response after it changes nothing; the session goes on (one
 * login), the next READ works. A Reject naming nothing fails nothing. */
START_TEST(reject_fails_command)
{
	const struct reject_case *rc = &reject_cases[_i];
	struct ft *ft = ft_new();
	struct osd_iscsi_options o = OSD_ISCSI_OPTIONS_INIT;
	struct osd_transport tp;
	struct cmd *c = malloc(sizeof(*c));
	const struct osd__iscsi_sess *s;
	uint8_t want[RD_LEN];
	uint64_t start;

	ck_assert_ptr_nonnull(c);
	o.connect_timeout_ms = 2000;
	ft->user = (void *)rc;
	ft_start(ft, script_reject);
	open_tp(ft, &tp, &o);
	s = tp.impl;
	read_init(c);
	start = now_ms();
	ck_assert_int_eq(tp.ops->submit(tp.impl, &c->x), 0);
	run_until_done(&tp, c);
	ck_assert_int_eq(c->dr.called, 1);
	ck_assert_int_eq(c->dr.err, rc->with_header ? -EIO : 0);
	ck_assert_uint_lt(now_ms() - start, 1000);
	ck_assert_str_eq(s->err, rc->err);
	if (!rc->with_header) {
		fill(want, sizeof(want), 4);
		ck_assert_mem_eq(c->in, want, RD_LEN);
	}
	read_init(c);
	ck_assert_int_eq(tp.ops->submit(tp.impl, &c->x), 0);
	run_until_done(&tp, c);
	ck_assert_int_eq(c->dr.err, 0);
	ck_assert_int_eq(c->x.status, 0);
	fill(want, sizeof(want), 9);
	ck_assert_mem_eq(c->in, want, RD_LEN);
	tp.ops->destroy(tp.impl);
	ck_assert_msg(ft_join(ft)[0] == 0, "%s", ft->fail);
	ck_assert_int_eq(ft->logins, 1);
	free(c);
	free(ft);
}
END_TEST

/* ---- Async Messages that keep the connection (RFC 7143 §11.9.1) ---- */

struct async_case {
	uint8_t event;
	int bad_sense;       /* event 0: SenseLength past the segment */
	int logout;          /* the initiator logs out and in again */
};

static const struct async_case async_cases[] = {
	{ 0, 0, 0 },         /* SCSI async event: unit attention 2Ah/09h */
	{ 0, 1, 0 },
	{ 1, 0, 1 },         /* logout request */
	{ 4, 0, 1 },         /* parameter negotiation request */
	{ 255, 0, 0 },       /* vendor specific */
};

/* sense of the SCSI async event: CAPACITY DATA HAS CHANGED (2Ah/09h) */
static const uint8_t ua_sense[] = { 0x72, 0x06, 0x2A, 0x09, 0, 0, 0, 0 };

/* Sends the event while the READ is in flight, then answers the READ;
 * for a logout request takes the Logout and the new login. Then answers
 * one more READ. */
static void script_async(struct ft *ft)
{
	const struct async_case *ac = ft->user;
	struct osd__iscsi_bhs h;
	uint8_t seg[2 + sizeof(ua_sense)];
	uint32_t itt;

	if (ft_accept(ft) || ft_login(ft) || recv_read(ft, &itt))
		return;
	memset(&h, 0, sizeof(h));
	h.opcode = OSD_ISCSI_OP_ASYNC_MSG;
	h.flags = OSD_ISCSI_F_FINAL;
	h.itt = OSD_ISCSI_RSVD_TAG;
	h.async_event = ac->event;
	h.async_param[2] = 5; /* logout / negotiate within 5 s */
	ft_rsp_sn(ft, &h, 1);
	seg[0] = 0;
	seg[1] = ac->bad_sense ? 0xFF : sizeof(ua_sense);
	memcpy(seg + 2, ua_sense, sizeof(ua_sense));
	if (ft_send(ft, &h, NULL, 0, ac->event == 0 ? seg : NULL, ac->event == 0 ? sizeof(seg) : 0) ||
	    send_read_answer(ft, itt, 5))
		return;
	if (ac->logout && (ft_logout(ft) || ft_accept(ft) || ft_login(ft)))
		return;
	if (recv_read(ft, &itt) || send_read_answer(ft, itt, 9))
		return;
	ft_logout(ft);
}

/* No command fails; an event 0's sense is kept (a bad one counted); a
 * logout or negotiation request costs one logout and one login, no
 * protocol error; others are counted and ignored. */
START_TEST(async_events)
{
	const struct async_case *ac = &async_cases[_i];
	struct ft *ft = ft_new();
	struct osd_iscsi_options o = OSD_ISCSI_OPTIONS_INIT;
	struct osd_transport tp;
	struct cmd *c = malloc(sizeof(*c));
	const struct osd__iscsi_sess *s;
	uint8_t want[RD_LEN];
	uint64_t start;

	ck_assert_ptr_nonnull(c);
	o.connect_timeout_ms = 2000;
	ft->user = (void *)ac;
	ft_start(ft, script_async);
	open_tp(ft, &tp, &o);
	s = tp.impl;
	start = now_ms();
	for (int i = 0; i < 2; i++) {
		read_init(c);
		ck_assert_int_eq(tp.ops->submit(tp.impl, &c->x), 0);
		run_until_done(&tp, c);
		ck_assert_int_eq(c->dr.called, 1);
		ck_assert_int_eq(c->dr.err, 0);
		fill(want, sizeof(want), i ? 9 : 5);
		ck_assert_mem_eq(c->in, want, RD_LEN);
	}
	ck_assert_uint_lt(now_ms() - start, 2000);
	ck_assert_uint_eq(s->async_events, 1);
	ck_assert_uint_eq(s->async_ignored, ac->event == 255);
	ck_assert_uint_eq(s->async_bad, ac->bad_sense);
	if (ac->event == 0 && !ac->bad_sense) {
		ck_assert_uint_eq(s->async_sense_len, sizeof(ua_sense));
		ck_assert_mem_eq(s->async_sense, ua_sense, sizeof(ua_sense));
	} else {
		ck_assert_uint_eq(s->async_sense_len, 0);
	}
	ck_assert_uint_eq(s->proto_logins_total, 0);
	ck_assert_str_eq(s->err, "");
	tp.ops->destroy(tp.impl);
	ck_assert_msg(ft_join(ft)[0] == 0, "%s", ft->fail);
	ck_assert_int_eq(ft->logins, ac->logout ? 2 : 1);
	free(c);
	free(ft);
}
END_TEST

/* ---- Async "drop" with Time2Wait (RFC 7143 §11.9.1) ---- */

/* Announces the drop of the connection with Time2Wait (Parameter2) of
 * ft->user seconds while the READ is in flight; answers it after the new
 * login. */
static void script_time2wait(struct ft *ft)
{
	struct osd__iscsi_bhs h;
	uint32_t itt;

	if (ft_accept(ft) || ft_login(ft) || recv_read(ft, &itt))
		return;
	memset(&h, 0, sizeof(h));
	h.opcode = OSD_ISCSI_OP_ASYNC_MSG;
	h.flags = OSD_ISCSI_F_FINAL;
	h.itt = OSD_ISCSI_RSVD_TAG;
	h.async_event = 2;
	h.async_param[1] = (uint16_t)*(unsigned *)ft->user;
	ft_rsp_sn(ft, &h, 1);
	if (ft_send(ft, &h, NULL, 0, NULL, 0) || ft_accept(ft) || ft_login(ft) ||
	    recv_read(ft, &itt) || send_read_answer(ft, itt, 9))
		return;
	ft_logout(ft);
}

/* Time2Wait 1 s: the login after the drop waits it, the READ is resent
 * then; 3600 s: it waits OSD_ISCSI_TIME2WAIT_MAX_MS only. */
START_TEST(async_drop_time2wait)
{
	unsigned secs = _i ? 3600 : 1, want_ms = _i ? OSD_ISCSI_TIME2WAIT_MAX_MS : 1000;
	struct ft *ft = ft_new();
	struct osd_iscsi_options o = OSD_ISCSI_OPTIONS_INIT;
	struct osd_transport tp;
	struct cmd *c = malloc(sizeof(*c));
	uint8_t want[RD_LEN];
	uint64_t start, ms;

	ck_assert_ptr_nonnull(c);
	o.connect_timeout_ms = 2000;
	ft->user = &secs;
	ft_start(ft, script_time2wait);
	open_tp(ft, &tp, &o);
	read_init(c);
	start = now_ms();
	ck_assert_int_eq(tp.ops->submit(tp.impl, &c->x), 0);
	run_until_done(&tp, c);
	ms = now_ms() - start;
	ck_assert_int_eq(c->dr.called, 1);
	ck_assert_int_eq(c->dr.err, 0);
	fill(want, sizeof(want), 9);
	ck_assert_mem_eq(c->in, want, RD_LEN);
	ck_assert_uint_ge(ms, want_ms);
	ck_assert_uint_lt(ms, want_ms + 1500);
	tp.ops->destroy(tp.impl);
	ck_assert_msg(ft_join(ft)[0] == 0, "%s", ft->fail);
	ck_assert_int_eq(ft->logins, 2);
	free(c);
	free(ft);
}
END_TEST

/* ---- the CmdSN window (RFC 7143 §4.2.2.1) ---- */

enum window_mode {
	WM_CLOSED,      /* MaxCmdSN = ExpCmdSN - 1, reopened by a NOP-In */
	WM_FAR,         /* MaxCmdSN 2^31 - 16 ahead: max_inflight still bounds */
	WM_INVALID,     /* MaxCmdSN < ExpCmdSN - 1: ignored */
};

#define WIN_READS 12u
#define WIN_INFLIGHT 4u       /* max_inflight of the test */

struct window_rec {
	enum window_mode mode;
	uint32_t cmdsn1;          /* CmdSN of the first READ */
	int early;                /* bytes waiting when the window reopened */
	unsigned max_seen;        /* READs outstanding at once (WM_FAR) */
};

static void script_window(struct ft *ft)
{
	struct window_rec *r = ft->user;
	struct osd__iscsi_bhs h;
	uint32_t itt, itts[WIN_READS];
	unsigned got = 0, answered = 0;

	if (ft_accept(ft) || ft_login(ft) || recv_read(ft, &itt))
		return;
	r->cmdsn1 = ft->pdu.bhs.cmd_sn;
	switch (r->mode) {
	case WM_CLOSED:
		ft->maxcmdsn = ft->expcmdsn - 1;
		break;
	case WM_FAR:
		ft->maxcmdsn = ft->expcmdsn + 0x7FFFFFF0u;
		break;
	case WM_INVALID:
		/* both ignored: else the window would close, ExpCmdSN jump */
		ft->expcmdsn += 100;
		ft->maxcmdsn = ft->expcmdsn - 5;
		break;
	}
	if (send_read_answer(ft, itt, 5))
		return;
	ft_step_set(ft, 1);
	if (r->mode == WM_CLOSED) {
		if (ft_step_wait(ft, 2))
			return;
		r->early = readable(ft->fd);
		ft->maxcmdsn = ft->expcmdsn + 8;
		memset(&h, 0, sizeof(h));
		h.opcode = OSD_ISCSI_OP_NOP_IN;
		h.flags = OSD_ISCSI_F_FINAL;
		h.itt = OSD_ISCSI_RSVD_TAG;
		h.ttt = OSD_ISCSI_RSVD_TAG;
		ft_rsp_sn(ft, &h, 0);
		if (ft_send(ft, &h, NULL, 0, NULL, 0))
			return;
	}
	if (r->mode != WM_FAR) {
		if (recv_read(ft, &itt))
			return;
		FT_CHECK(ft, ft->pdu.bhs.cmd_sn == r->cmdsn1 + 1, "CmdSN %u after %u",
			 (unsigned)ft->pdu.bhs.cmd_sn, (unsigned)r->cmdsn1);
		if (send_read_answer(ft, itt, 9))
			return;
		ft_logout(ft);
		return;
	}
	/* WM_FAR: take READs until WIN_INFLIGHT are outstanding (the
	 * initiator's limit, checked on its side), then answer the oldest */
	while (answered < WIN_READS) {
		if (got < WIN_READS && got - answered < WIN_INFLIGHT) {
			uint32_t keep = ft->maxcmdsn;

			if (recv_read(ft, &itts[got]))
				return;
			ft->maxcmdsn = keep;
			got++;
			if (got - answered > r->max_seen)
				r->max_seen = got - answered;
			continue;
		}
		if (send_read_answer(ft, itts[answered++], 9))
			return;
	}
	ft_logout(ft);
}

START_TEST(cmdsn_window)
{
	struct ft *ft = ft_new();
	struct window_rec r = { .mode = (enum window_mode)_i };
	struct osd_iscsi_options o = OSD_ISCSI_OPTIONS_INIT;
	struct osd_transport tp;
	struct cmd *c = calloc(WIN_READS, sizeof(*c));
	const struct osd__iscsi_sess *s;
	uint32_t exp, max;
	uint8_t want[RD_LEN];
	uint64_t end;

	ck_assert_ptr_nonnull(c);
	o.connect_timeout_ms = 2000;
	o.max_inflight = WIN_INFLIGHT;
	ft->user = &r;
	/* MaxCmdSN never moves back (§4.2.2.1): the window closes only when
	 * ExpCmdSN passes it, so the login opens it for one command only */
	if (r.mode == WM_CLOSED)
		ft->window = 1;
	ft_start(ft, script_window);
	open_tp(ft, &tp, &o);
	s = tp.impl;
	read_init(&c[0]);
	ck_assert_int_eq(tp.ops->submit(tp.impl, &c[0].x), 0);
	run_until_done(&tp, &c[0]);
	ck_assert_int_eq(c[0].dr.err, 0);
	ck_assert_int_eq(ft_step_wait(ft, 1), 0);
	exp = s->expcmdsn;
	max = s->maxcmdsn;
	if (r.mode == WM_CLOSED) {
		ck_assert_uint_eq(max, exp - 1);
		read_init(&c[1]);
		ck_assert_int_eq(tp.ops->submit(tp.impl, &c[1].x), 0);
		ck_assert_uint_eq(s->inflight, 0); /* held: CmdSN > MaxCmdSN */
		ft_step_set(ft, 2);
		run_until_done(&tp, &c[1]);
		ck_assert_int_eq(c[1].dr.err, 0);
		ck_assert_int_eq(r.early, 0); /* nothing went out before the NOP-In */
	} else if (r.mode == WM_INVALID) {
		ck_assert_uint_eq(exp, r.cmdsn1); /* neither taken */
		ck_assert_uint_eq(max, r.cmdsn1 + 31);
		read_init(&c[1]);
		ck_assert_int_eq(tp.ops->submit(tp.impl, &c[1].x), 0);
		ck_assert_uint_eq(s->inflight, 1);
		run_until_done(&tp, &c[1]);
		ck_assert_int_eq(c[1].dr.err, 0);
	} else {
		ck_assert_uint_eq(max, r.cmdsn1 + 1 + 0x7FFFFFF0u);
		for (unsigned i = 0; i < WIN_READS; i++) {
			read_init(&c[i]);
			ck_assert_int_eq(tp.ops->submit(tp.impl, &c[i].x), 0);
			ck_assert_uint_le(s->inflight, o.max_inflight);
		}
		end = now_ms() + WAIT_MS;
		for (unsigned done = 0; done < WIN_READS && now_ms() < end;) {
			struct pollfd pfd = { .fd = tp.ops->get_fd(tp.impl),
					      .events = (short)tp.ops->which_events(tp.impl) };

			poll(&pfd, 1, 50);
			ck_assert_int_eq(tp.ops->service(tp.impl, pfd.revents), 0);
			ck_assert_uint_le(s->inflight, o.max_inflight);
			done = 0;
			for (unsigned i = 0; i < WIN_READS; i++)
				done += c[i].dr.called;
		}
		for (unsigned i = 0; i < WIN_READS; i++)
			ck_assert_int_eq(c[i].dr.err, 0);
	}
	fill(want, sizeof(want), 9);
	ck_assert_mem_eq(c[1].in, want, RD_LEN);
	tp.ops->destroy(tp.impl);
	ck_assert_msg(ft_join(ft)[0] == 0, "%s", ft->fail);
	if (r.mode == WM_FAR)
		ck_assert_uint_eq(r.max_seen, o.max_inflight);
	ck_assert_int_eq(ft->logins, 1);
	free(c);
	free(ft);
}
END_TEST

/* ---- StatSN within the slack: taken forward, ignored backward ---- */

static void script_statsn_small(struct ft *ft)
{
	uint32_t itt;

	if (ft_accept(ft) || ft_login(ft))
		return;
	for (int i = 0; i < 3; i++) {
		if (recv_read(ft, &itt))
			return;
		/* +5 (five statuses lost), then -3 (an old one), then in order */
		ft->statsn += i == 0 ? 5 : i == 1 ? (uint32_t)-3 : 2;
		if (send_read_answer(ft, itt, 9))
			return;
		((uint32_t *)ft->user)[i] = ft->statsn - 1;
	}
	ft_logout(ft);
}

START_TEST(statsn_small_jumps)
{
	struct ft *ft = ft_new();
	uint32_t sent[3];
	struct osd_iscsi_options o = OSD_ISCSI_OPTIONS_INIT;
	struct osd_transport tp;
	struct cmd *c = malloc(sizeof(*c));
	const struct osd__iscsi_sess *s;
	uint32_t exp[3];

	ck_assert_ptr_nonnull(c);
	ft->user = sent;
	ft_start(ft, script_statsn_small);
	open_tp(ft, &tp, &o);
	s = tp.impl;
	for (int i = 0; i < 3; i++) {
		read_init(c);
		ck_assert_int_eq(tp.ops->submit(tp.impl, &c->x), 0);
		run_until_done(&tp, c);
		ck_assert_int_eq(c->dr.err, 0);
		exp[i] = s->expstatsn;
	}
	tp.ops->destroy(tp.impl);
	ck_assert_msg(ft_join(ft)[0] == 0, "%s", ft->fail);
	ck_assert_uint_eq(exp[0], sent[0] + 1); /* forward: taken */
	ck_assert_uint_eq(exp[1], exp[0]);      /* backward: ignored */
	ck_assert_uint_eq(sent[2], exp[0]);     /* in order again */
	ck_assert_uint_eq(exp[2], sent[2] + 1);
	ck_assert_int_eq(ft->logins, 1);
	free(c);
	free(ft);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("iscsi_hostile_target");
	TCase *tc = tcase_create("bounds");

	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, nop_flood_during_read);
	tcase_add_test(tc, service_budget);
	tcase_add_test(tc, ping_answers_bounded);
	tcase_add_test(tc, r2t_flood_bounded);
	tcase_add_loop_test(tc, login_never_transits, 0, 2);
	tcase_add_loop_test(tc, proto_error_bounded, 0, 12);
	tcase_add_test(tc, proto_login_backoff);
	tcase_add_loop_test(tc, reject_fails_command, 0,
			    (int)(sizeof(reject_cases) / sizeof(reject_cases[0])));
	tcase_add_loop_test(tc, async_events, 0, (int)(sizeof(async_cases) / sizeof(async_cases[0])));
	tcase_add_loop_test(tc, cmdsn_window, 0, 3);
	tcase_add_loop_test(tc, async_drop_time2wait, 0, 2);
	tcase_add_test(tc, statsn_small_jumps);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
