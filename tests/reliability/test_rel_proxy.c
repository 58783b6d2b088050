/* Transport faults: libosd's iSCSI initiator talks to a real osd-targetd
 * through fault_proxy, which drops, delays, truncates and corrupts PDUs.
 * Every operation must either succeed with exactly the right bytes or fail
 * with an error; a final pass over a clean connection checks that every
 * acknowledged write and attribute is there and nothing is corrupted.
 * OSD_REL_SCALE (default 1) scales the iteration counts; OSD_REL_SEED
 * replaces the seed. Skipped (77) when osd-targetd is not built. */
#define _XOPEN_SOURCE 700
#include <check.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <osd/osd.h>
#include <osd/iscsi.h>
#include "daemon_wait.h"
#include "fault_proxy.h"
#include "rel_env.h"

#ifndef OSD_TARGETD_PATH
#define OSD_TARGETD_PATH ""
#endif

#define START_WAIT_MS 15000
#define APP_PAGE 0x10003u
#define UI_PAGE (OSD_APAGE_USER_BASE + OSD_APAGE_INFORMATION)
#define PART 0x10000u
#define OBJ_BASE 0x10000u
#define NOBJ 6
#define NBLK 16
#define BLK 8192
#define MAXC 32                 /* candidate versions kept per block or attribute */
#define ATTR_LEN 16

static char dir[512];
static pid_t daemon_pid = -1;
static unsigned target_port;
static char target[OSD_ISCSI_NAME_MAX + 1];

/* @p n scaled by OSD_REL_SCALE, but at least @p min (enough faults to check). */
static unsigned scaled(unsigned n, unsigned min)
{
	unsigned v = (unsigned)(n * rel_scale(0));

	return v > min ? v : min;
}

static uint64_t seed(void)
{
	return rel_seed(0x0517D00Dull);
}

/* ---- the daemon ---- */

static void daemon_down(void)
{
	osd_test_targetd_stop(&daemon_pid, dir);
	dir[0] = '\0';
}

static void daemon_up(void)
{
	const char *tmp = getenv("TMPDIR");
	struct osd_iscsi_target_info *v = NULL;
	char hp[64];
	size_t n = 0;

	if (!OSD_TARGETD_PATH[0])
		return;
	snprintf(dir, sizeof(dir), "%s/osdrelproxy.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	atexit(daemon_down); /* a failed check exits without the teardown */
	target_port = osd_test_targetd_start(OSD_TARGETD_PATH, dir, &daemon_pid, START_WAIT_MS);
	ck_assert_msg(target_port != 0, "osd-targetd did not start");
	snprintf(hp, sizeof(hp), "127.0.0.1:%u", target_port);
	ck_assert_int_eq(osd_iscsi_discover(&v, &n, hp, NULL), 0);
	ck_assert_uint_ge(n, 1);
	snprintf(target, sizeof(target), "%s", v[0].name);
	free(v);
}

/* A device on @p port (the target's or the proxy's); *tp keeps the
 * transport's ops for its security token. */
static osd_dev *dev_open(unsigned port, int digests, struct osd_transport *tp)
{
	struct osd_iscsi_options o = OSD_ISCSI_OPTIONS_INIT;
	struct osd_dev_options d = OSD_DEV_OPTIONS_INIT;
	char url[512], err[256] = "";
	osd_dev *dev;
	int rc;

	o.header_digest = o.data_digest = digests ? OSD_ISCSI_DIGEST_CRC32C : OSD_ISCSI_DIGEST_NONE;
	o.errbuf = err;
	o.errbuf_len = sizeof(err);
	o.connect_timeout_ms = 5000;
	o.reconnect_attempts = 5;
	/* a garbled length leaves the receiver waiting for bytes that never
	 * come: the keepalive's unanswered NOP ends that in about 3 s */
	o.nop_interval_ms = 1000;
	o.nop_timeout_ms = 2000;
	o.max_recv_data_segment = 16384; /* several Data-In PDUs per read */
	snprintf(url, sizeof(url), "iscsi://127.0.0.1:%u/%s/0", port, target);
	rc = osd_iscsi_transport_new(tp, url, &o);
	ck_assert_msg(rc == 0, "%s: %s", url, err);
	d.osd_version = OSD_VERSION_2;
	d.timeout_ms = 20000; /* a stuck command fails instead of hanging the test */
	rc = osd_dev_open(&dev, tp, &d);
	if (rc)
		tp->ops->destroy(tp->impl);
	ck_assert_msg(rc == 0, "osd_dev_open: %d", rc);
	return dev;
}

static int run(osd_req *req)
{
	int rc = osd_req_execute(req);

	osd_req_free(req);
	return rc;
}

static struct fault_proxy *proxy_up(const struct fault_proxy_config *cfg, unsigned *port)
{
	struct fault_proxy *p = NULL;

	ck_assert_int_eq(fault_proxy_start(&p, cfg, port), 0);
	return p;
}

/* ---- the model: what each block and attribute may hold ---- */

/* Version v of a block or attribute is a pure function of (v, where):
 * version 0 is "never written" (zeros, or an empty attribute). */
static void content(uint8_t *p, size_t n, uint32_t v, uint32_t where)
{
	uint64_t x = seed() ^ ((uint64_t)v << 32) ^ where;

	if (!v) {
		memset(p, 0, n);
		return;
	}
	for (size_t i = 0; i < n; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		p[i] = (uint8_t)(x >> 24);
	}
}

/* The versions a block or attribute may hold: the last acknowledged one,
 * plus every later one whose command failed (it may or may not have run). */
struct cands {
	uint32_t v[MAXC];
	int n;
};

enum exist { EX_NO, EX_MAYBE, EX_YES };

struct model {
	enum exist exists[NOBJ];
	struct cands blk[NOBJ][NBLK], attr[NOBJ];
	uint32_t ver;
	uint64_t rng;
};

static void acked(struct cands *c, uint32_t v)
{
	c->v[0] = v;
	c->n = 1;
}

struct tally {
	unsigned iterations, ops, errors, retried, corrupt, losses;
	uint64_t max_op_ms;             /* slowest operation: a stall shows here */
	uint64_t bytes_verified;
};

/* Nothing written yet: every block and attribute holds version 0. */
static void model_init(struct model *m)
{
	memset(m, 0, sizeof(*m));
	m->rng = seed() | 1;
	for (int o = 0; o < NOBJ; o++) {
		acked(&m->attr[o], 0);
		for (int b = 0; b < NBLK; b++)
			acked(&m->blk[o][b], 0);
	}
}

static uint32_t rnd(struct model *m, uint32_t n)
{
	m->rng ^= m->rng << 13;
	m->rng ^= m->rng >> 7;
	m->rng ^= m->rng << 17;
	return (uint32_t)(m->rng % n);
}

static void unsure(struct cands *c, uint32_t v)
{
	if (c->n < MAXC)
		c->v[c->n++] = v;
}

/* The candidate @p got equals, or -1: the bytes are corrupt or lost. */
static int match(const struct cands *c, const uint8_t *got, size_t n, uint32_t where)
{
	uint8_t want[BLK];

	for (int i = c->n - 1; i >= 0; i--) {
		content(want, n, c->v[i], where);
		if (!memcmp(want, got, n))
			return i;
	}
	return -1;
}

/* For the report of a mismatch: which version the bytes are, or 0. */
static uint32_t which_version(const struct model *m, const uint8_t *got, size_t n,
			      uint32_t where)
{
	uint8_t want[BLK];

	for (uint32_t v = 1; v <= m->ver; v++) {
		content(want, n, v, where);
		if (!memcmp(want, got, n))
			return v;
	}
	return 0;
}

static struct osd_obj_id oid(int o)
{
	return (struct osd_obj_id){ PART, OBJ_BASE + (uint64_t)o };
}

static uint32_t where_blk(int o, int b)
{
	return (uint32_t)(o * NBLK + b);
}

#define WHERE_ATTR(o) (0x80000000u | (uint32_t)(o))

/* ---- operations through the proxy ---- */

/* CREATE with an explicit id is not resent by the transport; after a
 * failure the object may exist: creating it again tells (EEXIST). */
static int op_create(osd_dev *dev, struct model *m, int o)
{
	struct osd_obj_id id = oid(o);
	osd_req *req;
	int rc = osd_req_create(&req, dev, &id, 1);

	ck_assert_int_eq(rc, 0);
	rc = run(req);
	if (rc == 0 || (rc == -EEXIST && m->exists[o] == EX_MAYBE))
		m->exists[o] = EX_YES;
	else
		m->exists[o] = EX_MAYBE;
	return rc == -EEXIST && m->exists[o] == EX_YES ? 0 : rc;
}

static int op_write(osd_dev *dev, struct model *m, int o)
{
	static uint8_t buf[NBLK * BLK];
	int b = (int)rnd(m, NBLK), n = 1 + (int)rnd(m, rnd(m, 4) ? 4 : NBLK);
	uint32_t v = ++m->ver;
	struct osd_obj_id id = oid(o);
	struct iovec iov;
	osd_req *req;
	int rc;

	if (b + n > NBLK)
		n = NBLK - b;
	for (int i = 0; i < n; i++)
		if (m->blk[o][b + i].n >= MAXC)
			return 0; /* too uncertain already; a read will settle it */
	for (int i = 0; i < n; i++)
		content(buf + (size_t)i * BLK, BLK, v, where_blk(o, b + i));
	iov = (struct iovec){ buf, (size_t)n * BLK };
	ck_assert_int_eq(osd_req_write(&req, dev, &id, (uint64_t)b * BLK, &iov, 1), 0);
	rc = run(req);
	for (int i = 0; i < n; i++)
		(rc ? unsure : acked)(&m->blk[o][b + i], v);
	return rc;
}

/* Checks blocks [b, b + n) read into @p buf (@p got bytes valid, the rest
 * reads as zeros) and narrows each to what it holds. */
static void check_blocks(struct model *m, struct tally *t, int o, int b, int n, uint8_t *buf,
			 uint64_t got, int final)
{
	if (got < (uint64_t)n * BLK)
		memset(buf + got, 0, (size_t)n * BLK - got);
	for (int i = 0; i < n; i++) {
		struct cands *c = &m->blk[o][b + i];
		int k = match(c, buf + (size_t)i * BLK, BLK, where_blk(o, b + i));

		if (k < 0) {
			*(final ? &t->losses : &t->corrupt) += 1;
			fprintf(stderr, "object %d block %d: bytes (version %u) match none of %d "
				"candidates (last %u, newest %u)\n", o, b + i,
				which_version(m, buf + (size_t)i * BLK, BLK, where_blk(o, b + i)),
				c->n, c->v[c->n - 1], m->ver);
			continue;
		}
		acked(c, c->v[k]);
		t->bytes_verified += BLK;
	}
}

static int op_read(osd_dev *dev, struct model *m, struct tally *t, int o, int b, int n,
		   int final)
{
	static uint8_t buf[NBLK * BLK];
	struct osd_obj_id id = oid(o);
	struct iovec iov = { buf, (size_t)n * BLK };
	osd_req *req;
	int rc;

	memset(buf, 0xA5, sizeof(buf));
	ck_assert_int_eq(osd_req_read(&req, dev, &id, (uint64_t)b * BLK, &iov, 1), 0);
	rc = osd_req_execute(req);
	if (rc == 0)
		check_blocks(m, t, o, b, n, buf, osd_req_bytes_read(req), final);
	osd_req_free(req);
	return rc;
}

static int op_set_attr(osd_dev *dev, struct model *m, int o)
{
	uint8_t val[ATTR_LEN];
	uint32_t v = ++m->ver;
	struct osd_obj_id id = oid(o);
	int rc;

	if (m->attr[o].n >= MAXC)
		return 0;
	content(val, sizeof(val), v, WHERE_ATTR(o));
	rc = osd_set_attr(dev, &id, APP_PAGE, 1, val, sizeof(val));
	(rc ? unsure : acked)(&m->attr[o], v);
	return rc;
}

static int op_get_attr(osd_dev *dev, struct model *m, struct tally *t, int o, int final)
{
	uint8_t val[ATTR_LEN + 8];
	struct osd_obj_id id = oid(o);
	struct cands *c = &m->attr[o];
	size_t got = 0;
	int rc = osd_get_attr(dev, &id, APP_PAGE, 1, val, sizeof(val), &got), k;

	if (rc)
		return rc;
	if (got == 0)
		memset(val, 0, ATTR_LEN); /* not set: version 0 */
	k = got == 0 || got == ATTR_LEN ? match(c, val, ATTR_LEN, WHERE_ATTR(o)) : -1;
	if (k < 0) {
		*(final ? &t->losses : &t->corrupt) += 1;
		fprintf(stderr, "object %d: attribute (%zu bytes, version %u) matches none of %d "
			"candidates\n", o, got, which_version(m, val, ATTR_LEN, WHERE_ATTR(o)), c->n);
		return 0;
	}
	acked(c, c->v[k]);
	t->bytes_verified += ATTR_LEN;
	return 0;
}

/* ---- several commands in flight at once ---- */

#define BATCH 8

struct slot {
	osd_req *req;
	int kind;                       /* 'w' write, 'r' read, 'c' create */
	int o, b, done, rc;
	uint32_t v;
	uint8_t buf[BLK];
};

static void slot_done(osd_req *req, int result, void *arg)
{
	struct slot *sl = arg;

	(void)req;
	sl->done = 1;
	sl->rc = result;
}

/* Services the device until every slot completed (bounded). */
static void drain(osd_dev *dev, struct slot *sl, int n)
{
	uint64_t end = osd_test_now_ms() + 60000;

	for (int i = 0; i < n; i++) {
		while (!sl[i].done) {
			struct pollfd pfd = { .fd = osd_dev_get_fd(dev),
					      .events = (short)osd_dev_which_events(dev) };

			ck_assert_msg(osd_test_now_ms() < end, "commands in flight never ended");
			if (pfd.fd >= 0)
				poll(&pfd, 1, 50);
			osd_dev_service(dev, pfd.revents);
		}
	}
}

static void slot_submit(osd_dev *dev, struct model *m, struct slot *sl)
{
	struct osd_obj_id id = oid(sl->o);
	struct iovec iov = { sl->buf, BLK };

	if (sl->kind == 'c') {
		ck_assert_int_eq(osd_req_create(&sl->req, dev, &id, 1), 0);
	} else if (sl->kind == 'w') {
		sl->v = ++m->ver;
		content(sl->buf, BLK, sl->v, where_blk(sl->o, sl->b));
		ck_assert_int_eq(osd_req_write(&sl->req, dev, &id, (uint64_t)sl->b * BLK, &iov, 1), 0);
	} else {
		ck_assert_int_eq(osd_req_read(&sl->req, dev, &id, (uint64_t)sl->b * BLK, &iov, 1), 0);
	}
	ck_assert_int_eq(osd_req_submit(sl->req, slot_done, sl), 0);
}

/* Folds a completed slot into the model. */
static void slot_account(struct model *m, struct tally *t, struct slot *sl)
{
	if (sl->kind == 'c') {
		if (sl->rc == 0 || (sl->rc == -EEXIST && m->exists[sl->o] == EX_MAYBE))
			m->exists[sl->o] = EX_YES;
		else
			m->exists[sl->o] = EX_MAYBE;
	} else if (sl->kind == 'w') {
		(sl->rc ? unsure : acked)(&m->blk[sl->o][sl->b], sl->v);
	} else if (sl->rc == 0) {
		check_blocks(m, t, sl->o, sl->b, 1, sl->buf, osd_req_bytes_read(sl->req), 0);
	}
	ck_assert_int_ne(sl->rc, -ETIMEDOUT);
	t->ops++;
	if (sl->rc)
		t->errors++;
	osd_req_free(sl->req);
}

/* Writes and reads of distinct blocks of one object in flight together,
 * with a CREATE of another object among them when one is missing: the
 * transport must resend only what is safe around it. */
static void op_batch(osd_dev *dev, struct model *m, struct tally *t, int o)
{
	static struct slot sl[BATCH + 1];
	int n = 0, start = (int)rnd(m, NBLK), c = -1;

	for (int i = 0; i < NOBJ && c < 0; i++)
		if (m->exists[i] != EX_YES)
			c = i;
	for (int i = 0; i < BATCH; i++) {
		int b = (start + i) % NBLK;

		if (i == BATCH / 2 && c >= 0)
			sl[n++] = (struct slot){ .kind = 'c', .o = c };
		if (m->blk[o][b].n >= MAXC)
			continue;
		sl[n++] = (struct slot){ .kind = rnd(m, 2) ? 'w' : 'r', .o = o, .b = b };
	}
	for (int i = 0; i < n; i++)
		slot_submit(dev, m, &sl[i]);
	drain(dev, sl, n);
	for (int i = 0; i < n; i++)
		slot_account(m, t, &sl[i]);
}

/* One random operation on a random object: 0, -errno, or 1 when it was a
 * batch (counted per command already). */
static int one_op(osd_dev *dev, struct model *m, struct tally *t)
{
	int o = (int)rnd(m, NOBJ), r = (int)rnd(m, 100), b = (int)rnd(m, NBLK);

	if (m->exists[o] != EX_YES)
		return op_create(dev, m, o);
	if (r < 10) {
		op_batch(dev, m, t, o);
		return 1; /* counted per command */
	}
	if (r < 40)
		return op_write(dev, m, o);
	if (r < 70)
		return op_read(dev, m, t, o, b, 1 + (int)rnd(m, (uint32_t)(NBLK - b)), 0);
	if (r < 85)
		return op_set_attr(dev, m, o);
	return op_get_attr(dev, m, t, o, 0);
}

static void print_summary(const char *name, const struct tally *t,
			  const struct fault_proxy_stats *st)
{
	printf("%s: iterations=%u ops=%u pdus=%llu faults=%llu", name, t->iterations, t->ops,
	       (unsigned long long)st->pdus, (unsigned long long)fault_proxy_injected(st));
	for (int k = FAULT_PASS + 1; k < FAULT_KINDS; k++)
		printf(" %s=%llu", fault_kind_name((enum fault_kind)k),
		       (unsigned long long)st->faults[k]);
	printf(" reconnects=%u retried=%u errors=%u corrupt=%u bytes_verified=%llu losses=%u"
	       " max_op_ms=%llu\n", st->accepted - 1, t->retried, t->errors, t->corrupt,
	       (unsigned long long)t->bytes_verified, t->losses, (unsigned long long)t->max_op_ms);
	fflush(stdout);
}

static void make_partition(void)
{
	struct osd_transport tp;
	osd_dev *dev = dev_open(target_port, 1, &tp);
	osd_req *req;

	ck_assert_int_eq(osd_req_format(&req, dev, 0), 0);
	ck_assert_int_eq(run(req), 0);
	ck_assert_int_eq(osd_req_create_partition(&req, dev, PART), 0);
	ck_assert_int_eq(run(req), 0);
	osd_dev_close(dev);
}

/* Over a clean connection straight to the target: every object that was
 * acknowledged exists and holds one of its candidate versions. */
static void verify_all(struct model *m, struct tally *t)
{
	struct osd_transport tp;
	osd_dev *dev = dev_open(target_port, 1, &tp);

	for (int o = 0; o < NOBJ; o++) {
		if (m->exists[o] == EX_NO)
			continue;
		if (m->exists[o] == EX_MAYBE && op_create(dev, m, o) == 0)
			continue; /* never existed: nothing was acknowledged on it */
		ck_assert_int_eq(op_read(dev, m, t, o, 0, NBLK, 1), 0);
		ck_assert_int_eq(op_get_attr(dev, m, t, o, 1), 0);
	}
	osd_dev_close(dev);
}

/* The workload with header and data digests on: _i selects the seed. */
START_TEST(workload_digests_on)
{
	struct fault_proxy_config cfg = {
		.target_host = "127.0.0.1", .max_delay_ms = 200,
		.dirs = FAULT_DIR_TO_TARGET | FAULT_DIR_TO_INITIATOR,
		.header_digest = 1, .data_digest = 1,
		.weight = { [FAULT_PASS] = 400, [FAULT_DELAY] = 8, [FAULT_DROP] = 3,
			    [FAULT_TRUNCATE] = 3, [FAULT_CORRUPT_HDR] = 3, [FAULT_CORRUPT_DATA] = 3,
			    [FAULT_CLOSE] = 3 },
	};
	unsigned iters = scaled(1500, 200), pport;
	static struct model m;
	struct tally t = { 0 };
	struct fault_proxy_stats st, before;
	struct fault_proxy *p;
	struct osd_transport tp;
	uint8_t tok0[8], tok[8];
	osd_dev *dev;

	if (!OSD_TARGETD_PATH[0])
		return;
	cfg.target_port = target_port;
	cfg.seed = seed() + (uint64_t)_i;
	model_init(&m);
	m.rng += (uint64_t)_i << 1;
	make_partition();
	p = proxy_up(&cfg, &pport);
	fault_proxy_enable(p, 0); /* the login and version probe go through clean */
	dev = dev_open(pport, 1, &tp);
	tp.ops->security_token(tp.impl, tok0, sizeof(tok0));
	fault_proxy_enable(p, 1);
	for (t.iterations = 0; t.iterations < iters; t.iterations++) {
		uint64_t t0 = osd_test_now_ms();
		int rc;

		fault_proxy_stats(p, &before);
		rc = one_op(dev, &m, &t);
		fault_proxy_stats(p, &st);
		if (osd_test_now_ms() - t0 > t.max_op_ms)
			t.max_op_ms = osd_test_now_ms() - t0;
		/* the keepalive bounds every stall to ~3 s: a 20 s wait is a hang
		 * (and a command still in flight would upset the model) */
		ck_assert_int_ne(rc, -ETIMEDOUT);
		if (rc == 1)
			continue;
		t.ops++;
		if (rc)
			t.errors++;
		else if (st.accepted > before.accepted)
			t.retried++; /* a reconnect happened during it, yet it succeeded */
	}
	/* faults off: the initiator is connected again and works */
	fault_proxy_enable(p, 0);
	for (int o = 0; o < NOBJ; o++)
		if (m.exists[o] == EX_YES)
			ck_assert_int_eq(op_read(dev, &m, &t, o, 0, NBLK, 0), 0);
	fault_proxy_stats(p, &st);
	tp.ops->security_token(tp.impl, tok, sizeof(tok));
	osd_dev_close(dev);
	verify_all(&m, &t);
	print_summary("proxy workload (digests on)", &t, &st);
	fault_proxy_stop(p);
	ck_assert_uint_gt(fault_proxy_closing(&st), 0);
	ck_assert_uint_ge(st.accepted, 1 + fault_proxy_closing(&st)); /* it reconnected each time */
	ck_assert_msg(memcmp(tok0, tok, sizeof(tok)) != 0, "no new session after the faults");
	ck_assert_uint_eq(t.corrupt, 0);
	ck_assert_uint_eq(t.losses, 0);
	ck_assert_uint_gt(t.bytes_verified, 0);
}
END_TEST

/* Creates @p id holding @p data (faults off). */
static void put_object(osd_dev *dev, const struct osd_obj_id *id, const struct iovec *data)
{
	osd_req *req;

	ck_assert_int_eq(osd_req_create(&req, dev, id, 1), 0);
	ck_assert_int_eq(run(req), 0);
	ck_assert_int_eq(osd_req_write(&req, dev, id, 0, data, 1), 0);
	ck_assert_int_eq(run(req), 0);
}

/* Reads of one object while the proxy corrupts Data-In segments only.
 * Returns how many reads succeeded with wrong bytes ("silent"). */
static unsigned corrupt_reads(int digests, struct tally *t, struct fault_proxy_stats *st)
{
	struct fault_proxy_config cfg = {
		.target_host = "127.0.0.1", .dirs = FAULT_DIR_TO_INITIATOR,
		.header_digest = digests, .data_digest = digests, .data_in_only = 1,
		.weight = { [FAULT_PASS] = 6, [FAULT_CORRUPT_DATA] = 1 },
	};
	static uint8_t data[NBLK * BLK], back[NBLK * BLK];
	struct iovec out = { data, sizeof(data) }, in = { back, sizeof(back) };
	struct osd_obj_id id = oid(0);
	unsigned reads = scaled(150, 20), silent = 0, pport;
	struct fault_proxy *p;
	struct osd_transport tp;
	osd_dev *dev;
	osd_req *req;

	cfg.target_port = target_port;
	cfg.seed = seed();
	p = proxy_up(&cfg, &pport);
	fault_proxy_enable(p, 0);
	dev = dev_open(pport, digests, &tp);
	content(data, sizeof(data), 1, 7);
	put_object(dev, &id, &out);
	fault_proxy_enable(p, 1);
	for (t->iterations = 0; t->iterations < reads; t->iterations++, t->ops++) {
		int rc;

		memset(back, 0, sizeof(back));
		ck_assert_int_eq(osd_req_read(&req, dev, &id, 0, &in, 1), 0);
		rc = osd_req_execute(req);
		if (rc)
			t->errors++;
		else if (osd_req_bytes_read(req) != sizeof(back) || memcmp(back, data, sizeof(data)))
			silent++;
		else
			t->bytes_verified += sizeof(back);
		osd_req_free(req);
	}
	fault_proxy_stats(p, st);
	osd_dev_close(dev);
	fault_proxy_stop(p);
	return silent;
}

/* Without digests a flipped data byte reaches the caller unnoticed: TCP's
 * checksum is all there is, and the proxy corrupts after it. This is what
 * the digests are for; the same schedule with digests on loses nothing. */
START_TEST(corruption_needs_digests)
{
	struct fault_proxy_stats st_off, st_on;
	struct tally off = { 0 }, on = { 0 };
	unsigned silent_off, silent_on;

	if (!OSD_TARGETD_PATH[0])
		return;
	make_partition();
	silent_off = corrupt_reads(0, &off, &st_off);
	off.corrupt = silent_off;
	print_summary("data corruption, digests off", &off, &st_off);
	make_partition();
	silent_on = corrupt_reads(1, &on, &st_on);
	on.corrupt = silent_on;
	print_summary("data corruption, digests on", &on, &st_on);
	ck_assert_uint_gt(st_off.faults[FAULT_CORRUPT_DATA], 0);
	ck_assert_uint_gt(silent_off, 0); /* documents the hazard */
	ck_assert_uint_gt(st_on.faults[FAULT_CORRUPT_DATA], 0);
	ck_assert_uint_eq(silent_on, 0);
	/* caught corruptions dropped the connection; the reads were resent */
	ck_assert_uint_gt(st_on.accepted, 1);
	ck_assert_uint_eq(on.errors, 0);
}
END_TEST

/* Re-login under faults: a few failed logins are retried; more than
 * reconnect_attempts of them end the transport with an error. */
START_TEST(relogin_fails)
{
	struct fault_proxy_config cfg = { .target_host = "127.0.0.1", .header_digest = 1,
					  .data_digest = 1 };
	static uint8_t data[BLK], back[BLK];
	struct iovec out = { data, sizeof(data) }, in = { back, sizeof(back) };
	struct osd_obj_id id = oid(0);
	struct fault_proxy_stats st;
	struct fault_proxy *p;
	struct osd_transport tp;
	unsigned pport;
	osd_dev *dev;
	osd_req *req;

	if (!OSD_TARGETD_PATH[0])
		return;
	cfg.target_port = target_port;
	make_partition();
	p = proxy_up(&cfg, &pport);
	dev = dev_open(pport, 1, &tp);
	content(data, sizeof(data), 3, 5);
	put_object(dev, &id, &out);
	/* 3 failed logins, then the 4th of 5 allowed works: the read succeeds */
	fault_proxy_fail_logins(p, 3);
	ck_assert_int_eq(fault_proxy_close_all(p), 0);
	ck_assert_int_eq(osd_req_read(&req, dev, &id, 0, &in, 1), 0);
	ck_assert_int_eq(run(req), 0);
	ck_assert_mem_eq(back, data, sizeof(data));
	fault_proxy_stats(p, &st);
	ck_assert_uint_eq(st.logins_failed, 3);
	ck_assert_uint_eq(st.accepted, 1 + 3 + 1);
	/* every attempt fails: the command fails, and so does the next one */
	fault_proxy_fail_logins(p, 1000);
	ck_assert_int_eq(fault_proxy_close_all(p), 0);
	ck_assert_int_eq(osd_req_read(&req, dev, &id, 0, &in, 1), 0);
	ck_assert_int_lt(run(req), 0);
	ck_assert_int_eq(osd_req_read(&req, dev, &id, 0, &in, 1), 0);
	ck_assert_int_lt(run(req), 0);
	fault_proxy_stats(p, &st);
	ck_assert_uint_eq(st.logins_failed, 3 + 5); /* reconnect_attempts, then it gave up */
	printf("relogin: logins failed=%u, connections=%u\n", st.logins_failed, st.accepted);
	osd_dev_close(dev);
	fault_proxy_stop(p);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("rel_proxy");
	TCase *tc = tcase_create("proxy");

	tcase_add_checked_fixture(tc, daemon_up, daemon_down);
	tcase_set_timeout(tc, 300);
	tcase_add_loop_test(tc, workload_digests_on, 0, 2); /* two schedules */
	tcase_add_test(tc, corruption_needs_digests);
	tcase_add_test(tc, relogin_fails);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr;
	int failed;

	if (!OSD_TARGETD_PATH[0] || access(OSD_TARGETD_PATH, X_OK)) {
		fprintf(stderr, "osd-targetd not built: skipped\n");
		return 77;
	}
	sr = srunner_create(suite());
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
