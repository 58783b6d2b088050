/*
 * osd-bench --iscsi: the software target served over iSCSI on 127.0.0.1 by
 * an in-process server (osdtarget/iscsi, its own threads), driven by
 * libosd's iSCSI initiator transport, next to the same target through the
 * in-process loopback transport. Both devices run OSD-2 with CAPKEY security
 * (one OSD-wide credential), so the ratio iSCSI/loopback isolates the cost of
 * the iSCSI data path.
 *
 * Requests in flight come from the asynchronous API on one thread:
 * osd_req_submit() plus a poll() loop on osd_dev_get_fd() /
 * osd_dev_which_events() / osd_dev_service(). The loopback transport is
 * inline (a submit completes before it returns), so its "32 in flight" rows
 * are the same loop with one request at a time: the figure an application
 * gets from it either way.
 *
 * Every figure is the median of --runs runs. The writes are not flushed:
 * the point is the transport, not the disk (osd-bench --target measures
 * durable writes).
 */
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <osd/osd.h>
#include <osd/iscsi.h>
#include <osdtarget/target.h>
#include <osdtarget/iscsi.h>
#include "bench.h"

#define MODE "--iscsi" /* for bench_die() messages */
#define MAX_RUNS 21
#define MAX_DEPTH 32       /* the target's CmdSN window: no more can be in flight */
#define SMALL 4096u
#define BIG (1u << 20)
#define SMALL_SPAN 4096u /* 4 KiB blocks of the object the small I/O covers (16 MiB) */
#define SEQ_DEPTH 4      /* 1 MiB requests in flight in the sequential rows */

enum { T_LOOP, T_ISCSI, NUM_T };
enum { R_W1, R_R1, R_W32, R_R32, R_SEQW, R_SEQR, NUM_R };

struct side {
	osd_dev *dev;
	struct osd_obj_id obj;
};

struct bench {
	char dir[512];
	osd_target *tgt;
	osd_target_iscsi *srv;
	struct side side[NUM_T];
	int runs, digests;
	unsigned depth;   /* requests in flight in the "deep" 4 KiB rows */
	unsigned workers; /* the server's worker threads, 0 = its default */
	unsigned small_ops, big_mib;
	uint8_t *small, *big;
};

/* One timed batch: n requests, at most depth at a time. */
struct batch {
	struct bench *b;
	struct side *s;
	int write, failed;
	unsigned n, issued, done, inflight, depth;
	size_t len;
	unsigned span; /* offsets wrap after this many blocks of len */
};

static void on_done(osd_req *req, int result, void *p)
{
	struct batch *bt = p;

	if (result && !bt->failed)
		bt->failed = result;
	osd_req_free(req);
	bt->inflight--;
	bt->done++;
}

static void submit_one(struct batch *bt)
{
	struct iovec iov = { bt->len == SMALL ? bt->b->small : bt->b->big, bt->len };
	uint64_t off = (uint64_t)(bt->issued % bt->span) * bt->len;
	osd_req *req;
	int rc = bt->write ? osd_req_write(&req, bt->s->dev, &bt->s->obj, off, &iov, 1)
			   : osd_req_read(&req, bt->s->dev, &bt->s->obj, off, &iov, 1);

	if (rc)
		bench_die(MODE, "build request", rc, bt->s->dev);
	bt->issued++;
	bt->inflight++;
	rc = osd_req_submit(req, on_done, bt);
	if (rc) {
		osd_req_free(req);
		bench_die(MODE, "submit", rc, bt->s->dev);
	}
}

/* Keep bt->depth requests in flight until bt->n completed. Reads all land
 * in the same buffer: the bytes are not looked at, only their transfer. */
static void drive(struct batch *bt)
{
	osd_dev *dev = bt->s->dev;

	while (bt->done < bt->n) {
		while (bt->issued < bt->n && bt->inflight < bt->depth)
			submit_one(bt);
		int fd = osd_dev_get_fd(dev); /* changes after a reconnect */

		if (fd < 0 || bt->inflight == 0)
			continue;
		struct pollfd pfd = { fd, (short)osd_dev_which_events(dev), 0 };
		int n = poll(&pfd, 1, 1000);

		if (n < 0 && errno != EINTR)
			bench_die(MODE, "poll", -errno, NULL);
		int rc = osd_dev_service(dev, n > 0 ? pfd.revents : 0);

		if (rc)
			bench_die(MODE, "service", rc, dev);
	}
	if (bt->failed)
		bench_die(MODE, bt->write ? "write" : "read", bt->failed, dev);
}

/* Returns ops/s for the small rows and MiB/s for the 1 MiB ones. */
static double run(struct bench *b, struct side *s, int row)
{
	struct batch bt = { .b = b, .s = s };
	uint64_t t0;
	double sec;

	bt.write = row == R_W1 || row == R_W32 || row == R_SEQW;
	if (row == R_SEQW || row == R_SEQR) {
		bt.len = BIG;
		bt.n = bt.span = b->big_mib;
		bt.depth = SEQ_DEPTH;
	} else {
		bt.len = SMALL;
		bt.n = b->small_ops;
		bt.span = SMALL_SPAN;
		bt.depth = row == R_W32 || row == R_R32 ? b->depth : 1;
	}
	t0 = bench_now_ns();
	drive(&bt);
	sec = (double)(bench_now_ns() - t0) / 1e9;
	return bt.len == BIG ? b->big_mib / sec : b->small_ops / sec;
}

/* Open a device on tp with the root credential, create one object filled
 * with the 16 MiB the small I/O covers and the 1 MiB runs' span. */
static void open_side(struct bench *b, struct side *s, struct osd_transport *tp,
		      const struct osd_credential *cr, uint64_t pid)
{
	struct osd_dev_options o = OSD_DEV_OPTIONS_INIT;
	struct osd_obj_id want = { pid, 0 };
	osd_req *req;
	int rc;

	o.osd_version = OSD_VERSION_2;
	o.security = OSD_SEC_CAPKEY;
	o.cred_source = bench_no_credential;
	if ((rc = osd_dev_open(&s->dev, tp, &o))) {
		tp->ops->destroy(tp->impl);
		bench_die(MODE, "device", rc, NULL);
	}
	if ((rc = osd_dev_add_credential(s->dev, cr)))
		bench_die(MODE, "credential", rc, s->dev);
	if ((rc = osd_req_create(&req, s->dev, &want, 1)))
		bench_die(MODE, "create", rc, s->dev);
	if ((rc = osd_req_execute(req)) || (rc = osd_req_created_id(req, &s->obj)))
		bench_die(MODE, "create", rc, s->dev);
	osd_req_free(req);

	struct batch fill = { .b = b, .s = s, .write = 1, .len = BIG, .depth = SEQ_DEPTH };

	fill.n = fill.span = b->big_mib > 16 ? b->big_mib : 16;
	drive(&fill);
}

static void setup(struct bench *b)
{
	struct osd_target_options to = OSD_TARGET_OPTIONS_INIT;
	struct osd_target_iscsi_options so = OSD_TARGET_ISCSI_OPTIONS_INIT;
	struct osd_iscsi_options io = OSD_ISCSI_OPTIONS_INIT;
	struct osd_obj_id part;
	struct osd_credential cr;
	struct osd_transport tp;
	char url[128], err[256] = "";
	osd_req *req;
	int rc;

	rc = osd_target_open(&b->tgt, b->dir, &to);
	if (rc == 0)
		rc = osd_target_set_root_key(b->tgt, bench_root_key);
	if (rc)
		bench_die(MODE, "target", rc, NULL);
	rc = bench_root_credential(b->tgt, &cr);
	if (rc)
		bench_die(MODE, "credential", rc, NULL);

	/* Format and make the partition through the loopback device. */
	if ((rc = osd_target_loopback(b->tgt, &tp)))
		bench_die(MODE, "loopback", rc, NULL);
	struct osd_dev_options o = OSD_DEV_OPTIONS_INIT;
	osd_dev *adm;

	o.osd_version = OSD_VERSION_2;
	o.security = OSD_SEC_CAPKEY;
	o.cred_source = bench_no_credential;
	if ((rc = osd_dev_open(&adm, &tp, &o)))
		bench_die(MODE, "device", rc, NULL);
	if ((rc = osd_dev_add_credential(adm, &cr)))
		bench_die(MODE, "credential", rc, adm);
	if ((rc = osd_req_format(&req, adm, 0)))
		bench_die(MODE, "format", rc, adm);
	bench_exec_or_die(MODE, adm, req, "format");
	osd_target_set_root_key(b->tgt, bench_root_key);
	if ((rc = osd_req_create_partition(&req, adm, 0)))
		bench_die(MODE, "create partition", rc, adm);
	if ((rc = osd_req_execute(req)) || (rc = osd_req_created_id(req, &part)))
		bench_die(MODE, "create partition", rc, adm);
	osd_req_free(req);
	osd_dev_close(adm);

	/* The iSCSI server on a free loopback port, in its own threads. */
	so.address = "127.0.0.1";
	so.port = 0;
	so.allow_digests = 1;
	so.workers = b->workers;
	if ((rc = osd_target_iscsi_create(&b->srv, &b->tgt, 1, &so)) ||
	    (rc = osd_target_iscsi_start(b->srv)))
		bench_die(MODE, "iSCSI server", rc, NULL);
	snprintf(url, sizeof(url), "iscsi://127.0.0.1:%d/" OSD_TARGET_ISCSI_DEFAULT_NAME "/0",
		 osd_target_iscsi_port(b->srv));
	io.header_digest = io.data_digest = b->digests ? OSD_ISCSI_DIGEST_CRC32C : OSD_ISCSI_DIGEST_NONE;
	io.max_inflight = MAX_DEPTH;
	io.errbuf = err;
	io.errbuf_len = sizeof(err);
	if ((rc = osd_iscsi_transport_new(&tp, url, &io))) {
		fprintf(stderr, "osd-bench --iscsi: %s: %s\n", url, *err ? err : strerror(-rc));
		exit(1);
	}
	open_side(b, &b->side[T_ISCSI], &tp, &cr, part.partition);
	if ((rc = osd_target_loopback(b->tgt, &tp)))
		bench_die(MODE, "loopback", rc, NULL);
	open_side(b, &b->side[T_LOOP], &tp, &cr, part.partition);
}

static void teardown(struct bench *b)
{
	for (int t = 0; t < NUM_T; t++)
		osd_dev_close(b->side[t].dev);
	osd_target_iscsi_free(b->srv);
	osd_target_close(b->tgt);
	bench_rmtree(b->dir);
}

static void usage(FILE *f)
{
	fprintf(f, "usage: osd-bench --iscsi [--dir DIR] [--runs N] [--quick] [--digests]\n"
		   "                        [--depth N] [--workers N]\n"
		   "  --dir DIR   a fresh store is made in a temporary directory under DIR\n"
		   "              (default $TMPDIR or /tmp) and removed\n"
		   "  --runs N    runs per figure, the median is printed (default 5)\n"
		   "  --quick     small counts (a few seconds)\n"
		   "  --digests   HeaderDigest and DataDigest CRC32C (default None)\n"
		   "  --depth N   4 KiB requests in flight in the deep rows (1..32, default 32)\n"
		   "  --workers N the server's threads executing commands (1..64, default:\n"
		   "              the server's, 4 per CPU and at least 8)\n");
}

static const struct {
	const char *what, *unit;
	double goal;
} rows[NUM_R] = {
	[R_W1] = { "4 KiB WRITE, 1 in flight", "ops/s", 0 },
	[R_R1] = { "4 KiB READ, 1 in flight", "ops/s", 0 },
	[R_W32] = { "4 KiB WRITE, %u in flight", "ops/s", 40000 },
	[R_R32] = { "4 KiB READ, %u in flight", "ops/s", 40000 },
	[R_SEQW] = { "1 MiB sequential WRITE", "MiB/s", 1024 },
	[R_SEQR] = { "1 MiB sequential READ", "MiB/s", 1024 },
};

static void report(struct bench *b, double v[NUM_T][NUM_R][MAX_RUNS], const char *base)
{
	printf("osd-bench --iscsi: software target in %s, OSD-2, CAPKEY\n", base);
	printf("  iSCSI: in-process server on 127.0.0.1, libosd initiator, digests %s\n",
	       b->digests ? "CRC32C (header+data)" : "None");
	printf("  async API (osd_req_submit + poll/osd_dev_service) on one thread;\n"
	       "  1 MiB rows keep %d requests in flight; writes not flushed\n", SEQ_DEPTH);
	printf("  median of %d runs: %u 4 KiB ops and %u MiB per run\n\n", b->runs, b->small_ops,
	       b->big_mib);
	printf("  %-27s %12s %12s %7s  %s\n", "", "loopback", "iSCSI", "ratio", "goal (iSCSI)");
	for (int r = 0; r < NUM_R; r++) {
		double l = bench_median(v[T_LOOP][r], b->runs), i = bench_median(v[T_ISCSI][r], b->runs);
		char goal[48] = "", what[40];

		if (rows[r].goal > 0)
			snprintf(goal, sizeof(goal), ">= %.0f %s", rows[r].goal,
				 i >= rows[r].goal ? "met" : "not met");
		/* the deep rows' goal is for 32 in flight */
		if (r == R_W32 || r == R_R32)
			snprintf(what, sizeof(what), rows[r].what, b->depth);
		else
			snprintf(what, sizeof(what), "%s", rows[r].what);
		if (rows[r].goal > 0 && (r == R_W32 || r == R_R32) && b->depth != MAX_DEPTH)
			goal[0] = 0;
		printf("  %-27s %12.0f %12.0f %7.2f  %s %s\n", what, l, i,
		       l > 0 ? i / l : 0.0, rows[r].unit, goal);
	}
}

int osd_bench_iscsi(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "dir", required_argument, NULL, 'd' },
		{ "runs", required_argument, NULL, 'r' },
		{ "quick", no_argument, NULL, 'q' },
		{ "digests", no_argument, NULL, 'g' },
		{ "depth", required_argument, NULL, 'D' },
		{ "workers", required_argument, NULL, 'w' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	static double v[NUM_T][NUM_R][MAX_RUNS];
	struct bench b = { .runs = 5, .small_ops = 20000, .big_mib = 256, .depth = MAX_DEPTH };
	const char *base = getenv("TMPDIR");
	unsigned runs;
	int c, rc;

	if (!base || !*base)
		base = "/tmp";
	optind = 1;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'd': base = optarg; break;
		case 'r':
			if (bench_parse_count(MODE, optarg, MAX_RUNS, &runs) < 0)
				return 2;
			b.runs = (int)runs;
			break;
		case 'q':
			b.small_ops = 2000;
			b.big_mib = 32;
			break;
		case 'g': b.digests = 1; break;
		case 'D':
			if (bench_parse_count(MODE " --depth", optarg, MAX_DEPTH, &b.depth) < 0)
				return 2;
			break;
		case 'w':
			if (bench_parse_count(MODE " --workers", optarg, 64, &b.workers) < 0)
				return 2;
			break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind < argc || b.runs < 1 || b.runs > MAX_RUNS) {
		usage(stderr);
		return 2;
	}
	if ((rc = bench_mkdtemp(base, "osd-bench", b.dir, sizeof(b.dir))))
		bench_die(MODE, base, rc, NULL);
	b.small = malloc(SMALL);
	b.big = malloc(BIG);
	if (!b.small || !b.big)
		bench_die(MODE, "memory", -ENOMEM, NULL);
	for (unsigned i = 0; i < BIG; i++)
		b.big[i] = (uint8_t)(i * 131 + 7);
	memcpy(b.small, b.big, SMALL);
	setup(&b);
	for (int r = 0; r < b.runs; r++)
		for (int row = 0; row < NUM_R; row++)
			for (int t = 0; t < NUM_T; t++)
				v[t][row][r] = run(&b, &b.side[t], row);
	teardown(&b);
	report(&b, v, base);
	free(b.small);
	free(b.big);
	return 0;
}
