/*
 * osd-bench --layout: sequential write and read of one large file on osdfs
 * spread by the layout backend (osdfs/layout.h) over 1, 2 and 4 devices,
 * each device an osd-targetd process on 127.0.0.1 reached over iSCSI, all
 * measured in the same run, with the scaling ratios 2/1 and 4/1.
 *
 * One run per device count: mkfs, mount, write --size MiB in 1 MiB writes,
 * fsync (the write figure includes it), unmount; mount again (cold osdfs
 * caches) and read the file back in 1 MiB reads, checking the bytes. Every
 * figure is the median of --runs runs. With several --layout maps, each run
 * goes through every map in turn (each map on its own daemons: a formatted
 * device keeps the map it was formatted with), and each map's figures
 * are also given as ratios to the first map's (the same conditions, so the
 * ratios hold on a loaded machine where absolute figures drift). The daemons
 * share the machine's cores with osdfs and the initiator, which the output
 * notes. The write phase's CPU time (this process's threads plus every
 * daemon's, from /proc) per MiB is printed too: what the layout costs in
 * work, which other load on the machine does not change.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include <osd/osd.h>
#include <osd/iscsi.h>
#include <osdfs/osdfs.h>
#include <osdfs/backends.h>
#include <osdfs/layout.h>
#include "bench.h"

#define MODE "--layout"
#define MAX_RUNS 21
#define MAX_LAYOUTS 4
#define MAX_MIB 65536u
#define IO (1u << 20)
#define PARTITION 0x10000ULL
#define NCONFIGS 3
#define MAX_DEV 4
#define START_TIMEOUT_MS 20000

static const unsigned config_devs[NCONFIGS] = { 1, 2, 4 };

struct params {
	const char *base;
	const char *targetd;
	const char *spec[MAX_LAYOUTS];
	unsigned nspec;
	int runs;
	unsigned mib;
};

struct daemon {
	pid_t pid;
	char url[160];
};

struct bench {
	struct params p;
	struct osdfs_data_map map[MAX_LAYOUTS];
	unsigned cur; /* the map of the run in progress */
	char dir[PATH_MAX];
	/* map l's device i: [l * MAX_DEV + i]; every map has its own daemons, as
	 * a formatted device keeps its map (the table's default map) */
	struct daemon d[MAX_LAYOUTS * MAX_DEV];
	osd_dev *dev[MAX_LAYOUTS * MAX_DEV];
	unsigned ndev;
	uint8_t *wbuf, *rbuf;
	double write[MAX_LAYOUTS][NCONFIGS][MAX_RUNS], read[MAX_LAYOUTS][NCONFIGS][MAX_RUNS];
	double wcpu[MAX_LAYOUTS][NCONFIGS][MAX_RUNS]; /* write phase CPU ms per MiB */
	int fits[MAX_LAYOUTS][NCONFIGS];
};

static struct bench *g_bench; /* the daemons to stop when bench_die() exits */

static void stop_daemons(struct bench *b)
{
	for (unsigned i = 0; i < MAX_LAYOUTS * MAX_DEV; i++) {
		if (b->d[i].pid > 0) {
			kill(b->d[i].pid, SIGTERM);
			waitpid(b->d[i].pid, NULL, 0);
			b->d[i].pid = 0;
		}
	}
}

static void at_exit(void)
{
	if (!g_bench)
		return;
	stop_daemons(g_bench);
	if (*g_bench->dir)
		bench_rmtree(g_bench->dir);
}

/* osd-targetd: --targetd, else next to osd-bench (installed), else in the
 * build tree, else on PATH. */
static const char *find_targetd(const char *given, char *buf, size_t size)
{
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	char *slash;

	if (given)
		return given;
	if (n > 0) {
		self[n] = '\0';
		slash = strrchr(self, '/');
		*slash = '\0';
		snprintf(buf, size, "%s/osd-targetd", self);
		if (access(buf, X_OK) == 0)
			return buf;
		snprintf(buf, size, "%s/../osd-targetd/osd-targetd", self);
		if (access(buf, X_OK) == 0)
			return buf;
	}
	return "osd-targetd";
}

/* The port the daemon wrote to @p file, 0 if it exited or took too long. */
static unsigned wait_port(const char *file, pid_t pid)
{
	uint64_t end = bench_now_ns() + (uint64_t)START_TIMEOUT_MS * 1000000u;

	while (bench_now_ns() < end) {
		char buf[16] = "";
		FILE *f = fopen(file, "r");
		size_t n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;
		unsigned long v = strtoul(buf, NULL, 10);

		if (f)
			fclose(f);
		if (n && buf[n - 1] == '\n' && v > 0 && v < 65536)
			return (unsigned)v;
		if (waitpid(pid, NULL, WNOHANG) == pid)
			return 0;
		poll(NULL, 0, 10); /* waiting for a condition, bounded above */
	}
	return 0;
}

static void start_daemon(struct bench *b, unsigned i, const char *targetd)
{
	char store[PATH_MAX + 16], portfile[PATH_MAX + 16], log[PATH_MAX + 16];
	unsigned port;
	pid_t pid;

	if (snprintf(store, sizeof(store), "%s/store%u", b->dir, i) >= (int)sizeof(store) ||
	    snprintf(portfile, sizeof(portfile), "%s/port%u", b->dir, i) >= (int)sizeof(portfile) ||
	    snprintf(log, sizeof(log), "%s/targetd%u.log", b->dir, i) >= (int)sizeof(log))
		bench_die(MODE, "device path under --dir", -ENAMETOOLONG, NULL);
	unlink(portfile); /* left by the previous device count */
	/* a fresh store: one left by the previous device count still holds that
	 * filesystem's device table, which the next open would follow (the
	 * devices it does not name becoming spares) instead of the map asked for */
	bench_rmtree(store);
	pid = fork();
	if (pid < 0)
		bench_die(MODE, "fork", -errno, NULL);
	if (pid == 0) {
		int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);

		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		execlp(targetd, "osd-targetd", "--listen", "127.0.0.1:0", "--port-file", portfile,
		       "--create", store, (char *)NULL);
		fprintf(stderr, "cannot run %s: %s\n", targetd, strerror(errno));
		_exit(127);
	}
	b->d[i].pid = pid;
	port = wait_port(portfile, pid);
	if (!port) {
		b->d[i].pid = 0;
		fprintf(stderr, "osd-bench " MODE ": %s did not start (see %s; --targetd PATH)\n",
			targetd, log);
		exit(1);
	}
	snprintf(b->d[i].url, sizeof(b->d[i].url), "iscsi://127.0.0.1:%u/%s/0", port,
		 "iqn.2026-12.org.osd:target");
}

static void connect_devices(struct bench *b, unsigned first, unsigned n)
{
	for (unsigned i = first; i < first + n; i++) {
		struct osd_iscsi_options io = OSD_ISCSI_OPTIONS_INIT;
		struct osd_dev_options o = OSD_DEV_OPTIONS_INIT;
		struct osd_transport tp;
		int rc = osd_iscsi_transport_new(&tp, b->d[i].url, &io);

		if (rc)
			bench_die(MODE, b->d[i].url, rc, NULL);
		if ((rc = osd_dev_open(&b->dev[i], &tp, &o))) {
			tp.ops->destroy(tp.impl);
			bench_die(MODE, b->d[i].url, rc, NULL);
		}
	}
	b->ndev = n;
}

static void disconnect_devices(struct bench *b)
{
	for (unsigned i = 0; i < MAX_LAYOUTS * MAX_DEV; i++) {
		if (b->dev[i])
			osd_dev_close(b->dev[i]);
		b->dev[i] = NULL;
	}
	b->ndev = 0;
}

/* A layout backend over the connected devices (with the map for mkfs). */
static osdfs_backend *layout_over(struct bench *b)
{
	struct osdfs_layout_config cfg = OSDFS_LAYOUT_CONFIG_INIT;
	osdfs_backend *child[MAX_DEV] = { NULL }, *be;
	char err[256] = "";
	int rc;

	for (unsigned i = 0; i < b->ndev; i++) {
		osd_dev *dev = b->dev[b->cur * MAX_DEV + i];

		if ((rc = osdfs_backend_osd_new(&child[i], dev, PARTITION)))
			bench_die(MODE, "osd backend", rc, dev);
	}
	cfg.ndevices = b->ndev;
	cfg.devices = child;
	cfg.map = b->map[b->cur];
	rc = osdfs_backend_layout_new(&be, &cfg, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "osd-bench " MODE ": layout over %u devices: %s\n", b->ndev,
			*err ? err : strerror(-rc));
		exit(1);
	}
	return be;
}

static osdfs *mount_layout(struct bench *b)
{
	struct osdfs_mount_options mo = OSDFS_MOUNT_OPTIONS_INIT;
	char err[256] = "";
	osdfs *fs;
	int rc;

	mo.error = err;
	mo.error_size = sizeof(err);
	rc = osdfs_mount(&fs, layout_over(b), &mo);
	if (rc) {
		fprintf(stderr, "osd-bench " MODE ": mount: %s\n", *err ? err : strerror(-rc));
		exit(1);
	}
	return fs;
}

static void fs_check(osdfs *fs, ssize_t rc, const char *what)
{
	if (rc >= 0)
		return;
	fprintf(stderr, "osd-bench " MODE ": %s: %s (%s)\n", what, strerror((int)-rc),
		osdfs_error(fs));
	exit(1);
}

/* CPU seconds used so far by this process (every thread) and the daemons. */
static double cpu_now(const struct bench *b)
{
	struct rusage ru;
	double t = 0;

	if (getrusage(RUSAGE_SELF, &ru) == 0)
		t = (double)ru.ru_utime.tv_sec + (double)ru.ru_stime.tv_sec +
		    ((double)ru.ru_utime.tv_usec + (double)ru.ru_stime.tv_usec) / 1e6;
	for (unsigned i = b->cur * MAX_DEV; i < (b->cur + 1) * MAX_DEV; i++) {
		char path[64], buf[1024], *p;
		unsigned long ut = 0, st = 0;
		FILE *f;

		if (b->d[i].pid <= 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/stat", (int)b->d[i].pid);
		f = fopen(path, "r");
		p = f && fgets(buf, sizeof(buf), f) ? strrchr(buf, ')') : NULL;
		/* fields after the name: state ... utime (14th field) stime (15th) */
		if (p && sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut,
				&st) == 2)
			t += (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
		if (f)
			fclose(f);
	}
	return t;
}

/* Write (fsync'ed) then, after a remount, read the file: MiB/s of each. */
static void one_run(struct bench *b, double *wrate, double *rrate, double *wcpu)
{
	double c0;

	osdfs_backend *be = layout_over(b);
	struct osdfs_stat st;
	osdfs_file *fh;
	uint64_t t0;
	osdfs *fs;
	int rc = osdfs_mkfs(be, NULL);

	osdfs_backend_free(be);
	if (rc)
		bench_die(MODE, "mkfs", rc, NULL);
	fs = mount_layout(b);
	fs_check(fs, osdfs_create(fs, OSDFS_ROOT_INO, "seq", 0644, O_RDWR | O_EXCL, NULL,
				   &st, &fh), "create");
	c0 = cpu_now(b);
	t0 = bench_now_ns();
	for (unsigned i = 0; i < b->p.mib; i++)
		fs_check(fs, osdfs_write(fs, fh, b->wbuf, IO, (uint64_t)i * IO), "write");
	fs_check(fs, osdfs_fsync(fs, st.ino, 0), "fsync");
	*wrate = b->p.mib / ((double)(bench_now_ns() - t0) / 1e9);
	*wcpu = (cpu_now(b) - c0) * 1e3 / b->p.mib;
	fs_check(fs, osdfs_release(fs, fh), "release");
	fs_check(fs, osdfs_unmount(fs), "unmount");
	fs = mount_layout(b);
	fs_check(fs, osdfs_open(fs, st.ino, O_RDONLY, &fh), "open");
	t0 = bench_now_ns();
	for (unsigned i = 0; i < b->p.mib; i++) {
		ssize_t n = osdfs_read(fs, fh, b->rbuf, IO, (uint64_t)i * IO);

		fs_check(fs, n, "read");
		if (n != (ssize_t)IO || memcmp(b->rbuf, b->wbuf, IO))
			bench_die(MODE, "read", -EIO, NULL);
	}
	*rrate = b->p.mib / ((double)(bench_now_ns() - t0) / 1e9);
	fs_check(fs, osdfs_release(fs, fh), "release");
	fs_check(fs, osdfs_unmount(fs), "unmount");
}

static void run_config(struct bench *b, unsigned c, const char *targetd)
{
	unsigned n = config_devs[c], any = 0;
	char err[256];

	for (unsigned l = 0; l < b->p.nspec; l++) {
		b->fits[l][c] = osdfs_data_map_check(&b->map[l], n, err, sizeof(err)) == 0;
		any |= (unsigned)b->fits[l][c];
	}
	if (!any)
		return;
	for (unsigned l = 0; l < b->p.nspec; l++) {
		if (!b->fits[l][c])
			continue;
		for (unsigned i = 0; i < n; i++)
			start_daemon(b, l * MAX_DEV + i, targetd);
		connect_devices(b, l * MAX_DEV, n);
	}
	for (int r = 0; r < b->p.runs; r++)
		for (b->cur = 0; b->cur < b->p.nspec; b->cur++)
			if (b->fits[b->cur][c])
				one_run(b, &b->write[b->cur][c][r], &b->read[b->cur][c][r],
					&b->wcpu[b->cur][c][r]);
	disconnect_devices(b);
	stop_daemons(b);
}

static void print_ratio(const struct bench *b, unsigned l, double med[NCONFIGS][3], unsigned c)
{
	if (!b->fits[l][0] || !b->fits[l][c]) {
		printf("scaling %u/1 devices:   n/a\n", config_devs[c]);
		return;
	}
	printf("scaling %u/1 devices:   write %.2fx   read %.2fx\n", config_devs[c],
	       med[c][0] / med[0][0], med[c][1] / med[0][1]);
}

static void print_layout(struct bench *b, unsigned l, double med[NCONFIGS][3])
{
	printf("layout %s\n%-8s %14s %14s %16s\n", b->p.spec[l], "devices", "write MiB/s",
	       "read MiB/s", "write CPU ms/MiB");
	for (unsigned c = 0; c < NCONFIGS; c++) {
		if (!b->fits[l][c]) {
			printf("%-8u %14s %14s %16s\n", config_devs[c], "n/a", "n/a", "n/a");
			continue;
		}
		med[c][0] = bench_median(b->write[l][c], b->p.runs);
		med[c][1] = bench_median(b->read[l][c], b->p.runs);
		med[c][2] = bench_median(b->wcpu[l][c], b->p.runs);
		printf("%-8u %14.1f %14.1f %16.2f\n", config_devs[c], med[c][0], med[c][1],
		       med[c][2]);
	}
	printf("\n");
	for (unsigned c = 1; c < NCONFIGS; c++)
		print_ratio(b, l, med, c);
	printf("\n");
}

/* Each map's figures over the first map's, device count by device count. */
static void print_vs_first(struct bench *b, double med[MAX_LAYOUTS][NCONFIGS][3])
{
	printf("ratio to %s (same run, same devices):\n", b->p.spec[0]);
	printf("%-24s %-8s %8s %8s %10s\n", "layout", "devices", "write", "read", "write CPU");
	for (unsigned l = 1; l < b->p.nspec; l++)
		for (unsigned c = 0; c < NCONFIGS; c++)
			if (b->fits[0][c] && b->fits[l][c])
				printf("%-24s %-8u %8.2f %8.2f %10.2f\n", b->p.spec[l],
				       config_devs[c], med[l][c][0] / med[0][c][0],
				       med[l][c][1] / med[0][c][1], med[l][c][2] / med[0][c][2]);
}

static void print_table(struct bench *b)
{
	double med[MAX_LAYOUTS][NCONFIGS][3];

	printf("osd-bench --layout: osdfs on the layout backend over\n"
	       "osd-targetd processes on 127.0.0.1 (iSCSI, one process per device);\n"
	       "%u MiB file, 1 MiB I/O, write includes fsync, read after a remount;\n"
	       "median of %d run%s.\n"
	       "note: this machine has %ld cores, shared by every daemon, osdfs and the\n"
	       "initiator: the ratios show the layout's overhead more than device scaling.\n\n",
	       b->p.mib, b->p.runs, b->p.runs == 1 ? "" : "s", sysconf(_SC_NPROCESSORS_ONLN));
	for (unsigned l = 0; l < b->p.nspec; l++)
		print_layout(b, l, med[l]);
	if (b->p.nspec > 1)
		print_vs_first(b, med);
}

static void usage(FILE *f)
{
	fprintf(f, "usage: osd-bench --layout [--runs N] [--size MiB] [--layout SPEC]...\n"
		   "                          [--dir DIR] [--targetd PATH]\n"
		   "  --runs N       runs per figure, the median is printed (default 3, at most %d)\n"
		   "  --size MiB     file size (default 256, at most %u)\n"
		   "  --layout SPEC  data map (default raid0,su=64K); device counts it does\n"
		   "                 not fit are shown as n/a; up to %d maps, run in turn,\n"
		   "                 each also as a ratio to the first\n"
		   "  --dir DIR      where the daemons' stores go, in a temporary directory\n"
		   "                 that is removed (default $TMPDIR or /tmp)\n"
		   "  --targetd PATH the osd-targetd to run (default: next to osd-bench)\n",
		MAX_RUNS, MAX_MIB, MAX_LAYOUTS);
}

/* 0: run, 1: help printed, -EINVAL: bad arguments (message printed). */
static int parse_args(struct bench *b, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "runs", required_argument, NULL, 'r' },
		{ "size", required_argument, NULL, 's' },
		{ "layout", required_argument, NULL, 'l' },
		{ "dir", required_argument, NULL, 'd' },
		{ "targetd", required_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	char err[256] = "";
	unsigned runs = 3;
	int c, rc = 0;

	optind = 1;
	while (!rc && (c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'r': rc = bench_parse_count(MODE, optarg, MAX_RUNS, &runs); break;
		case 's': rc = bench_parse_count(MODE, optarg, MAX_MIB, &b->p.mib); break;
		case 'l':
			if (b->p.nspec == MAX_LAYOUTS) {
				fprintf(stderr, "osd-bench " MODE ": at most %d --layout\n", MAX_LAYOUTS);
				return -EINVAL;
			}
			b->p.spec[b->p.nspec++] = optarg;
			break;
		case 'd': b->p.base = optarg; break;
		case 't': b->p.targetd = optarg; break;
		case 'h': usage(stdout); return 1;
		default: return -EINVAL;
		}
	}
	b->p.runs = (int)runs;
	if (!rc && optind < argc) {
		fprintf(stderr, "osd-bench " MODE ": unexpected argument '%s'\n", argv[optind]);
		rc = -EINVAL;
	}
	if (!rc && b->p.nspec == 0)
		b->p.spec[b->p.nspec++] = "raid0,su=64K";
	for (unsigned l = 0; !rc && l < b->p.nspec; l++) {
		if (osdfs_data_map_parse(&b->map[l], b->p.spec[l], err, sizeof(err)) < 0) {
			fprintf(stderr, "osd-bench " MODE ": --layout '%s': %s\n", b->p.spec[l], err);
			rc = -EINVAL;
		}
	}
	return rc;
}

int osd_bench_layout(int argc, char **argv)
{
	static struct bench b;
	char found[PATH_MAX + 32];
	const char *targetd;
	int rc;

	b.p.base = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	b.p.mib = 256;
	rc = parse_args(&b, argc, argv);
	if (rc)
		return rc > 0 ? 0 : 2;
	targetd = find_targetd(b.p.targetd, found, sizeof(found));
	b.wbuf = malloc(IO);
	b.rbuf = malloc(IO);
	if (!b.wbuf || !b.rbuf)
		bench_die(MODE, "buffers", -ENOMEM, NULL);
	for (unsigned i = 0; i < IO; i++)
		b.wbuf[i] = (uint8_t)(i * 7 + i / 4096);
	if ((rc = bench_mkdtemp(b.p.base, "osd-bench-layout", b.dir, sizeof(b.dir))))
		bench_die(MODE, b.p.base, rc, NULL);
	g_bench = &b;
	atexit(at_exit);
	for (unsigned c = 0; c < NCONFIGS; c++)
		run_config(&b, c, targetd);
	print_table(&b);
	free(b.wbuf);
	free(b.rbuf);
	return 0;
}
