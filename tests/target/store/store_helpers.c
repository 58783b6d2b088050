/* Shared helpers of the store tests (see store_helpers.h). */
#include "store_helpers.h"

#include <check.h>
#include <dirent.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "store/internal.h"

char *th_mkdtemp(void)
{
	const char *tmp = getenv("TMPDIR");
	char *p = malloc(4096);
	ck_assert_ptr_nonnull(p);
	snprintf(p, 4096, "%s/osdstore-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	ck_assert_ptr_nonnull(mkdtemp(p));
	return p;
}

static int rm_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	return remove(path);
}

void th_rmtree(char *path)
{
	if (path)
		nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	free(path);
}

struct osd_store *th_open(const char *dir)
{
	return th_open_files(dir, 0);
}

struct osd_store *th_open_files(const char *dir, int files)
{
	struct osd_store *st = NULL;
	struct osd_store_options o = { .create = 1, .no_pack = files };
	char err[256] = "";
	int r = osd_store_open(&st, dir, &o, err, sizeof(err));
	ck_assert_msg(r == 0, "open %s: %d %s", dir, r, err);
	return st;
}

static uint8_t th_byte(uint64_t seed, uint64_t off)
{
	uint64_t x = (seed + 1) * 0x9E3779B97F4A7C15ULL + off * 0xBF58476D1CE4E5B9ULL;
	x ^= x >> 31;
	x *= 0x94D049BB133111EBULL;
	return (uint8_t)(x >> 56);
}

void th_fill(uint8_t *buf, size_t len, uint64_t seed, uint64_t off)
{
	for (size_t i = 0; i < len; i++)
		buf[i] = th_byte(seed, off + i);
}

int th_check(const uint8_t *buf, size_t len, uint64_t seed, uint64_t off)
{
	for (size_t i = 0; i < len; i++)
		if (buf[i] != th_byte(seed, off + i))
			return 0;
	return 1;
}

unsigned th_dir_entries(const char *path, int (*keep)(const char *name))
{
	DIR *d = opendir(path);
	unsigned n = 0;
	if (!d)
		return 0;
	for (struct dirent *de; (de = readdir(d)) != NULL;)
		n += de->d_name[0] != '.' && (!keep || keep(de->d_name));
	closedir(d);
	return n;
}

unsigned th_data_entries(const char *dir, int (*keep)(const char *name))
{
	char p[4200];
	unsigned n = 0;
	for (unsigned d = 0; d < OSD__FANOUT; d++) {
		snprintf(p, sizeof(p), "%s/data/%02x", dir, d);
		n += th_dir_entries(p, keep);
	}
	return n;
}

void th_path(char *out, size_t outlen, const char *dir, const char *name)
{
	snprintf(out, outlen, "%s/%s", dir, name);
}

void th_obj_path(char *out, size_t outlen, const char *dir, uint64_t gen, int sums)
{
	snprintf(out, outlen, "%s/data/%02x/%016llx%s", dir, (unsigned)(gen & 0xff),
		 (unsigned long long)gen, sums ? ".sum" : "");
}

void th_flip(const char *path, off_t at)
{
	int fd = open(path, O_RDWR);
	uint8_t b;
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(pread(fd, &b, 1, at), 1);
	b ^= 0x40;
	ck_assert_int_eq(pwrite(fd, &b, 1, at), 1);
	close(fd);
}

void th_log_downgrade(const char *dir, uint32_t version, uint8_t *hdr)
{
	char p[4200];
	struct stat sb;
	th_path(p, sizeof(p), dir, "log");
	int fd = open(p, O_RDWR);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(fstat(fd, &sb), 0);
	size_t len = (size_t)sb.st_size, out = OSD__FILE_HDR;
	uint8_t *b = malloc(len);
	ck_assert_ptr_nonnull(b);
	ck_assert_int_eq(pread(fd, b, len, 0), (ssize_t)len);
	uint32_t ver, flags;
	uint64_t epoch;
	ck_assert_int_eq(osd__file_hdr_get_ver(b, OSD__LOG_MAGIC, &ver, &flags, &epoch), 0);
	osd__file_hdr_put_ver(hdr, OSD__LOG_MAGIC, version, flags, epoch);
	memcpy(b, hdr, OSD__FILE_HDR);
	for (size_t off = OSD__FILE_HDR; off < len;) {
		struct osd__rec rec;
		size_t n = osd__rec_parse(b + off, len - off, &rec);
		ck_assert_uint_gt(n, 0);
		if (rec.type != OSD__REC_GENS && rec.type != OSD__REC_DATA) {
			memmove(b + out, b + off, n);
			out += n;
		}
		off += n;
	}
	ck_assert_int_eq(pwrite(fd, b, out, 0), (ssize_t)out);
	ck_assert_int_eq(ftruncate(fd, (off_t)out), 0);
	close(fd);
	free(b);
}
