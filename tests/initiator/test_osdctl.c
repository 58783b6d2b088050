/* osdctl end to end: the installed tool's commands on a temporary store,
 * its JSON output, and its usage errors (exit 2) and failures (exit 1). */
#include <check.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "target_fixture.h"

#ifndef OSDCTL_PATH
#error "OSDCTL_PATH must name the osdctl binary"
#endif

static char dir[256], store[300];
static char out[1 << 16], err[4096];

/* Run osdctl with @p in as stdin (NULL: /dev/null); NULL-terminated args.
 * Returns the exit status; stdout in out[], stderr in err[]. */
static int ctl(const char *in, ...)
{
	const char *argv[32] = { "osdctl" };
	int n = 1, po[2], pe[2], status;
	va_list ap;
	pid_t pid;

	va_start(ap, in);
	while (n < 31 && (argv[n] = va_arg(ap, const char *)) != NULL)
		n++;
	va_end(ap);
	argv[n] = NULL;
	ck_assert_int_eq(pipe(po), 0);
	ck_assert_int_eq(pipe(pe), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		int fd = open(in ? in : "/dev/null", O_RDONLY);

		dup2(fd, 0);
		dup2(po[1], 1);
		dup2(pe[1], 2);
		close(po[0]);
		close(pe[0]);
		execv(OSDCTL_PATH, (char *const *)argv);
		_exit(127);
	}
	close(po[1]);
	close(pe[1]);
	/* stdout may be large; stderr is short: read stdout fully first */
	size_t no = 0, ne = 0;
	ssize_t r;

	while ((r = read(po[0], out + no, sizeof(out) - 1 - no)) > 0)
		no += (size_t)r;
	while ((r = read(pe[0], err + ne, sizeof(err) - 1 - ne)) > 0)
		ne += (size_t)r;
	out[no] = '\0';
	err[ne] = '\0';
	close(po[0]);
	close(pe[0]);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status));
	return WEXITSTATUS(status);
}

static void setup(void)
{
	const char *tmp = getenv("TMPDIR");

	snprintf(dir, sizeof(dir), "%s/osdctl.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(store, sizeof(store), "%s/store", dir);
}

static void teardown(void)
{
	fixture_rmtree(dir);
}

static void write_file(const char *path, const void *p, size_t len)
{
	FILE *f = fopen(path, "wb");

	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fwrite(p, 1, len, f), len);
	ck_assert_int_eq(fclose(f), 0);
}

static size_t read_file(const char *path, uint8_t *buf, size_t cap)
{
	FILE *f = fopen(path, "rb");
	size_t n;

	ck_assert_ptr_nonnull(f);
	n = fread(buf, 1, cap, f);
	fclose(f);
	return n;
}

#define CTL_OK(...) ck_assert_msg(ctl(__VA_ARGS__) == 0, "osdctl failed: %s", err)

static void session(const char *version, const char *sec)
{
	static uint8_t data[300000], back[300001];
	char in[300], outp[300], expect[64], keyfile[300];
	const char *g[6] = { "--target", store, "--osd-version", version, "--security", sec };

	for (size_t i = 0; i < sizeof(data); i++)
		data[i] = (uint8_t)(i * 7 + 1);
	snprintf(keyfile, sizeof(keyfile), "%s/root.key", dir);
	write_file(keyfile, "00112233445566778899aabbccddeeff00112233\n", 41);
	ck_assert_int_eq(chmod(keyfile, 0600), 0); /* the tools refuse a key others can read */
	snprintf(in, sizeof(in), "%s/in.bin", dir);
	snprintf(outp, sizeof(outp), "%s/out.bin", dir);
	write_file(in, data, sizeof(data));

#define G g[0], g[1], g[2], g[3], g[4], g[5], "--key-file", keyfile
	CTL_OK(NULL, G, "format", NULL);
	CTL_OK(NULL, G, "create-partition", NULL);
	ck_assert_str_eq(out, "0x10000\n");
	CTL_OK(NULL, G, "create", "0x10000", NULL);
	ck_assert_str_eq(out, "0x10000\n");
	CTL_OK(NULL, G, "create", "65536", "0x20000", "--json", NULL);
	ck_assert_str_eq(out, "{\"partition\":65536,\"object\":131072}\n");
	CTL_OK(NULL, G, "write", "0x10000", "0x10000", "--input", in, NULL);
	CTL_OK(NULL, G, "read", "0x10000", "0x10000", "--output", outp, NULL);
	ck_assert_uint_eq(read_file(outp, back, sizeof(back)), sizeof(data));
	ck_assert_mem_eq(back, data, sizeof(data));
	/* stdin in, stdout out, at an offset */
	CTL_OK(in, G, "write", "0x10000", "0x20000", "--offset", "10", NULL);
	CTL_OK(NULL, G, "read", "0x10000", "0x20000", "--offset", "10", "--length", "100", NULL);
	ck_assert_mem_eq(out, data, 100);
	CTL_OK(NULL, G, "getattr", "0x10000", "0x20000", "1", "0x82", NULL);
	snprintf(expect, sizeof(expect), "%zu\n", sizeof(data) + 10);
	ck_assert_str_eq(out, expect);
	CTL_OK(NULL, G, "setattr", "0x10000", "0x20000", "0x10003", "1", "hello", "--text", NULL);
	CTL_OK(NULL, G, "getattr", "0x10000", "0x20000", "0x10003", "1", "--text", NULL);
	ck_assert_str_eq(out, "hello\n");
	CTL_OK(NULL, G, "setattr", "0x10000", "0x20000", "0x10003", "2", "258", "--size", "2", NULL);
	CTL_OK(NULL, G, "getattr", "0x10000", "0x20000", "0x10003", "2", "--json", NULL);
	ck_assert_str_eq(out, "{\"attributes\":[{\"page\":65539,\"number\":2,\"length\":2,"
			      "\"defined\":true,\"hex\":\"0x0102\",\"value\":258}]}\n");
	CTL_OK(NULL, G, "append", "0x10000", "0x20000", "--input", in, "--json", NULL);
	snprintf(expect, sizeof(expect), "{\"bytes\":%zu,\"offset\":%zu}\n", sizeof(data),
		 sizeof(data) + 10);
	ck_assert_str_eq(out, expect);
	CTL_OK(NULL, G, "list", "--json", NULL);
	ck_assert_str_eq(out, "{\"partitions\":[65536]}\n");
	CTL_OK(NULL, G, "list", "0x10000", "--json", NULL);
	ck_assert_str_eq(out, "{\"partition\":65536,\"objects\":[65536,131072]}\n");
	CTL_OK(NULL, G, "flush", NULL);
	CTL_OK(NULL, G, "flush", "0x10000", "0x20000", "--scope", "1", NULL);
	CTL_OK(NULL, G, "info", "--json", NULL);
	ck_assert_ptr_nonnull(strstr(out, "\"osd_version\":"));
	ck_assert_ptr_nonnull(strstr(out, "\"partitions\":1"));
	CTL_OK(NULL, G, "remove", "0x10000", "0x10000", NULL);
	/* failures: exit 1 with the device's message */
	ck_assert_int_eq(ctl(NULL, G, "read", "0x10000", "0x10000", NULL), 1);
	ck_assert_ptr_nonnull(strstr(err, "osdctl: read:"));
	ck_assert_int_eq(ctl(NULL, G, "remove-partition", "0x10000", NULL), 1);
	CTL_OK(NULL, G, "remove", "0x10000", "0x20000", NULL);
	CTL_OK(NULL, G, "remove-partition", "0x10000", NULL);
	CTL_OK(NULL, G, "list", NULL);
	ck_assert_str_eq(out, "");
#undef G
}

START_TEST(end_to_end_nosec_v2)
{
	session("2", "nosec");
}
END_TEST

START_TEST(end_to_end_nosec_v1)
{
	session("1", "nosec");
}
END_TEST

START_TEST(end_to_end_alldata_v1)
{
	session("1", "alldata");
}
END_TEST

START_TEST(end_to_end_capkey)
{
	session("auto", "capkey");
}
END_TEST

START_TEST(usage_errors)
{
	ck_assert_int_eq(ctl(NULL, NULL), 2);
	ck_assert_ptr_nonnull(strstr(err, "usage: osdctl"));
	ck_assert_int_eq(ctl(NULL, "frobnicate", NULL), 2);
	ck_assert_ptr_nonnull(strstr(err, "unknown command"));
	ck_assert_int_eq(ctl(NULL, "--target", store, "write", "0x10000", NULL), 2);
	ck_assert_ptr_nonnull(strstr(err, "missing arguments"));
	ck_assert_int_eq(ctl(NULL, "--target", store, "remove", "1", "2", "3", NULL), 2);
	ck_assert_int_eq(ctl(NULL, "--target", store, "read", "0x10000", "banana", NULL), 2);
	ck_assert_ptr_nonnull(strstr(err, "invalid object id: banana"));
	ck_assert_int_eq(ctl(NULL, "--target", store, "list", "--offset", "3", NULL), 2);
	ck_assert_ptr_nonnull(strstr(err, "not accepted"));
	ck_assert_int_eq(ctl(NULL, "list", NULL), 2);
	ck_assert_ptr_nonnull(strstr(err, "--target"));
	ck_assert_int_eq(ctl(NULL, "--target", store, "--security", "capkey", "list", NULL), 2);
	ck_assert_ptr_nonnull(strstr(err, "--key-file"));
	ck_assert_int_eq(ctl(NULL, "--target", store, "--security", "rot13", "list", NULL), 2);
	ck_assert_int_eq(ctl(NULL, "--target", store, "--osd-version", "3", "list", NULL), 2);
	ck_assert_int_eq(ctl(NULL, "--target", store, "read", "1", "2", "--offset", "-1", NULL), 2);
	ck_assert_int_eq(ctl(NULL, "--target", store, "setattr", "1", "2", "3", "4", "0xABC", NULL), 2);
	ck_assert_int_eq(ctl(NULL, "--target", store, "setattr", "1", "2", "3", "4", "300",
			     "--size", "1", NULL), 2);
	ck_assert_int_eq(ctl(NULL, "--bogus", NULL), 2);
	/* help and version exit 0 */
	ck_assert_int_eq(ctl(NULL, "--help", NULL), 0);
	ck_assert_ptr_nonnull(strstr(out, "create-partition"));
	ck_assert_int_eq(ctl(NULL, "write", "--help", NULL), 0);
	ck_assert_ptr_nonnull(strstr(out, "--input FILE"));
	ck_assert_int_eq(ctl(NULL, "--version", NULL), 0);
	ck_assert_ptr_nonnull(strstr(out, "osdctl "));
	ck_assert_int_eq(ctl(NULL, "list", "--version", NULL), 0);
	/* no store yet: an operation failure, not a usage error */
	ck_assert_int_eq(ctl(NULL, "--target", store, "list", NULL), 1);
	ck_assert_ptr_nonnull(strstr(err, "osdctl format"));
}
END_TEST

/* create-partition under CAPKEY also sets the partition's default security
 * method, so a NOSEC run is refused (and a stronger method is not). */
START_TEST(nosec_refused_on_capkey_partition)
{
	char keyfile[300];

	snprintf(keyfile, sizeof(keyfile), "%s/root.key", dir);
	write_file(keyfile, "00112233445566778899aabbccddeeff00112233\n", 41);
	ck_assert_int_eq(chmod(keyfile, 0600), 0); /* the tools refuse a key others can read */
#define K "--target", store, "--key-file", keyfile
	CTL_OK(NULL, K, "--security", "capkey", "format", NULL);
	CTL_OK(NULL, K, "--security", "capkey", "create-partition", "0x10000", NULL);
	CTL_OK(NULL, K, "--security", "capkey", "getattr", "0x10000", "0", "0x30000005", "1", NULL);
	ck_assert_str_eq(out, "1\n");
	CTL_OK(NULL, K, "--security", "capkey", "create", "0x10000", "0x10000", NULL);
	ck_assert_int_eq(ctl(NULL, "--target", store, "list", "0x10000", NULL), 1);
	ck_assert_ptr_nonnull(strstr(err, "osdctl: list: Permission denied: the target refused "
				       "the credential (the partition needs a stronger --security "
				       "method than nosec"));
	ck_assert_str_eq(out, "");
	ck_assert_int_eq(ctl(NULL, "--target", store, "read", "0x10000", "0x10000", NULL), 1);
	ck_assert_int_eq(ctl(NULL, "--target", store, "remove", "0x10000", "0x10000", NULL), 1);
	CTL_OK(NULL, K, "--security", "alldata", "list", "0x10000", NULL);
	ck_assert_str_eq(out, "0x10000\n");
#undef K
}
END_TEST

/* The data file of @p store holding exactly @p size bytes (not a sidecar). */
static void find_data_file(const char *st, off_t size, char *path, size_t n)
{
	char sub[400];

	path[0] = 0;
	for (unsigned d = 0; d < 256 && !path[0]; d++) {
		DIR *dh;
		struct dirent *de;
		struct stat sb;

		snprintf(sub, sizeof(sub), "%s/data/%02x", st, d);
		if (!(dh = opendir(sub)))
			continue;
		while ((de = readdir(dh)) != NULL) {
			snprintf(path, n, "%s/%s", sub, de->d_name);
			if (strlen(de->d_name) == 16 && stat(path, &sb) == 0 && sb.st_size == size)
				break;
			path[0] = 0;
		}
		closedir(dh);
	}
	ck_assert_msg(path[0], "no data file of %lld bytes", (long long)size);
}

/* A flipped byte in an object's data: READ fails with MEDIUM ERROR naming
 * the object and the first bad byte; scrub finds it and exits 1. */
START_TEST(scrub_finds_damage)
{
	static uint8_t data[300000];
	char keyfile[300], in[300], path[700];
	uint8_t b;

	for (size_t i = 0; i < sizeof(data); i++)
		data[i] = (uint8_t)(i * 13 + 5);
	snprintf(keyfile, sizeof(keyfile), "%s/root.key", dir);
	write_file(keyfile, "00112233445566778899aabbccddeeff00112233\n", 41);
	ck_assert_int_eq(chmod(keyfile, 0600), 0);
	snprintf(in, sizeof(in), "%s/in.bin", dir);
	write_file(in, data, sizeof(data));
#define K "--target", store, "--key-file", keyfile, "--security", "capkey"
	CTL_OK(NULL, K, "format", NULL);
	CTL_OK(NULL, K, "create-partition", "0x10000", NULL);
	CTL_OK(NULL, K, "create", "0x10000", "0x10000", NULL);
	CTL_OK(NULL, K, "create", "0x10000", "0x20000", NULL);
	CTL_OK(NULL, K, "write", "0x10000", "0x10000", "--input", in, NULL);
	CTL_OK("/dev/null", K, "write", "0x10000", "0x20000", NULL);
	CTL_OK(NULL, K, "scrub", NULL);
	ck_assert_str_eq(out, "scrub: 2 objects, 300000 bytes verified, 0 damaged\n");
	find_data_file(store, sizeof(data), path, sizeof(path));
	int fd = open(path, O_RDWR);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(pread(fd, &b, 1, 123456), 1);
	b ^= 0x10;
	ck_assert_int_eq(pwrite(fd, &b, 1, 123456), 1);
	close(fd);
	ck_assert_int_eq(ctl(NULL, K, "read", "0x10000", "0x10000", "--output", in, NULL), 1);
	ck_assert_msg(strstr(err, "MEDIUM ERROR: UNRECOVERED READ ERROR: object 0x10000 in "
			     "partition 0x10000 at byte 122880"), "%s", err);
	ck_assert_int_eq(ctl(NULL, K, "scrub", NULL), 1);
	ck_assert_msg(strstr(err, "object 0x10000 in partition 0x10000: data damaged at byte "
			     "122880"), "%s", err);
	ck_assert_str_eq(out, "scrub: 2 objects, 0 bytes verified, 1 damaged\n");
	ck_assert_int_eq(ctl(NULL, K, "scrub", "0x10000", "--json", NULL), 1);
	ck_assert_msg(!strncmp(out, "{\"errors\":[{\"partition\":65536,\"object\":65536,"
			       "\"offset\":122880,\"message\":\"", 66), "%s", out);
	ck_assert_ptr_nonnull(strstr(out, "],\"objects\":2,\"bytes_verified\":0,"
				      "\"complete\":true}\n"));
	/* the object's other blocks still read */
	CTL_OK(NULL, K, "read", "0x10000", "0x10000", "--length", "100000", "--output", in, NULL);
	/* rewriting the data heals it */
	snprintf(in, sizeof(in), "%s/in2.bin", dir);
	write_file(in, data, sizeof(data));
	CTL_OK(NULL, K, "write", "0x10000", "0x10000", "--input", in, NULL);
	CTL_OK(NULL, K, "scrub", "0x10000", NULL);
	ck_assert_str_eq(out, "scrub: 2 objects, 300000 bytes verified, 0 damaged\n");
	ck_assert_int_eq(ctl(NULL, K, "scrub", "1", "2", NULL), 2);
#undef K
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("osdctl");
	TCase *tc = tcase_create("tool");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, end_to_end_nosec_v2);
	tcase_add_test(tc, end_to_end_nosec_v1);
	tcase_add_test(tc, end_to_end_capkey);
	tcase_add_test(tc, end_to_end_alldata_v1);
	tcase_add_test(tc, usage_errors);
	tcase_add_test(tc, nosec_refused_on_capkey_partition);
	tcase_add_test(tc, scrub_finds_damage);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
