/*
 * fsop: run one system call and print its outcome, for the mount test
 * script: "OK" (plus any result) or the errno name (ENOTEMPTY, EXDEV ...).
 * The exit status is 0 either way unless the arguments are wrong (2), so
 * the script compares the printed outcome with what POSIX requires.
 *
 *   fsop rename OLD NEW [noreplace|exchange]
 *   fsop link OLD NEW | unlink P | rmdir P | mkdir P MODE(octal) | chmod P MODE
 *   fsop symlink TARGET P | readlink P
 *   fsop create-excl P          open(O_CREAT|O_EXCL|O_WRONLY)
 *   fsop open-write P           open(O_WRONLY)
 *   fsop utimens P A M          A, M: SEC.NSEC, now or omit
 *   fsop times P                prints "ASEC.ANSEC MSEC.MNSEC CSEC.CNSEC"
 *   fsop stat P                 prints "ino nlink mode(octal) uid gid size"
 *   fsop setxattr P NAME VALUE [create|replace]
 *   fsop getxattr P NAME | listxattr P | removexattr P NAME
 *   fsop unlinked-io P          open, unlink, then write, read back, fstat
 *   fsop punch P OFF LEN        fallocate(PUNCH_HOLE|KEEP_SIZE)
 *   fsop truncate P LEN         truncate(2)
 *   fsop ftruncate P LEN        open(O_WRONLY), then ftruncate(2)
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

static const struct { int err; const char *name; } names[] = {
	{ ENOENT, "ENOENT" }, { EEXIST, "EEXIST" }, { ENOTDIR, "ENOTDIR" },
	{ EISDIR, "EISDIR" }, { ENOTEMPTY, "ENOTEMPTY" }, { EINVAL, "EINVAL" },
	{ EPERM, "EPERM" }, { EACCES, "EACCES" }, { EXDEV, "EXDEV" },
	{ EBUSY, "EBUSY" }, { EROFS, "EROFS" }, { ENODATA, "ENODATA" },
	{ ERANGE, "ERANGE" }, { ENAMETOOLONG, "ENAMETOOLONG" }, { ENOSPC, "ENOSPC" },
	{ EMLINK, "EMLINK" }, { EBADF, "EBADF" }, { EOPNOTSUPP, "EOPNOTSUPP" },
	{ ELOOP, "ELOOP" }, { EFBIG, "EFBIG" }, { EIO, "EIO" },
};

static int outcome(int rc)
{
	if (rc == 0) {
		puts("OK");
		return 0;
	}
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (names[i].err == errno) {
			puts(names[i].name);
			return 0;
		}
	}
	printf("errno%d\n", errno);
	return 0;
}

static int usage(void)
{
	fprintf(stderr, "fsop: bad arguments (see the comment in fsop.c)\n");
	return 2;
}

static int parse_time(const char *s, struct timespec *ts)
{
	char *end;

	if (strcmp(s, "now") == 0) {
		ts->tv_sec = 0;
		ts->tv_nsec = UTIME_NOW;
		return 0;
	}
	if (strcmp(s, "omit") == 0) {
		ts->tv_sec = 0;
		ts->tv_nsec = UTIME_OMIT;
		return 0;
	}
	ts->tv_sec = (time_t)strtoll(s, &end, 10);
	ts->tv_nsec = 0;
	if (*end == '.')
		ts->tv_nsec = strtol(end + 1, &end, 10);
	return *end ? -1 : 0;
}

static int do_rename(int argc, char **argv)
{
	unsigned int flags = 0;

	if (argc == 5 && strcmp(argv[4], "noreplace") == 0)
		flags = RENAME_NOREPLACE;
	else if (argc == 5 && strcmp(argv[4], "exchange") == 0)
		flags = RENAME_EXCHANGE;
	else if (argc != 4)
		return usage();
	return outcome(renameat2(AT_FDCWD, argv[2], AT_FDCWD, argv[3], flags));
}

static int do_open(const char *path, int flags)
{
	int fd = open(path, flags, 0644);

	if (fd >= 0)
		close(fd);
	return outcome(fd < 0 ? -1 : 0);
}

static int do_readlink(const char *path)
{
	char buf[8192];
	ssize_t n = readlink(path, buf, sizeof(buf) - 1);

	if (n < 0)
		return outcome(-1);
	buf[n] = '\0';
	printf("OK %s\n", buf);
	return 0;
}

static int do_times(const char *path)
{
	struct stat st;

	if (lstat(path, &st) < 0)
		return outcome(-1);
	printf("%lld.%09ld %lld.%09ld %lld.%09ld\n", (long long)st.st_atim.tv_sec,
	       st.st_atim.tv_nsec, (long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec,
	       (long long)st.st_ctim.tv_sec, st.st_ctim.tv_nsec);
	return 0;
}

static int do_stat(const char *path)
{
	struct stat st;

	if (lstat(path, &st) < 0)
		return outcome(-1);
	printf("%ju %ju %o %u %u %jd\n", (uintmax_t)st.st_ino, (uintmax_t)st.st_nlink,
	       (unsigned int)st.st_mode, (unsigned int)st.st_uid, (unsigned int)st.st_gid,
	       (intmax_t)st.st_size);
	return 0;
}

static int do_setxattr(int argc, char **argv)
{
	int flags = 0;

	if (argc == 6 && strcmp(argv[5], "create") == 0)
		flags = XATTR_CREATE;
	else if (argc == 6 && strcmp(argv[5], "replace") == 0)
		flags = XATTR_REPLACE;
	else if (argc != 5)
		return usage();
	return outcome(lsetxattr(argv[2], argv[3], argv[4], strlen(argv[4]), flags));
}

static int do_getxattr(const char *path, const char *name)
{
	char buf[65536];
	ssize_t n = lgetxattr(path, name, buf, sizeof(buf) - 1);

	if (n < 0)
		return outcome(-1);
	buf[n] = '\0';
	printf("OK %s\n", buf);
	return 0;
}

static int do_listxattr(const char *path)
{
	char buf[65536];
	ssize_t n = llistxattr(path, buf, sizeof(buf));

	if (n < 0)
		return outcome(-1);
	printf("OK");
	for (ssize_t i = 0; i < n; i += (ssize_t)strlen(buf + i) + 1)
		printf(" %s", buf + i);
	printf("\n");
	return 0;
}

/* An unlinked file stays usable through its descriptor. */
static int do_unlinked_io(const char *path)
{
	static const char msg[] = "still here";
	char back[sizeof(msg)];
	struct stat st;
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);

	if (fd < 0 || unlink(path) < 0)
		return outcome(-1);
	if (pwrite(fd, msg, sizeof(msg), 0) != (ssize_t)sizeof(msg) ||
	    pread(fd, back, sizeof(back), 0) != (ssize_t)sizeof(back) || fstat(fd, &st) < 0) {
		close(fd);
		return outcome(-1);
	}
	close(fd);
	printf("OK nlink=%ju size=%jd %s\n", (uintmax_t)st.st_nlink, (intmax_t)st.st_size,
	       memcmp(msg, back, sizeof(msg)) == 0 ? "same" : "different");
	return 0;
}

static int do_punch(const char *path, const char *off, const char *len)
{
	int fd = open(path, O_RDWR);
	int rc;

	if (fd < 0)
		return outcome(-1);
	rc = fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, strtoll(off, NULL, 0),
		       strtoll(len, NULL, 0));
	close(fd);
	return outcome(rc);
}

static int do_ftruncate(const char *path, const char *len)
{
	int fd = open(path, O_WRONLY);
	int rc;

	if (fd < 0)
		return outcome(-1);
	rc = ftruncate(fd, (off_t)strtoll(len, NULL, 0));
	close(fd);
	return outcome(rc);
}

int main(int argc, char **argv)
{
	struct timespec ts[2];
	const char *op = argc > 2 ? argv[1] : "";

	if (strcmp(op, "rename") == 0)
		return do_rename(argc, argv);
	if (strcmp(op, "link") == 0 && argc == 4)
		return outcome(link(argv[2], argv[3]));
	if (strcmp(op, "symlink") == 0 && argc == 4)
		return outcome(symlink(argv[2], argv[3]));
	if (strcmp(op, "unlink") == 0 && argc == 3)
		return outcome(unlink(argv[2]));
	if (strcmp(op, "rmdir") == 0 && argc == 3)
		return outcome(rmdir(argv[2]));
	if (strcmp(op, "mkdir") == 0 && argc == 4)
		return outcome(mkdir(argv[2], (mode_t)strtol(argv[3], NULL, 8)));
	if (strcmp(op, "chmod") == 0 && argc == 4)
		return outcome(chmod(argv[2], (mode_t)strtol(argv[3], NULL, 8)));
	if (strcmp(op, "readlink") == 0 && argc == 3)
		return do_readlink(argv[2]);
	if (strcmp(op, "create-excl") == 0 && argc == 3)
		return do_open(argv[2], O_CREAT | O_EXCL | O_WRONLY);
	if (strcmp(op, "open-write") == 0 && argc == 3)
		return do_open(argv[2], O_WRONLY);
	if (strcmp(op, "utimens") == 0 && argc == 5) {
		if (parse_time(argv[3], &ts[0]) < 0 || parse_time(argv[4], &ts[1]) < 0)
			return usage();
		return outcome(utimensat(AT_FDCWD, argv[2], ts, AT_SYMLINK_NOFOLLOW));
	}
	if (strcmp(op, "times") == 0 && argc == 3)
		return do_times(argv[2]);
	if (strcmp(op, "stat") == 0 && argc == 3)
		return do_stat(argv[2]);
	if (strcmp(op, "setxattr") == 0)
		return do_setxattr(argc, argv);
	if (strcmp(op, "getxattr") == 0 && argc == 4)
		return do_getxattr(argv[2], argv[3]);
	if (strcmp(op, "listxattr") == 0 && argc == 3)
		return do_listxattr(argv[2]);
	if (strcmp(op, "removexattr") == 0 && argc == 4)
		return outcome(lremovexattr(argv[2], argv[3]));
	if (strcmp(op, "unlinked-io") == 0 && argc == 3)
		return do_unlinked_io(argv[2]);
	if (strcmp(op, "punch") == 0 && argc == 5)
		return do_punch(argv[2], argv[3], argv[4]);
	if (strcmp(op, "truncate") == 0 && argc == 4)
		return outcome(truncate(argv[2], (off_t)strtoll(argv[3], NULL, 0)));
	if (strcmp(op, "ftruncate") == 0 && argc == 4)
		return do_ftruncate(argv[2], argv[3]);
	return usage();
}
