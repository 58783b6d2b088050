/*
 * Data damage through the whole stack: osd-targetd serves a store over
 * iSCSI, a byte of an object's data file is flipped underneath it; a READ
 * through libosd then fails with -EIO and MEDIUM ERROR, UNRECOVERED READ
 * ERROR (03h/11h/00h) naming the object (descriptor 06h) and the first bad
 * byte (information), OBJECT STRUCTURE CHECK finds the same, and
 * `osdctl scrub` over iSCSI reports it and exits 1.
 */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <osd/osd.h>
#include <osd/iscsi.h>
#include <osdtarget/iscsi.h>
#include "rel_env.h"

#define PART 0x10000ull
#define OBJ 0x10001ull
#define LEN (64u * 1024u)
#define FLIP 40000u /* in block 9, which starts at 36864 */

/* The data file of @p store holding exactly @p size bytes. */
static void data_file(const char *store, off_t size, char *path, size_t n)
{
	char sub[400];

	path[0] = 0;
	for (unsigned d = 0; d < 256 && !path[0]; d++) {
		DIR *dh;
		struct dirent *de;
		struct stat sb;

		snprintf(sub, sizeof(sub), "%s/data/%02x", store, d);
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

static void check_sense(osd_req *req, uint64_t oid, uint64_t at)
{
	const struct osd_sense *s = osd_req_sense(req);
	char want[160];

	ck_assert_ptr_nonnull(s);
	ck_assert_uint_eq(s->key, OSD_SK_MEDIUM_ERROR);
	ck_assert_uint_eq(s->asc, OSD_ASC_UNRECOVERED_READ_ERROR);
	ck_assert(s->has_info);
	ck_assert_uint_eq(s->information, at);
	ck_assert(s->has_object);
	ck_assert_uint_eq(s->object.partition, PART);
	ck_assert_uint_eq(s->object.id, oid);
	snprintf(want, sizeof(want), "MEDIUM ERROR: UNRECOVERED READ ERROR: object 0x%llx in "
		 "partition 0x%llx at byte %llu", (unsigned long long)oid,
		 (unsigned long long)PART, (unsigned long long)at);
	ck_assert_msg(strstr(osd_req_error(req), want), "%s", osd_req_error(req));
}

/* Run osdctl with @p args; its exit status, stdout in @p out. */
static int osdctl(char *const args[], char *out, size_t n)
{
	int po[2], status;
	size_t got = 0;
	ssize_t r;

	ck_assert_int_eq(pipe(po), 0);
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR);
		dup2(null, 0);
		dup2(po[1], 1);
		dup2(null, 2);
		close(po[0]);
		execv(OSDCTL_PATH, args);
		_exit(127);
	}
	close(po[1]);
	while (got + 1 < n && (r = read(po[0], out + got, n - 1 - got)) > 0)
		got += (size_t)r;
	out[got] = 0;
	close(po[0]);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status));
	return WEXITSTATUS(status);
}

static void run(osd_req *req, int want)
{
	int rc = osd_req_execute(req);

	ck_assert_msg(rc == want, "%d: %s", rc, osd_req_error(req));
}

START_TEST(damage_through_the_stack)
{
	static uint8_t data[LEN], back[LEN];
	struct osd_iscsi_options io = OSD_ISCSI_OPTIONS_INIT;
	struct osd_dev_options dopt = OSD_DEV_OPTIONS_INIT;
	const char *tmp = getenv("TMPDIR");
	struct osd_obj_id part = { PART, 0 }, obj = { PART, OBJ };
	struct iovec iov = { data, LEN };
	char dir[256], store[300], url[400], path[700], out[4096];
	struct osd_transport tp;
	unsigned port;
	osd_dev *dev;
	osd_req *req;
	int status, fd;
	uint8_t b;

	for (unsigned i = 0; i < LEN; i++)
		data[i] = (uint8_t)(i * 29 + 3);
	snprintf(dir, sizeof(dir), "%s/rel-scrub.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(store, sizeof(store), "%s/store", dir);
	pid_t pid = rel_targetd_start(OSD_TARGETD_PATH, dir, store, &port);
	ck_assert_msg(pid > 0, "osd-targetd did not start");
	snprintf(url, sizeof(url), "iscsi://127.0.0.1:%u/%s/0", port, OSD_TARGET_ISCSI_DEFAULT_NAME);
	ck_assert_int_eq(osd_iscsi_transport_new(&tp, url, &io), 0);
	dopt.osd_version = OSD_VERSION_2;
	ck_assert_int_eq(osd_dev_open(&dev, &tp, &dopt), 0);
	ck_assert_int_eq(osd_req_create_partition(&req, dev, PART), 0);
	run(req, 0);
	osd_req_free(req);
	ck_assert_int_eq(osd_req_create_and_write(&req, dev, &obj, 0, &iov, 1), 0);
	run(req, 0);
	osd_req_free(req);
	ck_assert_int_eq(osd_req_flush_osd(&req, dev, OSD_FLUSH_RANGE), 0);
	run(req, 0);
	osd_req_free(req);
	/* clean: the check passes */
	ck_assert_int_eq(osd_req_object_structure_check(&req, dev, &part), 0);
	run(req, 0);
	osd_req_free(req);

	data_file(store, LEN, path, sizeof(path));
	fd = open(path, O_RDWR);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(pread(fd, &b, 1, FLIP), 1);
	b ^= 0x01;
	ck_assert_int_eq(pwrite(fd, &b, 1, FLIP), 1);
	close(fd);

	/* READ from before the damage: fails, naming its first bad byte */
	iov.iov_base = back;
	ck_assert_int_eq(osd_req_read(&req, dev, &obj, 100, &iov, 1), 0);
	run(req, -EIO);
	check_sense(req, OBJ, FLIP / 4096 * 4096);
	osd_req_free(req);
	/* the bytes before the bad block still read */
	iov.iov_len = FLIP / 4096 * 4096;
	ck_assert_int_eq(osd_req_read(&req, dev, &obj, 0, &iov, 1), 0);
	run(req, 0);
	ck_assert_mem_eq(back, data, iov.iov_len);
	osd_req_free(req);
	/* OBJECT STRUCTURE CHECK of the partition names the damaged object */
	ck_assert_int_eq(osd_req_object_structure_check(&req, dev, &part), 0);
	run(req, -EIO);
	check_sense(req, OBJ, FLIP / 4096 * 4096);
	osd_req_free(req);
	osd_dev_close(dev);

	char *args[] = { "osdctl", "--target", url, "--osd-version", "2", "scrub", "--json", NULL };
	ck_assert_int_eq(osdctl(args, out, sizeof(out)), 1);
	ck_assert_msg(strstr(out, "{\"errors\":[{\"partition\":65536,\"object\":65537,"
				  "\"offset\":36864,"), "%s", out);
	ck_assert_msg(strstr(out, "\"objects\":1,\"bytes_verified\":0,\"complete\":true}"), "%s",
		      out);
	kill(pid, SIGTERM);
	waitpid(pid, &status, 0);
	rel_rmtree(dir);
	printf("REL scrub: READ and OBJECT STRUCTURE CHECK through osd-targetd gave MEDIUM ERROR "
	       "11h/00h at byte %u of 0x%llx/0x%llx; osdctl scrub exit 1\n", FLIP / 4096 * 4096,
	       (unsigned long long)PART, (unsigned long long)OBJ);
}
END_TEST

int main(void)
{
	TCase *tc = tcase_create("scrub");

	tcase_set_timeout(tc, 60);
	rel_add_daemon_test(tc, damage_through_the_stack, OSD_TARGETD_PATH);
	return rel_run_tcase("rel_scrub", tc);
}
