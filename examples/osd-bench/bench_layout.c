/*
 * osd-bench --layout: sequential write and read of one large file on osdfs
 * spread by the layout backend (osdfs/layout.h) over several devices, each
 * device an osd-targetd process reached over iSCSI: on 127.0.0.1, or with
 * --link-rate each behind its own shaped link (bench_net.c). Every data map
 * (--layout, repeatable) on every device count (--devices) is measured in
 * the same invocation, so the ratios compare figures taken together.
 *
 * One run: mkfs, mount, write --size MiB in --io MiB writes (default 1),
 * fsync (the write figure includes it), unmount; mount again (cold osdfs
 * caches) and read the file back in reads of the same size, checking the
 * bytes. The daemons of a device count start once; runs go round the maps
 * so that a change of load hits each alike. Every figure is the median of
 * --runs runs.
 *
 * The daemons, the namespaces and the temporary directory go on every exit:
 * a normal end, a failure (exit), SIGINT, SIGTERM or SIGHUP (a thread waits
 * for those, cleans up and dies of the signal); daemons get SIGTERM if
 * osd-bench dies otherwise, and namespaces such a death leaves are removed
 * by the next shaped run.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>
#include <osd/osd.h>
#include <osd/iscsi.h>
#include <osdfs/osdfs.h>
#include <osdfs/backends.h>
#include <osdfs/layout.h>
#include <osdfs/sys/backend.h>
#include "bench.h"
#include "bench_layout.h"
#include "bench_net.h"

#define MODE "--layout"
#define MAX_MIB 65536u
#define MIB_BYTES (1u << 20)
#define MAX_IO_MIB 64u
#define PARTITION 0x10000ULL
#define START_TIMEOUT_MS 20000
#define STOP_TIMEOUT_MS 10000
#define TARGET_IQN "iqn.2026-12.org.osd:target"

struct params {
	const char *base;
	const char *targetd;
};

struct daemon {
	pid_t pid;
	char url[160];
};

struct bench {
	struct params p;
	struct layout_results res;
	struct osdfs_data_map map[LAYOUT_MAX_SPECS];
	char dir[PATH_MAX];
	struct daemon d[LAYOUT_MAX_DEV];
	osd_dev *dev[LAYOUT_MAX_DEV];
	unsigned ndev;
	int net;                      /* bench_net_up() was called */
	pid_t self;                   /* the daemons' parent */
	uint8_t *wbuf, *rbuf;
};

/* What cleanup() removes; set once everything it names exists. */
static struct bench *g_bench;
static pthread_mutex_t cleanup_lock = PTHREAD_MUTEX_INITIALIZER;
static sigset_t stop_signals;
static volatile sig_atomic_t stopping; /* a stop signal came */
static pthread_t signal_tid;

/* SIGTERM (a clean stop: stores flushed and closed), SIGKILL for one that
 * has not exited within STOP_TIMEOUT_MS. */
static void stop_daemons(struct bench *b)
{
	uint64_t end = bench_now_ns() + (uint64_t)STOP_TIMEOUT_MS * 1000000u;

	for (unsigned i = 0; i < LAYOUT_MAX_DEV; i++)
		if (b->d[i].pid > 0)
			kill(b->d[i].pid, SIGTERM);
	for (unsigned i = 0; i < LAYOUT_MAX_DEV; i++) {
		pid_t pid = b->d[i].pid;

		if (pid <= 0)
			continue;
		while (waitpid(pid, NULL, WNOHANG) == 0) {
			if (bench_now_ns() > end) {
				fprintf(stderr, "osd-bench " MODE ": daemon %ld ignored SIGTERM; "
					"SIGKILL\n", (long)pid);
				kill(pid, SIGKILL);
				waitpid(pid, NULL, 0);
				break;
			}
			poll(NULL, 0, 10); /* waiting for a condition, bounded above */
		}
		b->d[i].pid = 0;
	}
}

/* Daemons, namespaces, the temporary directory: once, from exit or from the
 * signal thread, whichever comes first (the other waits for it). */
static void cleanup(void)
{
	while (stopping && !pthread_equal(pthread_self(), signal_tid))
		pause(); /* an exit racing the signal: it dies of the signal */
	pthread_mutex_lock(&cleanup_lock);
	if (g_bench) {
		stop_daemons(g_bench);
		if (g_bench->net)
			bench_net_down();
		if (*g_bench->dir)
			bench_rmtree(g_bench->dir);
		g_bench = NULL;
	}
	pthread_mutex_unlock(&cleanup_lock);
}

static void *signal_thread(void *arg)
{
	int sig;

	(void)arg;
	if (sigwait(&stop_signals, &sig))
		return NULL;
	stopping = 1;
	fprintf(stderr, "osd-bench " MODE ": %s: stopping the daemons and removing what "
		"the benchmark made\n", strsignal(sig));
	cleanup();
	signal(sig, SIG_DFL);
	pthread_sigmask(SIG_UNBLOCK, &stop_signals, NULL);
	raise(sig); /* dies of it, as it would have without the cleanup */
	_exit(128 + sig);
}

/* SIGINT, SIGTERM and SIGHUP go to signal_thread(); every thread and child
 * made later inherits the block (children unblock before exec). */
static void catch_stop_signals(void)
{
	sigemptyset(&stop_signals);
	sigaddset(&stop_signals, SIGINT);
	sigaddset(&stop_signals, SIGTERM);
	sigaddset(&stop_signals, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &stop_signals, NULL);
	if (pthread_create(&signal_tid, NULL, signal_thread, NULL))
		bench_die(MODE, "signal thread", -EAGAIN, NULL);
	pthread_detach(signal_tid);
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

/* A daemon's log to stderr: it goes with the temporary directory. */
static void copy_log(const char *log)
{
	char buf[4096];
	FILE *f = fopen(log, "r");
	size_t n;

	if (!f)
		return;
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		fwrite(buf, 1, n, stderr);
	fclose(f);
}

/* In the forked child: the daemon of device @p i, in its namespace when the
 * links are shaped. Never returns. */
static void exec_daemon(struct bench *b, unsigned i, const char *targetd, const char *store,
			const char *portfile, const char *log)
{
	char listen[64], addr[32];
	sigset_t none;
	int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	prctl(PR_SET_PDEATHSIG, SIGTERM); /* dies with a killed osd-bench */
	if (getppid() != b->self)
		_exit(127); /* it died before prctl() */
	if (fd >= 0) {
		dup2(fd, 1);
		dup2(fd, 2);
	}
	if (b->net) {
		int rc = bench_net_enter_device(i);

		if (rc) {
			fprintf(stderr, "cannot enter the namespace of device %u: %s\n", i,
				strerror(-rc));
			_exit(127);
		}
		bench_net_addr(i, addr, sizeof(addr));
		snprintf(listen, sizeof(listen), "%s:0", addr);
		/* NOSEC beyond loopback: only the benchmark's namespace reaches it */
		execlp(targetd, "osd-targetd", "--listen", listen, "--insecure", "--port-file",
		       portfile, "--create", store, (char *)NULL);
	} else {
		execlp(targetd, "osd-targetd", "--listen", "127.0.0.1:0", "--port-file", portfile,
		       "--create", store, (char *)NULL);
	}
	fprintf(stderr, "cannot run %s: %s\n", targetd, strerror(errno));
	_exit(127);
}

static void start_daemon(struct bench *b, unsigned i, const char *targetd)
{
	char store[PATH_MAX + 16], portfile[PATH_MAX + 16], log[PATH_MAX + 16], host[32];
	unsigned port;
	pid_t pid;

	if (snprintf(store, sizeof(store), "%s/store%u", b->dir, i) >= (int)sizeof(store) ||
	    snprintf(portfile, sizeof(portfile), "%s/port%u", b->dir, i) >= (int)sizeof(portfile) ||
	    snprintf(log, sizeof(log), "%s/targetd%u.log", b->dir, i) >= (int)sizeof(log))
		bench_die(MODE, "device path under --dir", -ENAMETOOLONG, NULL);
	unlink(portfile); /* left by the previous device count */
	bench_rmtree(store); /* a fresh store per device count */
	pid = fork();
	if (pid < 0)
		bench_die(MODE, "fork", -errno, NULL);
	if (pid == 0)
		exec_daemon(b, i, targetd, store, portfile, log);
	b->d[i].pid = pid;
	port = wait_port(portfile, pid);
	if (!port) {
		b->d[i].pid = 0;
		fprintf(stderr, "osd-bench " MODE ": %s did not start (--targetd PATH); "
			"its output:\n", targetd);
		copy_log(log);
		exit(1);
	}
	if (b->net)
		bench_net_addr(i, host, sizeof(host));
	else
		snprintf(host, sizeof(host), "127.0.0.1");
	snprintf(b->d[i].url, sizeof(b->d[i].url), "iscsi://%s:%u/%s/0", host, port, TARGET_IQN);
}

static void connect_devices(struct bench *b, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
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
	for (unsigned i = 0; i < b->ndev; i++) {
		osd_dev_close(b->dev[i]);
		b->dev[i] = NULL;
	}
	b->ndev = 0;
}

/* A layout backend over the connected devices (with the map for mkfs). */
static osdfs_backend *layout_over(struct bench *b, unsigned l)
{
	struct osdfs_layout_config cfg = OSDFS_LAYOUT_CONFIG_INIT;
	osdfs_backend *child[LAYOUT_MAX_DEV] = { NULL }, *be;
	char err[256] = "";
	int rc;

	for (unsigned i = 0; i < b->ndev; i++)
		if ((rc = osdfs_backend_osd_new(&child[i], b->dev[i], PARTITION)))
			bench_die(MODE, "osd backend", rc, b->dev[i]);
	cfg.ndevices = b->ndev;
	cfg.devices = child;
	cfg.map = b->map[l];
	rc = osdfs_backend_layout_new(&be, &cfg, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "osd-bench " MODE ": layout over %u devices: %s\n", b->ndev,
			*err ? err : strerror(-rc));
		exit(1);
	}
	return be;
}

static osdfs *mount_layout(struct bench *b, unsigned l)
{
	struct osdfs_mount_options mo = OSDFS_MOUNT_OPTIONS_INIT;
	char err[256] = "";
	osdfs *fs;
	int rc;

	mo.error = err;
	mo.error_size = sizeof(err);
	rc = osdfs_mount(&fs, layout_over(b, l), &mo);
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
	while (stopping)
		pause(); /* the daemons were stopped: the signal thread ends it */
	fprintf(stderr, "osd-bench " MODE ": %s: %s (%s)\n", what, strerror((int)-rc),
		osdfs_error(fs));
	exit(1);
}

/* The file's resolved map (getxattr osdfs.layout): how many links carry its
 * data units, and the stripe as text. */
static void record_stripe(osdfs *fs, uint64_t ino, struct layout_cell *cell)
{
	struct osdfs_data_map m;
	char text[160], inner[20];
	ssize_t n = osdfs_getxattr(fs, ino, "osdfs.layout", text, sizeof(text) - 1);
	unsigned copies, parity, groups, wd;
	int k;

	fs_check(fs, n, "getxattr osdfs.layout");
	text[n] = '\0';
	if (osdfs_data_map_parse(&m, text, NULL, 0) < 0 || !m.group_width)
		bench_die(MODE, "the file's data map", -EINVAL, NULL);
	copies = m.mirror_cnt + 1;
	parity = m.raid == OSDFS_RAID_PQ ? 2 : m.raid == OSDFS_RAID_0 ? 0 : 1;
	groups = m.num_comps / copies / m.group_width;
	wd = m.group_width - parity;
	cell->links = m.num_comps;
	cell->data_links = groups * wd;
	k = snprintf(inner, sizeof(inner), "%u", wd);
	if (parity)
		k += snprintf(inner + k, sizeof(inner) - (size_t)k, "+%u", parity);
	if (copies > 1)
		snprintf(inner + k, sizeof(inner) - (size_t)k, "x%u", copies);
	if (groups > 1)
		snprintf(cell->stripe, sizeof(cell->stripe), "%u*(%s)", groups, inner);
	else
		snprintf(cell->stripe, sizeof(cell->stripe), "%s", inner);
}

/* Empties every device's partition, the previous map's device table with
 * it: the layout is then unformatted and mkfs writes map @p l's table. */
static void blank_devices(struct bench *b)
{
	for (unsigned i = 0; i < b->ndev; i++) {
		osdfs_backend *be;
		int rc = osdfs_backend_osd_new(&be, b->dev[i], PARTITION);

		if (rc == 0) {
			rc = osdfs_backend_ops_of(be)->format(osdfs_backend_impl(be), 0);
			osdfs_backend_free(be);
		}
		if (rc)
			bench_die(MODE, "emptying a device", rc, b->dev[i]);
	}
}

/* Run @p r of map @p l: write (fsync'ed) then, after a remount, read the
 * file, in MiB/s. */
static void one_run(struct bench *b, unsigned l, struct layout_cell *cell, int r)
{
	unsigned mib = b->res.mib;
	size_t io = (size_t)b->res.io_mib * MIB_BYTES;
	struct osdfs_stat st;
	osdfs_backend *be;
	osdfs_file *fh;
	uint64_t t0;
	osdfs *fs;
	int rc;

	blank_devices(b);
	be = layout_over(b, l);
	rc = osdfs_mkfs(be, NULL);
	osdfs_backend_free(be);
	if (rc)
		bench_die(MODE, "mkfs", rc, NULL);
	fs = mount_layout(b, l);
	fs_check(fs, osdfs_create(fs, OSDFS_ROOT_INO, "seq", 0644, O_RDWR | O_EXCL, NULL,
				   &st, &fh), "create");
	t0 = bench_now_ns();
	for (uint64_t off = 0; off < (uint64_t)mib * MIB_BYTES; off += io)
		fs_check(fs, osdfs_write(fs, fh, b->wbuf, io, off), "write");
	fs_check(fs, osdfs_fsync(fs, st.ino, 0), "fsync");
	cell->write[r] = mib / ((double)(bench_now_ns() - t0) / 1e9);
	if (r == 0)
		record_stripe(fs, st.ino, cell);
	fs_check(fs, osdfs_release(fs, fh), "release");
	fs_check(fs, osdfs_unmount(fs), "unmount");
	fs = mount_layout(b, l);
	fs_check(fs, osdfs_open(fs, st.ino, O_RDONLY, &fh), "open");
	t0 = bench_now_ns();
	for (uint64_t off = 0; off < (uint64_t)mib * MIB_BYTES; off += io) {
		ssize_t n = osdfs_read(fs, fh, b->rbuf, io, off);

		fs_check(fs, n, "read");
		if (n != (ssize_t)io || memcmp(b->rbuf, b->wbuf, io))
			bench_die(MODE, "read", -EIO, NULL);
	}
	cell->read[r] = mib / ((double)(bench_now_ns() - t0) / 1e9);
	fs_check(fs, osdfs_release(fs, fh), "release");
	fs_check(fs, osdfs_unmount(fs), "unmount");
}

/* Device count @p c: its daemons once, then the runs round the maps. */
static void run_count(struct bench *b, unsigned c, const char *targetd)
{
	struct layout_results *res = &b->res;
	unsigned n = res->devs[c];
	int any = 0;
	char err[256];

	for (unsigned l = 0; l < res->nspecs; l++) {
		res->cell[l][c].fits = osdfs_data_map_check(&b->map[l], n, err, sizeof(err)) == 0;
		any |= res->cell[l][c].fits;
	}
	if (!any)
		return;
	for (unsigned i = 0; i < n; i++)
		start_daemon(b, i, targetd);
	connect_devices(b, n);
	for (int r = 0; r < res->runs; r++)
		for (unsigned l = 0; l < res->nspecs; l++)
			if (res->cell[l][c].fits)
				one_run(b, l, &res->cell[l][c], r);
	disconnect_devices(b);
	stop_daemons(b);
}

static void usage(FILE *f)
{
	fprintf(f, "usage: osd-bench --layout [--runs N] [--size MiB] [--io MiB]\n"
		   "                          [--layout SPEC]... [--devices LIST]\n"
		   "                          [--link-rate RATE] [--dir DIR] [--targetd PATH]\n"
		   "  --runs N         runs per figure, the median is printed (default 3, at most %d)\n"
		   "  --size MiB       file size (default 256, at most %u)\n"
		   "  --io MiB         size of each write and read call (default 1, at most %u);\n"
		   "                   each call waits for every device it spans\n"
		   "  --layout SPEC    a data map (default raid0,su=64K); repeat it (at most %d)\n"
		   "                   to compare maps in one invocation; a device count a map\n"
		   "                   does not fit shows n/a\n"
		   "  --devices LIST   device counts, ascending, comma-separated, 1..%d\n"
		   "                   (default 1,2,4)\n"
		   "  --link-rate RATE put each device behind its own link shaped to RATE bit/s\n"
		   "                   in each direction: a network namespace per daemon, a veth\n"
		   "                   pair to the benchmark's namespace, tbf on both ends.\n"
		   "                   RATE: a number with k, M or G (10^3, 10^6, 10^9), e.g.\n"
		   "                   1G = 1 Gbit/s, 1M to 400G. Needs root, ip and tc\n"
		   "                   (iproute2). Default: unshaped, on 127.0.0.1\n"
		   "  --dir DIR        where the daemons' stores go, in a temporary directory\n"
		   "                   that is removed (default $TMPDIR or /tmp)\n"
		   "  --targetd PATH   the osd-targetd to run (default: next to osd-bench)\n",
		LAYOUT_MAX_RUNS, MAX_MIB, MAX_IO_MIB, LAYOUT_MAX_SPECS, LAYOUT_MAX_DEV);
}

/* --devices: ascending counts. 0 or -EINVAL (message printed). */
static int parse_devices(struct layout_results *res, const char *arg)
{
	char buf[128], *rest = buf, *tok;

	if (snprintf(buf, sizeof(buf), "%s", arg) >= (int)sizeof(buf))
		goto bad;
	res->ncounts = 0;
	while ((tok = strsep(&rest, ",")) != NULL) {
		char *end;
		unsigned long v = strtoul(tok, &end, 10);

		if (res->ncounts == LAYOUT_MAX_COUNTS || *tok < '0' || *tok > '9' || *end ||
		    v < 1 || v > LAYOUT_MAX_DEV || (res->ncounts && v <= res->devs[res->ncounts - 1]))
			goto bad;
		res->devs[res->ncounts++] = (unsigned)v;
	}
	if (res->ncounts)
		return 0;
bad:
	fprintf(stderr, "osd-bench " MODE ": --devices '%s': want at most %d ascending counts "
		"of 1..%d, e.g. 1,2,4,8\n", arg, LAYOUT_MAX_COUNTS, LAYOUT_MAX_DEV);
	return -EINVAL;
}

/* --layout: one more map (the first replaces the default). */
static int add_spec(struct bench *b, const char *spec, int *given)
{
	struct layout_results *res = &b->res;
	char err[256] = "";

	if (!*given)
		res->nspecs = 0;
	*given = 1;
	if (res->nspecs == LAYOUT_MAX_SPECS) {
		fprintf(stderr, "osd-bench " MODE ": at most %d --layout\n", LAYOUT_MAX_SPECS);
		return -EINVAL;
	}
	if (osdfs_data_map_parse(&b->map[res->nspecs], spec, err, sizeof(err)) < 0) {
		fprintf(stderr, "osd-bench " MODE ": --layout '%s': %s\n", spec, err);
		return -EINVAL;
	}
	res->spec[res->nspecs++] = spec;
	return 0;
}

static int parse_rate(struct layout_results *res, const char *arg)
{
	if (bench_net_parse_rate(arg, &res->rate_bps) == 0)
		return 0;
	fprintf(stderr, "osd-bench " MODE ": --link-rate '%s': want bit/s as a number with "
		"k, M or G, 1M to 400G (e.g. 1G)\n", arg);
	return -EINVAL;
}

/* 0: run, 1: help printed, -EINVAL: bad arguments (message printed). */
static int parse_args(struct bench *b, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "runs", required_argument, NULL, 'r' },
		{ "size", required_argument, NULL, 's' },
		{ "layout", required_argument, NULL, 'l' },
		{ "devices", required_argument, NULL, 'n' },
		{ "io", required_argument, NULL, 'i' },
		{ "link-rate", required_argument, NULL, 'R' },
		{ "dir", required_argument, NULL, 'd' },
		{ "targetd", required_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct layout_results *res = &b->res;
	unsigned runs = 3;
	int c, rc = 0, given = 0;

	optind = 1;
	while (!rc && (c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'r': rc = bench_parse_count(MODE, optarg, LAYOUT_MAX_RUNS, &runs); break;
		case 's': rc = bench_parse_count(MODE, optarg, MAX_MIB, &res->mib); break;
		case 'l': rc = add_spec(b, optarg, &given); break;
		case 'n': rc = parse_devices(res, optarg); break;
		case 'i': rc = bench_parse_count(MODE, optarg, MAX_IO_MIB, &res->io_mib); break;
		case 'R': rc = parse_rate(res, optarg); break;
		case 'd': b->p.base = optarg; break;
		case 't': b->p.targetd = optarg; break;
		case 'h': usage(stdout); return 1;
		default: return -EINVAL;
		}
	}
	res->runs = (int)runs;
	if (!rc && optind < argc) {
		fprintf(stderr, "osd-bench " MODE ": unexpected argument '%s'\n", argv[optind]);
		rc = -EINVAL;
	}
	if (!rc && res->mib % res->io_mib) {
		fprintf(stderr, "osd-bench " MODE ": --size %u is not a multiple of --io %u\n",
			res->mib, res->io_mib);
		rc = -EINVAL;
	}
	return rc;
}

/* Defaults, then the arguments. 0, 1 (help) or -EINVAL. */
static int configure(struct bench *b, int argc, char **argv)
{
	struct layout_results *res = &b->res;
	int given = 0;

	b->p.base = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	res->mib = 256;
	res->io_mib = 1;
	res->devs[0] = 1;
	res->devs[1] = 2;
	res->devs[2] = 4;
	res->ncounts = 3;
	if (add_spec(b, "raid0,su=64K", &given))
		return -EINVAL;
	return parse_args(b, argc, argv);
}

/* The links, sized for the largest device count; exits 1 if they cannot be
 * made (what was made goes at exit). */
static void links_up(struct bench *b)
{
	char err[512] = "";
	int rc;

	bench_net_sweep();
	b->net = 1;
	rc = bench_net_up(b->res.devs[b->res.ncounts - 1], b->res.rate_bps, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "osd-bench " MODE ": shaped links: %s\n", err);
		exit(1);
	}
}

int osd_bench_layout(int argc, char **argv)
{
	static struct bench b;
	char found[PATH_MAX + 32], err[256];
	const char *targetd;
	int rc;

	rc = configure(&b, argc, argv);
	if (rc)
		return rc > 0 ? 0 : 2;
	for (unsigned l = 0; l < b.res.nspecs; l++)
		b.res.plain_raid0[l] = b.map[l].raid == OSDFS_RAID_0 && !b.map[l].mirror_cnt;
	if (b.res.rate_bps && bench_net_check(err, sizeof(err))) {
		fprintf(stderr, "osd-bench " MODE ": %s\n", err);
		return 1;
	}
	targetd = find_targetd(b.p.targetd, found, sizeof(found));
	b.wbuf = malloc((size_t)b.res.io_mib * MIB_BYTES);
	b.rbuf = malloc((size_t)b.res.io_mib * MIB_BYTES);
	if (!b.wbuf || !b.rbuf)
		bench_die(MODE, "buffers", -ENOMEM, NULL);
	for (size_t i = 0; i < (size_t)b.res.io_mib * MIB_BYTES; i++)
		b.wbuf[i] = (uint8_t)(i * 7 + i / 4096);
	b.self = getpid();
	catch_stop_signals();
	if ((rc = bench_mkdtemp(b.p.base, "osd-bench-layout", b.dir, sizeof(b.dir))))
		bench_die(MODE, b.p.base, rc, NULL);
	pthread_mutex_lock(&cleanup_lock);
	g_bench = &b;
	pthread_mutex_unlock(&cleanup_lock);
	atexit(cleanup);
	if (b.res.rate_bps)
		links_up(&b);
	for (unsigned c = 0; c < b.res.ncounts; c++)
		run_count(&b, c, targetd);
	bench_layout_print(&b.res);
	free(b.wbuf);
	free(b.rbuf);
	return 0;
}
