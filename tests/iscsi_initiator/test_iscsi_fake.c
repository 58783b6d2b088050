/* The initiator against a scripted fake target: the exact login PDUs, an
 * OSD WRITE with a bidirectional get list (AHS bytes, immediate data, R2T),
 * digests on and off, the CmdSN window, NOP-In, CHAP, task management and
 * a dropped connection. */
#include <check.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <osd/iscsi.h>
#include "fake_target.h"
#include "transport/iscsi_private.h"

#define TARGET "iqn.2026-01.org.libosd:fake"
#define WAIT_MS 10000

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

/* Drives the transport as an event loop would until @p cond holds. */
static int drive(struct osd_transport *tp, int (*cond)(void *), void *arg)
{
	uint64_t end = now_ms() + WAIT_MS;

	while (!cond(arg)) {
		struct pollfd pfd = { .fd = tp->ops->get_fd(tp->impl),
				      .events = (short)tp->ops->which_events(tp->impl) };

		if (now_ms() > end)
			return -ETIMEDOUT;
		if (pfd.fd >= 0)
			poll(&pfd, 1, 50);
		tp->ops->service(tp->impl, pfd.revents);
	}
	return 0;
}

static int rec_called(void *arg)
{
	return ((struct done_rec *)arg)->called != 0;
}

static struct ft *ft_new(void)
{
	struct ft *ft = calloc(1, sizeof(*ft));

	ck_assert_ptr_nonnull(ft);
	return ft;
}

static void open_tp(struct ft *ft, struct osd_transport *tp, struct osd_iscsi_options *o)
{
	char url[128], err[256] = "";
	int rc;

	snprintf(url, sizeof(url), "iscsi://127.0.0.1:%u/" TARGET "/0", ft->port);
	o->errbuf = err;
	o->errbuf_len = sizeof(err);
	rc = osd_iscsi_transport_new(tp, url, o);
	o->errbuf = NULL;
	ck_assert_msg(rc == 0, "transport_new: %d %s / target: %s", rc, err, ft->fail);
}

static const uint8_t login1_rest[] =
	"SessionType=Normal\0TargetName=" TARGET "\0AuthMethod=None";

static const uint8_t op_text_prefer_none[] =
	"HeaderDigest=None,CRC32C\0DataDigest=None,CRC32C\0MaxRecvDataSegmentLength=262144\0"
	"ErrorRecoveryLevel=0\0InitialR2T=No\0ImmediateData=Yes\0FirstBurstLength=1048576\0"
	"MaxBurstLength=1048576\0MaxOutstandingR2T=1\0MaxConnections=1\0DataPDUInOrder=Yes\0"
	"DataSequenceInOrder=Yes\0DefaultTime2Wait=0\0DefaultTime2Retain=0";

/* ---- login and a bidirectional OSD WRITE ---- */

#define W_CDB 236
#define W_OUT 1000
#define W_IN 512

struct bidi_rec {
	uint8_t cmd[4096];
	size_t cmd_len;
	uint8_t dout[2048];
	size_t dout_len;
	uint32_t cmd_itt;
};

static void fill(uint8_t *p, size_t n, unsigned seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(i * 7 + seed);
}

static void script_bidi(struct ft *ft)
{
	struct bidi_rec *r = ft->user;
	struct osd__iscsi_bhs h;
	uint8_t in[W_IN];

	if (ft_accept(ft) || ft_login(ft) || ft_recv(ft))
		return;
	FT_CHECK(ft, ft->pdu.bhs.opcode == OSD_ISCSI_OP_SCSI_CMD, "SCSI Command expected");
	memcpy(r->cmd, ft->buf, ft->len);
	r->cmd_len = ft->len;
	r->cmd_itt = ft->pdu.bhs.itt;
	ft->expcmdsn = ft->pdu.bhs.cmd_sn + 1;
	ft->maxcmdsn = ft->expcmdsn + ft->window - 1;
	/* ask for the rest */
	memset(&h, 0, sizeof(h));
	h.opcode = OSD_ISCSI_OP_R2T;
	h.flags = OSD_ISCSI_F_FINAL;
	h.itt = r->cmd_itt;
	h.ttt = 0x77;
	ft_rsp_sn(ft, &h, 0);
	h.offset = 512;
	h.length = W_OUT - 512;
	if (ft_send(ft, &h, NULL, 0, NULL, 0) || ft_recv(ft))
		return;
	memcpy(r->dout, ft->buf, ft->len);
	r->dout_len = ft->len;
	/* the get list comes back as Data-In, the status in a SCSI Response */
	fill(in, sizeof(in), 99);
	memset(&h, 0, sizeof(h));
	h.opcode = OSD_ISCSI_OP_DATA_IN;
	h.flags = OSD_ISCSI_F_FINAL;
	h.itt = r->cmd_itt;
	h.ttt = OSD_ISCSI_RSVD_TAG;
	ft_rsp_sn(ft, &h, 0);
	if (ft_send(ft, &h, NULL, 0, in, sizeof(in)))
		return;
	memset(&h, 0, sizeof(h));
	h.opcode = OSD_ISCSI_OP_SCSI_RSP;
	h.flags = OSD_ISCSI_F_FINAL;
	h.itt = r->cmd_itt;
	h.data_sn = 1; /* ExpDataSN: the one Data-In (RFC 7143 §11.4.8) */
	ft_rsp_sn(ft, &h, 1);
	if (ft_send(ft, &h, NULL, 0, NULL, 0))
		return;
	ft_logout(ft);
}

static void check_login1(const struct ft *ft)
{
	const uint8_t *b = ft->login1;
	char name[OSD_ISCSI_DEFAULT_NAME_LEN], login1_text[512];
	size_t tl;

	/* the default name: the libosd prefix and 12 hex digits for this host */
	osd__iscsi_default_name(name);
	ck_assert_uint_eq(strlen(name), strlen(OSD_ISCSI_DEFAULT_NAME_PREFIX) + 12);
	ck_assert(strncmp(name, OSD_ISCSI_DEFAULT_NAME_PREFIX,
			  strlen(OSD_ISCSI_DEFAULT_NAME_PREFIX)) == 0);
	ck_assert_uint_eq(strspn(name + strlen(OSD_ISCSI_DEFAULT_NAME_PREFIX), "0123456789abcdef"), 12);
	ck_assert(osd__iscsi_name_valid(name, strlen(name)));
	tl = (size_t)snprintf(login1_text, sizeof(login1_text), "InitiatorName=%s", name) + 1;
	memcpy(login1_text + tl, login1_rest, sizeof(login1_rest));
	tl += sizeof(login1_rest); /* includes the last NUL */

	ck_assert_uint_eq(b[0], 0x43);       /* I + Login Request */
	ck_assert_uint_eq(b[1], 0x81);       /* T, CSG=0, NSG=1 */
	ck_assert_uint_eq(b[2], 0);          /* VersionMax */
	ck_assert_uint_eq(b[3], 0);          /* VersionMin */
	ck_assert_uint_eq(b[4], 0);          /* no AHS */
	ck_assert_uint_eq((unsigned)(b[5] << 16 | b[6] << 8 | b[7]), tl);
	ck_assert_uint_eq(b[8], 0x80);       /* ISID type: random */
	ck_assert_uint_eq(b[14], 0);         /* TSIH 0: new session */
	ck_assert_uint_eq(b[15], 0);
	ck_assert_uint_eq(b[20], 0);         /* CID 0 */
	ck_assert_uint_eq(b[21], 0);
	ck_assert_mem_eq(b + 24, "\0\0\0\1", 4); /* CmdSN 1 */
	ck_assert_mem_eq(b + 28, "\0\0\0\0", 4); /* ExpStatSN 0 */
	for (int i = 32; i < 48; i++)
		ck_assert_uint_eq(b[i], 0);
	ck_assert_uint_eq(ft->login1_len, OSD_ISCSI_BHS_LEN + ((tl + 3) & ~3u));
	ck_assert_mem_eq(b + OSD_ISCSI_BHS_LEN, login1_text, tl);
}

START_TEST(bidi_write)
{
	struct ft *ft = ft_new();
	struct bidi_rec *r = calloc(1, sizeof(*r));
	struct osd_iscsi_options o = OSD_ISCSI_OPTIONS_INIT;
	struct osd_transport tp;
	uint8_t cdb[W_CDB], out[W_OUT], in[W_IN], want_in[W_IN], ahs_want[232];
	struct iovec oiov[2] = { { out, 300 }, { out + 300, W_OUT - 300 } };
	struct iovec iiov[1] = { { in, sizeof(in) } };
	struct done_rec dr = { 0, 0 };
	struct osd_xfer x;
	const uint8_t *c;
	size_t hd = _i ? 4 : 0, dd = _i ? 4 : 0;
	uint8_t dig[4];

	ft->want_hd = ft->want_dd = _i;
	if (_i)
		o.header_digest = o.data_digest = OSD_ISCSI_DIGEST_PREFER_CRC32C;
	ft->user = r;
	ft_start(ft, script_bidi);
	open_tp(ft, &tp, &o);
	check_login1(ft);
	if (!_i) {
		ck_assert_uint_eq(ft->op_text_len, sizeof(op_text_prefer_none));
		ck_assert_mem_eq(ft->op_text, op_text_prefer_none, sizeof(op_text_prefer_none));
	}
	fill(cdb, sizeof(cdb), 1);
	cdb[0] = 0x7F;
	cdb[7] = W_CDB - 8;
	cdb[8] = 0x88;
	cdb[9] = 0x86; /* WRITE */
	fill(out, sizeof(out), 5);
	memset(in, 0, sizeof(in));
	memset(&x, 0, sizeof(x));
	x.cdb = cdb;
	x.cdb_len = sizeof(cdb);
	x.out_iov = oiov;
	x.out_iovcnt = 2;
	x.out_len = W_OUT;
	x.in_iov = iiov;
	x.in_iovcnt = 1;
	x.in_len = W_IN;
	x.done = xfer_done;
	x.priv = &dr;
	x.size = OSD_XFER_BASE_SIZE - 1; /* below the first layout: refused */
	ck_assert_int_eq(tp.ops->submit(tp.impl, &x), -EINVAL);
	x.size = 0;                      /* a submitter that predates the field */
	ck_assert_int_eq(tp.ops->submit(tp.impl, &x), 0);
	ck_assert_int_eq(drive(&tp, rec_called, &dr), 0);
	ck_assert_int_eq(dr.err, 0);
	ck_assert_uint_eq(x.status, OSD_STATUS_GOOD);
	ck_assert_uint_eq(x.in_xferred, W_IN);
	fill(want_in, sizeof(want_in), 99);
	ck_assert_mem_eq(in, want_in, W_IN);
	tp.ops->destroy(tp.impl); /* logs out */
	ck_assert_msg(ft_join(ft)[0] == 0, "%s", ft->fail);

	/* the SCSI Command: BHS, AHS (Extended CDB + Bidi Read), immediate data */
	c = r->cmd;
	ck_assert_uint_eq(c[0], 0x01);
	ck_assert_uint_eq(c[1], 0xE1);       /* F, R, W, SIMPLE: no unsolicited Data-Out */
	ck_assert_uint_eq(c[4], (224 + 8) / 4);
	ck_assert_uint_eq((unsigned)(c[5] << 16 | c[6] << 8 | c[7]), 512); /* FirstBurstLength */
	for (int i = 8; i < 16; i++)
		ck_assert_uint_eq(c[i], 0);  /* LUN 0 */
	ck_assert_mem_eq(c + 20, "\0\0\x03\xe8", 4); /* EDTL = data-out length 1000 */
	ck_assert_mem_eq(c + 28, "\0\0\x01\x03", 4); /* ExpStatSN after two login answers
						       * and the security token INQUIRY */
	ck_assert_mem_eq(c + 32, cdb, 16);
	ahs_want[0] = 0;
	ahs_want[1] = W_CDB - 16 + 1;        /* AHSLength 221 */
	ahs_want[2] = 1;                     /* Extended CDB */
	ahs_want[3] = 0;
	memcpy(ahs_want + 4, cdb + 16, W_CDB - 16);
	memcpy(ahs_want + 224, "\x00\x05\x02\x00\x00\x00\x02\x00", 8); /* bidi read 512 */
	ck_assert_mem_eq(c + 48, ahs_want, sizeof(ahs_want));
	if (_i) {
		osd__iscsi_digest(dig, c, 48 + 232);
		ck_assert_mem_eq(c + 48 + 232, dig, 4);
		osd__iscsi_digest(dig, out, 512);
		ck_assert_mem_eq(c + 48 + 232 + 4 + 512, dig, 4);
	}
	ck_assert_mem_eq(c + 48 + 232 + hd, out, 512);
	ck_assert_uint_eq(r->cmd_len, 48 + 232 + hd + 512 + dd);
	/* the Data-Out answering the R2T */
	c = r->dout;
	ck_assert_uint_eq(c[0], 0x05);
	ck_assert_uint_eq(c[1], 0x80);
	ck_assert_uint_eq((unsigned)(c[5] << 16 | c[6] << 8 | c[7]), W_OUT - 512);
	ck_assert_mem_eq(c + 20, "\0\0\0\x77", 4);  /* TTT echoed */
	ck_assert_mem_eq(c + 36, "\0\0\0\0", 4);    /* DataSN 0 */
	ck_assert_mem_eq(c + 40, "\0\0\x02\0", 4);  /* offset 512 */
	ck_assert_mem_eq(c + 48 + hd, out + 512, W_OUT - 512);
	ck_assert_uint_eq(r->dout_len, 48 + hd + W_OUT - 512 + dd);
	free(r);
	free(ft);
}
END_TEST

/* ---- small commands ---- */

struct cmd {
	uint8_t cdb[W_CDB];
	uint8_t out[64], in[64];
	struct iovec oiov, iiov;
	struct osd_xfer x;
	struct done_rec dr;
};

/* An OSD command of @p action; with @p out_len / @p in_len bytes. */
static void cmd_init(struct cmd *c, uint16_t action, size_t out_len, size_t in_len)
{
	memset(c, 0, sizeof(*c));
	osd_xfer_init(&c->x);
	c->x.resend = (uint8_t)osd_action_resend((enum osd_action)action);
	c->cdb[0] = 0x7F;
	c->cdb[7] = W_CDB - 8;
	c->cdb[8] = (uint8_t)(action >> 8);
	c->cdb[9] = (uint8_t)action;
	fill(c->out, sizeof(c->out), 3);
	c->oiov.iov_base = c->out;
	c->oiov.iov_len = out_len;
	c->iiov.iov_base = c->in;
	c->iiov.iov_len = in_len;
	c->x.cdb = c->cdb;
	c->x.cdb_len = W_CDB;
	if (out_len) {
		c->x.out_iov = &c->oiov;
		c->x.out_iovcnt = 1;
		c->x.out_len = out_len;
	}
	if (in_len) {
		c->x.in_iov = &c->iiov;
		c->x.in_iovcnt = 1;
		c->x.in_len = in_len;
	}
	c->x.done = xfer_done;
	c->x.priv = &c->dr;
}

static int action_of(const struct ft *ft)
{
	return ft->pdu.bhs.cdb[8] << 8 | ft->pdu.bhs.cdb[9];
}

/* Data-In with status (S): the whole answer of a read in one PDU. */
static int send_read_answer(struct ft *ft, uint32_t itt, size_t len, unsigned seed)
{
	struct osd__iscsi_bhs h;
	uint8_t d[64];

	fill(d, sizeof(d), seed);
	memset(&h, 0, sizeof(h));
	h.opcode = OSD_ISCSI_OP_DATA_IN;
	h.flags = OSD_ISCSI_F_FINAL | OSD_ISCSI_F_STATUS;
	h.itt = itt;
	h.ttt = OSD_ISCSI_RSVD_TAG;
	ft_rsp_sn(ft, &h, 1);
	return ft_send(ft, &h, NULL, 0, d, len);
}

static int send_status(struct ft *ft, uint32_t itt, uint8_t status)
{
	static const uint8_t sense[] = { 0x00, 0x08, 0x72, 0x05, 0x24, 0x00, 0, 0, 0, 0 };
	struct osd__iscsi_bhs h;

	memset(&h, 0, sizeof(h));
	h.opcode = OSD_ISCSI_OP_SCSI_RSP;
	h.flags = OSD_ISCSI_F_FINAL;
	h.status = status;
	h.itt = itt;
	ft_rsp_sn(ft, &h, 1);
	return ft_send(ft, &h, NULL, 0, status ? sense : NULL, status ? sizeof(sense) : 0);
}

/* ---- dropped connection: reads are resent, an APPEND fails ---- */

static void script_drop(struct ft *ft)
{
	uint32_t read_itt = 0;
	int seen_read = 0, seen_write = 0;
	uint8_t isid[6];

	if (ft_accept(ft) || ft_login(ft))
		return;
	memcpy(isid, ft->isid, 6);
	for (int i = 0; i < 2; i++) {
		if (ft_recv(ft))
			return;
		FT_CHECK(ft, ft->pdu.bhs.opcode == OSD_ISCSI_OP_SCSI_CMD, "command expected");
		seen_read |= action_of(ft) == 0x8885;
		seen_write |= action_of(ft) == 0x8887;
	}
	FT_CHECK(ft, seen_read && seen_write, "READ and APPEND expected");
	close(ft->fd); /* the connection drops with both in flight */
	ft->fd = -1;
	if (ft_accept(ft) || ft_login(ft))
		return;
	FT_CHECK(ft, !memcmp(isid, ft->isid, 6), "the new login must reuse the ISID");
	FT_CHECK(ft, ft->login1[14] == 0 && ft->pdu.bhs.tsih == 0, "a new session has TSIH 0");
	if (ft_recv(ft))
		return;
	FT_CHECK(ft, ft->pdu.bhs.opcode == OSD_ISCSI_OP_SCSI_CMD && action_of(ft) == 0x8885,
		 "only the READ is resent");
	read_itt = ft->pdu.bhs.itt;
	ft->expcmdsn = ft->pdu.bhs.cmd_sn + 1;
	ft->maxcmdsn = ft->expcmdsn + 8;
	if (send_read_answer(ft, read_itt, 64, 11))
		return;
	ft_logout(ft);
}

struct two {
	struct cmd *a, *b;
};

static int both_called(void *arg)
{
	struct two *t = arg;

	return t->a->dr.called && t->b->dr.called;
}

START_TEST(dropped_connection)
{
	struct ft *ft = ft_new();
	struct osd_iscsi_options o = OSD_ISCSI_OPTIONS_INIT;
	struct osd_transport tp;
	struct cmd *rd = malloc(sizeof(*rd)), *wr = malloc(sizeof(*wr));
	struct two both = { rd, wr };
	uint8_t want[64];
	uint8_t tok1[64], tok2[64];

	ft_start(ft, script_drop);
	open_tp(ft, &tp, &o);
	/* the token is what the target's Security Token VPD page says */
	ck_assert_uint_eq(tp.ops->security_token(tp.impl, tok1, sizeof(tok1)), sizeof(FT_TOKEN) - 1);
	ck_assert_mem_eq(tok1, FT_TOKEN, sizeof(FT_TOKEN) - 1);
	cmd_init(rd, 0x8885, 0, 64);
	cmd_init(wr, 0x8887, 16, 0); /* APPEND: not repeatable, so not resent */
	ck_assert_int_eq(tp.ops->submit(tp.impl, &rd->x), 0);
	ck_assert_int_eq(tp.ops->submit(tp.impl, &wr->x), 0);
	ck_assert_int_eq(drive(&tp, both_called, &both), 0);
	ck_assert_int_eq(wr->dr.err, -EIO);
	ck_assert_int_eq(rd->dr.err, 0);
	ck_assert_int_eq(rd->dr.called, 1);
	ck_assert_uint_eq(rd->x.status, 0);
	ck_assert_uint_eq(rd->x.in_xferred, 64);
	fill(want, sizeof(want), 11);
	ck_assert_mem_eq(rd->in, want, 64);
	/* read again after the reconnect (this fake hands out the same token) */
	ck_assert_uint_eq(tp.ops->security_token(tp.impl, tok2, sizeof(tok2)), sizeof(FT_TOKEN) - 1);
	ck_assert_mem_eq(tok2, tok1, sizeof(FT_TOKEN) - 1);
	tp.ops->destroy(tp.impl);
	ck_assert_msg(ft_join(ft)[0] == 0, "%s", ft->fail);
	ck_assert_int_eq(ft->logins, 2);
	free(rd);
	free(wr);
	free(ft);
}
END_TEST

/* ---- CmdSN window and NOP-In ---- */

static void script_window(struct ft *ft)
{
	struct osd__iscsi_bhs h;
	uint32_t first_sn, itt[3];

	ft->window = 1;
	if (ft_accept(ft) || ft_login(ft) || ft_recv(ft))
		return;
	FT_CHECK(ft, ft->pdu.bhs.opcode == OSD_ISCSI_OP_SCSI_CMD, "command 1 expected");
	first_sn = ft->pdu.bhs.cmd_sn;
	itt[0] = ft->pdu.bhs.itt;
	ft->expcmdsn = first_sn + 1;
	ft->maxcmdsn = first_sn;  /* window closed */
	if (send_status(ft, itt[0], 0))
		return;
	/* a ping: the answer must come before any further command */
	memset(&h, 0, sizeof(h));
	h.opcode = OSD_ISCSI_OP_NOP_IN;
	h.flags = OSD_ISCSI_F_FINAL;
	h.itt = OSD_ISCSI_RSVD_TAG;
	h.ttt = 0x55;
	ft_rsp_sn(ft, &h, 0);
	if (ft_send(ft, &h, NULL, 0, (const uint8_t *)"ping", 4) || ft_recv(ft))
		return;
	FT_CHECK(ft, ft->pdu.bhs.opcode == OSD_ISCSI_OP_NOP_OUT, "NOP-Out expected, got %s",
		 osd__iscsi_opcode_name(ft->pdu.bhs.opcode));
	FT_CHECK(ft, ft->pdu.bhs.immediate && ft->pdu.bhs.ttt == 0x55 &&
		 ft->pdu.bhs.itt == OSD_ISCSI_RSVD_TAG && ft->pdu.data_len == 4 &&
		 !memcmp(ft->pdu.data, "ping", 4) && ft->pdu.bhs.cmd_sn == first_sn + 1,
		 "NOP-Out must echo TTT and data, with ITT 0xffffffff");
	/* open the window by two: both waiting commands follow */
	ft->maxcmdsn = first_sn + 2;
	memset(&h, 0, sizeof(h));
	h.opcode = OSD_ISCSI_OP_NOP_IN;
	h.flags = OSD_ISCSI_F_FINAL;
	h.itt = OSD_ISCSI_RSVD_TAG;
	h.ttt = OSD_ISCSI_RSVD_TAG;
	ft_rsp_sn(ft, &h, 0);
	if (ft_send(ft, &h, NULL, 0, NULL, 0))
		return;
	for (int i = 1; i < 3; i++) {
		if (ft_recv(ft))
			return;
		FT_CHECK(ft, ft->pdu.bhs.opcode == OSD_ISCSI_OP_SCSI_CMD &&
			 ft->pdu.bhs.cmd_sn == first_sn + (uint32_t)i, "command %d with CmdSN+%d", i, i);
		itt[i] = ft->pdu.bhs.itt;
	}
	ft->expcmdsn = first_sn + 3;
	ft->maxcmdsn = first_sn + 10;
	if (send_status(ft, itt[2], 2) || send_status(ft, itt[1], 0))
		return;
	ft_logout(ft);
}

struct three {
	struct cmd *c[3];
};

static int three_called(void *arg)
{
	struct three *t = arg;

	return t->c[0]->dr.called && t->c[1]->dr.called && t->c[2]->dr.called;
}

START_TEST(cmdsn_window)
{
	struct ft *ft = ft_new();
	struct osd_iscsi_options o = OSD_ISCSI_OPTIONS_INIT;
	struct osd_transport tp;
	struct three t;

	ft_start(ft, script_window);
	open_tp(ft, &tp, &o);
	for (int i = 0; i < 3; i++) {
		t.c[i] = malloc(sizeof(struct cmd));
		cmd_init(t.c[i], 0x888E, 0, 0);
		ck_assert_int_eq(tp.ops->submit(tp.impl, &t.c[i]->x), 0);
	}
	ck_assert_int_eq(drive(&tp, three_called, &t), 0);
	for (int i = 0; i < 3; i++)
		ck_assert_int_eq(t.c[i]->dr.err, 0);
	ck_assert_uint_eq(t.c[0]->x.status, 0);
	ck_assert_uint_eq(t.c[1]->x.status, 0);
	ck_assert_uint_eq(t.c[2]->x.status, OSD_STATUS_CHECK_CONDITION);
	ck_assert_uint_eq(t.c[2]->x.sense_len, 8);
	ck_assert_mem_eq(t.c[2]->x.sense, "\x72\x05\x24\x00\0\0\0\0", 8);
	tp.ops->destroy(tp.impl);
	ck_assert_msg(ft_join(ft)[0] == 0, "%s", ft->fail);
	for (int i = 0; i < 3; i++)
		free(t.c[i]);
	free(ft);
}
END_TEST

/* ---- CHAP ---- */

static void script_chap(struct ft *ft)
{
	if (ft_accept(ft) || ft_login(ft))
		return;
	ft_logout(ft);
}

static void script_chap_fail(struct ft *ft)
{
	if (ft_accept(ft))
		return;
	ft_login(ft);
	ft->fail[0] = '\0'; /* the login is meant to fail */
}

START_TEST(chap_mutual)
{
	struct ft *ft = ft_new();
	struct osd_iscsi_options o = OSD_ISCSI_OPTIONS_INIT;
	struct osd_transport tp;

	ft->chap_user = o.chap_user = "alice";
	ft->chap_secret = o.chap_secret = "alice-secret-1";
	ft->chap_tuser = o.chap_target_user = "target";
	ft->chap_tsecret = o.chap_target_secret = "target-secret-2";
	ft_start(ft, script_chap);
	open_tp(ft, &tp, &o);
	tp.ops->destroy(tp.impl);
	ck_assert_msg(ft_join(ft)[0] == 0, "%s", ft->fail);
	free(ft);
}
END_TEST

/* A CHAP_I that is not a number from 0 to 255 (RFC 7143 12.1.3; numbers
 * are decimal or 0x hexadecimal, 6.1) ends the login before any answer. */
START_TEST(chap_bad_id)
{
	static const char *const bad[] = { "7x", "256", "-1", "0x", " 7", "0x100" };
	struct ft *ft = ft_new();
	struct osd_iscsi_options o = OSD_ISCSI_OPTIONS_INIT;
	struct osd_transport tp = { NULL, NULL };
	char url[128], err[256] = "";

	ft->chap_user = o.chap_user = "alice";
	ft->chap_secret = o.chap_secret = "alice-secret-1";
	ft->chap_id = bad[_i];
	ft_start(ft, script_chap_fail);
	snprintf(url, sizeof(url), "iscsi://127.0.0.1:%u/" TARGET "/0", ft->port);
	o.errbuf = err;
	o.errbuf_len = sizeof(err);
	ck_assert_int_eq(osd_iscsi_transport_new(&tp, url, &o), -EPROTO);
	ck_assert_msg(strstr(err, "bad CHAP_I") != NULL, "%s: %s", bad[_i], err);
	ck_assert_ptr_null(tp.ops);
	ft_join(ft);
	free(ft);
}
END_TEST

/* _i = 0: wrong secret (the target refuses); 1: the target fails mutual CHAP */
START_TEST(chap_refused)
{
	struct ft *ft = ft_new();
	struct osd_iscsi_options o = OSD_ISCSI_OPTIONS_INIT;
	struct osd_transport tp = { NULL, NULL };
	char url[128], err[256] = "";

	ft->chap_user = o.chap_user = "alice";
	ft->chap_secret = "alice-secret-1";
	o.chap_secret = _i ? "alice-secret-1" : "wrong-secret-9";
	ft->chap_tuser = o.chap_target_user = "target";
	ft->chap_tsecret = o.chap_target_secret = "target-secret-2";
	ft->chap_bad_mutual = _i;
	ft_start(ft, script_chap_fail);
	snprintf(url, sizeof(url), "iscsi://127.0.0.1:%u/" TARGET "/0", ft->port);
	o.errbuf = err;
	o.errbuf_len = sizeof(err);
	ck_assert_int_eq(osd_iscsi_transport_new(&tp, url, &o), -EACCES);
	ck_assert_ptr_nonnull(strstr(err, _i ? "mutual CHAP" : "authentication failed"));
	ck_assert_ptr_null(tp.ops);
	ft_join(ft);
	free(ft);
}
END_TEST

/* ---- task management ---- */

static void script_abort(struct ft *ft)
{
	struct osd__iscsi_bhs h;
	uint32_t itt, sn;

	if (ft_accept(ft) || ft_login(ft) || ft_recv(ft))
		return;
	itt = ft->pdu.bhs.itt;
	sn = ft->pdu.bhs.cmd_sn;
	ft->expcmdsn = sn + 1;
	ft->maxcmdsn = sn + 10;
	if (ft_recv(ft))
		return;
	FT_CHECK(ft, ft->pdu.bhs.opcode == OSD_ISCSI_OP_TMF_REQ && ft->pdu.bhs.immediate &&
		 ft->pdu.bhs.flags == (OSD_ISCSI_F_FINAL | OSD_ISCSI_TASK_ABORT) &&
		 ft->pdu.bhs.ttt == itt && ft->pdu.bhs.ref_cmd_sn == sn,
		 "ABORT TASK naming the command expected");
	memset(&h, 0, sizeof(h));
	h.opcode = OSD_ISCSI_OP_TMF_RSP;
	h.flags = OSD_ISCSI_F_FINAL;
	h.response = OSD_ISCSI_TMF_RSP_COMPLETE;
	h.itt = ft->pdu.bhs.itt;
	ft_rsp_sn(ft, &h, 1);
	if (ft_send(ft, &h, NULL, 0, NULL, 0) || ft_recv(ft))
		return;
	FT_CHECK(ft, ft->pdu.bhs.opcode == OSD_ISCSI_OP_TMF_REQ &&
		 ft->pdu.bhs.flags == (OSD_ISCSI_F_FINAL | OSD_ISCSI_TASK_LUN_RESET),
		 "LUN RESET expected");
	h.itt = ft->pdu.bhs.itt;
	h.response = OSD_ISCSI_TMF_RSP_NOT_SUPPORTED;
	ft_rsp_sn(ft, &h, 1);
	if (ft_send(ft, &h, NULL, 0, NULL, 0))
		return;
	/* two more commands, then a LUN RESET that ends them */
	for (int i = 0; i < 3; i++) {
		if (ft_recv(ft))
			return;
		if (ft->pdu.bhs.opcode == OSD_ISCSI_OP_SCSI_CMD) {
			ft->expcmdsn = ft->pdu.bhs.cmd_sn + 1;
			continue;
		}
		FT_CHECK(ft, i == 2 && ft->pdu.bhs.opcode == OSD_ISCSI_OP_TMF_REQ &&
			 ft->pdu.bhs.flags == (OSD_ISCSI_F_FINAL | OSD_ISCSI_TASK_LUN_RESET) &&
			 ft->pdu.bhs.ttt == OSD_ISCSI_RSVD_TAG, "2 commands and a LUN RESET expected");
	}
	h.itt = ft->pdu.bhs.itt;
	h.response = OSD_ISCSI_TMF_RSP_COMPLETE;
	ft_rsp_sn(ft, &h, 1);
	if (ft_send(ft, &h, NULL, 0, NULL, 0))
		return;
	ft_logout(ft);
}

START_TEST(task_abort)
{
	struct ft *ft = ft_new();
	struct osd_iscsi_options o = OSD_ISCSI_OPTIONS_INIT;
	struct osd_transport tp;
	struct cmd *c = malloc(sizeof(*c)), *d = malloc(sizeof(*d));

	ft_start(ft, script_abort);
	open_tp(ft, &tp, &o);
	cmd_init(c, 0x8885, 0, 64);
	ck_assert_int_eq(tp.ops->submit(tp.impl, &c->x), 0);
	ck_assert_int_eq(osd_iscsi_task_mgmt(&tp, OSD_ISCSI_TASK_ABORT, &c->x, WAIT_MS), 0);
	ck_assert_int_eq(c->dr.called, 1);
	ck_assert_int_eq(c->dr.err, -ECANCELED);
	ck_assert_int_eq(osd_iscsi_task_mgmt(&tp, OSD_ISCSI_TASK_ABORT, &c->x, WAIT_MS), -ENOENT);
	ck_assert_int_eq(osd_iscsi_task_mgmt(&tp, OSD_ISCSI_TASK_LUN_RESET, NULL, WAIT_MS),
			 -ENOTSUP);
	cmd_init(c, 0x8885, 0, 64);
	cmd_init(d, 0x8886, 16, 0);
	ck_assert_int_eq(tp.ops->submit(tp.impl, &c->x), 0);
	ck_assert_int_eq(tp.ops->submit(tp.impl, &d->x), 0);
	ck_assert_int_eq(osd_iscsi_task_mgmt(&tp, OSD_ISCSI_TASK_LUN_RESET, NULL, WAIT_MS), 0);
	ck_assert_int_eq(c->dr.err, -ECANCELED);
	ck_assert_int_eq(d->dr.err, -ECANCELED);
	ck_assert_int_eq(c->dr.called + d->dr.called, 2);
	tp.ops->destroy(tp.impl);
	ck_assert_msg(ft_join(ft)[0] == 0, "%s", ft->fail);
	free(c);
	free(d);
	free(ft);
}
END_TEST

/* ---- discovery ---- */

/* The header of a final Text Response to the request just received. */
static void text_rsp_head(struct ft *ft, struct osd__iscsi_bhs *h)
{
	memset(h, 0, sizeof(*h));
	h->opcode = OSD_ISCSI_OP_TEXT_RSP;
	h->flags = OSD_ISCSI_F_FINAL;
	h->itt = ft->pdu.bhs.itt;
	h->ttt = OSD_ISCSI_RSVD_TAG;
	ft_rsp_sn(ft, h, 1);
}

static void script_discovery(struct ft *ft)
{
	struct osd__iscsi_text t = { 0 };
	struct osd__iscsi_bhs h;

	if (ft_accept(ft) || ft_login(ft) || ft_recv(ft))
		return;
	FT_CHECK(ft, ft->pdu.bhs.opcode == OSD_ISCSI_OP_TEXT_REQ && ft->pdu.data_len == 16 &&
		 !memcmp(ft->pdu.data, "SendTargets=All", 16), "SendTargets=All expected");
	osd__iscsi_text_add(&t, "TargetName", "iqn.2026-01.org.x:a");
	osd__iscsi_text_add(&t, "TargetAddress", "127.0.0.1:3260,1");
	osd__iscsi_text_add(&t, "TargetAddress", "[::1]:3260,1");
	osd__iscsi_text_add(&t, "TargetName", "iqn.2026-01.org.x:b");
	text_rsp_head(ft, &h);
	if (ft_send(ft, &h, NULL, 0, t.data, t.len) == 0)
		ft_logout(ft);
	osd__iscsi_text_free(&t);
}

START_TEST(discovery)
{
	struct ft *ft = ft_new();
	struct osd_iscsi_target_info *v = NULL;
	size_t n = 0;
	char portal[64];

	ft_start(ft, script_discovery);
	snprintf(portal, sizeof(portal), "127.0.0.1:%u", ft->port);
	ck_assert_int_eq(osd_iscsi_discover(&v, &n, portal, NULL), 0);
	ck_assert_msg(ft_join(ft)[0] == 0, "%s", ft->fail);
	ck_assert_uint_eq(n, 2);
	ck_assert_str_eq(v[0].name, "iqn.2026-01.org.x:a");
	ck_assert_str_eq(v[0].address, "127.0.0.1:3260,1");
	ck_assert_str_eq(v[1].name, "iqn.2026-01.org.x:b");
	ck_assert_str_eq(v[1].address, "");
	/* a discovery login names no target */
	ck_assert_ptr_null(memmem(ft->login1 + 48, ft->login1_len - 48, "TargetName", 10));
	ck_assert_ptr_nonnull(memmem(ft->login1 + 48, ft->login1_len - 48,
				     "SessionType=Discovery", 21));
	free(v);
	free(ft);
}
END_TEST

/* A SendTargets answer whose last pair lacks its NUL (RFC 7143 §6.1):
 * discovery used to read the name past the end of the received text. */
static const uint8_t st_unterminated[] = "TargetName=iqn.2026-01.org.x:a\0TargetName=iqn.x";

static void script_discovery_unterminated(struct ft *ft)
{
	struct osd__iscsi_bhs h;

	if (ft_accept(ft) || ft_login(ft) || ft_recv(ft))
		return;
	FT_CHECK(ft, ft->pdu.bhs.opcode == OSD_ISCSI_OP_TEXT_REQ, "SendTargets=All expected");
	text_rsp_head(ft, &h);
	/* the exact bytes, without the array's own terminating NUL */
	ft_send(ft, &h, NULL, 0, st_unterminated, sizeof(st_unterminated) - 1);
}

START_TEST(discovery_unterminated)
{
	struct ft *ft = ft_new();
	struct osd_iscsi_options o = OSD_ISCSI_OPTIONS_INIT;
	struct osd_iscsi_target_info *v = NULL;
	size_t n = 7;
	char portal[64], err[256] = "";

	ft_start(ft, script_discovery_unterminated);
	snprintf(portal, sizeof(portal), "127.0.0.1:%u", ft->port);
	o.errbuf = err;
	o.errbuf_len = sizeof(err);
	ck_assert_int_eq(osd_iscsi_discover(&v, &n, portal, &o), -EPROTO);
	ck_assert_msg(strstr(err, "malformed SendTargets answer at byte 31 of 47"), "%s", err);
	ck_assert_ptr_null(v);
	ck_assert_uint_eq(n, 0);
	ck_assert_msg(ft_join(ft)[0] == 0, "%s", ft->fail);
	free(ft);
}
END_TEST

/* The security token page in a Data-In that starts at offset 4, leaving a
 * gap (DataPDUInOrder=Yes, RFC 7143 §13.19): the initiator used to keep a
 * token made of the bytes its buffer held before. */
static void script_token_gap(struct ft *ft)
{
	ft->token_by_script = 1;
	if (ft_accept(ft) || ft_login(ft) || ft_recv(ft))
		return;
	FT_CHECK(ft, ft->pdu.bhs.opcode == OSD_ISCSI_OP_SCSI_CMD && ft->pdu.bhs.cdb[2] == 0xB1,
		 "INQUIRY of the security token page expected");
	ft_send_token(ft, 4);
}

START_TEST(token_gap)
{
	struct ft *ft = ft_new();
	struct osd_iscsi_options o = OSD_ISCSI_OPTIONS_INIT;
	struct osd_transport tp = { NULL, NULL };
	char url[128], err[256] = "";

	ft_start(ft, script_token_gap);
	snprintf(url, sizeof(url), "iscsi://127.0.0.1:%u/" TARGET "/0", ft->port);
	o.errbuf = err;
	o.errbuf_len = sizeof(err);
	ck_assert_int_eq(osd_iscsi_transport_new(&tp, url, &o), -EPROTO);
	ck_assert_msg(strstr(err, "Data-In at offset 4, expected 0, answering the INQUIRY of "
			     "the security token"), "%s", err);
	ck_assert_ptr_null(tp.ops);
	ck_assert_msg(ft_join(ft)[0] == 0, "%s", ft->fail);
	free(ft);
}
END_TEST

/* ---- unsolicited Data-Out (InitialR2T=No) ---- */

#define U_OUT 20000

static void script_unsolicited(struct ft *ft)
{
	uint8_t *got = ft->user;
	struct osd__iscsi_bhs h;
	uint32_t itt;

	ft->initial_r2t = "No";
	ft->first_burst = "16384";
	if (ft_accept(ft) || ft_login(ft) || ft_recv(ft))
		return;
	FT_CHECK(ft, ft->pdu.bhs.opcode == OSD_ISCSI_OP_SCSI_CMD, "command expected");
	FT_CHECK(ft, !(ft->pdu.bhs.flags & OSD_ISCSI_F_FINAL), "F must be clear: Data-Out follows");
	FT_CHECK(ft, ft->pdu.data_len == 8192, "immediate data limited by the target's "
		 "MaxRecvDataSegmentLength, got %zu", ft->pdu.data_len);
	itt = ft->pdu.bhs.itt;
	ft->expcmdsn = ft->pdu.bhs.cmd_sn + 1;
	ft->maxcmdsn = ft->expcmdsn + 8;
	memcpy(got, ft->pdu.data, 8192);
	if (ft_recv(ft))
		return;
	FT_CHECK(ft, ft->pdu.bhs.opcode == OSD_ISCSI_OP_DATA_OUT &&
		 ft->pdu.bhs.ttt == OSD_ISCSI_RSVD_TAG && ft->pdu.bhs.offset == 8192 &&
		 ft->pdu.data_len == 8192 && (ft->pdu.bhs.flags & OSD_ISCSI_F_FINAL) &&
		 ft->pdu.bhs.data_sn == 0, "unsolicited Data-Out [8192, +8192) with F expected");
	memcpy(got + 8192, ft->pdu.data, 8192);
	memset(&h, 0, sizeof(h));
	h.opcode = OSD_ISCSI_OP_R2T;
	h.flags = OSD_ISCSI_F_FINAL;
	h.itt = itt;
	h.ttt = 0x99;
	ft_rsp_sn(ft, &h, 0);
	h.offset = 16384;
	h.length = U_OUT - 16384;
	if (ft_send(ft, &h, NULL, 0, NULL, 0) || ft_recv(ft))
		return;
	FT_CHECK(ft, ft->pdu.bhs.opcode == OSD_ISCSI_OP_DATA_OUT && ft->pdu.bhs.ttt == 0x99 &&
		 ft->pdu.bhs.offset == 16384 && ft->pdu.data_len == U_OUT - 16384,
		 "solicited Data-Out expected");
	memcpy(got + 16384, ft->pdu.data, U_OUT - 16384);
	if (send_status(ft, itt, 0) == 0)
		ft_logout(ft);
}

START_TEST(unsolicited_data)
{
	struct ft *ft = ft_new();
	uint8_t *got = calloc(1, U_OUT);
	struct osd_iscsi_options o = OSD_ISCSI_OPTIONS_INIT;
	struct osd_transport tp;
	static uint8_t out[U_OUT];
	struct iovec iov = { out, sizeof(out) };
	struct cmd *c = malloc(sizeof(*c));

	ft->user = got;
	ft_start(ft, script_unsolicited);
	open_tp(ft, &tp, &o);
	fill(out, sizeof(out), 17);
	cmd_init(c, 0x8886, 0, 0);
	c->x.out_iov = &iov;
	c->x.out_iovcnt = 1;
	c->x.out_len = sizeof(out);
	ck_assert_int_eq(tp.ops->submit(tp.impl, &c->x), 0);
	ck_assert_int_eq(drive(&tp, rec_called, &c->dr), 0);
	ck_assert_int_eq(c->dr.err, 0);
	tp.ops->destroy(tp.impl);
	ck_assert_msg(ft_join(ft)[0] == 0, "%s", ft->fail);
	ck_assert_mem_eq(got, out, sizeof(out));
	free(got);
	free(c);
	free(ft);
}
END_TEST

/* ---- keepalive ---- */

/* _i = 0: the ping is answered; 1: it is not, the initiator reconnects */
static void script_keepalive(struct ft *ft)
{
	struct osd__iscsi_bhs h;
	int unanswered = *(int *)ft->user;

	if (ft_accept(ft) || ft_login(ft) || ft_recv(ft))
		return;
	FT_CHECK(ft, ft->pdu.bhs.opcode == OSD_ISCSI_OP_NOP_OUT && ft->pdu.bhs.immediate &&
		 ft->pdu.bhs.itt != OSD_ISCSI_RSVD_TAG && ft->pdu.bhs.ttt == OSD_ISCSI_RSVD_TAG &&
		 (ft->pdu.bhs.flags & OSD_ISCSI_F_FINAL), "keepalive NOP-Out expected");
	if (unanswered) {
		/* say nothing but keep the socket open: only the keepalive
		 * timeout can tell the initiator the connection is dead */
		int old = ft->fd;

		ft->fd = -1;
		if (ft_accept(ft) == 0 && ft_login(ft) == 0)
			ft_logout(ft);
		close(old);
		return;
	}
	memset(&h, 0, sizeof(h));
	h.opcode = OSD_ISCSI_OP_NOP_IN;
	h.flags = OSD_ISCSI_F_FINAL;
	h.itt = ft->pdu.bhs.itt;
	h.ttt = OSD_ISCSI_RSVD_TAG;
	ft_rsp_sn(ft, &h, 1);
	if (ft_send(ft, &h, NULL, 0, NULL, 0) || ft_recv(ft))
		return;
	/* the next ping comes after another quiet interval */
	FT_CHECK(ft, ft->pdu.bhs.opcode == OSD_ISCSI_OP_NOP_OUT, "second keepalive expected");
	h.itt = ft->pdu.bhs.itt;
	ft_rsp_sn(ft, &h, 1);
	if (ft_send(ft, &h, NULL, 0, NULL, 0) == 0) {
		__atomic_store_n(&ft->progress, 1, __ATOMIC_SEQ_CST);
		ft_logout(ft);
	}
}

static int logins_at_least_2_or_done(void *arg)
{
	struct ft *ft = arg;

	return __atomic_load_n(&ft->finished, __ATOMIC_SEQ_CST) ||
	       __atomic_load_n(&ft->logins, __ATOMIC_SEQ_CST) >= 2;
}

static int nops_done(void *arg)
{
	struct ft *ft = arg;

	/* the script waits for its logout after the second answer */
	return __atomic_load_n(&ft->finished, __ATOMIC_SEQ_CST) ||
	       __atomic_load_n(&ft->progress, __ATOMIC_SEQ_CST);
}

START_TEST(keepalive)
{
	struct ft *ft = ft_new();
	struct osd_iscsi_options o = OSD_ISCSI_OPTIONS_INIT;
	struct osd_transport tp;
	int unanswered = _i;

	o.nop_interval_ms = 30;
	o.nop_timeout_ms = unanswered ? 200 : 5000; /* generous when answers are due */
	ft->user = &unanswered;
	ft_start(ft, script_keepalive);
	open_tp(ft, &tp, &o);
	ck_assert_int_eq(drive(&tp, unanswered ? logins_at_least_2_or_done : nops_done, ft), 0);
	ck_assert_int_eq(tp.ops->service(tp.impl, 0), 0); /* still alive */
	tp.ops->destroy(tp.impl);
	ck_assert_msg(ft_join(ft)[0] == 0, "%s", ft->fail);
	ck_assert_int_eq(ft->logins, 1 + unanswered);
	free(ft);
}
END_TEST

/* ---- a connection that cannot come back ---- */

static void script_gone(struct ft *ft)
{
	if (ft_accept(ft) || ft_login(ft) || ft_recv(ft))
		return;
	FT_CHECK(ft, ft->pdu.bhs.opcode == OSD_ISCSI_OP_SCSI_CMD, "command expected");
	close(ft->fd);
	ft->fd = -1;
	close(ft->lfd); /* and nobody listens any more */
	ft->lfd = -1;
}

START_TEST(reconnect_fails)
{
	struct ft *ft = ft_new();
	struct osd_iscsi_options o = OSD_ISCSI_OPTIONS_INIT;
	struct osd_transport tp;
	struct cmd *c = malloc(sizeof(*c)), *d = malloc(sizeof(*d));

	o.reconnect_attempts = 2;
	ft_start(ft, script_gone);
	open_tp(ft, &tp, &o);
	cmd_init(c, 0x8885, 0, 64); /* a READ: would be resent if we could */
	ck_assert_int_eq(tp.ops->submit(tp.impl, &c->x), 0);
	ck_assert_int_eq(drive(&tp, rec_called, &c->dr), 0);
	ck_assert_int_eq(c->dr.err, -EIO);
	ck_assert_int_eq(tp.ops->service(tp.impl, 0), -ENOTCONN);
	ck_assert_int_eq(tp.ops->get_fd(tp.impl), -1);
	ck_assert_int_eq(tp.ops->which_events(tp.impl), 0);
	cmd_init(d, 0x8885, 0, 64);
	ck_assert_int_eq(tp.ops->submit(tp.impl, &d->x), -ENOTCONN);
	ck_assert_int_eq(d->dr.called, 0);
	tp.ops->destroy(tp.impl);
	ck_assert_msg(ft_join(ft)[0] == 0, "%s", ft->fail);
	free(c);
	free(d);
	free(ft);
}
END_TEST

/* ---- Reject, Async logout request, a corrupt header digest ---- */

static void script_recovery(struct ft *ft)
{
	struct osd__iscsi_bhs h;
	uint32_t itt[2], sn;
	uint8_t rejected[OSD_ISCSI_BHS_LEN];
	int have_a = 0;

	ft->want_hd = ft->want_dd = 1;
	if (ft_accept(ft) || ft_login(ft))
		return;
	for (int i = 0; i < 2; i++) {
		if (ft_recv(ft))
			return;
		FT_CHECK(ft, ft->pdu.bhs.opcode == OSD_ISCSI_OP_SCSI_CMD, "command expected");
		/* itt[0]: the READ, itt[1]: the GET ATTRIBUTES */
		if (action_of(ft) == 0x8885) {
			memcpy(rejected, ft->buf, sizeof(rejected));
			have_a = 1;
		}
		itt[action_of(ft) == 0x8885 ? 0 : 1] = ft->pdu.bhs.itt;
		sn = ft->pdu.bhs.cmd_sn;
	}
	FT_CHECK(ft, have_a, "the READ was not sent");
	ft->expcmdsn = sn + 1;
	ft->maxcmdsn = sn + 8;
	memset(&h, 0, sizeof(h));
	h.opcode = OSD_ISCSI_OP_REJECT;
	h.flags = OSD_ISCSI_F_FINAL;
	h.response = OSD_ISCSI_REJECT_INVALID_FIELD;
	h.itt = OSD_ISCSI_RSVD_TAG;
	ft_rsp_sn(ft, &h, 1);
	if (ft_send(ft, &h, NULL, 0, rejected, sizeof(rejected)))
		return;
	memset(&h, 0, sizeof(h));
	h.opcode = OSD_ISCSI_OP_ASYNC_MSG;
	h.flags = OSD_ISCSI_F_FINAL;
	h.itt = OSD_ISCSI_RSVD_TAG;
	h.async_event = 1; /* please log out */
	h.async_param[2] = 5;
	ft_rsp_sn(ft, &h, 1);
	if (ft_send(ft, &h, NULL, 0, NULL, 0) || send_status(ft, itt[1], 0) || ft_logout(ft))
		return;
	/* second connection: the next command's answer arrives damaged */
	if (ft_accept(ft) || ft_login(ft) || ft_recv(ft))
		return;
	FT_CHECK(ft, ft->pdu.bhs.opcode == OSD_ISCSI_OP_SCSI_CMD && action_of(ft) == 0x888E,
		 "GET ATTRIBUTES expected on the new connection");
	ft->expcmdsn = ft->pdu.bhs.cmd_sn + 1;
	ft->maxcmdsn = ft->expcmdsn + 8;
	ft->corrupt_next = 1;
	if (send_status(ft, ft->pdu.bhs.itt, 0))
		return;
	/* third connection: the command is resent and answered */
	if (ft_accept(ft) || ft_login(ft) || ft_recv(ft))
		return;
	FT_CHECK(ft, ft->pdu.bhs.opcode == OSD_ISCSI_OP_SCSI_CMD && action_of(ft) == 0x888E,
		 "the GET ATTRIBUTES must be resent");
	ft->expcmdsn = ft->pdu.bhs.cmd_sn + 1;
	ft->maxcmdsn = ft->expcmdsn + 8;
	if (send_status(ft, ft->pdu.bhs.itt, 0) == 0)
		ft_logout(ft);
}

START_TEST(recovery)
{
	struct ft *ft = ft_new();
	struct osd_iscsi_options o = OSD_ISCSI_OPTIONS_INIT;
	struct osd_transport tp;
	struct cmd *a = malloc(sizeof(*a)), *b = malloc(sizeof(*b)), *c = malloc(sizeof(*c));
	struct two ab = { a, b };

	o.header_digest = o.data_digest = OSD_ISCSI_DIGEST_CRC32C;
	ft_start(ft, script_recovery);
	open_tp(ft, &tp, &o);
	cmd_init(a, 0x8885, 0, 64);
	cmd_init(b, 0x888E, 0, 0);
	cmd_init(c, 0x888E, 0, 0);
	ck_assert_int_eq(tp.ops->submit(tp.impl, &a->x), 0);
	ck_assert_int_eq(tp.ops->submit(tp.impl, &b->x), 0);
	ck_assert_int_eq(drive(&tp, both_called, &ab), 0);
	ck_assert_int_eq(a->dr.err, -EIO);  /* rejected */
	ck_assert_int_eq(b->dr.err, 0);     /* answered before the requested logout */
	ck_assert_uint_eq(b->x.status, 0);
	ck_assert_int_eq(tp.ops->submit(tp.impl, &c->x), 0);
	ck_assert_int_eq(drive(&tp, rec_called, &c->dr), 0);
	ck_assert_int_eq(c->dr.err, 0);
	ck_assert_uint_eq(c->x.status, 0);
	tp.ops->destroy(tp.impl);
	ck_assert_msg(ft_join(ft)[0] == 0, "%s", ft->fail);
	ck_assert_int_eq(ft->logins, 3);
	free(a);
	free(b);
	free(c);
	free(ft);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("iscsi_fake_target");
	TCase *tc = tcase_create("pdus");

	tcase_set_timeout(tc, 30);
	tcase_add_loop_test(tc, bidi_write, 0, 2);
	tcase_add_test(tc, dropped_connection);
	tcase_add_test(tc, cmdsn_window);
	tcase_add_test(tc, chap_mutual);
	tcase_add_loop_test(tc, chap_refused, 0, 2);
	tcase_add_loop_test(tc, chap_bad_id, 0, 6);
	tcase_add_test(tc, task_abort);
	tcase_add_test(tc, discovery);
	tcase_add_test(tc, discovery_unterminated);
	tcase_add_test(tc, token_gap);
	tcase_add_test(tc, unsolicited_data);
	tcase_add_loop_test(tc, keepalive, 0, 2);
	tcase_add_test(tc, reconnect_fails);
	tcase_add_test(tc, recovery);
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
