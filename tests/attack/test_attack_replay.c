/*
 * Attack: replay a captured CAPKEY request in another iSCSI session.
 *
 * A victim writes to an object of a CAPKEY partition on a real osd-targetd;
 * a recording transport under its libosd device captures the WRITE (CDB and
 * data) as a network observer would. An attacker then logs in with a raw
 * iSCSI client (any ISID, new sessions as often as it likes) and sends the
 * captured CDB, with the victim's bytes and with its own. CAPKEY's request
 * ICV covers the channel's security token (Security Token VPD page), which the
 * target makes fresh per session, so every replay must be refused with
 * ILLEGAL REQUEST, INVALID FIELD IN CDB at the request ICV, and the object
 * must still hold the victim's data. The captured capability must expire.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <osd/osd.h>
#include <osd/iscsi.h>
#include <osdtarget/target.h>

#include "client.h"
#include "daemon_wait.h"

#define REPLAY_SESSIONS 64
#define DATA_LEN 4096
#define V2_CDB_LEN 236
#define V2_REQ_ICV 184          /* request ICV field, CDB byte (v2) */
#define CAP_AT 80               /* capability, CDB byte */
#define CAP_EXPIRATION 4        /* 6-byte ms expiration, capability byte */
#define TOKEN_PAGE 0xB1

static const uint8_t ROOT_KEY[OSD_HMAC_LEN] = "attack-root-key-0001";

/* ---- a transport that records the WRITE it passes on ---------------------- */

struct recorder {
	struct osd_transport inner;
	uint8_t cdb[V2_CDB_LEN];
	size_t cdb_len;
	uint8_t data[DATA_LEN];
	size_t data_len;
};

static int rec_submit(void *impl, struct osd_xfer *x)
{
	struct recorder *r = impl;

	if (x->cdb_len == V2_CDB_LEN && x->cdb[9] == (OSD_ACT_WRITE & 0xFF) &&
	    x->cdb[8] == (OSD_ACT_WRITE >> 8) && x->out_len <= sizeof(r->data)) {
		memcpy(r->cdb, x->cdb, V2_CDB_LEN);
		r->cdb_len = V2_CDB_LEN;
		r->data_len = 0;
		for (int i = 0; i < x->out_iovcnt; i++) {
			memcpy(r->data + r->data_len, x->out_iov[i].iov_base, x->out_iov[i].iov_len);
			r->data_len += x->out_iov[i].iov_len;
		}
	}
	return r->inner.ops->submit(r->inner.impl, x);
}

static int rec_get_fd(void *impl)
{
	struct recorder *r = impl;

	return r->inner.ops->get_fd ? r->inner.ops->get_fd(r->inner.impl) : -1;
}

static int rec_which_events(void *impl)
{
	struct recorder *r = impl;

	return r->inner.ops->which_events(r->inner.impl);
}

static int rec_service(void *impl, int revents)
{
	struct recorder *r = impl;

	return r->inner.ops->service(r->inner.impl, revents);
}

static size_t rec_token(void *impl, uint8_t *buf, size_t len)
{
	struct recorder *r = impl;

	return r->inner.ops->security_token(r->inner.impl, buf, len);
}

static int rec_cancel(void *impl, struct osd_xfer *x)
{
	struct recorder *r = impl;

	return r->inner.ops->cancel(r->inner.impl, x);
}

static void rec_destroy(void *impl)
{
	struct recorder *r = impl;

	r->inner.ops->destroy(r->inner.impl);
}

static struct osd_transport_ops rec_ops;

/* ---- the victim: a keyed CAPKEY partition over iSCSI ------------------------ */

struct victim {
	osd_cred_issuer *iss;
	osd_dev *dev;
	struct recorder rec;
	uint64_t pid;
	struct osd_obj_id obj;
};

static int issue(const struct osd_cred_request *want, struct osd_credential *out, void *p)
{
	return osd_cred_issue(((struct victim *)p)->iss, want, out);
}

static void set_key(struct victim *v, enum osd_key_to_set kind, const char *id, uint8_t key[20],
		    const uint8_t parent[20])
{
	struct osd_set_key_params p;
	struct osd_cred_request r;
	struct osd_credential cr;
	osd_key *pk;
	osd_req *req;

	memset(&p, 0, sizeof(p));
	memset(p.seed, 0x3C, sizeof(p.seed));
	memcpy(p.key_id, id, OSD_KEY_ID_LEN);
	p.partition = v->pid;
	p.key_to_set = kind;
	memset(&r, 0, sizeof(r));
	r.version = OSD_V2;
	r.obj.partition = v->pid;
	r.permissions = OSD_PERM_POL_SEC;
	r.method = OSD_SEC_CAPKEY;
	ck_assert_int_eq(osd_cred_issue_set_key(v->iss, &r, kind, &cr), 0);
	ck_assert_int_eq(osd_req_set_key(&req, v->dev, &p), 0);
	ck_assert_int_eq(osd_req_set_credential(req, &cr), 0);
	ck_assert_msg(osd_req_execute(req) == 0, "SET KEY: %s", osd_req_error(req));
	osd_req_free(req);
	ck_assert_int_eq(osd_key_new(&pk, parent, OSD_HMAC_LEN), 0);
	ck_assert_int_eq(osd_key_derive(pk, p.seed, p.key_id, kind, 0, key), 0);
	osd_key_free(pk);
}

static void victim_open(struct victim *v, unsigned port, const uint8_t sid[OSD_SYSTEM_ID_LEN])
{
	struct osd_dev_options o = OSD_DEV_OPTIONS_INIT;
	struct osd_iscsi_options io = OSD_ISCSI_OPTIONS_INIT;
	char url[128];

	snprintf(url, sizeof(url), "iscsi://127.0.0.1:%u/%s/0", port, "iqn.2026-12.org.osd:target");
	ck_assert_int_eq(osd_iscsi_transport_new(&v->rec.inner, url, &io), 0);
	rec_ops = *v->rec.inner.ops;
	rec_ops.submit = rec_submit;
	rec_ops.get_fd = rec_get_fd;
	rec_ops.which_events = rec_which_events;
	rec_ops.service = rec_service;
	rec_ops.security_token = rec_token;
	rec_ops.cancel = v->rec.inner.ops->cancel ? rec_cancel : NULL;
	rec_ops.destroy = rec_destroy;
	struct osd_transport tp = { &rec_ops, &v->rec };

	ck_assert_int_eq(osd_cred_issuer_new(&v->iss, sid), 0);
	ck_assert_int_eq(osd_cred_issuer_set_root_key(v->iss, ROOT_KEY), 0);
	o.osd_version = OSD_VERSION_2;
	o.security = OSD_SEC_CAPKEY;
	o.cred_source = issue;
	o.cred_payload = v;
	ck_assert_int_eq(osd_dev_open(&v->dev, &tp, &o), 0);
}

/* Partition with its keys and CAPKEY as its default method, one object. */
static void victim_setup(struct victim *v)
{
	uint8_t pkey[20], wkey[20], m = OSD_SEC_CAPKEY;
	struct osd_obj_id part;
	osd_req *req;

	v->pid = 0x10010;
	ck_assert_int_eq(osd_req_create_partition(&req, v->dev, v->pid), 0);
	ck_assert_msg(osd_req_execute(req) == 0, "CREATE PARTITION: %s", osd_req_error(req));
	osd_req_free(req);
	set_key(v, OSD_KEY_PARTITION, "PKEY001", pkey, ROOT_KEY);
	ck_assert_int_eq(osd_cred_issuer_set_partition_key(v->iss, v->pid, pkey), 0);
	set_key(v, OSD_KEY_WORKING, "WKEY000", wkey, pkey);
	ck_assert_int_eq(osd_cred_issuer_set_working_key(v->iss, v->pid, 0, wkey), 0);
	part.partition = v->pid;
	part.id = 0;
	ck_assert_int_eq(osd_set_attr(v->dev, &part, OSD_APAGE_PARTITION_BASE +
				      OSD_APAGE_POLICY_SECURITY, OSD_ATTR_PS_DEFAULT_METHOD,
				      &m, 1), 0);
	v->obj.partition = v->pid;
	v->obj.id = 0x10001;
	ck_assert_int_eq(osd_req_create(&req, v->dev, &v->obj, 1), 0);
	ck_assert_msg(osd_req_execute(req) == 0, "CREATE: %s", osd_req_error(req));
	osd_req_free(req);
}

static void victim_write(struct victim *v, const uint8_t *data)
{
	struct iovec iov = { (void *)data, DATA_LEN };
	osd_req *req;

	ck_assert_int_eq(osd_req_write(&req, v->dev, &v->obj, 0, &iov, 1), 0);
	ck_assert_msg(osd_req_execute(req) == 0, "WRITE: %s", osd_req_error(req));
	osd_req_free(req);
}

static void victim_expect(struct victim *v, const uint8_t *want)
{
	uint8_t back[DATA_LEN];
	struct iovec iov = { back, sizeof(back) };
	osd_req *req;

	ck_assert_int_eq(osd_req_read(&req, v->dev, &v->obj, 0, &iov, 1), 0);
	ck_assert_msg(osd_req_execute(req) == 0, "READ: %s", osd_req_error(req));
	osd_req_free(req);
	ck_assert_mem_eq(back, want, DATA_LEN);
}

/* ---- the attacker: raw sessions ------------------------------------------- */

/* The session's security token as the target states it (VPD page B1h). */
static size_t session_token(struct tc *c, uint8_t *tok, size_t cap)
{
	uint8_t cdb[6] = { 0x12, 0x01, TOKEN_PAGE, 0, 255, 0 }, page[255];
	struct tc_cmd cmd = { .cdb = cdb, .cdb_len = sizeof(cdb), .in = page,
			      .in_len = sizeof(page) };
	size_t n;

	ck_assert_int_eq(tc_command(c, &cmd), 0);
	ck_assert_uint_eq(cmd.status, 0);
	ck_assert_uint_eq(page[1], TOKEN_PAGE);
	n = (size_t)page[2] << 8 | page[3];
	ck_assert_uint_le(n, cap);
	memcpy(tok, page + 4, n);
	return n;
}

/* Send the captured WRITE with @p data; assert the exact refusal. */
static void replay_refused(struct tc *c, const struct recorder *r, const uint8_t *data)
{
	struct tc_cmd cmd = { .cdb = r->cdb, .cdb_len = r->cdb_len, .out = data,
			      .out_len = r->data_len };

	ck_assert_int_eq(tc_command(c, &cmd), 0);
	ck_assert_uint_eq(cmd.status, 2); /* CHECK CONDITION */
	ck_assert_uint_ge(cmd.sense_len, 8);
	ck_assert_uint_eq(cmd.sense[1] & 0x0F, 5);   /* ILLEGAL REQUEST */
	ck_assert_uint_eq(cmd.sense[2], 0x24);        /* INVALID FIELD IN CDB */
	ck_assert_uint_eq(cmd.sense[3], 0x00);
}

static char tmpdir[] = "/tmp/osd-attack-replay.XXXXXX";
static pid_t daemon_pid = -1;

/* A store with the root key, served by osd-targetd; returns its port. */
static unsigned start_daemon(uint8_t sid[OSD_SYSTEM_ID_LEN])
{
	char store[256];
	osd_target *t;
	unsigned port;

	ck_assert_ptr_nonnull(mkdtemp(tmpdir));
	snprintf(store, sizeof(store), "%s/store", tmpdir);
	ck_assert_int_eq(osd_target_open(&t, store, NULL), 0);
	ck_assert_int_eq(osd_target_set_root_key(t, ROOT_KEY), 0);
	osd_target_system_id(t, sid);
	osd_target_close(t);
	port = osd_test_targetd_start(OSD_TARGETD_PATH, tmpdir, &daemon_pid, 20000);
	ck_assert_msg(port != 0, "osd-targetd did not start");
	return port;
}

START_TEST(capkey_replay_in_other_sessions)
{
	uint8_t sid[OSD_SYSTEM_ID_LEN], mine[DATA_LEN], evil[DATA_LEN];
	uint8_t tok[REPLAY_SESSIONS][64];
	size_t tok_len[REPLAY_SESSIONS];
	struct victim v;
	unsigned port = start_daemon(sid);
	uint64_t exp = 0, now = osd_now_ms();

	memset(&v, 0, sizeof(v));
	victim_open(&v, port, sid);
	victim_setup(&v);
	memset(mine, 0xA5, sizeof(mine));
	memset(evil, 0x66, sizeof(evil));
	victim_write(&v, mine);
	ck_assert_uint_eq(v.rec.cdb_len, V2_CDB_LEN);
	ck_assert_uint_eq(v.rec.cdb[CAP_AT + 2] & 0x0F, OSD_SEC_CAPKEY);

	/* the captured capability expires, in about OSD_CRED_LIFETIME_MS */
	for (int i = 0; i < 6; i++)
		exp = exp << 8 | v.rec.cdb[CAP_AT + CAP_EXPIRATION + i];
	ck_assert_uint_gt(exp, now);
	ck_assert_uint_le(exp, now + OSD_CRED_LIFETIME_MS + 60000);

	unsigned refused = 0;
	for (int s = 0; s < REPLAY_SESSIONS; s++) {
		struct tc c;
		struct tc_login lo = { 0 };

		lo.target = "iqn.2026-12.org.osd:target";
		ck_assert_int_eq(tc_login(&c, (int)port, &lo), 0);
		tok_len[s] = session_token(&c, tok[s], sizeof(tok[s]));
		ck_assert_uint_eq(tok_len[s], 24);
		for (int p = 0; p < s; p++) /* ISID and TSIH may repeat; the token never */
			ck_assert_mem_ne(tok[s] + 8, tok[p] + 8, 16);
		replay_refused(&c, &v.rec, v.rec.data);
		replay_refused(&c, &v.rec, evil);
		refused += 2;
		tc_logout(&c);
		tc_close(&c);
	}
	/* The old attack: log in with the victim's ISID until the 16-bit TSIH
	 * comes round to the victim's, then replay there. */
	uint8_t vtok[64];
	struct tc c;
	struct tc_login lo = { 0 };
	unsigned logins = 0;
	uint16_t vtsih;

	ck_assert_uint_eq(v.rec.inner.ops->security_token(v.rec.inner.impl, vtok, sizeof(vtok)), 24);
	vtsih = (uint16_t)(vtok[6] << 8 | vtok[7]);
	lo.target = "iqn.2026-12.org.osd:target";
	lo.isid = vtok;
	for (;;) {
		ck_assert_int_eq(tc_login(&c, (int)port, &lo), 0);
		logins++;
		if (c.tsih == vtsih)
			break;
		tc_close(&c);
		ck_assert_uint_lt(logins, 70000);
	}
	ck_assert_uint_eq(session_token(&c, tok[0], sizeof(tok[0])), 24);
	ck_assert_mem_eq(tok[0], vtok, 8);          /* same ISID and TSIH as the victim's */
	ck_assert_mem_ne(tok[0] + 8, vtok + 8, 16); /* but not the same token */
	replay_refused(&c, &v.rec, evil);
	refused++;
	tc_close(&c);
	victim_expect(&v, mine); /* nothing the replays carried landed */
	printf("ATTACK capkey-replay: sessions=%d tsih_wrap_logins=%u replays=%u refused=%u "
	       "accepted=0 token_bytes=24 cap_lifetime_ms=%llu data_intact=1\n", REPLAY_SESSIONS,
	       logins, refused, refused, (unsigned long long)(exp - now));
	osd_dev_close(v.dev);
	osd_cred_issuer_free(v.iss);
	osd_test_targetd_stop(&daemon_pid, tmpdir);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("attack");
	TCase *tc = tcase_create("replay");
	SRunner *sr;
	int failed;

	if (access(OSD_TARGETD_PATH, X_OK) != 0) {
		fprintf(stderr, "osd-targetd not built: %s\n", OSD_TARGETD_PATH);
		return 77;
	}
	tcase_add_test(tc, capkey_replay_in_other_sessions);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
