/* osd-bench: one command, several benchmark modes (see bench.h). */
#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <osd/osd.h>
#include <osdtarget/target.h>
#include "bench.h"

struct mode {
	const char *flag;
	int (*run)(int argc, char **argv);
	const char *what;
};

static const struct mode modes[] = {
	{ "--proto", osd_bench_proto, "CDB encode/decode/sign cost per command" },
	{ "--target", osd_bench_target, "software target through the loopback transport" },
	{ "--fs", osd_bench_fs, "osdfs on the mem backend and on the software target" },
	{ "--iscsi", osd_bench_iscsi, "the target over iSCSI on 127.0.0.1 vs loopback" },
	{ "--fuse", osd_bench_fuse, "osdfs-mount vs a FUSE passthrough vs native" },
	{ "--layout", osd_bench_layout, "osdfs striped over osd-targetd processes, shaped links" },
	{ "--parity", osd_bench_parity, "RAID 5/6 parity and recovery code, ours vs ISA-L" },
	{ "--scale", osd_bench_scale, "target and osdfs at growing object counts (100k, 1M, 10M)" },
};

#define NUM_MODES (sizeof(modes) / sizeof(modes[0]))

void bench_die(const char *mode, const char *what, int rc, osd_dev *dev)
{
	fprintf(stderr, "osd-bench %s: %s: %s\n", mode, what,
		dev && *osd_dev_error(dev) ? osd_dev_error(dev) : strerror(-rc));
	exit(1);
}

void bench_exec_or_die(const char *mode, osd_dev *dev, osd_req *req, const char *what)
{
	int rc = osd_req_execute(req);

	if (rc)
		bench_die(mode, what, rc, dev);
	osd_req_free(req);
}

int bench_parse_count(const char *mode, const char *s, unsigned max, unsigned *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || end == s || *end || *s == '-' || v < 1 || v > max) {
		fprintf(stderr, "osd-bench %s: bad count '%s' (1..%u)\n", mode, s, max);
		return -EINVAL;
	}
	*out = (unsigned)v;
	return 0;
}

uint64_t bench_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

int bench_verbose;

double bench_median(double *v, int n)
{
	double m;

	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	m = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
	if (bench_verbose) {
		fprintf(stderr, "osd-bench: median %g of %d runs:", m, n);
		for (int i = 0; i < n; i++)
			fprintf(stderr, " %g", v[i]);
		fprintf(stderr, "\n");
	}
	return m;
}

int bench_mkdtemp(const char *base, const char *prefix, char *buf, size_t size)
{
	if ((size_t)snprintf(buf, size, "%s/%s.XXXXXX", base, prefix) >= size)
		return -ENAMETOOLONG;
	return mkdtemp(buf) ? 0 : -errno;
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

int bench_rmtree(const char *dir)
{
	return nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS) ? -errno : 0;
}

const uint8_t bench_root_key[20] = "osd-bench root key!";

int bench_root_credential(struct osd_target *tgt, struct osd_credential *out)
{
	struct osd_cred_request cq;
	uint8_t sid[OSD_SYSTEM_ID_LEN];
	osd_cred_issuer *iss;
	int rc;

	osd_target_system_id(tgt, sid);
	memset(&cq, 0, sizeof(cq));
	cq.version = OSD_V2;
	cq.permissions = OSD_PERM_ALL_V2;
	cq.method = OSD_SEC_CAPKEY;
	rc = osd_cred_issuer_new(&iss, sid);
	if (rc == 0)
		rc = osd_cred_issuer_set_root_key(iss, bench_root_key);
	if (rc == 0)
		rc = osd_cred_issue(iss, &cq, out);
	osd_cred_issuer_free(iss);
	return rc;
}

int bench_no_credential(const struct osd_cred_request *want, struct osd_credential *out,
			void *payload)
{
	(void)want;
	(void)out;
	(void)payload;
	return -ENOKEY; /* everything goes through the OSD-wide credential */
}

static void usage(FILE *f)
{
	fprintf(f, "usage: osd-bench [-v] MODE [options]\n\nmodes:\n");
	for (size_t i = 0; i < NUM_MODES; i++)
		fprintf(f, "  %-10s %s\n", modes[i].flag, modes[i].what);
	fprintf(f, "\n  -v, --verbose  also print every run behind each median (stderr)\n"
		   "  -V, --version  show the version\n"
		   "  -h, --help     show this help\n"
		   "\nosd-bench MODE --help lists the options of a mode.\n");
}

int main(int argc, char **argv)
{
	while (argc > 1 && (!strcmp(argv[1], "-v") || !strcmp(argv[1], "--verbose"))) {
		bench_verbose = 1;
		argv[1] = argv[0];
		argv++;
		argc--;
	}
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V")) {
		printf("osd-bench %s\n", osd_version_string());
		return 0;
	}
	for (size_t i = 0; i < NUM_MODES; i++)
		if (!strcmp(argv[1], modes[i].flag))
			return modes[i].run(argc - 1, argv + 1);
	fprintf(stderr, "osd-bench: unknown mode '%s'\n", argv[1]);
	usage(stderr);
	return 2;
}
