/* Interoperability with Linux tgt (Debian package "tgt"): the test starts
 * its own tgtd on 127.0.0.1 with a file-backed disk LUN, then sends
 * INQUIRY, TEST UNIT READY, REPORT LUNS, READ CAPACITY, WRITE and READ
 * through the iSCSI transport, with digests off and on. Skipped (77) when
 * tgtd is not installed or we cannot run it (it needs root). */
#define _XOPEN_SOURCE 700
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <osd/iscsi.h>

#define TGTD "/usr/sbin/tgtd"
#define TGTADM "/usr/sbin/tgtadm"
#define TARGET "iqn.2026-01.org.libosd:tgt-interop"
#define DISK_BYTES (16u << 20)
#define WAIT_MS 15000

static char dir[512], ctl[16];
static unsigned port;
static pid_t tgtd_pid = -1;
static unsigned last_sense_len, last_sense_key;

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

/* Runs a program quietly; its exit status, or -1. */
static int run(char *const argv[])
{
	pid_t p = fork();
	int st;

	if (p == 0) {
		int null = open("/dev/null", O_WRONLY);

		dup2(null, 1);
		dup2(null, 2);
		execv(argv[0], argv);
		_exit(127);
	}
	if (p < 0 || waitpid(p, &st, 0) != p)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* tgtadm on our control port with the given arguments (NULL-terminated). */
static int tgtadm(const char *first, ...)
{
	char *argv[24] = { TGTADM, "-C", ctl, "--lld", "iscsi" };
	int n = 5;
	va_list ap;

	va_start(ap, first);
	for (const char *a = first; a && n < 23; a = va_arg(ap, const char *))
		argv[n++] = (char *)a;
	va_end(ap);
	argv[n] = NULL;
	return run(argv);
}

static unsigned free_port(void)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t sl = sizeof(sa);
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	unsigned p = 0;

	if (fd >= 0 && bind(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0 &&
	    getsockname(fd, (struct sockaddr *)&sa, &sl) == 0)
		p = ntohs(sa.sin_port);
	if (fd >= 0)
		close(fd);
	return p;
}

static void tgt_up(void)
{
	const char *tmp = getenv("TMPDIR");
	char portal[64], disk[600];
	uint64_t end = now_ms() + WAIT_MS;
	int fd, ok = 0;

	snprintf(dir, sizeof(dir), "%s/osdtgt.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(disk, sizeof(disk), "%s/disk.img", dir);
	fd = open(disk, O_CREAT | O_RDWR, 0600);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(ftruncate(fd, DISK_BYTES), 0);
	close(fd);
	port = free_port();
	ck_assert_uint_ne(port, 0);
	/* the control port names tgtd's management socket: keep it per process */
	snprintf(ctl, sizeof(ctl), "%u", 10000u + (unsigned)getpid() % 20000u); /* tgtd: < 32768 */
	snprintf(portal, sizeof(portal), "portal=127.0.0.1:%u", port);
	tgtd_pid = fork();
	ck_assert_int_ge(tgtd_pid, 0);
	if (tgtd_pid == 0) {
		int null = open("/dev/null", O_WRONLY);

		dup2(null, 1);
		dup2(null, 2);
		execl(TGTD, "tgtd", "-f", "-C", ctl, "--iscsi", portal, (char *)NULL);
		_exit(127);
	}
	while (now_ms() < end) {
		if (tgtadm("--op", "show", "--mode", "sys", NULL) == 0) {
			ok = 1;
			break;
		}
		if (waitpid(tgtd_pid, NULL, WNOHANG) == tgtd_pid) {
			tgtd_pid = -1;
			break;
		}
		poll(NULL, 0, 20); /* waiting for tgtd's socket, bounded above */
	}
	ck_assert_msg(ok, "tgtd did not start");
	ck_assert_int_eq(tgtadm("--op", "new", "--mode", "target", "--tid", "1", "-T", TARGET, NULL), 0);
	ck_assert_int_eq(tgtadm("--op", "new", "--mode", "logicalunit", "--tid", "1", "--lun", "1",
				"-b", disk, NULL), 0);
	ck_assert_int_eq(tgtadm("--op", "bind", "--mode", "target", "--tid", "1", "-I", "ALL", NULL), 0);
}

static void tgt_down(void)
{
	if (tgtd_pid > 0) {
		uint64_t end = now_ms() + 5000;

		/* tgtd ignores SIGTERM: ask it to stop, SIGKILL if it does not */
		tgtadm("--op", "delete", "--mode", "target", "--tid", "1", "--force", NULL);
		tgtadm("--op", "delete", "--mode", "system", NULL);
		while (waitpid(tgtd_pid, NULL, WNOHANG) != tgtd_pid) {
			if (now_ms() > end) {
				kill(tgtd_pid, SIGKILL);
				waitpid(tgtd_pid, NULL, 0);
				break;
			}
			poll(NULL, 0, 20);
		}
	}
	tgtd_pid = -1;
	if (dir[0])
		nftw(dir, rm_one, 8, FTW_DEPTH | FTW_PHYS);
	dir[0] = '\0';
}

struct xchg {
	struct osd_xfer x;
	struct iovec iov;
	int called, err;
};

static void on_done(struct osd_xfer *x, int err)
{
	struct xchg *e = x->priv;

	e->called = 1;
	e->err = err;
}

/* One command, driven like an event loop. Returns the SCSI status. */
static int exec_cdb(struct osd_transport *tp, const uint8_t *cdb, size_t cdb_len, void *buf,
		    size_t len, int write)
{
	struct xchg e;
	uint64_t end = now_ms() + WAIT_MS;

	memset(&e, 0, sizeof(e));
	e.iov.iov_base = buf;
	e.iov.iov_len = len;
	e.x.cdb = cdb;
	e.x.cdb_len = cdb_len;
	if (len && write) {
		e.x.out_iov = &e.iov;
		e.x.out_iovcnt = 1;
		e.x.out_len = len;
	} else if (len) {
		e.x.in_iov = &e.iov;
		e.x.in_iovcnt = 1;
		e.x.in_len = len;
	}
	e.x.done = on_done;
	e.x.priv = &e;
	ck_assert_int_eq(tp->ops->submit(tp->impl, &e.x), 0);
	while (!e.called) {
		struct pollfd pfd = { .fd = tp->ops->get_fd(tp->impl),
				      .events = (short)tp->ops->which_events(tp->impl) };

		ck_assert_uint_lt(now_ms(), end);
		poll(&pfd, 1, 100);
		tp->ops->service(tp->impl, pfd.revents);
	}
	ck_assert_int_eq(e.err, 0);
	last_sense_len = e.x.sense_len;
	/* fixed (70h/71h) or descriptor (72h/73h) format */
	last_sense_key = e.x.sense_len < 3 ? 0 :
			 (e.x.sense[0] & 0x7E) == 0x72 ? e.x.sense[1] & 0xF : e.x.sense[2] & 0xF;
	return e.x.status;
}

/* _i = digests off / on */
START_TEST(scsi_commands)
{
	struct osd_iscsi_options o = OSD_ISCSI_OPTIONS_INIT;
	struct osd_iscsi_target_info *v = NULL;
	struct osd_transport tp;
	static uint8_t wbuf[65536], rbuf[65536];
	uint8_t buf[4096], cdb[16];
	char url[256], err[256] = "";
	size_t n = 0;
	int st;

	snprintf(url, sizeof(url), "127.0.0.1:%u", port);
	ck_assert_int_eq(osd_iscsi_discover(&v, &n, url, NULL), 0);
	ck_assert_uint_eq(n, 1);
	ck_assert_str_eq(v[0].name, TARGET);
	free(v);

	if (_i) { /* tgt offers no digests unless told to */
		ck_assert_int_eq(tgtadm("--op", "update", "--mode", "target", "--tid", "1",
					"-n", "HeaderDigest", "-v", "CRC32C", NULL), 0);
		ck_assert_int_eq(tgtadm("--op", "update", "--mode", "target", "--tid", "1",
					"-n", "DataDigest", "-v", "CRC32C", NULL), 0);
	}
	o.header_digest = o.data_digest = _i ? OSD_ISCSI_DIGEST_CRC32C : OSD_ISCSI_DIGEST_NONE;
	o.errbuf = err;
	o.errbuf_len = sizeof(err);
	snprintf(url, sizeof(url), "iscsi://127.0.0.1:%u/" TARGET "/1", port);
	ck_assert_msg(osd_iscsi_transport_new(&tp, url, &o) == 0, "%s", err);

	memset(cdb, 0, sizeof(cdb)); /* INQUIRY */
	cdb[0] = 0x12;
	cdb[4] = 96;
	memset(buf, 0, sizeof(buf));
	st = exec_cdb(&tp, cdb, 6, buf, 96, 0);
	ck_assert_int_eq(st, 0);
	ck_assert_uint_eq(buf[0] & 0x1F, 0); /* direct-access block device */
	ck_assert_mem_eq(buf + 8, "IET     ", 8);

	memset(cdb, 0, sizeof(cdb)); /* TEST UNIT READY: the first reports the new LUN */
	st = exec_cdb(&tp, cdb, 6, NULL, 0, 0);
	if (st == 2) {
		ck_assert_uint_ge(last_sense_len, 3);
		ck_assert_uint_eq(last_sense_key, 6); /* UNIT ATTENTION */
		st = exec_cdb(&tp, cdb, 6, NULL, 0, 0);
	}
	ck_assert_int_eq(st, 0);

	memset(cdb, 0, sizeof(cdb)); /* REPORT LUNS: LUN 0 (controller) and 1 */
	cdb[0] = 0xA0;
	cdb[8] = 0x10;
	memset(buf, 0, sizeof(buf));
	ck_assert_int_eq(exec_cdb(&tp, cdb, 12, buf, 4096, 0), 0);
	ck_assert_mem_eq(buf, "\0\0\0\x10", 4);
	ck_assert_mem_eq(buf + 8, "\0\0\0\0\0\0\0\0", 8);
	ck_assert_mem_eq(buf + 16, "\0\1\0\0\0\0\0\0", 8);

	memset(cdb, 0, sizeof(cdb)); /* READ CAPACITY(10) */
	cdb[0] = 0x25;
	memset(buf, 0, sizeof(buf));
	ck_assert_int_eq(exec_cdb(&tp, cdb, 10, buf, 8, 0), 0);
	ck_assert_mem_eq(buf, "\0\0\x7f\xff\0\0\x02\0", 8); /* 32768 x 512 */

	/* WRITE(10) of 64 KiB (immediate data, then R2T) and READ(10) back */
	for (size_t i = 0; i < sizeof(wbuf); i++)
		wbuf[i] = (uint8_t)(i * 13 + (size_t)_i);
	memset(cdb, 0, sizeof(cdb));
	cdb[0] = 0x2A;
	cdb[5] = 8;                  /* LBA 8 */
	cdb[8] = sizeof(wbuf) / 512; /* 128 blocks */
	ck_assert_int_eq(exec_cdb(&tp, cdb, 10, wbuf, sizeof(wbuf), 1), 0);
	cdb[0] = 0x28;
	memset(rbuf, 0, sizeof(rbuf));
	ck_assert_int_eq(exec_cdb(&tp, cdb, 10, rbuf, sizeof(rbuf), 0), 0);
	ck_assert_mem_eq(rbuf, wbuf, sizeof(wbuf));

	tp.ops->destroy(tp.impl);
}
END_TEST

int main(void)
{
	SRunner *sr;
	Suite *s;
	TCase *tc;
	int failed;

	if (access(TGTD, X_OK) || access(TGTADM, X_OK) || geteuid() != 0) {
		fprintf(stderr, "tgtd not installed or not root: skipped\n");
		return 77;
	}
	s = suite_create("iscsi_tgt");
	tc = tcase_create("tgt");
	tcase_set_timeout(tc, 60);
	tcase_add_checked_fixture(tc, tgt_up, tgt_down);
	tcase_add_loop_test(tc, scsi_commands, 0, 2);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
