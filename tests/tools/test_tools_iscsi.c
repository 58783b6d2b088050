/*
 * The tools against an iSCSI target: osd-targetd serves a store on
 * 127.0.0.1 (a free port, from --port-file) and osdfs, osdctl and
 * osdfs-mount reach it with --target iscsi://127.0.0.1:PORT/IQN/0. Covers a
 * filesystem round trip, the object commands, a mount, CAPKEY security set
 * up beforehand on the store (and a NOSEC run refused), and the usage errors
 * of bad URLs and iSCSI options. Skipped (77) without osd-targetd.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <osdtarget/iscsi.h>
#include "daemon_wait.h"
#include "tool_runner.h"

#define PATHF(buf, ...) \
	ck_assert_int_lt(snprintf(buf, sizeof(buf), __VA_ARGS__), (int)sizeof(buf))

/* Longest wait for the daemon's port or the mount to appear. */
#define START_WAIT_MS 10000
/* osdfs fsck's exit code when it could not check (or refused to repair) */
#define EXIT_FSCK_ERROR_CODE 8

static char *dir;
static char store[4096], url[512];
static pid_t daemon_pid = -1;

static void write_file(const char *path, const void *data, size_t len)
{
	FILE *f = fopen(path, "wb");

	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fwrite(data, 1, len, f), len);
	ck_assert_int_eq(fclose(f), 0);
}

/* The whole file into a malloc'd buffer; *len its size. */
static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	size_t cap = 0, n = 0, got;

	ck_assert_msg(f != NULL, "%s: %s", path, strerror(errno));
	do {
		if (n == cap) {
			cap = cap ? 2 * cap : 65536;
			buf = realloc(buf, cap);
			ck_assert_ptr_nonnull(buf);
		}
		got = fread(buf + n, 1, cap - n, f);
		n += got;
	} while (got > 0);
	fclose(f);
	*len = n;
	return buf;
}

static void same_file(const char *a, const char *b)
{
	size_t la, lb;
	char *da = slurp(a, &la), *db = slurp(b, &lb);

	ck_assert_uint_eq(la, lb);
	ck_assert_msg(la == 0 || memcmp(da, db, la) == 0, "%s and %s differ", a, b);
	free(da);
	free(db);
}

/* osd-targetd on 127.0.0.1, a free port, serving `store` as LUN 0. */
static void daemon_start(int create)
{
	char portfile[4200], logfile[4200];
	unsigned port;

	PATHF(portfile, "%s/port", dir);
	PATHF(logfile, "%s/targetd.log", dir);
	unlink(portfile);
	daemon_pid = fork();
	ck_assert_int_ge(daemon_pid, 0);
	if (daemon_pid == 0) {
		int fd = open(logfile, O_WRONLY | O_CREAT | O_APPEND, 0600);

		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		if (create)
			execl(OSD_TARGETD_PATH, "osd-targetd", "--listen", "127.0.0.1:0",
			      "--port-file", portfile, "--create", store, (char *)NULL);
		else
			execl(OSD_TARGETD_PATH, "osd-targetd", "--listen", "127.0.0.1:0",
			      "--port-file", portfile, store, (char *)NULL);
		_exit(127);
	}
	port = osd_test_wait_port(portfile, &daemon_pid, START_WAIT_MS);
	ck_assert_msg(port != 0, "osd-targetd did not start (see %s)", logfile);
	PATHF(url, "iscsi://127.0.0.1:%u/%s/0", port, OSD_TARGET_ISCSI_DEFAULT_NAME);
}

static void daemon_stop(void)
{
	int status;

	if (daemon_pid <= 0)
		return;
	kill(daemon_pid, SIGTERM);
	while (waitpid(daemon_pid, &status, 0) < 0 && errno == EINTR)
		;
	daemon_pid = -1;
}

static void setup(void)
{
	dir = run_mkdtemp("iscsi");
	snprintf(store, sizeof(store), "%s/store", dir);
	url[0] = '\0';
}

static void teardown(void)
{
	daemon_stop();
	run_rmtree(dir);
	free(dir);
	dir = NULL;
}

/* Runs a tool; asserts its exit status, printing its stderr on mismatch. */
static void expect_status(struct run_result *r, int want)
{
	ck_assert_msg(r->status == want, "exit %d (wanted %d): %s", r->status, want, r->err);
}

#define FS(r, want, ...) do { \
		run_tool(r, url, __VA_ARGS__, (char *)NULL); \
		expect_status(r, want); \
	} while (0)
#define CTL(r, want, ...) do { \
		run_prog(r, OSDCTL_PATH, "--target", url, __VA_ARGS__, (char *)NULL); \
		expect_status(r, want); \
	} while (0)

/* a, sub/b (spans several blocks), sub/deeper/empty */
static void make_tree(const char *top)
{
	char p[4200], *big = malloc(70001);

	ck_assert_ptr_nonnull(big);
	for (size_t i = 0; i < 70001; i++)
		big[i] = (char)(i * 31 + 7);
	ck_assert_int_eq(mkdir(top, 0755), 0);
	PATHF(p, "%s/a", top);
	write_file(p, "hello\n", 6);
	PATHF(p, "%s/sub", top);
	ck_assert_int_eq(mkdir(p, 0755), 0);
	PATHF(p, "%s/sub/b", top);
	write_file(p, big, 70001);
	PATHF(p, "%s/sub/deeper", top);
	ck_assert_int_eq(mkdir(p, 0700), 0);
	PATHF(p, "%s/sub/deeper/empty", top);
	write_file(p, "", 0);
	free(big);
}

START_TEST(osdfs_over_iscsi)
{
	struct run_result r;
	char in[4200], out[4200], a[4200], b[4200];
	static const char *const files[] = { "a", "sub/b", "sub/deeper/empty" };

	daemon_start(1);
	FS(&r, 0, "mkfs");
	ck_assert_ptr_nonnull(strstr(r.out, url));
	run_free(&r);
	PATHF(in, "%s/in", dir);
	PATHF(out, "%s/out", dir);
	make_tree(in);
	FS(&r, 0, "cp", "-r", in, ":/in");
	run_free(&r);
	FS(&r, 0, "ls", ":/in");
	ck_assert_str_eq(r.out, "a\nsub\n");
	run_free(&r);
	FS(&r, 0, "cat", ":/in/a");
	ck_assert_str_eq(r.out, "hello\n");
	run_free(&r);
	FS(&r, 0, "cp", "-r", ":/in", out);
	run_free(&r);
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		PATHF(a, "%s/%s", in, files[i]);
		PATHF(b, "%s/%s", out, files[i]);
		same_file(a, b);
	}
	FS(&r, 0, "df", "--json");
	ck_assert_ptr_nonnull(strstr(r.out, "\"inodes_used\":7,"));
	run_free(&r);
	FS(&r, 0, "fsck");
	ck_assert_str_eq(r.out, "clean: 7 inodes, 4 directories, 6 entries\n");
	run_free(&r);
}
END_TEST

START_TEST(osdctl_over_iscsi)
{
	struct run_result r;
	char in[4200], outp[4200], data[9000], expect[64];

	for (size_t i = 0; i < sizeof(data); i++)
		data[i] = (char)(i * 7 + 1);
	PATHF(in, "%s/in.bin", dir);
	PATHF(outp, "%s/out.bin", dir);
	write_file(in, data, sizeof(data));
	daemon_start(1);
	CTL(&r, 0, "format");
	ck_assert_str_eq(r.out, "formatted (OSD-2)\n");
	run_free(&r);
	CTL(&r, 0, "create-partition");
	ck_assert_str_eq(r.out, "0x10000\n");
	run_free(&r);
	CTL(&r, 0, "create", "0x10000");
	ck_assert_str_eq(r.out, "0x10000\n");
	run_free(&r);
	CTL(&r, 0, "write", "0x10000", "0x10000", "--input", in);
	run_free(&r);
	/* digests and our own initiator name: the same store, another login */
	CTL(&r, 0, "--header-digest", "crc32c", "--data-digest", "crc32c", "--initiator-name",
	    "iqn.2026-12.org.osd.test:tools", "read", "0x10000", "0x10000", "--output", outp);
	run_free(&r);
	same_file(in, outp);
	CTL(&r, 0, "getattr", "0x10000", "0x10000", "1", "0x82");
	snprintf(expect, sizeof(expect), "%zu\n", sizeof(data));
	ck_assert_str_eq(r.out, expect);
	run_free(&r);
	CTL(&r, 0, "list", "--json");
	ck_assert_str_eq(r.out, "{\"partitions\":[65536]}\n");
	run_free(&r);
	CTL(&r, 0, "list", "0x10000", "--json");
	ck_assert_str_eq(r.out, "{\"partition\":65536,\"objects\":[65536]}\n");
	run_free(&r);
	/* a LUN the target does not have */
	ck_assert_int_lt(snprintf(outp, sizeof(outp), "%.*s1", (int)strlen(url) - 1, url),
			 (int)sizeof(outp));
	ck_assert_int_eq(run_prog(&r, OSDCTL_PATH, "--target", outp, "list", (char *)NULL), 1);
	ck_assert_ptr_nonnull(strstr(r.err, outp));
	run_free(&r);
}
END_TEST

/* The store keyed beforehand (its root key set out of band, here by an
 * embedded osdctl format); over iSCSI the tools are the security manager. */
START_TEST(capkey_over_iscsi)
{
	struct run_result r;
	char key[4200], other[4200], f[4200];

	PATHF(key, "%s/root.key", dir);
	PATHF(other, "%s/other.key", dir);
	PATHF(f, "%s/f", dir);
	write_file(key, "00112233445566778899aabbccddeeff00112233\n", 41);
	write_file(other, "ffeeddccbbaa99887766554433221100ffeeddcc\n", 41);
	/* the tools refuse a key file others can read */
	ck_assert_int_eq(chmod(key, 0600), 0);
	ck_assert_int_eq(chmod(other, 0600), 0);
	write_file(f, "secret data\n", 12);
	ck_assert_int_eq(run_prog(&r, OSDCTL_PATH, "--target", store, "--security", "capkey",
				  "--key-file", key, "format", (char *)NULL), 0);
	run_free(&r);
	daemon_start(0);
	FS(&r, 0, "--security", "capkey", "--key-file", key, "mkfs");
	run_free(&r);
	FS(&r, 0, "--security", "capkey", "--key-file", key, "cp", f, ":/f");
	run_free(&r);
	FS(&r, 0, "--security", "capkey", "--key-file", key, "cat", ":/f");
	ck_assert_str_eq(r.out, "secret data\n");
	run_free(&r);
	/* the partition demands CAPKEY: NOSEC is refused, and so is another key */
	FS(&r, 1, "cat", ":/f");
	ck_assert_str_eq(r.out, "");
	ck_assert_ptr_nonnull(strstr(r.err, "refused the credential"));
	run_free(&r);
	CTL(&r, 1, "list", "0x10000");
	ck_assert_ptr_nonnull(strstr(r.err, "refused the credential"));
	run_free(&r);
	FS(&r, 1, "--security", "capkey", "--key-file", other, "cat", ":/f");
	ck_assert_str_eq(r.out, "");
	run_free(&r);
	CTL(&r, 0, "--security", "capkey", "--key-file", key, "list", "0x10000");
	run_free(&r);
	/* nothing was lost */
	FS(&r, 0, "--security", "capkey", "--key-file", key, "fsck");
	ck_assert_str_eq(r.out, "clean: 2 inodes, 1 directories, 1 entries\n");
	run_free(&r);
}
END_TEST

static unsigned closed_port(void);

#define ROOT_NEEDS_KEY "Permission denied: the OSD's root is secured: --key-file with the root " \
	"key is needed"

/* Keyless osdctl @p cmd on the secured root: exit 1 naming what is needed. */
static void keyless_refused(const char *cmd, char *const *args)
{
	struct run_result r;
	char want[256];

	ck_assert_int_eq(run_progv(&r, OSDCTL_PATH, args), 1);
	snprintf(want, sizeof(want), "osdctl: %s: " ROOT_NEEDS_KEY, cmd);
	ck_assert_msg(strstr(r.err, want) != NULL, "'%s' not in: %s", want, r.err);
	ck_assert_str_eq(r.out, "");
	run_free(&r);
}

/*
 * The attacks of a keyless client on a store made with a root key: FORMAT,
 * CREATE PARTITION, LIST of partitions, info and raising the root's method
 * are refused and change nothing; with the root key every command works,
 * also after the owner raised the root's method to CMDRSP.
 */
START_TEST(root_secured_over_iscsi)
{
	struct run_result r;
	char key[4200], loose[4200], f[4200];

	PATHF(key, "%s/root.key", dir);
	PATHF(loose, "%s/loose.key", dir);
	PATHF(f, "%s/f", dir);
	write_file(key, "00112233445566778899aabbccddeeff00112233\n", 41);
	write_file(loose, "00112233445566778899aabbccddeeff00112233\n", 41);
	ck_assert_int_eq(chmod(key, 0600), 0);
	ck_assert_int_eq(chmod(loose, 0644), 0);
	write_file(f, "secret data\n", 12);
	ck_assert_int_eq(run_prog(&r, OSDCTL_PATH, "--target", store, "--security", "capkey",
				  "--key-file", key, "format", (char *)NULL), 0);
	run_free(&r);
	daemon_start(0);
	FS(&r, 0, "--security", "capkey", "--key-file", key, "mkfs");
	run_free(&r);
	FS(&r, 0, "--security", "capkey", "--key-file", key, "cp", f, ":/f");
	run_free(&r);
	/* (1) and (2): nothing keyless on the root */
	keyless_refused("format", (char *[]){ "--target", url, "format", NULL });
	keyless_refused("create-partition", (char *[]){ "--target", url, "create-partition",
			NULL });
	keyless_refused("list", (char *[]){ "--target", url, "list", NULL });
	keyless_refused("info", (char *[]){ "--target", url, "info", NULL });
	keyless_refused("setattr", (char *[]){ "--target", url, "setattr", "0", "0",
			"0x90000005", "1", "0x01", NULL });
	/* a key file others can read is refused before anything is sent */
	CTL(&r, 1, "--key-file", loose, "format");
	ck_assert_ptr_nonnull(strstr(r.err, "permissions 0644 for '"));
	ck_assert_ptr_nonnull(strstr(r.err, "loose.key' are too open"));
	run_free(&r);
	/* nothing changed: one partition, the file reads back */
	CTL(&r, 0, "--key-file", key, "list");
	ck_assert_str_eq(r.out, "0x10000\n");
	run_free(&r);
	FS(&r, 0, "--security", "capkey", "--key-file", key, "cat", ":/f");
	ck_assert_str_eq(r.out, "secret data\n");
	run_free(&r);
	/* with the root key (--security nosec or capkey) the root commands work */
	CTL(&r, 0, "--key-file", key, "info");
	ck_assert_ptr_nonnull(strstr(r.out, "partitions"));
	run_free(&r);
	CTL(&r, 0, "--key-file", key, "create-partition", "0x10001");
	ck_assert_str_eq(r.out, "0x10001\n");
	run_free(&r);
	/* the owner raises the root's method to CMDRSP: the tools follow it */
	CTL(&r, 0, "--security", "capkey", "--key-file", key, "setattr", "0", "0",
	    "0x90000005", "1", "0x02");
	run_free(&r);
	CTL(&r, 0, "--key-file", key, "list");
	ck_assert_str_eq(r.out, "0x10000\n0x10001\n");
	run_free(&r);
	CTL(&r, 0, "--security", "capkey", "--key-file", key, "info");
	run_free(&r);
	CTL(&r, 0, "--key-file", key, "getattr", "0", "0", "0x90000005", "1");
	ck_assert_str_eq(r.out, "2\n");
	run_free(&r);
	keyless_refused("list", (char *[]){ "--target", url, "list", NULL });
	FS(&r, 0, "--security", "capkey", "--key-file", key, "cat", ":/f");
	ck_assert_str_eq(r.out, "secret data\n");
	run_free(&r);
	CTL(&r, 1, "--key-file", key, "format"); /* not over partitions without --force */
	ck_assert_ptr_nonnull(strstr(r.err, "holds 2 partitions"));
	ck_assert_ptr_nonnull(strstr(r.err, "--force to erase"));
	run_free(&r);
	CTL(&r, 0, "--key-file", key, "list");
	ck_assert_str_eq(r.out, "0x10000\n0x10001\n");
	run_free(&r);
	CTL(&r, 0, "--key-file", key, "format", "--force");
	ck_assert_str_eq(r.out, "formatted (OSD-2)\n");
	run_free(&r);
	/* FORMAT kept the root key: still secured */
	keyless_refused("create-partition", (char *[]){ "--target", url, "create-partition",
			NULL });
}
END_TEST

/*
 * osd-targetd @p listen on `store` (no root key) with @p extra. @p refused:
 * it must exit by itself (its exit status is returned); else it must serve
 * (stopped again, -1 is returned). Its output goes to @p log.
 */
static int targetd_nosec(const char *listen, const char *extra, int refused, char *log,
			 size_t loglen)
{
	char portfile[4200], logfile[4200];
	unsigned port;
	int status;
	size_t n;
	FILE *lf;

	PATHF(portfile, "%s/port", dir);
	PATHF(logfile, "%s/nosec.log", dir);
	unlink(portfile);
	unlink(logfile);
	daemon_pid = fork();
	ck_assert_int_ge(daemon_pid, 0);
	if (daemon_pid == 0) {
		int fd = open(logfile, O_WRONLY | O_CREAT | O_TRUNC, 0600);

		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		execl(OSD_TARGETD_PATH, "osd-targetd", "--listen", listen, "--port-file", portfile,
		      "--create", store, extra, (char *)NULL);
		_exit(127);
	}
	status = -1;
	if (refused) {
		ck_assert_int_eq(waitpid(daemon_pid, &status, 0), daemon_pid);
		daemon_pid = -1;
		status = WIFEXITED(status) ? WEXITSTATUS(status) : 128;
	} else {
		port = osd_test_wait_port(portfile, &daemon_pid, START_WAIT_MS);
		ck_assert_msg(port != 0, "osd-targetd did not start (see %s)", logfile);
		daemon_stop();
	}
	lf = fopen(logfile, "r");
	ck_assert_ptr_nonnull(lf);
	n = fread(log, 1, loglen - 1, lf);
	log[n] = '\0';
	fclose(lf);
	return status;
}

/* A NOSEC root (no root key) is refused beyond loopback without --insecure, warned of on it. */
START_TEST(targetd_nosec_root)
{
	char log[8192];

	ck_assert_int_eq(targetd_nosec("0.0.0.0:0", NULL, 1, log, sizeof(log)), 1);
	ck_assert_ptr_nonnull(strstr(log, "has no root key: its root is NOSEC"));
	ck_assert_ptr_nonnull(strstr(log, "refusing to serve a NOSEC root on 0.0.0.0, which is "
				      "not a loopback address (--insecure to do it anyway)"));
	ck_assert_int_eq(targetd_nosec("0.0.0.0:0", "--insecure", 0, log, sizeof(log)), -1);
	ck_assert_ptr_nonnull(strstr(log, "osd-targetd: warning: LUN 0: "));
	ck_assert_ptr_nonnull(strstr(log, "has no root key: its root is NOSEC"));
	ck_assert_int_eq(targetd_nosec("127.0.0.1:0", NULL, 0, log, sizeof(log)), -1);
	ck_assert_ptr_nonnull(strstr(log, "osd-targetd: warning: LUN 0: "));
	ck_assert_ptr_null(strstr(log, "refusing"));
}
END_TEST

/* CHAP secret files: others may not read them, and 12 bytes at least (tools and daemon). */
START_TEST(chap_secret_files_checked)
{
	struct run_result r;
	char loose[4200], tiny[4200], log[8192], portfile[4200];
	int status;
	FILE *lf;
	size_t n;

	PATHF(loose, "%s/loose", dir);
	PATHF(tiny, "%s/tiny", dir);
	PATHF(portfile, "%s/port", dir);
	write_file(loose, "tools-chap-secret\n", 18);
	write_file(tiny, "abcd\n", 5);
	ck_assert_int_eq(chmod(loose, 0644), 0);
	ck_assert_int_eq(chmod(tiny, 0600), 0);
	PATHF(url, "iscsi://127.0.0.1:%u/%s/0", closed_port(), OSD_TARGET_ISCSI_DEFAULT_NAME);
	CTL(&r, 1, "--chap-user", "u", "--chap-secret-file", loose, "list");
	ck_assert_ptr_nonnull(strstr(r.err, "permissions 0644 for '"));
	ck_assert_ptr_nonnull(strstr(r.err, "/loose' are too open"));
	run_free(&r);
	CTL(&r, 1, "--chap-user", "u", "--chap-secret-file", tiny, "list");
	ck_assert_ptr_nonnull(strstr(r.err, "a CHAP secret file holds one line of 12 to 255 bytes"));
	run_free(&r);
	for (int i = 0; i < 2; i++) {
		const char *secret = i ? tiny : loose;
		char logfile[4200];

		PATHF(logfile, "%s/chap.log", dir);
		daemon_pid = fork();
		ck_assert_int_ge(daemon_pid, 0);
		if (daemon_pid == 0) {
			int fd = open(logfile, O_WRONLY | O_CREAT | O_TRUNC, 0600);

			if (fd >= 0) {
				dup2(fd, 1);
				dup2(fd, 2);
			}
			execl(OSD_TARGETD_PATH, "osd-targetd", "--listen", "127.0.0.1:0",
			      "--port-file", portfile, "--chap-user", "u", "--chap-secret-file",
			      secret, "--create", store, (char *)NULL);
			_exit(127);
		}
		ck_assert_int_eq(waitpid(daemon_pid, &status, 0), daemon_pid);
		daemon_pid = -1;
		ck_assert(WIFEXITED(status));
		ck_assert_int_eq(WEXITSTATUS(status), 1);
		lf = fopen(logfile, "r");
		ck_assert_ptr_nonnull(lf);
		n = fread(log, 1, sizeof(log) - 1, lf);
		log[n] = '\0';
		fclose(lf);
		ck_assert_ptr_nonnull(strstr(log, i ? "CHAP secret of 4 bytes; at least 12 needed"
						    : "permissions 0644 for '"));
	}
}
END_TEST

/* A port nobody listens on: bound, then closed. */
static unsigned closed_port(void)
{
	struct sockaddr_in sa;
	socklen_t len = sizeof(sa);
	int s = socket(AF_INET, SOCK_STREAM, 0);

	ck_assert_int_ge(s, 0);
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ck_assert_int_eq(bind(s, (struct sockaddr *)&sa, sizeof(sa)), 0);
	ck_assert_int_eq(getsockname(s, (struct sockaddr *)&sa, &len), 0);
	close(s);
	return ntohs(sa.sin_port);
}

static void usage_error(const char *prog, const char *what, char *const *args)
{
	struct run_result r;

	ck_assert_int_eq(run_progv(&r, prog, args), 2);
	ck_assert_msg(strstr(r.err, what) != NULL, "'%s' not in: %s", what, r.err);
	ck_assert_str_eq(r.out, "");
	run_free(&r);
}

START_TEST(usage_errors)
{
	const char *tools[] = { OSDCTL_PATH, OSDFS_TOOL_PATH };
	const char *cmd[] = { "list", "ls" };
	struct run_result r;
	char refused[128], secret[4200];

	PATHF(secret, "%s/secret", dir);
	write_file(secret, "0123456789abcdef\n", 17);
	ck_assert_int_eq(chmod(secret, 0600), 0); /* a CHAP secret others can read is refused */
	for (int i = 0; i < 2; i++) {
		char *c = (char *)cmd[i];

		usage_error(tools[i], "port out of range", (char *[]){ "--target",
			    "iscsi://127.0.0.1:0/iqn.2026-12.org.osd:target/0", c, NULL });
		usage_error(tools[i], "is not a valid iSCSI name", (char *[]){ "--target",
			    "iscsi://127.0.0.1/target/0", c, NULL });
		usage_error(tools[i], "iscsi://", (char *[]){ "--target",
			    "http://127.0.0.1/iqn.2026-12.org.osd:target/0", c, NULL });
		usage_error(tools[i], "not none or crc32c", (char *[]){ "--target",
			    "iscsi://127.0.0.1/iqn.2026-12.org.osd:target/0", "--data-digest",
			    "md5", c, NULL });
		usage_error(tools[i], "need an iscsi:// --target", (char *[]){ "--target", dir,
			    "--header-digest", "crc32c", c, NULL });
		usage_error(tools[i], "go together", (char *[]){ "--target",
			    "iscsi://127.0.0.1/iqn.2026-12.org.osd:target/0", "--chap-user", "u",
			    c, NULL });
		/* well formed, but nobody answers: exit 1 naming the URL */
		PATHF(refused, "iscsi://127.0.0.1:%u/%s/0", closed_port(),
		      OSD_TARGET_ISCSI_DEFAULT_NAME);
		ck_assert_int_eq(run_prog(&r, tools[i], "--target", refused, c, (char *)NULL), 1);
		ck_assert_ptr_nonnull(strstr(r.err, refused));
		run_free(&r);
		/* a missing CHAP secret file is named */
		ck_assert_int_eq(run_prog(&r, tools[i], "--target", refused, "--chap-user", "u",
					  "--chap-secret-file", "/nonexistent/secret", c,
					  (char *)NULL), 1);
		ck_assert_ptr_nonnull(strstr(r.err, "/nonexistent/secret"));
		run_free(&r);
	}
	if (OSDFS_MOUNT_PATH[0])
		usage_error(OSDFS_MOUNT_PATH, "is not a valid iSCSI name", (char *[]){
			    "iscsi://127.0.0.1/target/0", dir, NULL });
}
END_TEST

/* CHAP: the daemon demands it; the right secret logs in, a wrong one not. */
START_TEST(chap_over_iscsi)
{
	struct run_result r;
	char good[4200], bad[4200], portfile[4200];
	unsigned port;

	PATHF(good, "%s/good", dir);
	PATHF(bad, "%s/bad", dir);
	PATHF(portfile, "%s/port", dir);
	write_file(good, "tools-chap-secret\n", 18);
	write_file(bad, "not-the-chap-secret\n", 20);
	/* CHAP secret files others can read are refused */
	ck_assert_int_eq(chmod(good, 0600), 0);
	ck_assert_int_eq(chmod(bad, 0600), 0);
	daemon_pid = fork();
	ck_assert_int_ge(daemon_pid, 0);
	if (daemon_pid == 0) {
		int fd = open("/dev/null", O_WRONLY);

		dup2(fd, 1);
		dup2(fd, 2);
		execl(OSD_TARGETD_PATH, "osd-targetd", "--listen", "127.0.0.1:0", "--port-file",
		      portfile, "--chap-user", "tools", "--chap-secret-file", good, "--create",
		      store, (char *)NULL);
		_exit(127);
	}
	port = osd_test_wait_port(portfile, &daemon_pid, START_WAIT_MS);
	ck_assert_uint_ne(port, 0);
	PATHF(url, "iscsi://127.0.0.1:%u/%s/0", port, OSD_TARGET_ISCSI_DEFAULT_NAME);
	CTL(&r, 0, "--chap-user", "tools", "--chap-secret-file", good, "format");
	run_free(&r);
	CTL(&r, 1, "--chap-user", "tools", "--chap-secret-file", bad, "list");
	ck_assert_ptr_nonnull(strstr(r.err, "refused the login"));
	run_free(&r);
	CTL(&r, 1, "list");
	run_free(&r);
}
END_TEST

static int is_mounted(const char *mp)
{
	FILE *f = fopen("/proc/self/mountinfo", "r");
	char line[8192], field[4200];
	int found = 0;

	if (!f)
		return 0;
	while (!found && fgets(line, sizeof(line), f))
		found = sscanf(line, "%*s %*s %*s %*s %4199s", field) == 1 &&
			strcmp(field, mp) == 0;
	fclose(f);
	return found;
}

/* osdfs-mount -f of the URL as our child; the mount is up when this returns. */
static pid_t mount_url(const char *mp)
{
	uint64_t end = osd_test_now_ms() + START_WAIT_MS;
	pid_t pid = fork();
	int status;

	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		int fd = open("/dev/null", O_WRONLY);

		dup2(fd, 1);
		execl(OSDFS_MOUNT_PATH, "osdfs-mount", "-f", "-o", "mkfs,header-digest=crc32c",
		      url, mp, (char *)NULL);
		_exit(127);
	}
	while (!is_mounted(mp)) {
		ck_assert_msg(waitpid(pid, &status, WNOHANG) == 0, "osdfs-mount ended early");
		ck_assert_msg(osd_test_now_ms() < end, "the mount did not appear");
		poll(NULL, 0, 10); /* waiting for a condition, bounded above */
	}
	return pid;
}

/* umount2() retried while EBUSY, for up to 10 s: tests running beside this
 * one (stress-ng's "io" stressor syncfs()es every mount point) may hold the
 * mount for a moment. */
static int unmount_busy_retry(const char *mp)
{
	uint64_t end = osd_test_now_ms() + 10000;
	int rc;

	while ((rc = umount2(mp, 0)) < 0 && errno == EBUSY && osd_test_now_ms() < end)
		poll(NULL, 0, 20); /* waiting for a condition, bounded above */
	return rc;
}

/* mount_over_iscsi needs the FUSE tool, root and /dev/fuse. */
static int can_mount(void)
{
	return OSDFS_MOUNT_PATH[0] && geteuid() == 0 && access("/dev/fuse", R_OK | W_OK) == 0;
}

START_TEST(mount_over_iscsi)
{
	static const char text[] = "written through FUSE over iSCSI\n";
	struct run_result r;
	char mp[4200], file[4200];
	size_t len;
	char *back;
	pid_t pid;
	int status;

	daemon_start(1);
	PATHF(mp, "%s/mnt", dir);
	ck_assert_int_eq(mkdir(mp, 0755), 0);
	pid = mount_url(mp);
	PATHF(file, "%s/hello", mp);
	write_file(file, text, strlen(text));
	back = slurp(file, &len);
	ck_assert_uint_eq(len, strlen(text));
	ck_assert(memcmp(back, text, len) == 0);
	free(back);
	ck_assert_int_eq(unmount_busy_retry(mp), 0);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	ck_assert(WIFEXITED(status));
	ck_assert_int_eq(WEXITSTATUS(status), 0);
	/* what the mount wrote is on the target */
	FS(&r, 0, "cat", ":/hello");
	ck_assert_str_eq(r.out, text);
	run_free(&r);
	FS(&r, 0, "fsck");
	run_free(&r);
}
END_TEST

/* osdfs put - /held over the URL, reading @p in: a read-write mount that
 * holds the filesystem (renewing its lease) while it waits for input. */
static pid_t holder_start(int in, const char *errf)
{
	pid_t pid = fork();

	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		int err = open(errf, O_WRONLY | O_CREAT | O_TRUNC, 0600);

		dup2(in, 0);
		dup2(err, 2);
		execl(OSDFS_TOOL_PATH, "osdfs", "--target", url, "put", "-", "/held", (char *)NULL);
		_exit(127);
	}
	return pid;
}

/* Waits (bounded) until a check of the filesystem warns that it is in use
 * and finds it clean (while the holder mounts and creates its file, a
 * check may see a change half made, as the warning says). */
static void wait_held(void)
{
	uint64_t end = osd_test_now_ms() + START_WAIT_MS;
	struct run_result r;

	for (;;) {
		run_tool(&r, url, "fsck", (char *)NULL);
		if (r.status == 0 && strstr(r.err, "it looks alive"))
			break;
		run_free(&r);
		ck_assert_msg(osd_test_now_ms() < end, "the holder did not mount");
		poll(NULL, 0, 20); /* waiting for a condition, bounded above */
	}
	ck_assert_ptr_nonnull(strstr(r.err, "fsck: warning: "));
	ck_assert_ptr_nonnull(strstr(r.err, "checking it in use"));
	ck_assert_int_eq(strncmp(r.out, "clean: ", 7), 0); /* no false damage when idle */
	run_free(&r);
}

/*
 * Another client holds the filesystem (over iSCSI, as in the report of a
 * running copy broken by fsck --repair): a check runs with a warning, a
 * repair and every takeover are refused, --force included. Once the holder
 * is killed, its record is stale: commands say to use --force, and
 * --force fsck --repair takes over and leaves it clean. An interrupted
 * holder leaves nothing to take over.
 */
START_TEST(live_holder_over_iscsi)
{
	struct run_result r;
	char errf[4200], f[4200];
	int p[2], status;
	pid_t pid;

	PATHF(errf, "%s/holder.err", dir);
	PATHF(f, "%s/f", dir);
	write_file(f, "data\n", 5);
	daemon_start(1);
	FS(&r, 0, "mkfs");
	run_free(&r);
	ck_assert_int_eq(pipe2(p, O_CLOEXEC), 0);
	pid = holder_start(p[0], errf);
	wait_held();
	FS(&r, EXIT_FSCK_ERROR_CODE, "fsck", "--repair");
	ck_assert_ptr_nonnull(strstr(r.err, "not repaired while in use"));
	run_free(&r);
	FS(&r, EXIT_FSCK_ERROR_CODE, "--force", "fsck", "--repair");
	run_free(&r);
	FS(&r, 1, "put", f, "/f");
	ck_assert_ptr_nonnull(strstr(r.err, "the holder is alive: unmount it there first"));
	run_free(&r);
	FS(&r, 1, "--force", "put", f, "/f");
	ck_assert_ptr_nonnull(strstr(r.err, "not taken over while its holder may still write"));
	run_free(&r);
	FS(&r, 1, "ls", "/");
	ck_assert_ptr_nonnull(strstr(r.err, "'osdfs --force ls ...' looks anyway"));
	run_free(&r);
	FS(&r, 0, "--force", "ls", "/");
	run_free(&r);
	if (OSDFS_MOUNT_PATH[0]) { /* refused before any FUSE mount is tried */
		ck_assert_int_eq(run_prog(&r, OSDFS_MOUNT_PATH, "-f", "--force", url, dir,
					  (char *)NULL), 1);
		ck_assert_ptr_nonnull(strstr(r.err, "may still write"));
		ck_assert_ptr_nonnull(strstr(r.err, "the holder is alive: unmount it there first"));
		run_free(&r);
		ck_assert_int_eq(run_prog(&r, OSDFS_MOUNT_PATH, "-f", "-o", "mkfs", url, dir,
					  (char *)NULL), 1);
		ck_assert_ptr_nonnull(strstr(r.err, "(it looks alive); unmount it there first"));
		run_free(&r);
	}
	/* the holder dies (this host, its process gone): --force is the way */
	kill(pid, SIGKILL);
	ck_assert_int_eq(waitpid(pid, NULL, 0), pid);
	FS(&r, 1, "put", f, "/f");
	ck_assert_ptr_nonnull(strstr(r.err, "that process no longer runs"));
	ck_assert_ptr_nonnull(strstr(r.err, "take over with 'osdfs --force put ...'"));
	run_free(&r);
	FS(&r, EXIT_FSCK_ERROR_CODE, "fsck", "--repair");
	ck_assert_ptr_nonnull(strstr(r.err, "run 'osdfs --force fsck --repair'"));
	run_free(&r);
	FS(&r, 4, "fsck");
	ck_assert_ptr_nonnull(strstr(r.out, "stale mount record"));
	run_free(&r);
	FS(&r, 1, "--force", "fsck", "--repair");
	run_free(&r);
	FS(&r, 0, "fsck");
	run_free(&r);
	FS(&r, 0, "put", f, "/f");
	run_free(&r);
	/* an interrupted holder unmounts: nothing to take over, nothing partial */
	pid = holder_start(p[0], errf);
	wait_held();
	kill(pid, SIGINT);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status));
	ck_assert_int_eq(WEXITSTATUS(status), 130);
	FS(&r, 0, "fsck");
	ck_assert_str_eq(r.out, "clean: 3 inodes, 1 directories, 2 entries\n");
	ck_assert_str_eq(r.err, "");
	run_free(&r);
	/* only the killed holder's temporary file is left (a dot file), no /held */
	FS(&r, 0, "ls", "-a", "/");
	ck_assert_ptr_nonnull(strstr(r.out, ".\n..\n.held.osdfs-put-"));
	ck_assert_ptr_nonnull(strstr(r.out, "\nf\n"));
	ck_assert_ptr_null(strstr(r.out, "\nheld\n"));
	run_free(&r);
	close(p[0]);
	close(p[1]);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("tools_iscsi");
	TCase *tc = tcase_create("iscsi");

	tcase_set_timeout(tc, 60);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, osdfs_over_iscsi);
	tcase_add_test(tc, osdctl_over_iscsi);
	tcase_add_test(tc, capkey_over_iscsi);
	tcase_add_test(tc, root_secured_over_iscsi);
	tcase_add_test(tc, targetd_nosec_root);
	tcase_add_test(tc, chap_secret_files_checked);
	tcase_add_test(tc, chap_over_iscsi);
	tcase_add_test(tc, usage_errors);
	tcase_add_test(tc, live_holder_over_iscsi);
	if (can_mount())
		tcase_add_test(tc, mount_over_iscsi);
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
	signal(SIGPIPE, SIG_IGN);
	sr = srunner_create(suite());
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	if (!failed && !can_mount()) {
		/* The rest passed; what could not run is reported as a skip. */
		fprintf(stderr, "mount_over_iscsi needs osdfs-mount, root and /dev/fuse: skipped\n");
		return 77;
	}
	return failed ? 1 : 0;
}
