/*
 * osd-bench --target: the software target in process through the loopback
 * transport, with CAPKEY security on (one OSD-wide credential signed with the
 * root key, cached by the device).
 *
 * Every figure is the median of --runs runs. Durability: each run ends with
 * FLUSH OSD, included in its time; the baseline writes the same bytes with
 * pwrite() and one fdatasync() per run to a file in the same directory.
 * --checksum-cost runs the 1 MiB WRITE and READ also on a second store made
 * without data checksums and the 1 MiB READ on a third one opened with
 * verify_reads (every READ checked: no read trust), alternating run by run,
 * and prints the cost. The
 * 1 MiB runs use an object of their own in each store, so both objects have
 * the same history (4 KiB writes leave small page-cache folios behind, which
 * slow later 1 MiB I/O of that range on filesystems with large folios).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <osd/osd.h>
#include <osdtarget/target.h>
#include "bench.h"

#define MODE "--target" /* for bench_die() messages */
#define MAX_RUNS 21
#define SMALL 4096u
#define BIG (1u << 20)

struct bench {
	char dir[512];
	osd_target *tgt;
	osd_dev *dev;
	uint64_t pid;
	struct osd_obj_id obj;  /* GET ATTRIBUTES and 4 KiB I/O */
	struct osd_obj_id big;  /* 1 MiB I/O only: the same history in both stores */
	int runs;
	unsigned creates, getattrs, small_ops, big_mib;
	int no_checksums;       /* the store keeps no data checksums */
	int verify_reads;       /* the store verifies every READ */
};

static double secs(uint64_t t0)
{
	return (double)(bench_now_ns() - t0) / 1e9;
}

static void flush_all(struct bench *b)
{
	osd_req *req;

	if (osd_req_flush_osd(&req, b->dev, OSD_FLUSH_RANGE))
		bench_die(MODE, "flush", -EINVAL, b->dev);
	bench_exec_or_die(MODE, b->dev, req, "flush");
}

static double run_creates(struct bench *b)
{
	struct osd_obj_id want = { b->pid, 0 };
	uint64_t t0 = bench_now_ns();

	for (unsigned i = 0; i < b->creates; i++) {
		osd_req *req;

		if (osd_req_create(&req, b->dev, &want, 1))
			bench_die(MODE, "create", -EINVAL, b->dev);
		bench_exec_or_die(MODE, b->dev, req, "create");
	}
	flush_all(b);
	return b->creates / secs(t0);
}

static double run_getattr(struct bench *b, int page_mode)
{
	uint64_t t0 = bench_now_ns();

	for (unsigned i = 0; i < b->getattrs; i++) {
		osd_req *req;
		int rc = osd_req_get_attributes(&req, b->dev, &b->obj);

		if (rc == 0)
			rc = page_mode ? osd_req_get_page(req, OSD_APAGE_USER_BASE + OSD_APAGE_TIMESTAMPS, 256)
				       : osd_req_add_get_attr(req, OSD_APAGE_USER_BASE + OSD_APAGE_INFORMATION,
							      OSD_ATTR_UI_LOGICAL_LENGTH);
		if (rc)
			bench_die(MODE, "get attributes", rc, b->dev);
		bench_exec_or_die(MODE, b->dev, req, "get attributes");
	}
	return b->getattrs / secs(t0);
}

static double run_small(struct bench *b, int write, uint8_t *buf)
{
	struct iovec iov = { buf, SMALL };
	uint64_t t0 = bench_now_ns();

	for (unsigned i = 0; i < b->small_ops; i++) {
		uint64_t off = (uint64_t)(i % 4096u) * SMALL;
		osd_req *req;
		int rc = write ? osd_req_write(&req, b->dev, &b->obj, off, &iov, 1)
			       : osd_req_read(&req, b->dev, &b->obj, off, &iov, 1);

		if (rc)
			bench_die(MODE, "4 KiB I/O", rc, b->dev);
		bench_exec_or_die(MODE, b->dev, req, write ? "write" : "read");
	}
	if (write)
		flush_all(b);
	return b->small_ops / secs(t0);
}

static double run_big(struct bench *b, int write, uint8_t *buf)
{
	struct iovec iov = { buf, BIG };
	uint64_t t0 = bench_now_ns();

	for (unsigned i = 0; i < b->big_mib; i++) {
		osd_req *req;
		int rc = write ? osd_req_write(&req, b->dev, &b->big, (uint64_t)i * BIG, &iov, 1)
			       : osd_req_read(&req, b->dev, &b->big, (uint64_t)i * BIG, &iov, 1);

		if (rc)
			bench_die(MODE, "1 MiB I/O", rc, b->dev);
		bench_exec_or_die(MODE, b->dev, req, write ? "write" : "read");
	}
	if (write)
		flush_all(b);
	return b->big_mib / secs(t0);
}

/* The same bytes with pwrite() + one fdatasync(), same directory. The file
 * is written once before the runs, so, like the OSD object after the first
 * run, each run overwrites allocated blocks. */
static int baseline_open(struct bench *b, uint8_t *buf)
{
	char path[600];
	int fd;

	snprintf(path, sizeof(path), "%s/baseline.dat", b->dir);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0)
		bench_die(MODE, "baseline file", -errno, NULL);
	unlink(path);
	for (unsigned i = 0; i < b->big_mib; i++)
		if (pwrite(fd, buf, BIG, (off_t)i * BIG) != (ssize_t)BIG)
			bench_die(MODE, "baseline pwrite", -errno, NULL);
	if (fdatasync(fd))
		bench_die(MODE, "baseline fdatasync", -errno, NULL);
	return fd;
}

static double run_baseline(struct bench *b, int fd, uint8_t *buf)
{
	uint64_t t0 = bench_now_ns();

	for (unsigned i = 0; i < b->big_mib; i++)
		if (pwrite(fd, buf, BIG, (off_t)i * BIG) != (ssize_t)BIG)
			bench_die(MODE, "baseline pwrite", -errno, NULL);
	if (fdatasync(fd))
		bench_die(MODE, "baseline fdatasync", -errno, NULL);
	return b->big_mib / secs(t0);
}

static void setup(struct bench *b)
{
	struct osd_target_options to = OSD_TARGET_OPTIONS_INIT;
	struct osd_dev_options o = OSD_DEV_OPTIONS_INIT;
	struct osd_obj_id want;
	struct osd_credential cr;
	struct osd_transport tp;
	osd_req *req;
	int rc;

	to.no_checksums = b->no_checksums;
	to.verify_reads = b->verify_reads;
	rc = osd_target_open(&b->tgt, b->dir, &to);
	if (rc == 0)
		rc = osd_target_set_root_key(b->tgt, bench_root_key);
	if (rc == 0)
		rc = osd_target_loopback(b->tgt, &tp);
	if (rc)
		bench_die(MODE, "target", rc, NULL);
	o.osd_version = OSD_VERSION_2;
	o.security = OSD_SEC_CAPKEY;
	o.cred_source = bench_no_credential;
	rc = osd_dev_open(&b->dev, &tp, &o);
	if (rc)
		bench_die(MODE, "device", rc, NULL);
	rc = bench_root_credential(b->tgt, &cr);
	if (rc == 0)
		rc = osd_dev_add_credential(b->dev, &cr);
	if (rc)
		bench_die(MODE, "credential", rc, b->dev);
	if ((rc = osd_req_format(&req, b->dev, 0)))
		bench_die(MODE, "format", rc, b->dev);
	bench_exec_or_die(MODE, b->dev, req, "format");
	osd_target_set_root_key(b->tgt, bench_root_key);
	if ((rc = osd_req_create_partition(&req, b->dev, 0)))
		bench_die(MODE, "create partition", rc, b->dev);
	if ((rc = osd_req_execute(req)) || (rc = osd_req_created_id(req, &want)))
		bench_die(MODE, "create partition", rc, b->dev);
	osd_req_free(req);
	b->pid = want.partition;
	want.id = 0;
	if ((rc = osd_req_create(&req, b->dev, &want, 1)))
		bench_die(MODE, "create", rc, b->dev);
	if ((rc = osd_req_execute(req)) || (rc = osd_req_created_id(req, &b->obj)))
		bench_die(MODE, "create", rc, b->dev);
	osd_req_free(req);
	if ((rc = osd_req_create(&req, b->dev, &want, 1)))
		bench_die(MODE, "create", rc, b->dev);
	if ((rc = osd_req_execute(req)) || (rc = osd_req_created_id(req, &b->big)))
		bench_die(MODE, "create", rc, b->dev);
	osd_req_free(req);
}

static void usage(FILE *f)
{
	fprintf(f, "usage: osd-bench --target [--dir DIR] [--runs N] [--mib N] [--quick]\n"
		   "                          [--checksum-cost]\n"
		   "  --dir DIR   disk to test: a fresh store is made in a temporary\n"
		   "              directory under DIR (default $TMPDIR or /tmp) and removed\n"
		   "  --runs N    runs per figure, the median is printed (default 5)\n"
		   "  --mib N     MiB written and read per 1 MiB run (default 128)\n"
		   "  --quick     small counts (a smoke test)\n"
		   "  --checksum-cost  also run the 1 MiB WRITE and READ on a store made\n"
		   "              without data checksums, alternating runs, and print the cost\n"
		   "              of checksums, for READ also with every READ verified\n"
		   "              (--verify-reads; by default verified blocks are trusted\n"
		   "              while their pages stay in the page cache)\n");
}

static void row(const char *what, double v, const char *unit, double goal)
{
	if (goal > 0)
		printf("  %-38s %12.0f %-6s goal >= %-9.0f %s\n", what, v, unit, goal,
		       v >= goal ? "met" : "not met");
	else
		printf("  %-38s %12.0f %s\n", what, v, unit);
}

int osd_bench_target(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "dir", required_argument, NULL, 'd' },
		{ "runs", required_argument, NULL, 'r' },
		{ "mib", required_argument, NULL, 'm' },
		{ "quick", no_argument, NULL, 'q' },
		{ "checksum-cost", no_argument, NULL, 'c' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct bench b = { .runs = 5, .creates = 20000, .getattrs = 50000, .small_ops = 20000,
			   .big_mib = 128 };
	const char *base = getenv("TMPDIR");
	double v[7][MAX_RUNS], base_v[MAX_RUNS], off_v[2][MAX_RUNS], par_v[MAX_RUNS];
	struct bench off = { 0 }, par = { 0 };
	int cost = 0;
	uint8_t *small, *big;
	unsigned n;
	int c, rc;

	if (!base || !*base)
		base = "/tmp";
	optind = 1;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'd': base = optarg; break;
		case 'r':
			if (bench_parse_count(MODE, optarg, MAX_RUNS, &n) < 0)
				return 2;
			b.runs = (int)n;
			break;
		case 'm':
			if (bench_parse_count(MODE, optarg, 65536, &b.big_mib) < 0)
				return 2;
			break;
		case 'q':
			b.creates = 500;
			b.getattrs = 1000;
			b.small_ops = 500;
			b.big_mib = 8;
			break;
		case 'c': cost = 1; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind < argc || b.runs < 1 || b.runs > MAX_RUNS || b.big_mib < 1 || b.big_mib > 65536) {
		usage(stderr);
		return 2;
	}
	if ((rc = bench_mkdtemp(base, "osd-bench", b.dir, sizeof(b.dir))))
		bench_die(MODE, base, rc, NULL);
	small = malloc(SMALL);
	big = malloc(BIG);
	if (!small || !big)
		bench_die(MODE, "memory", -ENOMEM, NULL);
	for (unsigned i = 0; i < BIG; i++)
		big[i] = (uint8_t)(i * 131 + 7);
	memcpy(small, big, SMALL);
	setup(&b);
	int base_fd = baseline_open(&b, big);
	if (cost) {
		off = b;
		off.no_checksums = 1;
		if ((rc = bench_mkdtemp(base, "osd-bench", off.dir, sizeof(off.dir))))
			bench_die(MODE, base, rc, NULL);
		setup(&off);
		par = b;
		par.verify_reads = 1;
		if ((rc = bench_mkdtemp(base, "osd-bench", par.dir, sizeof(par.dir))))
			bench_die(MODE, base, rc, NULL);
		setup(&par);
	}

	for (int r = 0; r < b.runs; r++) {
		v[0][r] = run_creates(&b);
		v[1][r] = run_getattr(&b, 1);
		v[2][r] = run_getattr(&b, 0);
		v[3][r] = run_small(&b, 1, small);
		v[4][r] = run_small(&b, 0, small);
		v[5][r] = run_big(&b, 1, big);
		v[6][r] = run_big(&b, 0, big);
		if (cost) {
			off_v[0][r] = run_big(&off, 1, big);
			off_v[1][r] = run_big(&off, 0, big);
			(void)run_big(&par, 1, big); /* the same history as the others */
			par_v[r] = run_big(&par, 0, big);
		}
		base_v[r] = run_baseline(&b, base_fd, big);
	}
	close(base_fd);
	osd_dev_close(b.dev);
	osd_target_close(b.tgt);
	bench_rmtree(b.dir);
	if (cost) {
		osd_dev_close(off.dev);
		osd_target_close(off.tgt);
		bench_rmtree(off.dir);
		osd_dev_close(par.dev);
		osd_target_close(par.tgt);
		bench_rmtree(par.dir);
	}

	double bw = bench_median(v[5], b.runs), bbase = bench_median(base_v, b.runs);

	printf("osd-bench --target: software target in %s via loopback, OSD-2, CAPKEY\n", base);
	printf("  median of %d runs; each run ends with FLUSH OSD, included in its time\n", b.runs);
	printf("  baseline: pwrite + one fdatasync per run, same bytes, same directory,\n"
	       "  overwriting a file written once before the runs (as the OSD object is)\n\n");
	row("CREATE (objects/s)", bench_median(v[0], b.runs), "/s", 30000);
	row("GET ATTRIBUTES page mode (/s)", bench_median(v[1], b.runs), "/s", 200000);
	row("GET ATTRIBUTES 1 attr list mode (/s)", bench_median(v[2], b.runs), "/s", 200000);
	row("4 KiB WRITE (ops/s)", bench_median(v[3], b.runs), "/s", 0);
	row("4 KiB READ (ops/s)", bench_median(v[4], b.runs), "/s", 0);
	row("1 MiB sequential WRITE (MiB/s)", bw, "MiB/s", 1024);
	row("1 MiB sequential READ (MiB/s)", bench_median(v[6], b.runs), "MiB/s", 3072);
	row("baseline pwrite+fdatasync (MiB/s)", bbase, "MiB/s", 0);
	if (cost) {
		double w = bench_median(off_v[0], b.runs), rd = bench_median(off_v[1], b.runs);
		double rr = bench_median(v[6], b.runs), rp = bench_median(par_v, b.runs);

		printf("\n  data checksums (CRC32C per 4 KiB block), the same runs alternating\n"
		       "  with a store made without them (--checksum-cost):\n");
		row("1 MiB WRITE, checksums off (MiB/s)", w, "MiB/s", 0);
		row("1 MiB READ, checksums off (MiB/s)", rd, "MiB/s", 0);
		row("1 MiB READ, --verify-reads (MiB/s)", rp, "MiB/s", 0);
		printf("  %-38s %11.1f %%  goal <= 10 %%     %s\n", "cost of checksums, WRITE",
		       100.0 * (1.0 - bw / w), bw >= 0.9 * w ? "met" : "not met");
		printf("  %-38s %11.1f %%  goal <= 10 %%     %s\n", "cost of checksums, READ",
		       100.0 * (1.0 - rr / rd), rr >= 0.9 * rd ? "met" : "not met");
		printf("  %-38s %11.1f %%\n", "  the same, --verify-reads", 100.0 * (1.0 - rp / rd));
	}
	printf("  %-38s %12.2f\n", "WRITE / baseline ratio", bbase > 0 ? bw / bbase : 0.0);
	free(small);
	free(big);
	return 0;
}
