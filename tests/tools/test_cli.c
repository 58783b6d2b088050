/*
 * The osdfs tool, run as a program: every command, its usage errors (exit
 * 2 with a message), failures (exit 1 naming the path and the errno text),
 * --json output, fsck exit codes on a damaged filesystem, and a small
 * cp -r round trip.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <osd/osd.h>
#include <osdfs/backends.h>
#include <osdfs/osdfs.h>
#include <osdtarget/target.h>
#include "tool_runner.h"

static char *dir, *store;

static void setup(void)
{
	dir = run_mkdtemp("cli");
	if (asprintf(&store, "%s/store", dir) < 0)
		abort();
}

static void teardown(void)
{
	run_rmtree(dir);
	free(dir);
	free(store);
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
}

static char *local(const char *name)
{
	static char buf[4][512];
	static int k;

	k = (k + 1) % 4;
	snprintf(buf[k], sizeof(buf[k]), "%s/%s", dir, name);
	return buf[k];
}

/* Runs and expects exit code @p want; returns the result (caller frees). */
#define RUN(res, want, ...) do { \
	int st_ = run_tool(&(res), store, __VA_ARGS__, NULL); \
	ck_assert_msg(st_ == (want), "exit %d (want %d); stderr: %s", st_, (want), (res).err); \
} while (0)

static void mkfs(void)
{
	struct run_result r;

	RUN(r, 0, "mkfs", "--label", "t");
	ck_assert_ptr_nonnull(strstr(r.out, "created a filesystem"));
	run_free(&r);
}

START_TEST(global_usage)
{
	struct run_result r;

	ck_assert_int_eq(run_tool(&r, NULL, (char *)NULL), 2);
	ck_assert_ptr_nonnull(strstr(r.err, "osdfs: no command given"));
	run_free(&r);
	ck_assert_int_eq(run_tool(&r, NULL, "frobnicate", NULL), 2);
	ck_assert_ptr_nonnull(strstr(r.err, "unknown command 'frobnicate'"));
	run_free(&r);
	ck_assert_int_eq(run_tool(&r, NULL, "--help", NULL), 0);
	ck_assert_ptr_nonnull(strstr(r.out, "usage: osdfs"));
	ck_assert_ptr_nonnull(strstr(r.out, "cp [-r] [-a] [-P|-H|-L] SRC... DEST"));
	run_free(&r);
	ck_assert_int_eq(run_tool(&r, NULL, "--version", NULL), 0);
	ck_assert_int_eq(strncmp(r.out, "osdfs ", 6), 0);
	run_free(&r);
	ck_assert_int_eq(run_tool(&r, NULL, "ls", "/", NULL), 2);
	ck_assert_ptr_nonnull(strstr(r.err, "osdfs: ls: no device given"));
	run_free(&r);
	ck_assert_int_eq(run_tool(&r, store, "--partition", "5", "ls", NULL), 2);
	ck_assert_ptr_nonnull(strstr(r.err, "--partition: '5'"));
	run_free(&r);
	ck_assert_int_eq(run_tool(&r, store, "--osd-version", "3", "ls", NULL), 2);
	ck_assert_ptr_nonnull(strstr(r.err, "--osd-version: '3'"));
	run_free(&r);
	ck_assert_int_eq(run_tool(&r, store, "--security", "bogus", "ls", NULL), 2);
	run_free(&r);
	ck_assert_int_eq(run_tool(&r, store, "--bogus", "ls", NULL), 2);
	ck_assert_ptr_nonnull(strstr(r.err, "unknown option '--bogus'"));
	run_free(&r);
}
END_TEST

START_TEST(command_help_and_usage_errors)
{
	static const char *cmds[] = { "mkfs", "ls", "stat", "cat", "put", "get", "cp", "mkdir",
				      "rm", "mv", "ln", "df", "fsck", "tree" };
	/* { command and arguments..., NULL } that must be usage errors */
	static const char *bad[][6] = {
		{ "ls", "-z", NULL }, { "stat", NULL }, { "cat", NULL }, { "put", "a", NULL },
		{ "get", "a", "b", "c", NULL }, { "cp", "a", NULL }, { "cp", "a", "b", NULL },
		{ "cp", ":/a", ":/b", NULL }, { "cp", "a", ":/b", "c", NULL }, { "mkdir", NULL },
		{ "mv", "a", NULL }, { "ln", "a", NULL }, { "df", "x", NULL },
		{ "fsck", "x", NULL }, { "tree", "a", "b", NULL }, { "mkfs", "--capacity", "lots", NULL },
		{ "mkfs", "--block-size", "3000", NULL }, { "mkfs", "--label", NULL },
		{ "rm", "-q", "x", NULL },
	};
	struct run_result r;

	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		char want[64];

		ck_assert_int_eq(run_tool(&r, NULL, cmds[i], "--help", NULL), 0);
		snprintf(want, sizeof(want), "usage: osdfs [global options] %s", cmds[i]);
		ck_assert_msg(strstr(r.out, want), "%s --help: %s", cmds[i], r.out);
		run_free(&r);
		ck_assert_int_eq(run_tool(&r, NULL, cmds[i], "--version", NULL), 0);
		run_free(&r);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int st = run_toolv(&r, store, (char *const *)bad[i]);

		ck_assert_msg(st == 2, "%s %s: exit %d", bad[i][0], bad[i][1] ? bad[i][1] : "", st);
		ck_assert_msg(strncmp(r.err, "osdfs: ", 7) == 0 && strstr(r.err, "Try 'osdfs --help'"),
			      "%s: %s", bad[i][0], r.err);
		run_free(&r);
	}
	/* nothing was created by the usage errors */
	ck_assert_int_eq(access(store, F_OK), -1);
}
END_TEST

START_TEST(no_store_and_no_fs)
{
	struct run_result r;

	RUN(r, 1, "ls", "/");
	ck_assert_ptr_nonnull(strstr(r.err, "no OSD store"));
	run_free(&r);
	/* a store without a filesystem on this partition */
	mkfs();
	ck_assert_int_eq(run_tool(&r, store, "--partition", "0x20000", "ls", NULL), 1);
	ck_assert_ptr_nonnull(strstr(r.err, "osdfs: ls: "));
	run_free(&r);
	ck_assert_int_eq(run_tool(&r, store, "--partition", "0x20000", "fsck", NULL), 4);
	run_free(&r);
}
END_TEST

START_TEST(file_commands)
{
	struct run_result r;
	struct stat st;
	char buf[64] = "";
	FILE *f;

	mkfs();
	write_file(local("hello.txt"), "hello, osdfs\n");
	RUN(r, 0, "mkdir", "/d");
	run_free(&r);
	RUN(r, 1, "mkdir", "/d");
	ck_assert_ptr_nonnull(strstr(r.err, "osdfs: mkdir: /d: File exists"));
	run_free(&r);
	RUN(r, 0, "mkdir", "-p", "/d/e/f", ":/g");
	run_free(&r);
	RUN(r, 0, "put", local("hello.txt"), ":/d");
	run_free(&r);
	RUN(r, 0, "put", local("hello.txt"), "/d/e/copy");
	run_free(&r);
	RUN(r, 0, "cat", "/d/hello.txt", ":/d/e/copy");
	ck_assert_str_eq(r.out, "hello, osdfs\nhello, osdfs\n");
	run_free(&r);
	RUN(r, 1, "cat", "/d/missing");
	ck_assert_ptr_nonnull(strstr(r.err, "osdfs: cat: /d/missing: No such file or directory"));
	run_free(&r);
	RUN(r, 0, "get", "/d/hello.txt", local("back.txt"));
	run_free(&r);
	f = fopen(local("back.txt"), "r");
	ck_assert_ptr_nonnull(f);
	ck_assert_ptr_nonnull(fgets(buf, sizeof(buf), f));
	fclose(f);
	ck_assert_str_eq(buf, "hello, osdfs\n");
	ck_assert_int_eq(stat(local("back.txt"), &st), 0);
	ck_assert_int_eq(st.st_size, 13);

	RUN(r, 0, "ln", "-s", "hello.txt", "/d/sym");
	run_free(&r);
	RUN(r, 0, "ln", "/d/hello.txt", "/g/hard");
	run_free(&r);
	RUN(r, 0, "cat", "/d/sym");
	ck_assert_str_eq(r.out, "hello, osdfs\n");
	run_free(&r);
	RUN(r, 0, "ls", "/d");
	ck_assert_str_eq(r.out, "e\nhello.txt\nsym\n");
	run_free(&r);
	RUN(r, 0, "ls", "-a", "/g");
	ck_assert_str_eq(r.out, ".\n..\nhard\n");
	run_free(&r);
	RUN(r, 0, "ls", "-l", "/d");
	ck_assert_ptr_nonnull(strstr(r.out, "lrwxrwxrwx"));
	ck_assert_ptr_nonnull(strstr(r.out, " sym -> hello.txt\n"));
	ck_assert_ptr_nonnull(strstr(r.out, "-rw-"));
	run_free(&r);
	RUN(r, 0, "ls", "-R", "/d");
	ck_assert_ptr_nonnull(strstr(r.out, "/d/e:\ncopy\nf\n"));
	run_free(&r);
	RUN(r, 0, "--json", "stat", "/g/hard");
	ck_assert_ptr_nonnull(strstr(r.out, "\"name\":\"hard\""));
	ck_assert_ptr_nonnull(strstr(r.out, "\"nlink\":2"));
	ck_assert_ptr_nonnull(strstr(r.out, "\"size\":13"));
	run_free(&r);
	RUN(r, 0, "stat", "/d/sym");
	ck_assert_ptr_nonnull(strstr(r.out, "  File: /d/sym -> hello.txt\n"));
	ck_assert_ptr_nonnull(strstr(r.out, "symlink"));
	run_free(&r);
	RUN(r, 0, "ls", "--json", "/g");
	ck_assert_int_eq(r.out[0], '[');
	ck_assert_ptr_nonnull(strstr(r.out, "\"path\":\"/g/hard\""));
	run_free(&r);

	RUN(r, 0, "mv", "/d/hello.txt", "/g");
	run_free(&r);
	RUN(r, 0, "mv", "/g/hello.txt", "/g/renamed");
	run_free(&r);
	RUN(r, 0, "ls", "/g");
	ck_assert_str_eq(r.out, "hard\nrenamed\n");
	run_free(&r);
	RUN(r, 1, "mv", "/nothing", "/g");
	ck_assert_ptr_nonnull(strstr(r.err, "No such file or directory"));
	run_free(&r);

	RUN(r, 1, "rm", "/d");
	ck_assert_ptr_nonnull(strstr(r.err, "osdfs: rm: /d: Is a directory"));
	run_free(&r);
	RUN(r, 1, "rm", "/nothing");
	ck_assert_ptr_nonnull(strstr(r.err, "/nothing: No such file or directory"));
	run_free(&r);
	RUN(r, 0, "rm", "-f", "/nothing");
	run_free(&r);
	RUN(r, 0, "rm", "-r", "/d");
	run_free(&r);
	RUN(r, 0, "rm", "/g/hard");
	run_free(&r);
	RUN(r, 0, "tree");
	ck_assert_str_eq(r.out, "/\n`-- g\n    `-- renamed\n\n1 directories, 1 files\n");
	run_free(&r);
	RUN(r, 0, "fsck");
	ck_assert_ptr_nonnull(strstr(r.out, "clean: 3 inodes"));
	run_free(&r);
}
END_TEST

START_TEST(df_and_json)
{
	struct run_result r;

	mkfs();
	RUN(r, 0, "df");
	ck_assert_ptr_nonnull(strstr(r.out, "1K-blocks"));
	ck_assert_ptr_nonnull(strstr(r.out, "\nt "));
	run_free(&r);
	RUN(r, 0, "df", "-h");
	ck_assert_ptr_nonnull(strstr(r.out, "Size"));
	run_free(&r);
	RUN(r, 0, "--json", "df");
	ck_assert_ptr_nonnull(strstr(r.out, "{\"label\":\"t\",\"block_size\":4096,"));
	ck_assert_ptr_nonnull(strstr(r.out, "\"inodes_used\":1"));
	run_free(&r);
	RUN(r, 0, "fsck", "--json");
	ck_assert_ptr_nonnull(strstr(r.out, "{\"findings\":[],\"status\":\"clean\",\"inodes\":1,"));
	run_free(&r);
}
END_TEST

/* Opens the store directly and removes the object of inode @p ino. */
static void damage_remove_inode(uint64_t ino)
{
	struct osd_target_options to = OSD_TARGET_OPTIONS_INIT;
	struct osd_transport tp;
	osd_target *tgt;
	osd_dev *dev;
	osdfs_backend *be;

	to.create = 0;
	ck_assert_int_eq(osd_target_open(&tgt, store, &to), 0);
	ck_assert_int_eq(osd_target_loopback(tgt, &tp), 0);
	ck_assert_int_eq(osd_dev_open(&dev, &tp, NULL), 0);
	ck_assert_int_eq(osdfs_backend_osd_new(&be, dev, 0x10000), 0);
	ck_assert_int_eq(osdfs_backend_ops_of(be)->remove(osdfs_backend_impl(be), 0x10000 + ino), 0);
	osdfs_backend_free(be);
	osd_dev_close(dev);
	osd_target_close(tgt);
}

START_TEST(fsck_exit_codes)
{
	struct run_result r;
	unsigned long long ino;
	char *p;

	mkfs();
	write_file(local("x"), "x");
	RUN(r, 0, "mkdir", "/d");
	run_free(&r);
	RUN(r, 0, "put", local("x"), "/d/x");
	run_free(&r);
	RUN(r, 0, "put", local("x"), "/d/y");
	run_free(&r);
	RUN(r, 0, "--json", "stat", "/d/x");
	p = strstr(r.out, "\"ino\":");
	ck_assert_ptr_nonnull(p);
	ino = strtoull(p + 6, NULL, 10);
	run_free(&r);
	damage_remove_inode(ino);
	RUN(r, 4, "fsck");
	ck_assert_ptr_nonnull(strstr(r.out, "dangling-entry: /d/x: entry names missing inode"));
	ck_assert_ptr_nonnull(strstr(r.out, "by kind: 1 dangling-entry\n1 problems found, 0 repaired, 1 left"));
	run_free(&r);
	RUN(r, 4, "--json", "fsck");
	ck_assert_ptr_nonnull(strstr(r.out, "\"status\":\"damaged\""));
	ck_assert_ptr_nonnull(strstr(r.out, "\"dangling-entry\":1"));
	run_free(&r);
	RUN(r, 1, "fsck", "--repair");
	ck_assert_ptr_nonnull(strstr(r.out, "1 problems found, 1 repaired, 0 left"));
	run_free(&r);
	RUN(r, 0, "fsck");
	run_free(&r);
	RUN(r, 0, "ls", "/d");
	ck_assert_str_eq(r.out, "y\n");
	run_free(&r);
}
END_TEST

START_TEST(cp_round_trip)
{
	struct run_result r;
	char cmd[1200];

	mkfs();
	ck_assert_int_eq(mkdir(local("src"), 0755), 0);
	ck_assert_int_eq(mkdir(local("src/sub"), 0750), 0);
	write_file(local("src/a"), "alpha\n");
	write_file(local("src/sub/b"), "beta\n");
	ck_assert_int_eq(symlink("../a", local("src/sub/l")), 0);
	ck_assert_int_eq(link(local("src/a"), local("src/sub/a2")), 0);
	RUN(r, 1, "cp", local("src"), ":/");
	ck_assert_ptr_nonnull(strstr(r.err, "omitting directory"));
	run_free(&r);
	RUN(r, 0, "cp", "-r", local("src"), ":/");
	run_free(&r);
	RUN(r, 0, "cp", "-r", ":/src", local("out"));
	run_free(&r);
	snprintf(cmd, sizeof(cmd), "diff -r '%s' '%s' >/dev/null 2>&1", local("src"), local("out"));
	ck_assert_int_eq(system(cmd), 0);
	/* copying to an existing directory goes inside it */
	ck_assert_int_eq(mkdir(local("into"), 0755), 0);
	RUN(r, 1, "cp", ":/src/a", ":/src/sub", local("into"));
	ck_assert_ptr_nonnull(strstr(r.err, "omitting directory"));
	run_free(&r);
	ck_assert_int_eq(access(local("into/a"), F_OK), 0);
}
END_TEST

START_TEST(security_methods)
{
	static const char *methods[] = { "capkey", "cmdrsp", "alldata" };
	struct run_result r;
	char key[512], wrong[512];

	snprintf(key, sizeof(key), "%s", local("root.key"));
	snprintf(wrong, sizeof(wrong), "%s", local("wrong.key"));
	write_file(key, "00112233445566778899aabbccddeeff00112233\n");
	write_file(wrong, "ffeeddccbbaa99887766554433221100ffeeddcc");
	/* the tools refuse a key file others can read */
	ck_assert_int_eq(chmod(key, 0600), 0);
	ck_assert_int_eq(chmod(wrong, 0600), 0);
	write_file(local("x"), "secret data\n");
	ck_assert_int_eq(run_tool(&r, store, "--security", "capkey", "ls", NULL), 2);
	ck_assert_ptr_nonnull(strstr(r.err, "needs --key-file"));
	run_free(&r);
	for (size_t i = 0; i < sizeof(methods) / sizeof(methods[0]); i++) {
		const char *m = methods[i];

		RUN(r, 0, "--security", m, "--key-file", key, "mkfs", "-f"); /* again each round */
		run_free(&r);
		RUN(r, 0, "--security", m, "--key-file", key, "put", local("x"), "/x");
		run_free(&r);
		RUN(r, 0, "--security", m, "--key-file", key, "cat", "/x");
		ck_assert_str_eq(r.out, "secret data\n");
		run_free(&r);
		RUN(r, 1, "--security", m, "--key-file", wrong, "cat", "/x");
		ck_assert_ptr_nonnull(strstr(r.err, "Permission denied"));
		/* another key fails the request ICV: an integrity refusal, said as such */
		ck_assert_ptr_nonnull(strstr(r.err, "refused the integrity check of the command"));
		ck_assert_ptr_null(strstr(r.err, "stronger --security"));
		run_free(&r);
		RUN(r, 0, "--security", m, "--key-file", key, "fsck");
		run_free(&r);
	}
	/* mkfs set the partition's default security method: NOSEC is refused,
	 * for reading and for making a filesystem over it alike. */
	RUN(r, 1, "cat", "/x");
	ck_assert_ptr_nonnull(strstr(r.err, "Permission denied: the target refused the credential"
				     " (the partition needs a stronger --security method than nosec"));
	ck_assert_str_eq(r.out, "");
	run_free(&r);
	/* mkfs makes the partition first: a root command, refused keyless by a keyed root. */
	RUN(r, 1, "mkfs");
	ck_assert_ptr_nonnull(strstr(r.err, "Permission denied: the OSD's root is secured: "
				     "--key-file with the root key is needed"));
	run_free(&r);
	RUN(r, 0, "--security", "alldata", "--key-file", key, "cat", "/x");
	ck_assert_str_eq(r.out, "secret data\n");
	run_free(&r);
	write_file(wrong, "short");
	RUN(r, 1, "--security", "capkey", "--key-file", wrong, "ls");
	ck_assert_ptr_nonnull(strstr(r.err, "a key file holds 20 bytes or 40 hex digits"));
	run_free(&r);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("osdfs_cli");
	TCase *tc = tcase_create("cli");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, global_usage);
	tcase_add_test(tc, command_help_and_usage_errors);
	tcase_add_test(tc, no_store_and_no_fs);
	tcase_add_test(tc, file_commands);
	tcase_add_test(tc, df_and_json);
	tcase_add_test(tc, fsck_exit_codes);
	tcase_add_test(tc, cp_round_trip);
	tcase_add_test(tc, security_methods);
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
