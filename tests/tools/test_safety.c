/*
 * The osdfs and osdctl tools in careless hands: SIGINT in the middle of a
 * cp -r and of a put from a pipe (the filesystem stays clean and usable,
 * nothing partial is left, directory modes are set), mkfs and format over
 * what exists (refused without -f, data intact), a put that fails (nothing
 * under its name, an older file kept), GNU-style symlink arguments
 * (-P/-H/-L) and "-" for standard input and output.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include "daemon_wait.h"
#include "tool_runner.h"

#define WAIT_MS 20000 /* the longest any condition below is waited for */
#define NDIRS 10
#define NFILES 300
#define FILE_LEN 8192

static char *dir, *store;

static void setup(void)
{
	dir = run_mkdtemp("safety");
	if (asprintf(&store, "%s/store", dir) < 0)
		abort();
}

static void teardown(void)
{
	run_rmtree(dir);
	free(dir);
	free(store);
}

static char *local(const char *name)
{
	static char buf[8][512];
	static int k;

	k = (k + 1) % 8;
	snprintf(buf[k], sizeof(buf[k]), "%s/%s", dir, name);
	return buf[k];
}

static void write_bytes(const char *path, const void *data, size_t len)
{
	FILE *f = fopen(path, "wb");

	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fwrite(data, 1, len, f), len);
	ck_assert_int_eq(fclose(f), 0);
}

/* Runs and expects exit code @p want (the result is freed by the caller). */
#define RUN(res, want, ...) do { \
	int st_ = run_tool(&(res), store, __VA_ARGS__, NULL); \
	ck_assert_msg(st_ == (want), "exit %d (want %d); stderr: %s", st_, (want), (res).err); \
} while (0)

static void expect_fsck_clean(void)
{
	struct run_result r;

	RUN(r, 0, "fsck");
	ck_assert_ptr_nonnull(strstr(r.out, "clean: "));
	run_free(&r);
}

/* osdfs --target store ARGS in the background: stdin @p in, stderr to @p errf. */
static pid_t spawn_tool(int in, const char *errf, char *const *args)
{
	char *argv[32];
	int n = 0;
	pid_t pid;

	argv[n++] = (char *)OSDFS_TOOL_PATH;
	argv[n++] = (char *)"--target";
	argv[n++] = store;
	for (int i = 0; args[i] && n < 31; i++)
		argv[n++] = args[i];
	argv[n] = NULL;
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		int out = open("/dev/null", O_WRONLY), err = open(errf, O_WRONLY | O_CREAT, 0600);

		dup2(in, 0);
		dup2(out, 1);
		dup2(err, 2);
		execv(argv[0], argv);
		_exit(127);
	}
	return pid;
}

static int wait_exit(pid_t pid)
{
	int st;

	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* The first 64 KiB of a file as a string (malloc'd; "" if it is missing). */
static char *slurp(const char *path)
{
	char *buf = malloc(65536);
	FILE *f = fopen(path, "r");
	size_t n = f ? fread(buf, 1, 65535, f) : 0;

	ck_assert_ptr_nonnull(buf);
	if (f)
		fclose(f);
	buf[n] = '\0';
	return buf;
}

static int file_has(const char *path, const char *text)
{
	char *buf = slurp(path);
	int found = strstr(buf, text) != NULL;

	free(buf);
	return found;
}

/* The line of `ls -l` output @p ls that names @p name, or NULL. */
static const char *ls_line(const char *ls, const char *name)
{
	size_t len = strlen(name);

	for (const char *l = ls; l && *l;) {
		const char *nl = strchr(l, '\n');

		if (nl && (size_t)(nl - l) > len && nl[-(long)len - 1] == ' ' &&
		    strncmp(nl - len, name, len) == 0)
			return l;
		l = nl ? nl + 1 : NULL;
	}
	return NULL;
}

/* Runs the tool with @p data on its standard input; returns the exit code. */
static int run_with_input(const void *data, size_t len, struct run_result *r, char *const *args)
{
	char errf[600];
	int p[2], st;
	pid_t pid;

	snprintf(errf, sizeof(errf), "%s/input.err", dir);
	unlink(errf);
	ck_assert_int_eq(pipe2(p, O_CLOEXEC), 0); /* EOF once we close our end */
	pid = spawn_tool(p[0], errf, args);
	close(p[0]);
	ck_assert_int_eq(write(p[1], data, len), (ssize_t)len);
	close(p[1]);
	st = wait_exit(pid);
	if (r) {
		memset(r, 0, sizeof(*r));
		r->status = st;
		r->err = slurp(errf);
	}
	return st;
}

static const char *dir_mode(unsigned i)
{
	static const char *const modes[] = { "drwxr-x---", "drwxr-xr-x", "drwx------" };

	return modes[i % 3];
}

/* NDIRS directories of NFILES files of FILE_LEN bytes; modes vary. */
static void make_big_tree(const char *top)
{
	static const mode_t modes[] = { 0750, 0755, 0700 };
	char *data = malloc(FILE_LEN), p[600];

	ck_assert_ptr_nonnull(data);
	ck_assert_int_eq(mkdir(top, 0751), 0);
	for (unsigned d = 0; d < NDIRS; d++) {
		snprintf(p, sizeof(p), "%s/d%u", top, d);
		ck_assert_int_eq(mkdir(p, 0700), 0);
		for (unsigned f = 0; f < NFILES; f++) {
			memset(data, (int)('a' + (d + f) % 26), FILE_LEN);
			snprintf(p, sizeof(p), "%s/d%u/f%u", top, d, f);
			write_bytes(p, data, FILE_LEN);
		}
		snprintf(p, sizeof(p), "%s/d%u", top, d);
		ck_assert_int_eq(chmod(p, modes[d % 3]), 0);
	}
	free(data);
}

/* Counts "-rw" lines of FILE_LEN bytes and other lines of ls -l output. */
static void count_files(const char *ls, unsigned *complete, unsigned *other)
{
	char want[32];

	snprintf(want, sizeof(want), " %u ", FILE_LEN);
	for (const char *l = ls; *l; l = strchr(l, '\n') + 1) {
		const char *nl = strchr(l, '\n');
		char line[512];

		snprintf(line, sizeof(line), "%.*s", (int)(nl - l), l);
		if (line[0] == '-' && strstr(line, want))
			++*complete;
		else
			++*other;
		if (!nl[1])
			break;
	}
}

START_TEST(sigint_during_cp_r)
{
	struct run_result r;
	char *args[] = { "--progress", "cp", "-r", local("src"), ":/t", NULL };
	char errf[600], path[64], *top;
	unsigned complete = 0, other = 0;
	struct stat est;
	uint64_t end;
	pid_t pid;
	int devnull = open("/dev/null", O_RDONLY);

	RUN(r, 0, "mkfs");
	run_free(&r);
	make_big_tree(local("src"));
	snprintf(errf, sizeof(errf), "%s/cp.err", dir);
	pid = spawn_tool(devnull, errf, args);
	close(devnull);
	/* in the middle: once the progress line (its only output) appears */
	end = osd_test_now_ms() + WAIT_MS;
	while (stat(errf, &est) != 0 || est.st_size == 0) {
		ck_assert_msg(osd_test_now_ms() < end, "no progress line within %d ms", WAIT_MS);
		poll(NULL, 0, 5); /* waiting for a condition, bounded above */
	}
	kill(pid, SIGINT);
	ck_assert_int_eq(wait_exit(pid), 130);
	ck_assert_msg(file_has(errf, "cp: interrupted by SIGINT"), "no message about the signal");
	/* clean, no mount record left: fsck without --force finds nothing */
	expect_fsck_clean();
	/* every directory that exists has its mode, every file all its bytes */
	RUN(r, 0, "ls", "-l", "/");
	ck_assert_ptr_nonnull(ls_line(r.out, "t"));
	ck_assert_int_eq(strncmp(ls_line(r.out, "t"), "drwxr-x--x", 10), 0);
	run_free(&r);
	RUN(r, 0, "ls", "-l", "/t");
	top = strdup(r.out);
	ck_assert_ptr_nonnull(top);
	run_free(&r);
	for (unsigned d = 0; d < NDIRS; d++) {
		const char *line;

		snprintf(path, sizeof(path), "d%u", d);
		line = ls_line(top, path);
		if (!line)
			continue;
		ck_assert_msg(strncmp(line, dir_mode(d), 10) == 0, "mode of d%u: %.10s", d, line);
		snprintf(path, sizeof(path), "/t/d%u", d);
		RUN(r, 0, "ls", "-l", path);
		count_files(r.out, &complete, &other);
		run_free(&r);
	}
	free(top);
	ck_assert_uint_eq(other, 0);
	ck_assert_msg(complete > 0 && complete < NDIRS * NFILES,
		      "not interrupted in the middle: %u of %u files", complete, NDIRS * NFILES);
	/* the next command works, and so does finishing the copy */
	RUN(r, 0, "cp", "-r", local("src"), ":/again");
	run_free(&r);
	RUN(r, 0, "ls", "-l", "/again");
	for (unsigned d = 0; d < NDIRS; d++)
		ck_assert_ptr_nonnull(strstr(r.out, dir_mode(d)));
	run_free(&r);
	expect_fsck_clean();
}
END_TEST

/* A put blocked on a pipe: SIGINT removes its temporary file. */
START_TEST(sigint_during_put_from_pipe)
{
	struct run_result r;
	char *args[] = { "put", "-", "/held", NULL };
	static char chunk[100000];
	char errf[600];
	uint64_t end;
	int p[2], left;
	pid_t pid;

	RUN(r, 0, "mkfs");
	run_free(&r);
	snprintf(errf, sizeof(errf), "%s/put.err", dir);
	ck_assert_int_eq(pipe2(p, O_CLOEXEC), 0);
	pid = spawn_tool(p[0], errf, args);
	memset(chunk, 'p', sizeof(chunk));
	ck_assert_int_eq(write(p[1], chunk, sizeof(chunk)), (ssize_t)sizeof(chunk));
	/* mounted and copying: everything written so far was read */
	end = osd_test_now_ms() + WAIT_MS;
	while (ioctl(p[0], FIONREAD, &left) == 0 && left > 0) {
		ck_assert_msg(osd_test_now_ms() < end, "put did not read its input");
		poll(NULL, 0, 5); /* waiting for a condition, bounded above */
	}
	kill(pid, SIGINT);
	ck_assert_int_eq(wait_exit(pid), 130);
	close(p[0]);
	close(p[1]);
	ck_assert(file_has(errf, "put: interrupted by SIGINT"));
	RUN(r, 0, "ls", "-a", "/");
	ck_assert_str_eq(r.out, ".\n..\n"); /* neither /held nor its temporary name */
	run_free(&r);
	expect_fsck_clean();
}
END_TEST

START_TEST(mkfs_refuses_to_erase)
{
	struct run_result r;

	RUN(r, 0, "mkfs", "--label", "precious");
	run_free(&r);
	write_bytes(local("x"), "keep me\n", 8);
	RUN(r, 0, "put", local("x"), "/x");
	run_free(&r);
	RUN(r, 1, "mkfs");
	ck_assert_ptr_nonnull(strstr(r.err, "holds a filesystem labelled 'precious' made 20"));
	ck_assert_ptr_nonnull(strstr(r.err, "with 2 inodes"));
	ck_assert_ptr_nonnull(strstr(r.err, "mkfs would erase it (-f to erase)"));
	run_free(&r);
	RUN(r, 0, "cat", "/x"); /* intact */
	ck_assert_str_eq(r.out, "keep me\n");
	run_free(&r);
	RUN(r, 0, "mkfs", "-f");
	run_free(&r);
	RUN(r, 1, "cat", "/x");
	run_free(&r);
	RUN(r, 0, "--force", "mkfs", "--label", "again"); /* --force is -f too */
	run_free(&r);
	/* a directory of unrelated files: no store built among them */
	ck_assert_int_eq(mkdir(local("foreign"), 0700), 0);
	write_bytes(local("foreign/notes.txt"), "mine\n", 5);
	ck_assert_int_eq(run_tool(&r, local("foreign"), "mkfs", NULL), 1);
	ck_assert_ptr_nonnull(strstr(r.err, "foreign is not empty and holds no OSD store "
					    "(1 entry, e.g. 'notes.txt')"));
	ck_assert_ptr_nonnull(strstr(r.err, "-f to do it anyway"));
	run_free(&r);
	ck_assert_int_eq(access(local("foreign/superblock"), F_OK), -1);
	ck_assert_int_eq(access(local("foreign/notes.txt"), F_OK), 0);
	ck_assert_int_eq(run_tool(&r, local("foreign"), "mkfs", "-f", NULL), 0);
	run_free(&r);
	ck_assert_int_eq(access(local("foreign/notes.txt"), F_OK), 0);
}
END_TEST

START_TEST(format_refuses_to_erase)
{
	struct run_result r;

	RUN(r, 0, "mkfs");
	run_free(&r);
	ck_assert_int_eq(run_prog(&r, OSDCTL_PATH, "--target", store, "format", NULL), 1);
	ck_assert_ptr_nonnull(strstr(r.err, "holds 1 partition with 2 objects; format would "
					    "erase them (--force to erase)"));
	run_free(&r);
	expect_fsck_clean();
	ck_assert_int_eq(run_prog(&r, OSDCTL_PATH, "--target", store, "format", "--force", NULL), 0);
	run_free(&r);
	ck_assert_int_eq(run_prog(&r, OSDCTL_PATH, "--target", store, "list", NULL), 0);
	ck_assert_str_eq(r.out, "");
	run_free(&r);
	ck_assert_int_eq(mkdir(local("foreign"), 0700), 0);
	write_bytes(local("foreign/a"), "a", 1);
	ck_assert_int_eq(run_prog(&r, OSDCTL_PATH, "--target", local("foreign"), "format", NULL), 1);
	ck_assert_ptr_nonnull(strstr(r.err, "holds no OSD store"));
	run_free(&r);
	ck_assert_int_eq(access(local("foreign/superblock"), F_OK), -1);
}
END_TEST

/* A put that fails (the partition is full) leaves no file under its name,
 * and an older file of that name keeps its bytes. */
START_TEST(failed_put_leaves_nothing)
{
	struct run_result r;
	size_t big = 3u << 20;
	char *data = malloc(big);

	ck_assert_ptr_nonnull(data);
	for (size_t i = 0; i < big; i++)
		data[i] = (char)(i * 7 + 1);
	write_bytes(local("big"), data, big);
	write_bytes(local("small"), "old contents\n", 13);
	free(data);
	RUN(r, 0, "mkfs", "--capacity", "1M");
	run_free(&r);
	RUN(r, 0, "put", local("small"), "/keep");
	run_free(&r);
	RUN(r, 1, "put", local("big"), "/keep");
	ck_assert_ptr_nonnull(strstr(r.err, "/keep"));
	run_free(&r);
	RUN(r, 1, "put", local("big"), "/new");
	run_free(&r);
	RUN(r, 0, "ls", "-a", "/");
	ck_assert_str_eq(r.out, ".\n..\nkeep\n");
	run_free(&r);
	RUN(r, 0, "cat", "/keep");
	ck_assert_str_eq(r.out, "old contents\n");
	run_free(&r);
	expect_fsck_clean();
}
END_TEST

/* GNU cp's rules: put and a non-recursive cp follow a symlink operand; -r
 * stores symlinks (-P), -L follows all, -H only the operands. */
START_TEST(symlink_arguments)
{
	struct run_result r;

	RUN(r, 0, "mkfs");
	run_free(&r);
	write_bytes(local("file"), "target bytes\n", 13);
	ck_assert_int_eq(symlink("file", local("link")), 0);
	ck_assert_int_eq(mkdir(local("tree"), 0755), 0);
	ck_assert_int_eq(mkdir(local("tree/sub"), 0755), 0);
	write_bytes(local("tree/sub/f"), "f\n", 2);
	ck_assert_int_eq(symlink("sub", local("tree/tosub")), 0);
	ck_assert_int_eq(symlink("tree", local("treelink")), 0);
	RUN(r, 0, "put", local("link"), "/followed");
	run_free(&r);
	RUN(r, 0, "cat", "/followed");
	ck_assert_str_eq(r.out, "target bytes\n");
	run_free(&r);
	RUN(r, 0, "put", "-P", local("link"), "/kept");
	run_free(&r);
	RUN(r, 0, "ls", "-l", "/");
	ck_assert_ptr_nonnull(strstr(r.out, " kept -> file\n"));
	run_free(&r);
	RUN(r, 0, "cp", local("link"), ":/cpfollowed");
	run_free(&r);
	RUN(r, 0, "cat", "/cpfollowed");
	ck_assert_str_eq(r.out, "target bytes\n");
	run_free(&r);
	/* -r: links stay links, the operand link too */
	RUN(r, 0, "cp", "-r", local("treelink"), ":/p");
	run_free(&r);
	RUN(r, 0, "ls", "-l", "/");
	ck_assert_ptr_nonnull(strstr(r.out, " p -> tree\n"));
	run_free(&r);
	/* -H: the operand followed, the link inside kept */
	RUN(r, 0, "cp", "-r", "-H", local("treelink"), ":/h");
	run_free(&r);
	RUN(r, 0, "ls", "-l", "/h");
	ck_assert_ptr_nonnull(strstr(r.out, "tosub -> sub"));
	run_free(&r);
	/* -L: everything followed */
	RUN(r, 0, "cp", "-r", "-L", local("treelink"), ":/l");
	run_free(&r);
	RUN(r, 0, "cat", "/l/tosub/f");
	ck_assert_str_eq(r.out, "f\n");
	run_free(&r);
	/* -L into a loop: refused there, the rest copied */
	ck_assert_int_eq(symlink("..", local("tree/sub/up")), 0);
	RUN(r, 1, "cp", "-r", "-L", local("tree"), ":/loop");
	ck_assert_ptr_nonnull(strstr(r.err, "a symlink loop back to a directory being copied"));
	run_free(&r);
	RUN(r, 0, "cat", "/loop/sub/f");
	run_free(&r);
	/* out of the filesystem: get follows the operand, get -P does not */
	RUN(r, 0, "ln", "-s", "followed", "/rlink");
	run_free(&r);
	RUN(r, 0, "get", "/rlink", local("out1"));
	run_free(&r);
	ck_assert(file_has(local("out1"), "target bytes"));
	RUN(r, 0, "get", "-P", "/rlink", local("out2"));
	run_free(&r);
	{
		char t[64] = "";

		ck_assert_int_eq(readlink(local("out2"), t, sizeof(t) - 1), 8);
		ck_assert_str_eq(t, "followed");
	}
	expect_fsck_clean();
}
END_TEST

/* "-": standard input for put, standard output for get; put /dev/stdin
 * reads the data (not a link to /proc/self/fd/0). */
START_TEST(dash_and_dev_stdin)
{
	static const char bytes[] = "line one\n\0\0binary\xff\n";
	struct run_result r;

	RUN(r, 0, "mkfs");
	run_free(&r);
	ck_assert_int_eq(run_with_input(bytes, sizeof(bytes), &r,
					(char *[]){ "put", "-", "/a", NULL }), 0);
	run_free(&r);
	ck_assert_int_eq(run_with_input("via dev\n", 8, &r,
					(char *[]){ "put", "/dev/stdin", "/b", NULL }), 0);
	run_free(&r);
	RUN(r, 0, "get", "/a", "-");
	ck_assert_uint_eq(r.out_len, sizeof(bytes));
	ck_assert_int_eq(memcmp(r.out, bytes, sizeof(bytes)), 0);
	run_free(&r);
	ck_assert_int_eq(access(local("-"), F_OK), -1);
	RUN(r, 0, "ls", "-l", "/b");
	ck_assert_ptr_nonnull(strstr(r.out, "-rw"));
	run_free(&r);
	RUN(r, 0, "cat", "/b");
	ck_assert_str_eq(r.out, "via dev\n");
	run_free(&r);
	RUN(r, 1, "get", "/", "-");
	ck_assert_ptr_nonnull(strstr(r.err, "Is a directory"));
	run_free(&r);
	RUN(r, 2, "put", "-", "/");
	run_free(&r);
	expect_fsck_clean();
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("tools_safety");
	TCase *tc = tcase_create("safety");

	tcase_set_timeout(tc, 120);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, sigint_during_cp_r);
	tcase_add_test(tc, sigint_during_put_from_pipe);
	tcase_add_test(tc, mkfs_refuses_to_erase);
	tcase_add_test(tc, format_refuses_to_erase);
	tcase_add_test(tc, failed_put_leaves_nothing);
	tcase_add_test(tc, symlink_arguments);
	tcase_add_test(tc, dash_and_dev_stdin);
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
