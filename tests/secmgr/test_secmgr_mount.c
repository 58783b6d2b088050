/*
 * osdfs-mount under a policy (FUSE, needs root and /dev/fuse; exit 77
 * otherwise): a client the policy lets only read mounts read-only through
 * osd-secd and reads what the admin wrote; the kernel refuses every change;
 * a read-write mount by the same client is refused (its mount record is a
 * write the manager does not grant).
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "daemon_wait.h"
#include "secmgr_env.h"

#define POLICY \
	"grant admin partition 0 perms all\n" \
	"grant admin partition 0x10002 perms all\n" \
	"grant reader partition 0x10002 perms read,get_attr\n"
#define TEXT "read through a read-only mount\n"

static struct secenv env;
static int skipped;

static int is_mounted(const char *mnt)
{
	char line[4096], a[4096];
	FILE *f = fopen("/proc/self/mountinfo", "r");
	int found = 0;

	while (f && !found && fgets(line, sizeof(line), f))
		found = sscanf(line, "%*s %*s %*s %*s %4095s", a) == 1 && !strcmp(a, mnt);
	if (f)
		fclose(f);
	return found;
}

/* osdfs-mount -f as @p who with @p extra options; waits until mounted or
 * the tool exited (then returns -1 with *pid = -1, its log in mount.log). */
static int mount_as(const char *who, const char *extra, const char *mnt, pid_t *pid)
{
	char opts[4096];
	uint64_t end = osd_test_now_ms() + 30000;
	int st;

	snprintf(opts, sizeof(opts), "pid=0x10002,security-manager=%s,ca=%s/ca.pem,cert=%s/%s.pem,"
		 "key=%s/%s.key%s", env.mgr_url, env.dir, env.dir, who, env.dir, who, extra);
	*pid = fork();
	if (*pid == 0) {
		int log = open(secenv_path(&env, "mount.log"), O_WRONLY | O_CREAT | O_TRUNC, 0644);

		if (log >= 0)
			dup2(log, 1), dup2(log, 2);
		execl(OSDFS_MOUNT_PATH, "osdfs-mount", "-f", "-o", opts, env.url, mnt, (char *)NULL);
		_exit(127);
	}
	while (osd_test_now_ms() < end) {
		if (is_mounted(mnt))
			return 0;
		if (waitpid(*pid, &st, WNOHANG) == *pid) {
			*pid = -1;
			return -1;
		}
		poll(NULL, 0, 20); /* waiting for the mount, bounded above */
	}
	return -1;
}

static void unmount(const char *mnt, pid_t *pid)
{
	char cmd[4200];
	int st;

	snprintf(cmd, sizeof(cmd), "fusermount3 -u %s", mnt);
	ck_assert_int_eq(system(cmd), 0);
	ck_assert_int_eq(waitpid(*pid, &st, 0), *pid);
	ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	*pid = -1;
}

static int log_has(const char *text)
{
	char cmd[4200];

	snprintf(cmd, sizeof(cmd), "grep -qF -- '%s' %s", text, secenv_path(&env, "mount.log"));
	return system(cmd) == 0;
}

START_TEST(read_only_client_mounts_read_only)
{
	char mnt[512], path[600], buf[128] = "";
	pid_t pid = -1;
	int fd;
	ssize_t n;

	snprintf(mnt, sizeof(mnt), "%s/mnt", env.dir);
	ck_assert_int_eq(mkdir(mnt, 0755), 0);
	if (mount_as("reader", ",ro", mnt, &pid) < 0) {
		if (log_has("Operation not permitted") || log_has("fuse: device not found")) {
			skipped = 1; /* FUSE mounts not permitted here */
			return;
		}
		ck_abort_msg("the read-only mount failed");
	}
	snprintf(path, sizeof(path), "%s/f", mnt);
	fd = open(path, O_RDONLY);
	ck_assert_int_ge(fd, 0);
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	ck_assert_int_eq(n, (ssize_t)strlen(TEXT));
	ck_assert_str_eq(buf, TEXT);
	snprintf(path, sizeof(path), "%s/new", mnt);
	ck_assert_int_lt(open(path, O_WRONLY | O_CREAT, 0644), 0);
	ck_assert_int_eq(errno, EROFS);
	snprintf(path, sizeof(path), "%s/f", mnt);
	ck_assert_int_lt(open(path, O_WRONLY | O_TRUNC), 0);
	ck_assert_int_eq(errno, EROFS);
	unmount(mnt, &pid);
	/* read-write: the mount record is a write the policy does not grant */
	ck_assert_int_lt(mount_as("reader", "", mnt, &pid), 0);
	ck_assert(log_has("security manager refused") || log_has("Permission denied"));
}
END_TEST

int main(void)
{
	Suite *s = suite_create("secmgr_mount");
	TCase *tc = tcase_create("fuse");
	char cmd[8192];
	SRunner *sr;
	int failed;

	if (geteuid() != 0 || access("/dev/fuse", R_OK | W_OK) != 0) {
		printf("skipped: needs root and /dev/fuse\n");
		return 77;
	}
	if (secenv_start(&env, POLICY) < 0) {
		secenv_stop(&env);
		return 1;
	}
	snprintf(cmd, sizeof(cmd), "printf '%%s' '" TEXT "' > %s/text && "
		 "%s --target %s --security-manager %s --ca %s/ca.pem --cert %s/admin.pem "
		 "--key %s/admin.key --partition 0x10002 mkfs > /dev/null && "
		 "%s --target %s --security-manager %s --ca %s/ca.pem --cert %s/admin.pem "
		 "--key %s/admin.key --partition 0x10002 cp %s/text :/f", env.dir, OSDFS_PATH,
		 env.url, env.mgr_url, env.dir, env.dir, env.dir, OSDFS_PATH, env.url, env.mgr_url,
		 env.dir, env.dir, env.dir, env.dir);
	if (system(cmd) != 0) {
		fprintf(stderr, "cannot make the filesystem as admin\n");
		secenv_stop(&env);
		return 1;
	}
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, read_only_client_mounts_read_only);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_set_fork_status(sr, CK_NOFORK);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	secenv_stop(&env);
	if (skipped) {
		printf("skipped: FUSE mounts not permitted here\n");
		return 77;
	}
	return failed ? 1 : 0;
}
