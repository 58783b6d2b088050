/* A request that returned to its caller never touches the caller's buffers
 * again: libosd requests over the iSCSI transport against the scripted
 * fake target, which answers late or not at all. A READ given up on (its
 * timeout, or freed in flight, even in the middle of a Data-In segment)
 * gets its Data-In late: nothing lands in the buffer and the session stays
 * usable. A WRITE given up on is aborted (ABORT TASK, RFC 7143 §11.5.1),
 * its R2T is not answered, and after the connection drops it is not sent
 * again. The ASan build frees the buffers, so any access is reported. */
#include <check.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <osd/iscsi.h>
#include <osd/osd.h>
#include "fake_target.h"

#define TARGET "iqn.2026-01.org.libosd:fake"
#define WAIT_MS 10000
#define GIVE_UP_MS 300      /* the device's timeout_ms */
#define SEG (32u << 10)     /* Data-In segment of the late READ answer */
#define RD_LEN (3 * SEG)    /* three segments */
#define PART 10000u         /* bytes of the first segment sent before giving up */
#define WR_LEN 4096u        /* beyond FirstBurstLength (512): the rest needs an R2T */
#define CANARY 0xA5
#define ACT_READ 0x8885
#define ACT_WRITE 0x8886

static const struct osd_obj_id OBJ = { 0x10000, 0x10003 };

/* What the script saw, for the test to check after ft_join(). */
struct seen {
	unsigned writes;         /* SCSI Commands carrying a WRITE, both connections */
	unsigned data_out;       /* Data-Out PDUs after the test gave up */
	unsigned aborts;         /* ABORT TASK naming the abandoned command */
	unsigned reads;          /* READ commands answered */
};

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

static int action_of(const struct ft *ft)
{
	return ft->pdu.bhs.cdb[8] << 8 | ft->pdu.bhs.cdb[9];
}

static void window_after(struct ft *ft)
{
	ft->expcmdsn = ft->pdu.bhs.cmd_sn + 1;
	ft->maxcmdsn = ft->expcmdsn + ft->window - 1;
}

/* Data-In PDU of @p len pattern bytes at @p off built into @p b; with
 * @p last the status (GOOD) comes with it. Returns the PDU length. */
static size_t build_data_in(struct ft *ft, uint8_t *b, size_t cap, uint32_t itt, size_t off,
			    size_t len, int last, uint32_t data_sn)
{
	struct osd__iscsi_bhs h;
	uint8_t *d = malloc(len);
	long n;

	fill(d, len, (unsigned)(off / SEG) + 40);
	memset(&h, 0, sizeof(h));
	h.opcode = OSD_ISCSI_OP_DATA_IN;
	h.flags = OSD_ISCSI_F_FINAL | (last ? OSD_ISCSI_F_STATUS : 0);
	h.itt = itt;
	h.ttt = OSD_ISCSI_RSVD_TAG;
	ft_rsp_sn(ft, &h, last);
	h.data_sn = data_sn;
	h.offset = (uint32_t)off;
	n = osd__iscsi_pdu_build(b, cap, &h, NULL, 0, d, len, &ft->dg);
	free(d);
	return n > 0 ? (size_t)n : 0;
}

/* Answers a 64-byte READ with Data-In carrying status. */
static int answer_read(struct ft *ft, unsigned seed)
{
	struct osd__iscsi_bhs h;
	uint8_t d[64];

	fill(d, sizeof(d), seed);
	memset(&h, 0, sizeof(h));
	h.opcode = OSD_ISCSI_OP_DATA_IN;
	h.flags = OSD_ISCSI_F_FINAL | OSD_ISCSI_F_STATUS;
	h.itt = ft->pdu.bhs.itt;
	h.ttt = OSD_ISCSI_RSVD_TAG;
	ft_rsp_sn(ft, &h, 1);
	return ft_send(ft, &h, NULL, 0, d, sizeof(d));
}

static int tmf_answer(struct ft *ft, uint8_t response)
{
	struct osd__iscsi_bhs h;

	memset(&h, 0, sizeof(h));
	h.opcode = OSD_ISCSI_OP_TMF_RSP;
	h.flags = OSD_ISCSI_F_FINAL;
	h.response = response;
	h.itt = ft->pdu.bhs.itt;
	ft_rsp_sn(ft, &h, 1);
	return ft_send(ft, &h, NULL, 0, NULL, 0);
}

static int is_abort_of(const struct ft *ft, uint32_t itt, uint32_t sn)
{
	const struct osd__iscsi_bhs *b = &ft->pdu.bhs;

	return b->opcode == OSD_ISCSI_OP_TMF_REQ && b->immediate &&
	       b->flags == (OSD_ISCSI_F_FINAL | OSD_ISCSI_TASK_ABORT) && b->ttt == itt &&
	       b->ref_cmd_sn == sn;
}

/* Receives until a SCSI Command; NOP-Outs (keepalives) are skipped. */
static int recv_cmd(struct ft *ft)
{
	do {
		if (ft_recv(ft))
			return -1;
	} while (ft->pdu.bhs.opcode == OSD_ISCSI_OP_NOP_OUT);
	FT_CHECK_RC(ft, ft->pdu.bhs.opcode == OSD_ISCSI_OP_SCSI_CMD, "SCSI Command expected, got %s",
		    osd__iscsi_opcode_name(ft->pdu.bhs.opcode));
	return 0;
}

/* ---- the device and the driving loop ---- */

static osd_dev *open_dev(struct ft *ft)
{
	struct osd_iscsi_options o = OSD_ISCSI_OPTIONS_INIT;
	struct osd_dev_options d = OSD_DEV_OPTIONS_INIT;
	struct osd_transport tp;
	char url[128], err[256] = "";
	osd_dev *dev;
	int rc;

	snprintf(url, sizeof(url), "iscsi://127.0.0.1:%u/" TARGET "/0", ft->port);
	o.errbuf = err;
	o.errbuf_len = sizeof(err);
	rc = osd_iscsi_transport_new(&tp, url, &o);
	ck_assert_msg(rc == 0, "transport_new: %d %s / target: %s", rc, err, ft->fail);
	d.osd_version = OSD_VERSION_2; /* no probe: the script sees only our commands */
	d.timeout_ms = GIVE_UP_MS;
	ck_assert_int_eq(osd_dev_open(&dev, &tp, &d), 0);
	return dev;
}

struct cb_rec {
	int called, result;
};

static void record(osd_req *req, int result, void *p)
{
	struct cb_rec *r = p;

	(void)req;
	r->called++;
	r->result = result;
}

/* Drives the device as an event loop would until @p *flag is set or the
 * script reaches step @p step (whichever is given), at most WAIT_MS. */
static void drive_until(osd_dev *dev, const int *flag, struct ft *ft, int step)
{
	uint64_t end = now_ms() + WAIT_MS;

	for (;;) {
		struct pollfd p = { osd_dev_get_fd(dev), (short)osd_dev_which_events(dev), 0 };
		int reached;

		if (flag) {
			reached = *flag != 0;
		} else {
			pthread_mutex_lock(&ft->step_mu);
			reached = ft->step >= step;
			pthread_mutex_unlock(&ft->step_mu);
		}
		if (reached)
			return;
		ck_assert_msg(now_ms() < end, "nothing happened in %d ms (target: %s)", WAIT_MS,
			      ft->fail);
		if (p.fd >= 0)
			poll(&p, 1, 50);
		osd_dev_service(dev, p.fd >= 0 ? p.revents : 0);
	}
}

/* Reads 64 bytes asynchronously, driving the device, and checks them. */
static void read_back(osd_dev *dev, unsigned seed)
{
	uint8_t in[64], want[64];
	struct iovec iov = { in, sizeof(in) };
	struct cb_rec r = { 0, 0 };
	osd_req *req;

	ck_assert_int_eq(osd_req_read(&req, dev, &OBJ, 0, &iov, 1), 0);
	ck_assert_int_eq(osd_req_submit(req, record, &r), 0);
	drive_until(dev, &r.called, NULL, 0);
	ck_assert_int_eq(r.called, 1);
	ck_assert_int_eq(r.result, 0);
	ck_assert_uint_eq(osd_req_bytes_read(req), sizeof(in));
	fill(want, sizeof(want), seed);
	ck_assert_mem_eq(in, want, sizeof(in));
	osd_req_free(req);
}

/* ---- (a) a READ given up on gets its Data-In late ---- */

static void script_late_read(struct ft *ft)
{
	struct seen *sn = ft->user;
	size_t cap = SEG + 256, n1, n2, n3;
	uint8_t *p1 = malloc(cap), *p2 = malloc(cap), *p3 = malloc(cap);
	uint32_t itt, cmdsn;

	if (ft_accept(ft) || ft_login(ft) || recv_cmd(ft))
		goto out;
	FT_CHECK(ft, action_of(ft) == ACT_READ, "READ expected");
	itt = ft->pdu.bhs.itt;
	cmdsn = ft->pdu.bhs.cmd_sn;
	window_after(ft);
	/* The answer starts to arrive: part of the first segment only. */
	n1 = build_data_in(ft, p1, cap, itt, 0, SEG, 0, 0);
	if (ft_send_raw(ft, p1, PART))
		goto out;
	ft_step_set(ft, 1);
	if (ft_step_wait(ft, 2) || ft_recv(ft)) /* the test has given up */
		goto out;
	FT_CHECK(ft, is_abort_of(ft, itt, cmdsn), "ABORT TASK of the READ expected, got %s",
		 osd__iscsi_opcode_name(ft->pdu.bhs.opcode));
	sn->aborts++;
	/* The rest comes anyway (the target had it under way), then the
	 * answer to the abort. */
	n2 = build_data_in(ft, p2, cap, itt, SEG, SEG, 0, 1);
	n3 = build_data_in(ft, p3, cap, itt, 2 * SEG, SEG, 1, 2);
	if (ft_send_raw(ft, p1 + PART, n1 - PART) || ft_send_raw(ft, p2, n2) ||
	    ft_send_raw(ft, p3, n3) || tmf_answer(ft, OSD_ISCSI_TMF_RSP_NO_TASK))
		goto out;
	/* The session goes on. */
	if (recv_cmd(ft))
		goto out;
	FT_CHECK(ft, action_of(ft) == ACT_READ, "the next READ expected");
	window_after(ft);
	if (answer_read(ft, 9))
		goto out;
	sn->reads++;
	ft_logout(ft);
out:
	free(p1);
	free(p2);
	free(p3);
}

/*
 * _i bit 0: the buffer is freed once the request returned (ASan reports
 * any write into it), else kept and compared byte for byte.
 * _i bit 1: the caller gives up with osd_req_free() once the first part of
 * a segment is in its buffer (the rest of that segment arrives later), else
 * the request times out in osd_req_execute().
 */
START_TEST(read_given_up_gets_late_data)
{
	struct ft *ft = calloc(1, sizeof(*ft));
	struct seen *sn = calloc(1, sizeof(*sn));
	int free_buf = _i & 1, by_free = _i & 2;
	uint8_t *buf = malloc(RD_LEN), *snap = malloc(RD_LEN);
	struct iovec iov = { buf, RD_LEN };
	struct cb_rec r = { 0, 0 };
	osd_req *req;
	osd_dev *dev;

	ck_assert_ptr_nonnull(ft);
	ft->user = sn;
	ft_start(ft, script_late_read);
	dev = open_dev(ft);
	memset(buf, CANARY, RD_LEN);
	ck_assert_int_eq(osd_req_read(&req, dev, &OBJ, 0, &iov, 1), 0);
	if (by_free) {
		ck_assert_int_eq(osd_req_submit(req, record, &r), 0);
		drive_until(dev, NULL, ft, 1);
		/* the first PART bytes were sent before step 1: take them in */
		for (uint64_t end = now_ms() + WAIT_MS; buf[PART - OSD_ISCSI_BHS_LEN - 1] == CANARY;) {
			struct pollfd p = { osd_dev_get_fd(dev), POLLIN, 0 };

			ck_assert_msg(now_ms() < end, "the first part never arrived");
			poll(&p, 1, 50);
			osd_dev_service(dev, p.revents);
		}
		osd_req_free(req); /* mid-segment */
		ck_assert_int_eq(r.called, 0); /* a freed request's callback never runs */
	} else {
		ck_assert_int_eq(osd_req_execute(req), -ETIMEDOUT);
		ck_assert_int_eq(osd_req_result(req), -ETIMEDOUT);
		ck_assert_ptr_nonnull(strstr(osd_req_error(req), "no answer within 300 ms"));
		osd_req_free(req);
	}
	/* Nothing of it is in flight any more. */
	ck_assert_uint_eq(osd_dev_queue_length(dev), 0);
	memcpy(snap, buf, RD_LEN);
	if (free_buf) {
		free(buf);
		buf = NULL;
	}
	ft_step_set(ft, 2);
	/* The late Data-In arrives before the next answer: it is dropped. */
	read_back(dev, 9);
	if (buf) {
		ck_assert_mem_eq(buf, snap, RD_LEN);
		/* and past what arrived before giving up, the canary is intact */
		for (size_t i = PART - OSD_ISCSI_BHS_LEN; i < RD_LEN; i++)
			ck_assert_uint_eq(buf[i], CANARY);
	}
	osd_dev_close(dev);
	ck_assert_msg(ft_join(ft)[0] == 0, "%s", ft->fail);
	ck_assert_uint_eq(sn->aborts, 1);
	ck_assert_uint_eq(sn->reads, 1);
	ck_assert_int_eq(ft->logins, 1); /* the connection never dropped */
	free(buf);
	free(snap);
	free(sn);
	free(ft);
}
END_TEST

/* ---- (b) a WRITE given up on is not resent after a reconnect ---- */

static void script_write_dropped(struct ft *ft)
{
	struct seen *sn = ft->user;
	struct osd__iscsi_bhs h;
	uint32_t itt, cmdsn;
	int pinged = 0;

	if (ft_accept(ft) || ft_login(ft) || recv_cmd(ft))
		return;
	FT_CHECK(ft, action_of(ft) == ACT_WRITE, "WRITE expected");
	FT_CHECK(ft, ft->pdu.data_len == 512, "512 bytes of immediate data expected, got %zu",
		 (size_t)ft->pdu.data_len);
	sn->writes++;
	itt = ft->pdu.bhs.itt;
	cmdsn = ft->pdu.bhs.cmd_sn;
	window_after(ft);
	ft_step_set(ft, 1);
	if (ft_step_wait(ft, 2) || ft_recv(ft)) /* the test has given up */
		return;
	FT_CHECK(ft, is_abort_of(ft, itt, cmdsn), "ABORT TASK of the WRITE expected, got %s",
		 osd__iscsi_opcode_name(ft->pdu.bhs.opcode));
	sn->aborts++;
	/* Ask for the rest of the data (the abort is left unanswered), then
	 * ping: whatever the initiator sends for the R2T comes before the
	 * echo. */
	memset(&h, 0, sizeof(h));
	h.opcode = OSD_ISCSI_OP_R2T;
	h.flags = OSD_ISCSI_F_FINAL;
	h.itt = itt;
	h.ttt = 0x77;
	ft_rsp_sn(ft, &h, 0);
	h.offset = 512;
	h.length = WR_LEN - 512;
	if (ft_send(ft, &h, NULL, 0, NULL, 0))
		return;
	memset(&h, 0, sizeof(h));
	h.opcode = OSD_ISCSI_OP_NOP_IN;
	h.flags = OSD_ISCSI_F_FINAL;
	h.itt = OSD_ISCSI_RSVD_TAG;
	h.ttt = 0x99;
	ft_rsp_sn(ft, &h, 0);
	if (ft_send(ft, &h, NULL, 0, NULL, 0))
		return;
	while (!pinged) {
		if (ft_recv(ft))
			return;
		switch (ft->pdu.bhs.opcode) {
		case OSD_ISCSI_OP_NOP_OUT:
			pinged = ft->pdu.bhs.ttt == 0x99;
			break;
		case OSD_ISCSI_OP_DATA_OUT:
			sn->data_out++;
			break;
		case OSD_ISCSI_OP_SCSI_CMD: /* the READ may go out on this connection */
			sn->writes += action_of(ft) == ACT_WRITE;
			FT_CHECK(ft, action_of(ft) == ACT_READ, "only a READ may come now");
			break;
		default:
			FT_CHECK(ft, 0, "unexpected %s", osd__iscsi_opcode_name(ft->pdu.bhs.opcode));
		}
	}
	/* The connection drops; the initiator logs in again. */
	close(ft->fd);
	ft->fd = -1;
	if (ft_accept(ft) || ft_login(ft) || recv_cmd(ft))
		return;
	sn->writes += action_of(ft) == ACT_WRITE;
	FT_CHECK(ft, action_of(ft) == ACT_READ, "only the READ may be sent again (action %04x)",
		 (unsigned)action_of(ft));
	window_after(ft);
	if (answer_read(ft, 9))
		return;
	sn->reads++;
	ft_logout(ft);
}

/* _i 0: the WRITE times out in osd_req_execute(); 1: it is freed in flight.
 * Its buffer is freed right away either way. */
START_TEST(write_given_up_not_resent)
{
	struct ft *ft = calloc(1, sizeof(*ft));
	struct seen *sn = calloc(1, sizeof(*sn));
	uint8_t *buf = malloc(WR_LEN);
	struct iovec iov = { buf, WR_LEN };
	struct cb_rec r = { 0, 0 };
	osd_req *req;
	osd_dev *dev;

	ck_assert_ptr_nonnull(ft);
	ft->user = sn;
	ft_start(ft, script_write_dropped);
	dev = open_dev(ft);
	fill(buf, WR_LEN, 5);
	ck_assert_int_eq(osd_req_write(&req, dev, &OBJ, 0, &iov, 1), 0);
	if (_i) {
		ck_assert_int_eq(osd_req_submit(req, record, &r), 0);
		drive_until(dev, NULL, ft, 1);
		osd_req_free(req);
		ck_assert_int_eq(r.called, 0);
	} else {
		ck_assert_int_eq(osd_req_execute(req), -ETIMEDOUT);
		ck_assert_int_eq(osd_req_result(req), -ETIMEDOUT);
		osd_req_free(req);
	}
	ck_assert_uint_eq(osd_dev_queue_length(dev), 0);
	free(buf);
	ft_step_set(ft, 2);
	/* The R2T, the ping, the drop and the new login all happen here. */
	read_back(dev, 9);
	osd_dev_close(dev);
	ck_assert_msg(ft_join(ft)[0] == 0, "%s", ft->fail);
	ck_assert_uint_eq(sn->writes, 1);
	ck_assert_uint_eq(sn->data_out, 0);
	ck_assert_uint_eq(sn->aborts, 1);
	ck_assert_uint_eq(sn->reads, 1);
	ck_assert_int_eq(ft->logins, 2);
	free(sn);
	free(ft);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("iscsi_cancel");
	TCase *tc = tcase_create("given_up");

	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, read_given_up_gets_late_data, 0, 4);
	tcase_add_loop_test(tc, write_given_up_not_resent, 0, 2);
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
