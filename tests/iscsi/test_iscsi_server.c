/*
 * The iSCSI server (include/osdtarget/iscsi.h) driven over 127.0.0.1 by the
 * test initiator in client.c: login and negotiation, plain SCSI commands,
 * 236-byte OSD CDBs with R2T and bidirectional transfers, digests, the
 * CmdSN window, task management, discovery, CHAP, and bad PDUs (Reject or a
 * closed connection while other sessions keep being served).
 */
#include <check.h>
#include <errno.h>
#include <ftw.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <osd/attr.h>
#include <osd/attributes.h>
#include <osd/capability.h>
#include <osd/cdb.h>
#include <osd/offset.h>
#include <osdtarget/iscsi.h>

#include "client.h"
#include "proto/byteorder.h"

#define IQN OSD_TARGET_ISCSI_DEFAULT_NAME
#define PID 0x10000
#define NLUNS 2
#define OBJ_LEN 100000

static char g_dir[256];
static osd_target *g_luns[NLUNS];
static osd_target_iscsi *g_srv;
static int g_port;

static int rm_cb(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static void setup(void)
{
	const char *tmp = getenv("TMPDIR");
	char sub[300];
	snprintf(g_dir, sizeof(g_dir), "%s/osdiscsi-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	ck_assert_ptr_nonnull(mkdtemp(g_dir));
	for (int i = 0; i < NLUNS; i++) {
		snprintf(sub, sizeof(sub), "%s/lun%d", g_dir, i);
		ck_assert_int_eq(osd_target_open(&g_luns[i], sub, NULL), 0);
	}
	struct osd_target_iscsi_options o = OSD_TARGET_ISCSI_OPTIONS_INIT;
	o.port = 0;
	ck_assert_int_eq(osd_target_iscsi_create(&g_srv, g_luns, NLUNS, &o), 0);
	g_port = osd_target_iscsi_port(g_srv);
	ck_assert_int_gt(g_port, 0);
	ck_assert_int_eq(osd_target_iscsi_start(g_srv), 0);
}

static void teardown(void)
{
	osd_target_iscsi_free(g_srv);
	g_srv = NULL;
	for (int i = 0; i < NLUNS; i++)
		osd_target_close(g_luns[i]);
	nftw(g_dir, rm_cb, 16, FTW_DEPTH | FTW_PHYS);
}

static void login_ok(struct tc *c, const struct tc_login *o)
{
	struct tc_login def = { .target = IQN };
	ck_assert_int_eq(tc_login(c, g_port, o ? o : &def), 0);
}

/* ---- Plain SCSI ---- */

static void run(struct tc *c, struct tc_cmd *cmd)
{
	ck_assert_int_eq(tc_command(c, cmd), 0);
	ck_assert_uint_eq(cmd->response, 0);
}

START_TEST(scsi_basics_and_logout)
{
	struct tc c;
	uint8_t in[256];
	login_ok(&c, NULL);
	ck_assert_uint_ne(c.tsih, 0);
	ck_assert_uint_eq(c.params.max_recv_dsl_target, 262144);

	static const uint8_t inquiry[6] = { 0x12, 0, 0, 0, 96, 0 };
	struct tc_cmd cmd = { .cdb = inquiry, .cdb_len = 6, .in = in, .in_len = 96 };
	run(&c, &cmd);
	ck_assert_uint_eq(cmd.status, 0);
	ck_assert(cmd.status_in_datain);           /* S bit: status in the Data-In */
	ck_assert_uint_eq(in[0], 0x11);            /* OSD device */
	ck_assert_uint_eq(cmd.residual, 96 - cmd.in_got);

	static const uint8_t tur[6] = { 0 };
	struct tc_cmd t = { .cdb = tur, .cdb_len = 6 };
	run(&c, &t);
	ck_assert_uint_eq(t.status, 0);
	ck_assert(!t.status_in_datain);
	ck_assert_int_eq(t.datain_pdus, 0);

	static const uint8_t report[12] = { 0xA0, 0, 0, 0, 0, 0, 0, 0, 0, 64, 0, 0 };
	static const uint8_t luns[24] = { 0, 0, 0, 16, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
					  0, 1, 0, 0, 0, 0, 0, 0 };
	struct tc_cmd r = { .cdb = report, .cdb_len = 12, .in = in, .in_len = 64, .lun = 1 };
	run(&c, &r);
	ck_assert_uint_eq(r.in_got, 24);
	ck_assert_mem_eq(in, luns, 24);
	ck_assert(r.rsp_flags & OSD_ISCSI_F_UNDER);
	ck_assert_uint_eq(r.residual, 40);

	/* A LUN that does not exist. */
	struct tc_cmd q = { .cdb = inquiry, .cdb_len = 6, .in = in, .in_len = 96, .lun = 5 };
	run(&c, &q);
	ck_assert_uint_eq(in[0], 0x7F);
	struct tc_cmd u = { .cdb = tur, .cdb_len = 6, .lun = 5 };
	run(&c, &u);
	ck_assert_uint_eq(u.status, OSD_STATUS_CHECK_CONDITION);
	ck_assert_uint_ge(u.sense_len, 8);
	ck_assert_uint_eq(u.sense[0], 0x72);
	ck_assert_uint_eq(u.sense[1] & 0xF, 0x5);
	ck_assert_uint_eq(u.sense[2], 0x25);

	ck_assert_int_eq(tc_logout(&c), OSD_ISCSI_LOGOUT_RSP_OK);
	struct osd__iscsi_pdu p;
	ck_assert_int_eq(tc_recv(&c, &p), -ECONNRESET);
	tc_close(&c);
}
END_TEST


/*
 * A new session is a new I_T nexus: the first command to each LUN other
 * than INQUIRY, REPORT LUNS and REQUEST SENSE gets CHECK CONDITION, UNIT
 * ATTENTION instead of running, and the second one runs (SAM-5 5.14). What
 * it reports (spc4r37 §4.5.6, Annex D): 29h/00h POWER ON, RESET, OR BUS
 * DEVICE RESET OCCURRED to an
 * initiator port (InitiatorName + ISID) the daemon has not seen since it
 * started (round 0), 29h/07h I_T NEXUS LOSS OCCURRED to the same port
 * logging in again (round 1, a reconnect), 29h/00h to another ISID of the
 * same initiator (round 2). INQUIRY and REPORT LUNS neither report nor
 * clear it; a LUN that does not exist reports LOGICAL UNIT NOT SUPPORTED.
 */
START_TEST(unit_attention_on_new_session)
{
	static const uint8_t isid_a[6] = { 0x80, 0x55, 0xAA, 0x01, 0x02, 0x03 };
	static const uint8_t isid_b[6] = { 0x80, 0x55, 0xAA, 0x01, 0x02, 0x04 };
	static const struct {
		const uint8_t *isid;
		uint8_t ascq;
	} rounds[] = { { isid_a, 0x00 }, { isid_a, 0x07 }, { isid_b, 0x00 } };
	static const uint8_t inquiry[6] = { 0x12, 0, 0, 0, 96, 0 };
	static const uint8_t report[12] = { 0xA0, 0, 0, 0, 0, 0, 0, 0, 0, 64, 0, 0 };
	static const uint8_t sense_cdb[6] = { 0x03, 0, 0, 0, 252, 0 };
	static const uint8_t tur[6] = { 0 };
	uint8_t in[256];

	for (int round = 0; round < 3; round++) {
		const uint8_t ua_sense[8] = { 0x72, 0x06, 0x29, rounds[round].ascq, 0, 0, 0, 0 };
		const uint32_t ua = 0x062900u | rounds[round].ascq;
		struct tc_login o = { .target = IQN, .initiator = "iqn.2026-12.org.osd:ua-nexus",
				      .isid = rounds[round].isid };
		struct tc c;
		login_ok(&c, &o);
		c.see_ua = 1;
		struct tc_cmd i = { .cdb = inquiry, .cdb_len = 6, .in = in, .in_len = 96 };
		run(&c, &i);
		ck_assert_uint_eq(i.status, 0);
		ck_assert_uint_eq(in[0], 0x11);
		struct tc_cmd r = { .cdb = report, .cdb_len = 12, .in = in, .in_len = 64 };
		run(&c, &r);
		ck_assert_uint_eq(r.status, 0);
		ck_assert_uint_eq(r.in_got, 24);
		struct tc_cmd rs = { .cdb = sense_cdb, .cdb_len = 6, .in = in, .in_len = 252 };
		run(&c, &rs);
		ck_assert_uint_ne(rs.status, OSD_STATUS_CHECK_CONDITION);
		ck_assert_uint_ne(tc_sense_code(&rs) >> 16, 0x06);

		struct tc_cmd t = { .cdb = tur, .cdb_len = 6 };
		run(&c, &t);
		ck_assert_uint_eq(t.status, OSD_STATUS_CHECK_CONDITION);
		ck_assert_uint_eq(t.sense_len, sizeof(ua_sense));
		ck_assert_mem_eq(t.sense, ua_sense, sizeof(ua_sense));
		ck_assert_uint_eq(tc_sense_code(&t), ua);
		struct tc_cmd t2 = { .cdb = tur, .cdb_len = 6 };
		run(&c, &t2);
		ck_assert_uint_eq(t2.status, 0);
		ck_assert_uint_eq(t2.sense_len, 0);

		/* LUN 1 has its own (one per I_T_L nexus). */
		if (round != 1) {
			struct tc_cmd t3 = { .cdb = tur, .cdb_len = 6, .lun = 1 };
			run(&c, &t3);
			ck_assert_uint_eq(tc_sense_code(&t3), ua);
		} else {
			/* tc_command() sends it again by itself. */
			c.see_ua = 0;
			struct tc_cmd t3 = { .cdb = tur, .cdb_len = 6, .lun = 1 };
			run(&c, &t3);
			ck_assert_uint_eq(t3.status, 0);
			c.see_ua = 1;
		}
		struct tc_cmd t4 = { .cdb = tur, .cdb_len = 6, .lun = 1 };
		run(&c, &t4);
		ck_assert_uint_eq(t4.status, 0);
		/* No LUN 5: not supported, never a unit attention. */
		struct tc_cmd t5 = { .cdb = tur, .cdb_len = 6, .lun = 5 };
		run(&c, &t5);
		ck_assert_uint_eq(tc_sense_code(&t5), 0x052500);
		ck_assert_int_eq(tc_logout(&c), OSD_ISCSI_LOGOUT_RSP_OK);
		tc_close(&c);
	}

	/* A write that would wait for Data-Out gets it at once, no R2T; the
	 * same write then gets its R2T. A port not seen before: 29h/00h. */
	static const uint8_t ua_sense[8] = { 0x72, 0x06, 0x29, 0x00, 0, 0, 0, 0 };
	static const uint8_t isid_c[6] = { 0x80, 0x55, 0xAA, 0x01, 0x02, 0x05 };
	struct tc c;
	struct tc_login o = { .target = IQN, .initial_r2t = 1,
			      .initiator = "iqn.2026-12.org.osd:ua-nexus", .isid = isid_c };
	struct osd__iscsi_pdu p;
	login_ok(&c, &o);
	for (int i = 0; i < 2; i++) {
		struct osd__iscsi_bhs h = { 0 };
		h.opcode = OSD_ISCSI_OP_SCSI_CMD;
		h.flags = OSD_ISCSI_F_FINAL | OSD_ISCSI_F_WRITE;
		h.itt = c.itt++;
		h.ttt = 65536;
		h.cmd_sn = c.cmd_sn++;
		h.cdb[0] = 0x2A;
		ck_assert_int_eq(tc_send(&c, &h, NULL, 0, NULL, 0), 0);
		ck_assert_int_eq(tc_recv(&c, &p), 0);
		ck_assert_uint_eq(p.bhs.itt, h.itt);
		if (i == 0) {
			ck_assert_uint_eq(p.bhs.opcode, OSD_ISCSI_OP_SCSI_RSP);
			ck_assert_uint_eq(p.bhs.status, OSD_STATUS_CHECK_CONDITION);
			ck_assert_uint_eq(p.data_len, 2 + sizeof(ua_sense));
			ck_assert_mem_eq(p.data + 2, ua_sense, sizeof(ua_sense));
		} else {
			ck_assert_uint_eq(p.bhs.opcode, OSD_ISCSI_OP_R2T);
		}
	}
	tc_close(&c);
}
END_TEST

/* ---- OSD commands with 236-byte CDBs ---- */

static void osd_cdb(uint8_t out[OSD_CDB_V2_LEN], struct osd_cdb *c)
{
	osd_capability_init(&c->cap, OSD_V2, &c->obj, 0, OSD_PERM_ALL_V2, OSD_SEC_NOSEC);
	c->cap.desc_type = OSD_CAP_DESC_PAR;
	c->cap.object_type = OSD_OBJ_ROOT;
	c->cap.allowed_partition = 0;
	c->cap.allowed_object = 0;
	c->cap.permissions |= OSD_PERM_GLOBAL;
	ck_assert_int_eq(osd_cdb_encode(c, out, OSD_CDB_V2_LEN), OSD_CDB_V2_LEN);
}

static void simple_osd(struct tc *t, enum osd_action a, uint64_t pid, uint64_t oid)
{
	struct osd_cdb c;
	uint8_t cdb[OSD_CDB_V2_LEN];
	osd_cdb_init(&c, OSD_V2, a);
	c.obj.partition = pid;
	c.obj.id = oid;
	osd_cdb(cdb, &c);
	struct tc_cmd cmd = { .cdb = cdb, .cdb_len = sizeof(cdb) };
	run(t, &cmd);
	ck_assert_msg(cmd.status == 0, "status %u sense key %x asc %02x%02x", cmd.status,
		      cmd.sense[1] & 0xF, cmd.sense[2], cmd.sense[3]);
}

static void fill_pattern(uint8_t *b, size_t n, unsigned seed)
{
	for (size_t i = 0; i < n; i++)
		b[i] = (uint8_t)(i * 7 + seed + (i >> 9));
}

/* WRITE of @p len bytes with a get-attributes list: data-out and data-in
 * (bidirectional). Returns the retrieved logical length. */
static uint64_t write_get_length(struct tc *t, uint64_t oid, const uint8_t *data, size_t len)
{
	struct osd_cdb c;
	uint8_t cdb[OSD_CDB_V2_LEN], in[1024];
	struct osd_attr_writer w;
	size_t list_off = (size_t)osd_offset_align(OSD_V2, len);
	uint8_t *out = calloc(1, list_off + 256);
	ck_assert_ptr_nonnull(out);
	memcpy(out, data, len);
	ck_assert_int_eq(osd_attr_writer_init(&w, OSD_V2, OSD_LIST_GET, out + list_off, 256), 0);
	struct osd_attr a = { OSD_APAGE_INFORMATION, OSD_ATTR_UI_LOGICAL_LENGTH, 0, NULL, 0 };
	ck_assert_int_eq(osd_attr_writer_add(&w, &a), 0);
	long list_len = osd_attr_writer_finish(&w);
	ck_assert_int_gt(list_len, 0);

	osd_cdb_init(&c, OSD_V2, OSD_ACT_WRITE);
	c.obj.partition = PID;
	c.obj.id = oid;
	c.length = len;
	c.start = 0;
	c.attr_mode = OSD_ATTR_MODE_LIST;
	c.attr.list.get_list_length = (uint32_t)list_len;
	c.attr.list.get_list_offset = list_off;
	c.attr.list.get_alloc = sizeof(in);
	c.attr.list.retrieved_offset = 0;
	c.attr.list.set_list_offset = OSD_OFFSET_NONE;
	osd_cdb(cdb, &c);

	struct tc_cmd cmd = { .cdb = cdb, .cdb_len = sizeof(cdb), .out = out,
			      .out_len = list_off + (size_t)list_len, .in = in, .in_len = sizeof(in) };
	run(t, &cmd);
	ck_assert_msg(cmd.status == 0, "status %u", cmd.status);
	ck_assert(!cmd.status_in_datain); /* bidirectional: a SCSI Response */
	ck_assert_int_gt(cmd.r2ts, 0);
	ck_assert_uint_gt(cmd.in_got, 0);
	if (cmd.rsp_flags & OSD_ISCSI_F_BIDI_UNDER)
		ck_assert_uint_eq(cmd.bidi_residual, sizeof(in) - cmd.in_got);
	else
		ck_assert_uint_eq(cmd.in_got, sizeof(in));

	struct osd_attr_reader rd;
	struct osd_attr got;
	uint64_t value = UINT64_MAX;
	ck_assert_int_eq(osd_attr_reader_init(&rd, OSD_V2, in, cmd.in_got), 0);
	while (osd_attr_reader_next(&rd, &got) == 1)
		if (got.page == OSD_APAGE_INFORMATION && got.number == OSD_ATTR_UI_LOGICAL_LENGTH)
			value = osd_attr_get_u64(&got, UINT64_MAX);
	free(out);
	return value;
}

static void read_back(struct tc *t, uint64_t oid, size_t len, uint8_t *buf, struct tc_cmd *cmd)
{
	struct osd_cdb c;
	static uint8_t cdb[OSD_CDB_V2_LEN];
	osd_cdb_init(&c, OSD_V2, OSD_ACT_READ);
	c.obj.partition = PID;
	c.obj.id = oid;
	c.length = len;
	osd_cdb(cdb, &c);
	memset(cmd, 0, sizeof(*cmd));
	cmd->cdb = cdb;
	cmd->cdb_len = sizeof(cdb);
	cmd->in = buf;
	cmd->in_len = len;
	run(t, cmd);
}

static void osd_io(int initial_r2t)
{
	struct tc t;
	struct tc_login o = { .target = IQN, .initial_r2t = initial_r2t };
	uint8_t *data = malloc(OBJ_LEN), *back = calloc(1, OBJ_LEN + 20000);
	uint64_t oid = initial_r2t > 0 ? 0x10002 : 0x10001;
	struct tc_cmd cmd;
	ck_assert_ptr_nonnull(data);
	ck_assert_ptr_nonnull(back);
	fill_pattern(data, OBJ_LEN, (unsigned)oid);
	login_ok(&t, &o);
	ck_assert_int_eq(t.params.initial_r2t, initial_r2t > 0);
	ck_assert_uint_eq(t.params.first_burst, 8192);
	ck_assert_uint_eq(t.params.max_burst, 16384);
	if (initial_r2t <= 0)
		simple_osd(&t, OSD_ACT_CREATE_PARTITION, PID, 0);
	simple_osd(&t, OSD_ACT_CREATE, PID, oid);
	ck_assert_uint_eq(write_get_length(&t, oid, data, OBJ_LEN), OBJ_LEN);

	read_back(&t, oid, OBJ_LEN, back, &cmd);
	ck_assert_uint_eq(cmd.status, 0);
	ck_assert(cmd.status_in_datain);
	ck_assert_uint_eq(cmd.in_got, OBJ_LEN);
	ck_assert_int_eq(cmd.datain_pdus, (OBJ_LEN + 4095) / 4096); /* our MaxRecvDSL */
	ck_assert_int_eq(memcmp(back, data, OBJ_LEN), 0);

	/* Past the end: RECOVERED ERROR READ PAST END OF USER OBJECT with the
	 * sense in a SCSI Response; any short data-in shows as underflow. */
	read_back(&t, oid, OBJ_LEN + 20000, back, &cmd);
	ck_assert_uint_eq(cmd.status, OSD_STATUS_CHECK_CONDITION);
	ck_assert(!cmd.status_in_datain);
	ck_assert_uint_ge(cmd.sense_len, 8);
	ck_assert_uint_eq(cmd.sense[1] & 0xF, 0x1);
	ck_assert_uint_eq(osd__get_be16(cmd.sense + 2), 0x3B17);
	ck_assert_uint_ge(cmd.in_got, OBJ_LEN);
	if (cmd.in_got < OBJ_LEN + 20000) {
		ck_assert(cmd.rsp_flags & OSD_ISCSI_F_UNDER);
		ck_assert_uint_eq(cmd.residual, OBJ_LEN + 20000 - cmd.in_got);
	} else {
		ck_assert(!(cmd.rsp_flags & OSD_ISCSI_F_UNDER));
		ck_assert_uint_eq(cmd.residual, 0);
	}
	ck_assert_int_eq(memcmp(back, data, OBJ_LEN), 0);
	ck_assert_int_eq(tc_logout(&t), 0);
	tc_close(&t);
	free(data);
	free(back);
}

START_TEST(osd_236_byte_cdbs_unsolicited)
{
	osd_io(-1);
}
END_TEST

START_TEST(osd_236_byte_cdbs_initial_r2t)
{
	struct tc t;
	login_ok(&t, NULL);
	simple_osd(&t, OSD_ACT_CREATE_PARTITION, PID, 0);
	tc_logout(&t);
	tc_close(&t);
	osd_io(1);
}
END_TEST

/* ---- Digests ---- */

static void expect_reject(struct tc *c, uint8_t reason, const uint8_t *bad_bhs)
{
	struct osd__iscsi_pdu p;
	ck_assert_int_eq(tc_recv(c, &p), 0);
	ck_assert_uint_eq(p.bhs.opcode, OSD_ISCSI_OP_REJECT);
	ck_assert_uint_eq(p.bhs.response, reason);
	ck_assert_uint_eq(p.data_len, 48);
	if (bad_bhs)
		ck_assert_mem_eq(p.data, bad_bhs, 48);
}

static void ping(struct tc *c)
{
	struct osd__iscsi_bhs h;
	struct osd__iscsi_pdu p;
	tc_nop_out(c, &h, 0);
	ck_assert_int_eq(tc_send(c, &h, NULL, 0, (const uint8_t *)"ping", 4), 0);
	ck_assert_int_eq(tc_recv(c, &p), 0);
	ck_assert_uint_eq(p.bhs.opcode, OSD_ISCSI_OP_NOP_IN);
	ck_assert_uint_eq(p.bhs.itt, h.itt);
	ck_assert_uint_eq(p.bhs.ttt, OSD_ISCSI_RSVD_TAG);
	ck_assert_uint_eq(p.data_len, 4);
	ck_assert_mem_eq(p.data, "ping", 4);
	ck_assert_uint_eq(p.bhs.exp_cmd_sn, c->cmd_sn);
}

START_TEST(digests_and_digest_errors)
{
	struct tc c;
	struct tc_login o = { .target = IQN, .digests = 1 };
	uint8_t in[96], buf[128];
	login_ok(&c, &o);
	ck_assert_int_eq(c.dg.header, 1);
	ck_assert_int_eq(c.dg.data, 1);
	static const uint8_t inquiry[6] = { 0x12, 0, 0, 0, 96, 0 };
	struct tc_cmd cmd = { .cdb = inquiry, .cdb_len = 6, .in = in, .in_len = 96 };
	run(&c, &cmd);
	ck_assert_uint_eq(in[0], 0x11);
	ping(&c);

	/* Data digest error: Reject (reason 2) carrying our header. */
	struct osd__iscsi_bhs h;
	tc_nop_out(&c, &h, 1);
	long n = osd__iscsi_pdu_build(buf, sizeof(buf), &h, NULL, 0, (const uint8_t *)"data", 4,
				      &c.dg);
	ck_assert_int_eq(n, 48 + 4 + 4 + 4);
	buf[n - 1] ^= 0x55;
	ck_assert_int_eq(tc_send_raw(&c, buf, (size_t)n), 0);
	expect_reject(&c, OSD_ISCSI_REJECT_DIGEST, buf);
	ping(&c);

	/* Header digest error: nothing can be trusted, the connection ends. */
	tc_nop_out(&c, &h, 1);
	n = osd__iscsi_pdu_build(buf, sizeof(buf), &h, NULL, 0, NULL, 0, &c.dg);
	buf[50] ^= 1;
	ck_assert_int_eq(tc_send_raw(&c, buf, (size_t)n), 0);
	struct osd__iscsi_pdu p;
	ck_assert_int_eq(tc_recv(&c, &p), -ECONNRESET);
	tc_close(&c);
}
END_TEST

/* ---- CmdSN window ---- */

START_TEST(cmdsn_window)
{
	struct tc c;
	struct osd__iscsi_bhs h;
	struct osd__iscsi_pdu p;
	login_ok(&c, NULL);
	ping(&c);
	uint32_t exp = c.cmd_sn;
	/* Beyond MaxCmdSN and before ExpCmdSN: silently ignored. */
	tc_nop_out(&c, &h, 0);
	h.cmd_sn = exp + 100;
	ck_assert_int_eq(tc_send(&c, &h, NULL, 0, NULL, 0), 0);
	tc_nop_out(&c, &h, 0);
	h.cmd_sn = exp - 5;
	ck_assert_int_eq(tc_send(&c, &h, NULL, 0, NULL, 0), 0);
	c.cmd_sn = exp;
	ping(&c); /* the next PDU we get answers this ping, not the dropped ones */
	ck_assert_uint_eq(c.exp_cmd_sn, exp + 1);
	ck_assert_uint_eq(c.max_cmd_sn, exp + 32);
	/* A command at MaxCmdSN is inside the window. */
	tc_nop_out(&c, &h, 0);
	h.cmd_sn = c.max_cmd_sn;
	ck_assert_int_eq(tc_send(&c, &h, NULL, 0, NULL, 0), 0);
	ck_assert_int_eq(tc_recv(&c, &p), 0);
	ck_assert_uint_eq(p.bhs.itt, h.itt);
	tc_close(&c);
}
END_TEST

/* ---- Bad PDUs ---- */

static void inquiry_works(struct tc *c)
{
	uint8_t in[96];
	static const uint8_t inquiry[6] = { 0x12, 0, 0, 0, 96, 0 };
	struct tc_cmd cmd = { .cdb = inquiry, .cdb_len = 6, .in = in, .in_len = 96 };
	run(c, &cmd);
	ck_assert_uint_eq(in[0], 0x11);
}

START_TEST(bad_pdus_rejected_others_served)
{
	struct tc a, b, raw;
	struct osd__iscsi_bhs h;
	struct osd__iscsi_pdu p;
	uint8_t bhs[48];
	login_ok(&b, NULL);
	login_ok(&a, NULL);
	ck_assert_int_eq(tc_clear_ua(&a, 0), 0); /* raw WRITEs below must run */

	/* Unknown opcode: Reject "command not supported". */
	tc_nop_out(&a, &h, 1);
	ck_assert_int_eq(osd__iscsi_bhs_encode(&h, bhs), 0);
	bhs[0] = 0x40 | 0x1C;
	ck_assert_int_eq(tc_send_raw(&a, bhs, 48), 0);
	expect_reject(&a, OSD_ISCSI_REJECT_NOT_SUPPORTED, bhs);

	/* A target opcode from the initiator: protocol error. */
	bhs[0] = OSD_ISCSI_OP_SCSI_RSP;
	ck_assert_int_eq(tc_send_raw(&a, bhs, 48), 0);
	expect_reject(&a, OSD_ISCSI_REJECT_PROTOCOL, bhs);

	/* SNACK at ErrorRecoveryLevel 0. */
	memset(&h, 0, sizeof(h));
	h.opcode = OSD_ISCSI_OP_SNACK_REQ;
	h.flags = OSD_ISCSI_F_FINAL;
	h.itt = 0x77;
	ck_assert_int_eq(tc_send(&a, &h, NULL, 0, NULL, 0), 0);
	expect_reject(&a, OSD_ISCSI_REJECT_SNACK, NULL);

	/* SCSI Command with an AHS of unknown type. */
	static const uint8_t junk_ahs[8] = { 0x00, 0x05, 0x09, 0x00, 1, 2, 3, 4 };
	memset(&h, 0, sizeof(h));
	h.opcode = OSD_ISCSI_OP_SCSI_CMD;
	h.flags = OSD_ISCSI_F_FINAL;
	h.itt = a.itt++;
	h.cmd_sn = a.cmd_sn++;
	ck_assert_int_eq(tc_send(&a, &h, junk_ahs, 8, NULL, 0), 0);
	expect_reject(&a, OSD_ISCSI_REJECT_INVALID_FIELD, NULL);

	/* Read with immediate data, bidirectional without its AHS. */
	h.flags = OSD_ISCSI_F_FINAL | OSD_ISCSI_F_READ;
	h.ttt = 96;
	h.itt = a.itt++;
	h.cmd_sn = a.cmd_sn++;
	ck_assert_int_eq(tc_send(&a, &h, NULL, 0, (const uint8_t *)"xxxx", 4), 0);
	expect_reject(&a, OSD_ISCSI_REJECT_PROTOCOL, NULL);
	h.flags = OSD_ISCSI_F_FINAL | OSD_ISCSI_F_READ | OSD_ISCSI_F_WRITE;
	h.itt = a.itt++;
	h.cmd_sn = a.cmd_sn++;
	ck_assert_int_eq(tc_send(&a, &h, NULL, 0, NULL, 0), 0);
	expect_reject(&a, OSD_ISCSI_REJECT_PROTOCOL, NULL);

	/* Data-Out at the wrong offset: Reject, then the task ends with
	 * CHECK CONDITION ABORTED COMMAND. */
	static const uint8_t write_cdb[16] = { 0x2A };
	memset(&h, 0, sizeof(h));
	h.opcode = OSD_ISCSI_OP_SCSI_CMD;
	h.flags = OSD_ISCSI_F_FINAL | OSD_ISCSI_F_WRITE;
	h.itt = a.itt++;
	h.ttt = 16384;
	h.cmd_sn = a.cmd_sn++;
	memcpy(h.cdb, write_cdb, 16);
	ck_assert_int_eq(tc_send(&a, &h, NULL, 0, NULL, 0), 0);
	ck_assert_int_eq(tc_recv(&a, &p), 0);
	ck_assert_uint_eq(p.bhs.opcode, OSD_ISCSI_OP_R2T);
	ck_assert_uint_eq(p.bhs.length, 16384);
	struct osd__iscsi_bhs d = { 0 };
	d.opcode = OSD_ISCSI_OP_DATA_OUT;
	d.flags = OSD_ISCSI_F_FINAL;
	d.itt = h.itt;
	d.ttt = p.bhs.ttt;
	d.offset = 512;
	ck_assert_int_eq(tc_send(&a, &d, NULL, 0, (const uint8_t *)"abcd", 4), 0);
	expect_reject(&a, OSD_ISCSI_REJECT_INVALID_FIELD, NULL);
	ck_assert_int_eq(tc_recv(&a, &p), 0);
	ck_assert_uint_eq(p.bhs.opcode, OSD_ISCSI_OP_SCSI_RSP);
	ck_assert_uint_eq(p.bhs.itt, h.itt);
	ck_assert_uint_eq(p.bhs.status, OSD_STATUS_CHECK_CONDITION);
	ck_assert_uint_eq(p.data[2 + 1] & 0xF, 0xB);
	/* Data-Out for a task that is gone is ignored. */
	ck_assert_int_eq(tc_send(&a, &d, NULL, 0, (const uint8_t *)"abcd", 4), 0);
	ping(&a);
	inquiry_works(&a);

	/* An oversized data segment ends the connection. */
	tc_nop_out(&a, &h, 1);
	ck_assert_int_eq(osd__iscsi_bhs_encode(&h, bhs), 0);
	bhs[5] = 0x10; /* 1 MiB, above the 256 KiB we declared */
	ck_assert_int_eq(tc_send_raw(&a, bhs, 48), 0);
	ck_assert_int_eq(tc_recv(&a, &p), -ECONNRESET);
	tc_close(&a);

	/* A non-login PDU first, and half a header: closed, nothing else. */
	ck_assert_int_eq(tc_connect(&raw, g_port), 0);
	tc_nop_out(&raw, &h, 1);
	ck_assert_int_eq(tc_send(&raw, &h, NULL, 0, NULL, 0), 0);
	ck_assert_int_eq(tc_recv(&raw, &p), -ECONNRESET);
	tc_close(&raw);
	ck_assert_int_eq(tc_connect(&raw, g_port), 0);
	ck_assert_int_eq(tc_send_raw(&raw, bhs, 20), 0);
	tc_close(&raw);

	/* The other session never noticed. */
	inquiry_works(&b);
	ck_assert_int_eq(tc_logout(&b), 0);
	tc_close(&b);
	login_ok(&b, NULL);
	inquiry_works(&b);
	tc_close(&b);
}
END_TEST

/* Random bytes after login, and random PDUs with valid lengths: the server
 * answers, rejects or drops each connection, and keeps serving. */
START_TEST(random_garbage)
{
	unsigned seed = 12345;
	struct tc c;
	uint8_t buf[600];
	for (int round = 0; round < 40; round++) {
		login_ok(&c, NULL);
		size_t n = 1 + (size_t)rand_r(&seed) % sizeof(buf);
		for (size_t i = 0; i < n; i++)
			buf[i] = (uint8_t)rand_r(&seed);
		if (round & 1 && n >= 48) {
			buf[0] &= 0x7F;  /* a plausible opcode byte ... */
			buf[4] = 0;      /* ... no AHS and a data segment that fits */
			buf[5] = buf[6] = 0;
			buf[7] = (uint8_t)((n - 48) & ~3u);
		}
		ck_assert_int_eq(tc_send_raw(&c, buf, n), 0);
		shutdown(c.fd, SHUT_WR);
		struct osd__iscsi_pdu p;
		int rc;
		while ((rc = tc_recv(&c, &p)) == 0)
			; /* Rejects and answers until the server closes */
		ck_assert_int_ne(rc, -ETIMEDOUT);
		tc_close(&c);
	}
	login_ok(&c, NULL);
	inquiry_works(&c);
	tc_close(&c);
}
END_TEST

/* ---- Login ---- */

START_TEST(login_failures)
{
	struct tc c;
	struct tc_login o = { .target = "iqn.2026-12.org.osd:nosuch" };
	ck_assert_int_eq(tc_login(&c, g_port, &o), OSD_ISCSI_LOGIN_NOT_FOUND);
	tc_close(&c);
	o.target = IQN;
	o.version_min = 1;
	ck_assert_int_eq(tc_login(&c, g_port, &o), OSD_ISCSI_LOGIN_UNSUPPORTED_VERSION);
	tc_close(&c);
	o.version_min = 0;
	o.tsih = 7;
	ck_assert_int_eq(tc_login(&c, g_port, &o), OSD_ISCSI_LOGIN_NO_SESSION);
	tc_close(&c);
	o.tsih = 0;
	o.target = NULL;
	ck_assert_int_eq(tc_login(&c, g_port, &o), OSD_ISCSI_LOGIN_MISSING_PARAMETER);
	tc_close(&c);
	o.target = IQN;
	o.auth_method = "CHAP";
	ck_assert_int_eq(tc_login(&c, g_port, &o), OSD_ISCSI_LOGIN_AUTH_FAILED);
	tc_close(&c);
}
END_TEST

START_TEST(chap_authentication)
{
	osd_target_iscsi *srv;
	struct osd_target_iscsi_options so = OSD_TARGET_ISCSI_OPTIONS_INIT;
	so.port = 0;
	so.chap_user = "alice";
	so.chap_secret = (const uint8_t *)"verysecretpassword";
	so.chap_secret_len = 18;
	ck_assert_int_eq(osd_target_iscsi_create(&srv, g_luns, 1, &so), 0);
	ck_assert_int_eq(osd_target_iscsi_start(srv), 0);
	int port = osd_target_iscsi_port(srv);
	struct tc c;
	struct tc_login o = { .target = IQN, .chap_user = "alice",
			      .chap_secret = "verysecretpassword" };
	ck_assert_int_eq(tc_login(&c, port, &o), 0);
	inquiry_works(&c);
	tc_close(&c);
	o.chap_secret = "wrongsecret!";
	ck_assert_int_eq(tc_login(&c, port, &o), OSD_ISCSI_LOGIN_AUTH_FAILED);
	tc_close(&c);
	o.chap_secret = "verysecretpassword";
	o.chap_user = "mallory";
	ck_assert_int_eq(tc_login(&c, port, &o), OSD_ISCSI_LOGIN_AUTH_FAILED);
	tc_close(&c);
	struct tc_login none = { .target = IQN };
	ck_assert_int_eq(tc_login(&c, port, &none), OSD_ISCSI_LOGIN_AUTH_FAILED);
	tc_close(&c);
	osd_target_iscsi_free(srv);
}
END_TEST

START_TEST(discovery_send_targets)
{
	struct tc c;
	struct tc_login o = { .discovery = 1 };
	struct osd__iscsi_bhs h = { 0 };
	struct osd__iscsi_pdu p;
	char want[200];
	login_ok(&c, &o);
	h.opcode = OSD_ISCSI_OP_TEXT_REQ;
	h.immediate = 1;
	h.flags = OSD_ISCSI_F_FINAL;
	h.itt = c.itt++;
	h.ttt = OSD_ISCSI_RSVD_TAG;
	h.cmd_sn = c.cmd_sn;
	ck_assert_int_eq(tc_send(&c, &h, NULL, 0, (const uint8_t *)"SendTargets=All", 16), 0);
	ck_assert_int_eq(tc_recv(&c, &p), 0);
	ck_assert_uint_eq(p.bhs.opcode, OSD_ISCSI_OP_TEXT_RSP);
	ck_assert_uint_eq(p.bhs.itt, h.itt);
	ck_assert(p.bhs.flags & OSD_ISCSI_F_FINAL);
	int n = snprintf(want, sizeof(want), "TargetName=%s%cTargetAddress=127.0.0.1:%d,1", IQN, 0,
			 g_port);
	ck_assert_uint_eq(p.data_len, (size_t)n + 1);
	ck_assert_mem_eq(p.data, want, (size_t)n + 1);

	/* No SCSI commands in a discovery session. */
	memset(&h, 0, sizeof(h));
	h.opcode = OSD_ISCSI_OP_SCSI_CMD;
	h.flags = OSD_ISCSI_F_FINAL;
	h.itt = c.itt++;
	h.cmd_sn = c.cmd_sn++;
	ck_assert_int_eq(tc_send(&c, &h, NULL, 0, NULL, 0), 0);
	expect_reject(&c, OSD_ISCSI_REJECT_PROTOCOL, NULL);
	ck_assert_int_eq(tc_logout(&c), 0);
	tc_close(&c);
}
END_TEST

/* ---- Task management ---- */

static uint8_t tmf(struct tc *c, int fn, int lun, uint32_t ref_itt, uint32_t ref_cmd_sn)
{
	struct osd__iscsi_bhs h = { 0 };
	struct osd__iscsi_pdu p;
	h.opcode = OSD_ISCSI_OP_TMF_REQ;
	h.immediate = 1;
	h.flags = (uint8_t)(OSD_ISCSI_F_FINAL | fn);
	osd__iscsi_lun_encode(h.lun, (uint16_t)lun);
	h.itt = c->itt++;
	h.ttt = ref_itt;
	h.cmd_sn = c->cmd_sn;
	h.ref_cmd_sn = ref_cmd_sn;
	ck_assert_int_eq(tc_send(c, &h, NULL, 0, NULL, 0), 0);
	ck_assert_int_eq(tc_recv(c, &p), 0);
	ck_assert_uint_eq(p.bhs.opcode, OSD_ISCSI_OP_TMF_RSP);
	ck_assert_uint_eq(p.bhs.itt, h.itt);
	return p.bhs.response;
}

START_TEST(task_management)
{
	struct tc c;
	struct tc_login o = { .target = IQN, .initial_r2t = 1 };
	struct osd__iscsi_bhs h = { 0 };
	struct osd__iscsi_pdu p;
	login_ok(&c, &o);
	ck_assert_int_eq(tc_clear_ua(&c, 0), 0); /* the raw WRITE below must run */
	/* A write waiting for its data (R2T sent), then aborted. */
	h.opcode = OSD_ISCSI_OP_SCSI_CMD;
	h.flags = OSD_ISCSI_F_FINAL | OSD_ISCSI_F_WRITE;
	h.itt = c.itt++;
	h.ttt = 65536;
	h.cmd_sn = c.cmd_sn++;
	h.cdb[0] = 0x2A;
	ck_assert_int_eq(tc_send(&c, &h, NULL, 0, NULL, 0), 0);
	ck_assert_int_eq(tc_recv(&c, &p), 0);
	ck_assert_uint_eq(p.bhs.opcode, OSD_ISCSI_OP_R2T);
	ck_assert_uint_eq(p.bhs.length, 16384);
	uint32_t ttt = p.bhs.ttt;
	ck_assert_uint_eq(tmf(&c, OSD_ISCSI_TASK_ABORT, 0, h.itt, h.cmd_sn),
			  OSD_ISCSI_TMF_RSP_COMPLETE);
	struct osd__iscsi_bhs d = { 0 };
	uint8_t chunk[4096] = { 0 };
	d.opcode = OSD_ISCSI_OP_DATA_OUT;
	d.flags = OSD_ISCSI_F_FINAL;
	d.itt = h.itt;
	d.ttt = ttt;
	ck_assert_int_eq(tc_send(&c, &d, NULL, 0, chunk, sizeof(chunk)), 0);
	ping(&c); /* no response to the aborted task came first */

	/* Already completed (RefCmdSN acknowledged) vs never received. */
	ck_assert_uint_eq(tmf(&c, OSD_ISCSI_TASK_ABORT, 0, 0x9999, c.cmd_sn - 1),
			  OSD_ISCSI_TMF_RSP_COMPLETE);
	ck_assert_uint_eq(tmf(&c, OSD_ISCSI_TASK_ABORT, 0, 0x9999, c.cmd_sn + 3),
			  OSD_ISCSI_TMF_RSP_NO_TASK);
	ck_assert_uint_eq(tmf(&c, OSD_ISCSI_TASK_LUN_RESET, 1, 0, 0), OSD_ISCSI_TMF_RSP_COMPLETE);
	ck_assert_uint_eq(tmf(&c, OSD_ISCSI_TASK_LUN_RESET, 9, 0, 0), OSD_ISCSI_TMF_RSP_NO_LUN);
	ck_assert_uint_eq(tmf(&c, OSD_ISCSI_TASK_ABORT_SET, 0, 0, 0),
			  OSD_ISCSI_TMF_RSP_COMPLETE);
	ck_assert_uint_eq(tmf(&c, OSD_ISCSI_TASK_TARGET_COLD_RESET, 0, 0, 0),
			  OSD_ISCSI_TMF_RSP_NOT_SUPPORTED);
	ck_assert_uint_eq(tmf(&c, OSD_ISCSI_TASK_REASSIGN, 0, 0, 0),
			  OSD_ISCSI_TMF_RSP_NO_REASSIGN);
	inquiry_works(&c);
	tc_close(&c);
}
END_TEST

/* ---- Concurrency and shutdown ---- */

struct worker {
	int id;
	int failed;
};

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct tc c;
	struct tc_login o = { .target = IQN };
	uint8_t data[50000], back[50000];
	struct osd_cdb cd;
	uint8_t cdb[OSD_CDB_V2_LEN];
	uint64_t oid = 0x20000 + (uint64_t)w->id;
	w->failed = 1;
	if (tc_login(&c, g_port, &o))
		return NULL;
	fill_pattern(data, sizeof(data), (unsigned)w->id);
	osd_cdb_init(&cd, OSD_V2, OSD_ACT_CREATE);
	cd.obj.partition = PID;
	cd.obj.id = oid;
	osd_capability_init(&cd.cap, OSD_V2, &cd.obj, 0, OSD_PERM_ALL_V2, OSD_SEC_NOSEC);
	cd.cap.desc_type = OSD_CAP_DESC_PAR;
	cd.cap.object_type = OSD_OBJ_ROOT;
	cd.cap.allowed_partition = 0;
	cd.cap.allowed_object = 0;
	cd.cap.permissions |= OSD_PERM_GLOBAL;
	osd_cdb_encode(&cd, cdb, sizeof(cdb));
	struct tc_cmd create = { .cdb = cdb, .cdb_len = sizeof(cdb) };
	if (tc_command(&c, &create) || create.status)
		goto out;
	cd.action = OSD_ACT_WRITE;
	cd.length = sizeof(data);
	osd_cdb_encode(&cd, cdb, sizeof(cdb));
	struct tc_cmd wr = { .cdb = cdb, .cdb_len = sizeof(cdb), .out = data,
			     .out_len = sizeof(data) };
	if (tc_command(&c, &wr) || wr.status)
		goto out;
	cd.action = OSD_ACT_READ;
	osd_cdb_encode(&cd, cdb, sizeof(cdb));
	struct tc_cmd rd = { .cdb = cdb, .cdb_len = sizeof(cdb), .in = back,
			     .in_len = sizeof(back) };
	if (tc_command(&c, &rd) || rd.status || memcmp(back, data, sizeof(data)))
		goto out;
	w->failed = tc_logout(&c) != 0;
out:
	tc_close(&c);
	return NULL;
}

START_TEST(concurrent_sessions)
{
	struct tc c;
	pthread_t th[4];
	struct worker w[4];
	login_ok(&c, NULL);
	simple_osd(&c, OSD_ACT_CREATE_PARTITION, PID, 0);
	for (int i = 0; i < 4; i++) {
		w[i].id = i;
		ck_assert_int_eq(pthread_create(&th[i], NULL, worker_main, &w[i]), 0);
	}
	for (int i = 0; i < 4; i++) {
		pthread_join(th[i], NULL);
		ck_assert_msg(!w[i].failed, "worker %d failed", i);
	}
	inquiry_works(&c);
	tc_close(&c);
}
END_TEST

START_TEST(free_closes_connections)
{
	struct tc c;
	struct osd__iscsi_pdu p;
	login_ok(&c, NULL);
	inquiry_works(&c);
	osd_target_iscsi_free(g_srv);
	g_srv = NULL;
	ck_assert_int_eq(tc_recv(&c, &p), -ECONNRESET);
	tc_close(&c);
	ck_assert_int_ne(tc_connect(&c, g_port), 0);
	tc_close(&c);
}
END_TEST

/* ---- Concurrent execution ---- */

/* Holds every OSD command with service action `hold` in the server's
 * on_execute hook until `open`, and logs the (action, object) of each
 * OSD command as it starts executing. */
struct gate {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	uint16_t hold;
	int held, open;
	unsigned n;
	uint16_t action[32];
	uint64_t oid[32];
	uint64_t start[32]; /* STARTING BYTE ADDRESS */
	int after_open[32]; /* started once the gate was open */
};

static void gate_hook(void *payload, const uint8_t *cdb, size_t len)
{
	struct gate *g = payload;
	if (len < 32 || cdb[0] != 0x7F)
		return;
	uint16_t action = osd__get_be16(cdb + 8);
	pthread_mutex_lock(&g->mu);
	if (g->n < 32) {
		/* osd2r05 5.2.1: OBJECT_ID in bytes 24-31, STARTING BYTE ADDRESS 40-47 */
		g->action[g->n] = action;
		g->start[g->n] = osd__get_be64(cdb + 40);
		g->after_open[g->n] = g->open;
		g->oid[g->n++] = osd__get_be64(cdb + 24);
	}
	if (action == g->hold) {
		g->held++;
		pthread_cond_broadcast(&g->cv);
		while (!g->open)
			pthread_cond_wait(&g->cv, &g->mu);
		g->held--;
	}
	pthread_mutex_unlock(&g->mu);
}

/* Wait (at most 10 s) until @p n commands are held; returns the log length. */
static unsigned gate_wait(struct gate *g, int n)
{
	struct timespec until;
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += 10;
	pthread_mutex_lock(&g->mu);
	while (g->held < n && pthread_cond_timedwait(&g->cv, &g->mu, &until) == 0)
		;
	ck_assert_int_eq(g->held, n);
	unsigned logged = g->n;
	pthread_mutex_unlock(&g->mu);
	return logged;
}

static void gate_set(struct gate *g, int open)
{
	pthread_mutex_lock(&g->mu);
	g->open = open;
	pthread_cond_broadcast(&g->cv);
	pthread_mutex_unlock(&g->mu);
}

/* Index in the log of the first execution of (action, oid) from @p from. */
static int gate_find(struct gate *g, unsigned from, uint16_t action, uint64_t oid)
{
	pthread_mutex_lock(&g->mu);
	int at = -1;
	for (unsigned i = from; i < g->n && at < 0; i++)
		if (g->action[i] == action && g->oid[i] == oid)
			at = (int)i;
	pthread_mutex_unlock(&g->mu);
	return at;
}

static uint32_t start_osd(struct tc *c, enum osd_action a, uint64_t oid, uint8_t attr)
{
	static uint8_t cdbs[8][OSD_CDB_V2_LEN];
	static unsigned next;
	uint8_t *cdb = cdbs[next++ % 8];
	struct osd_cdb cd;
	uint32_t itt;
	osd_cdb_init(&cd, OSD_V2, a);
	cd.obj.partition = PID;
	cd.obj.id = oid;
	osd_cdb(cdb, &cd);
	struct tc_cmd cmd = { .cdb = cdb, .cdb_len = OSD_CDB_V2_LEN };
	ck_assert_int_eq(tc_start(c, &cmd, attr, &itt), 0);
	return itt;
}

/* The next PDU: the SCSI Response of @p itt with GOOD status. */
static void expect_good(struct tc *c, uint32_t itt)
{
	struct osd__iscsi_pdu p;
	ck_assert_int_eq(tc_recv(c, &p), 0);
	ck_assert_uint_eq(p.bhs.opcode, OSD_ISCSI_OP_SCSI_RSP);
	ck_assert_uint_eq(p.bhs.itt, itt);
	ck_assert_uint_eq(p.bhs.status, 0);
}

/* A server with 4 workers whose commands pass @p g's gate, and @p c logged
 * in to it with the unit attention cleared. */
static osd_target_iscsi *gated_server(struct gate *g, struct tc *c)
{
	struct osd_target_iscsi_options o = OSD_TARGET_ISCSI_OPTIONS_INIT;
	struct tc_login lo = { .target = IQN };
	osd_target_iscsi *srv;

	o.port = 0;
	o.workers = 4;
	o.on_execute = gate_hook;
	o.on_execute_payload = g;
	ck_assert_int_eq(osd_target_iscsi_create(&srv, g_luns, NLUNS, &o), 0);
	ck_assert_int_eq(osd_target_iscsi_start(srv), 0);
	ck_assert_int_eq(tc_login(c, osd_target_iscsi_port(srv), &lo), 0);
	ck_assert_int_eq(tc_clear_ua(c, 0), 0);
	return srv;
}

/*
 * A command held in execution (a FLUSH stopped in the on_execute hook, as
 * a slow disk would) does not hold up the connection: a NOP-Out is
 * answered at once, a command on another object completes, MaxCmdSN counts
 * the held command, a command on the same object and an ORDERED one wait
 * for it (and then run), and ABORT TASK of the held command is answered
 * only after its response (RFC 7143 4.2.3.3).
 */
START_TEST(concurrent_execution)
{
	static struct gate g = { .mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER,
				 .hold = OSD_ACT_FLUSH };
	const uint64_t a = 0x30001, b = 0x30002;
	struct tc c;
	struct osd__iscsi_pdu p;
	osd_target_iscsi *srv = gated_server(&g, &c);

	simple_osd(&c, OSD_ACT_CREATE_PARTITION, PID, 0);
	simple_osd(&c, OSD_ACT_CREATE, PID, a);
	simple_osd(&c, OSD_ACT_CREATE, PID, b);

	/* FLUSH of a is held; the connection goes on. */
	uint32_t flush = start_osd(&c, OSD_ACT_FLUSH, a, OSD_ISCSI_ATTR_SIMPLE);
	unsigned base = gate_wait(&g, 1) - 1;
	ping(&c);
	ck_assert_uint_eq(c.max_cmd_sn, c.exp_cmd_sn + 30); /* 32 minus the held one, minus 1 */
	simple_osd(&c, OSD_ACT_GET_ATTRIBUTES, PID, b); /* another object: runs */
	uint32_t same = start_osd(&c, OSD_ACT_GET_ATTRIBUTES, a, OSD_ISCSI_ATTR_SIMPLE);
	uint32_t ordered = start_osd(&c, OSD_ACT_GET_ATTRIBUTES, b, OSD_ISCSI_ATTR_ORDERED);
	ping(&c); /* neither of them answered first */
	ck_assert_int_eq(gate_find(&g, base, OSD_ACT_GET_ATTRIBUTES, a), -1);
	int first_b = gate_find(&g, base, OSD_ACT_GET_ATTRIBUTES, b);
	ck_assert_int_gt(first_b, (int)base);
	ck_assert_int_eq(gate_find(&g, (unsigned)first_b + 1, OSD_ACT_GET_ATTRIBUTES, b), -1);

	/* ABORT TASK of the held FLUSH: answered after the FLUSH's response. */
	struct osd__iscsi_bhs h = { 0 };
	h.opcode = OSD_ISCSI_OP_TMF_REQ;
	h.immediate = 1;
	h.flags = (uint8_t)(OSD_ISCSI_F_FINAL | OSD_ISCSI_TASK_ABORT);
	h.itt = c.itt++;
	h.ttt = flush;
	h.cmd_sn = c.cmd_sn;
	h.ref_cmd_sn = c.cmd_sn - 4;
	ck_assert_int_eq(tc_send(&c, &h, NULL, 0, NULL, 0), 0);
	ping(&c); /* the TMF answer waits */
	gate_set(&g, 1);
	int seen_flush = 0, seen_tmf = 0, seen_same = 0, seen_ordered = 0;
	for (int i = 0; i < 4; i++) {
		ck_assert_int_eq(tc_recv(&c, &p), 0);
		if (p.bhs.opcode == OSD_ISCSI_OP_TMF_RSP) {
			ck_assert_uint_eq(p.bhs.itt, h.itt);
			ck_assert_uint_eq(p.bhs.response, OSD_ISCSI_TMF_RSP_COMPLETE);
			ck_assert(seen_flush);
			seen_tmf = 1;
			continue;
		}
		ck_assert_uint_eq(p.bhs.opcode, OSD_ISCSI_OP_SCSI_RSP);
		ck_assert_uint_eq(p.bhs.status, 0);
		seen_flush |= p.bhs.itt == flush;
		seen_same |= p.bhs.itt == same;
		seen_ordered |= p.bhs.itt == ordered;
	}
	ck_assert(seen_flush && seen_tmf && seen_same && seen_ordered);
	/* Executed in order after the FLUSH: a, then the ORDERED one on b. */
	int at_a = gate_find(&g, base, OSD_ACT_GET_ATTRIBUTES, a);
	int at_b = gate_find(&g, (unsigned)first_b + 1, OSD_ACT_GET_ATTRIBUTES, b);
	ck_assert_int_gt(at_a, first_b);
	ck_assert_int_gt(at_b, at_a);
	ck_assert_uint_eq(c.max_cmd_sn, c.exp_cmd_sn + 31); /* nothing held any more */

	/* Logout while a command runs: the command's answer comes first. */
	gate_set(&g, 0);
	flush = start_osd(&c, OSD_ACT_FLUSH, b, OSD_ISCSI_ATTR_SIMPLE);
	gate_wait(&g, 1);
	ping(&c);
	struct osd__iscsi_bhs lo_h = { 0 };
	lo_h.opcode = OSD_ISCSI_OP_LOGOUT_REQ;
	lo_h.immediate = 1;
	lo_h.flags = OSD_ISCSI_F_FINAL;
	lo_h.itt = c.itt++;
	lo_h.cmd_sn = c.cmd_sn;
	ck_assert_int_eq(tc_send(&c, &lo_h, NULL, 0, NULL, 0), 0);
	gate_set(&g, 1);
	expect_good(&c, flush);
	ck_assert_int_eq(tc_recv(&c, &p), 0);
	ck_assert_uint_eq(p.bhs.opcode, OSD_ISCSI_OP_LOGOUT_RSP);
	ck_assert_uint_eq(p.bhs.response, OSD_ISCSI_LOGOUT_RSP_OK);
	tc_close(&c);
	osd_target_iscsi_free(srv);
}
END_TEST

/*
 * A command whose Initiator Task Tag belongs to a command not yet answered
 * (here one held in execution) is refused with Reject 07h TASK IN PROGRESS
 * (RFC 7143 11.17.1); once that command is answered, its tag may be used
 * again.
 */
START_TEST(duplicate_itt)
{
	static struct gate g = { .mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER,
				 .hold = OSD_ACT_FLUSH };
	const uint64_t a = 0x30003;
	struct tc c;
	osd_target_iscsi *srv = gated_server(&g, &c);

	simple_osd(&c, OSD_ACT_CREATE_PARTITION, PID, 0);
	simple_osd(&c, OSD_ACT_CREATE, PID, a);

	uint32_t flush = start_osd(&c, OSD_ACT_FLUSH, a, OSD_ISCSI_ATTR_SIMPLE);
	gate_wait(&g, 1);
	uint32_t next = c.itt;
	c.itt = flush;
	start_osd(&c, OSD_ACT_GET_ATTRIBUTES, a, OSD_ISCSI_ATTR_SIMPLE);
	expect_reject(&c, OSD_ISCSI_REJECT_TASK_IN_PROGRESS, NULL);
	ping(&c); /* the held FLUSH still runs, nothing else came */
	gate_set(&g, 1);
	expect_good(&c, flush);
	c.itt = flush; /* answered: its tag is free again */
	simple_osd(&c, OSD_ACT_GET_ATTRIBUTES, PID, a);
	c.itt = next;
	ck_assert_int_eq(tc_logout(&c), 0);
	tc_close(&c);
	osd_target_iscsi_free(srv);
}
END_TEST

/* Starts a 4 KiB READ or WRITE of @p oid at @p off (data in @p buf). */
static uint32_t start_rw(struct tc *c, enum osd_action a, uint64_t oid, uint64_t off,
			 uint8_t *buf, uint8_t cdb[OSD_CDB_V2_LEN])
{
	struct osd_cdb cd;
	uint32_t itt;
	osd_cdb_init(&cd, OSD_V2, a);
	cd.obj.partition = PID;
	cd.obj.id = oid;
	cd.start = off;
	cd.length = 4096;
	osd_cdb(cdb, &cd);
	struct tc_cmd cmd = { .cdb = cdb, .cdb_len = OSD_CDB_V2_LEN };
	if (a == OSD_ACT_WRITE) {
		cmd.out = buf;
		cmd.out_len = 4096;
	} else {
		cmd.in = buf;
		cmd.in_len = 4096;
	}
	ck_assert_int_eq(tc_start(c, &cmd, OSD_ISCSI_ATTR_SIMPLE, &itt), 0);
	return itt;
}

/* Receives PDUs until the status of @p itt (GOOD); Data-In goes to @p in.
 * Any other task's status meanwhile fails. */
static void collect(struct tc *c, uint32_t itt, uint8_t *in)
{
	struct osd__iscsi_pdu p;
	for (;;) {
		ck_assert_int_eq(tc_recv(c, &p), 0);
		ck_assert_uint_eq(p.bhs.itt, itt);
		if (p.bhs.opcode == OSD_ISCSI_OP_DATA_IN && in)
			memcpy(in + p.bhs.offset, p.data, p.data_len);
		if (p.bhs.opcode == OSD_ISCSI_OP_SCSI_RSP ||
		    (p.bhs.opcode == OSD_ISCSI_OP_DATA_IN && (p.bhs.flags & OSD_ISCSI_F_STATUS))) {
			ck_assert_uint_eq(p.bhs.status, 0);
			return;
		}
	}
}

static int gate_logged(struct gate *g, uint16_t action, uint64_t start, int *after_open)
{
	int found = 0;
	pthread_mutex_lock(&g->mu);
	for (unsigned i = 0; i < g->n; i++) {
		if (g->action[i] == action && g->start[i] == start) {
			found = 1;
			*after_open = g->after_open[i];
		}
	}
	pthread_mutex_unlock(&g->mu);
	return found;
}

/*
 * Byte ranges of one object: two WRITEs of disjoint ranges execute at the
 * same time (both held in the hook at once), a READ that no held WRITE can
 * affect completes meanwhile, and a READ of a range being written runs only
 * after the write and returns its bytes.
 */
START_TEST(object_ranges)
{
	static struct gate g = { .mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER };
	static uint8_t fill[65536], w1[4096], w2[4096], r1[4096], r2[4096];
	static uint8_t cdbs[4][OSD_CDB_V2_LEN];
	osd_target_iscsi *srv;
	struct osd_target_iscsi_options o = OSD_TARGET_ISCSI_OPTIONS_INIT;
	const uint64_t a = 0x30011;
	struct tc c;
	int after_open = 0;

	o.port = 0;
	o.workers = 4;
	o.on_execute = gate_hook;
	o.on_execute_payload = &g;
	ck_assert_int_eq(osd_target_iscsi_create(&srv, g_luns, NLUNS, &o), 0);
	ck_assert_int_eq(osd_target_iscsi_start(srv), 0);
	struct tc_login lo = { .target = IQN };
	ck_assert_int_eq(tc_login(&c, osd_target_iscsi_port(srv), &lo), 0);
	ck_assert_int_eq(tc_clear_ua(&c, 0), 0);
	simple_osd(&c, OSD_ACT_CREATE_PARTITION, PID, 0);
	simple_osd(&c, OSD_ACT_CREATE, PID, a);
	fill_pattern(fill, sizeof(fill), 1);
	for (uint64_t off = 0; off < sizeof(fill); off += 4096)
		collect(&c, start_rw(&c, OSD_ACT_WRITE, a, off, fill + off, cdbs[0]), NULL);

	pthread_mutex_lock(&g.mu);
	g.hold = OSD_ACT_WRITE;
	pthread_mutex_unlock(&g.mu);
	fill_pattern(w1, sizeof(w1), 2);
	fill_pattern(w2, sizeof(w2), 3);
	uint32_t t1 = start_rw(&c, OSD_ACT_WRITE, a, 0, w1, cdbs[0]);
	uint32_t t2 = start_rw(&c, OSD_ACT_WRITE, a, 8192, w2, cdbs[1]);
	gate_wait(&g, 2); /* disjoint: both run at once */
	collect(&c, start_rw(&c, OSD_ACT_READ, a, 16384, r1, cdbs[2]), r1);
	ck_assert_mem_eq(r1, fill + 16384, 4096);
	uint32_t t3 = start_rw(&c, OSD_ACT_READ, a, 0, r2, cdbs[3]);
	ping(&c);
	gate_set(&g, 1);
	int got1 = 0, got2 = 0, got3 = 0;
	for (int i = 0; i < 3; i++) {
		struct osd__iscsi_pdu p;
		ck_assert_int_eq(tc_recv(&c, &p), 0);
		if (p.bhs.opcode == OSD_ISCSI_OP_DATA_IN) {
			ck_assert_uint_eq(p.bhs.itt, t3);
			memcpy(r2 + p.bhs.offset, p.data, p.data_len);
			if (!(p.bhs.flags & OSD_ISCSI_F_STATUS)) {
				i--;
				continue;
			}
		} else {
			ck_assert_uint_eq(p.bhs.opcode, OSD_ISCSI_OP_SCSI_RSP);
		}
		ck_assert_uint_eq(p.bhs.status, 0);
		got1 |= p.bhs.itt == t1;
		got2 |= p.bhs.itt == t2;
		got3 |= p.bhs.itt == t3;
	}
	ck_assert(got1 && got2 && got3);
	ck_assert_mem_eq(r2, w1, sizeof(w1)); /* the READ came after the WRITE */
	ck_assert(gate_logged(&g, OSD_ACT_READ, 0, &after_open));
	ck_assert_int_eq(after_open, 1);
	ck_assert(gate_logged(&g, OSD_ACT_READ, 16384, &after_open));
	ck_assert_int_eq(after_open, 0);
	tc_close(&c);
	osd_target_iscsi_free(srv);
}
END_TEST

START_TEST(create_arguments)
{
	osd_target_iscsi *srv = NULL;
	struct osd_target_iscsi_options o = OSD_TARGET_ISCSI_OPTIONS_INIT;
	o.port = 0;
	ck_assert_int_eq(osd_target_iscsi_create(&srv, g_luns, 0, &o), -EINVAL);
	o.address = "not-an-address";
	ck_assert_int_eq(osd_target_iscsi_create(&srv, g_luns, 1, &o), -EINVAL);
	o.address = NULL;
	o.version = 99;
	ck_assert_int_eq(osd_target_iscsi_create(&srv, g_luns, 1, &o), -EINVAL);
	o.version = OSD_TARGET_ISCSI_OPTIONS_VERSION;
	o.port = g_port; /* taken */
	ck_assert_int_eq(osd_target_iscsi_create(&srv, g_luns, 1, &o), -EADDRINUSE);
	ck_assert_ptr_null(srv);
	osd_target_iscsi_free(NULL);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("iscsi_server");
	TCase *t = tcase_create("server");
	tcase_add_checked_fixture(t, setup, teardown);
	tcase_set_timeout(t, 60);
	tcase_add_test(t, scsi_basics_and_logout);
	tcase_add_test(t, unit_attention_on_new_session);
	tcase_add_test(t, osd_236_byte_cdbs_unsolicited);
	tcase_add_test(t, osd_236_byte_cdbs_initial_r2t);
	tcase_add_test(t, digests_and_digest_errors);
	tcase_add_test(t, cmdsn_window);
	tcase_add_test(t, bad_pdus_rejected_others_served);
	tcase_add_test(t, random_garbage);
	tcase_add_test(t, login_failures);
	tcase_add_test(t, chap_authentication);
	tcase_add_test(t, discovery_send_targets);
	tcase_add_test(t, task_management);
	tcase_add_test(t, concurrent_sessions);
	tcase_add_test(t, free_closes_connections);
	tcase_add_test(t, create_arguments);
	tcase_add_test(t, concurrent_execution);
	tcase_add_test(t, duplicate_itt);
	tcase_add_test(t, object_ranges);
	suite_add_tcase(s, t);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
