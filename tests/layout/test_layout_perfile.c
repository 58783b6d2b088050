/*
 * Per-file data maps through osdfs (the virtual xattr "osdfs.layout"): on a
 * RAID 5 filesystem over five mem devices, empty files re-laid out as raid1
 * and raid0 hold data exactly (checked against a model), keep their maps
 * across a remount, and behave as their maps say when a device dies (raid1
 * reads on, raid0 gives -EIO). Non-empty files, bad map text, directories,
 * degraded devices and non-layout backends are refused with the documented
 * errors.
 * LAYOUT_TEST_SCALE scales the amount of data.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <osdfs/backends.h>
#include <osdfs/fsck.h>
#include <osdfs/osdfs.h>

#include "core/format.h"
#include "layout_fixture.h"

#define NDEV 5
#define XNAME "osdfs.layout"

static uint64_t mkfile(osdfs *fs, const char *name)
{
	struct osdfs_stat st;
	osdfs_file *fh;

	ck_assert_int_eq(osdfs_create(fs, OSDFS_ROOT_INO, name, 0644, O_RDWR, NULL, &st, &fh), 0);
	ck_assert_int_eq(osdfs_release(fs, fh), 0);
	return st.ino;
}

static int set_map(osdfs *fs, uint64_t ino, const char *text)
{
	return osdfs_setxattr(fs, ino, XNAME, text, strlen(text), 0);
}

/* The map getxattr reports, checked against the backend's own answer. */
static struct osdfs_data_map get_map(osdfs *fs, osdfs_backend *be, uint64_t ino)
{
	char text[128];
	struct osdfs_data_map m, b;
	ssize_t n = osdfs_getxattr(fs, ino, XNAME, NULL, 0);

	ck_assert_int_gt(n, 0);
	ck_assert_int_lt(n, (ssize_t)sizeof(text));
	ck_assert_int_eq(osdfs_getxattr(fs, ino, XNAME, text, (size_t)n), n);
	ck_assert_int_eq(osdfs_getxattr(fs, ino, XNAME, text, (size_t)n - 1), -ERANGE);
	text[n] = '\0';
	ck_assert_int_eq(osdfs_data_map_parse(&m, text, NULL, 0), 0);
	ck_assert_int_eq(osdfs_layout_file_map(be, OSDFS__OID_BASE + ino, &b), 0);
	ck_assert(memcmp(&m, &b, sizeof(m)) == 0);
	return m;
}

/* Random-offset writes of a pattern, mirrored in @p model. */
static void fill(osdfs *fs, uint64_t ino, uint8_t *model, size_t len, unsigned seed)
{
	osdfs_file *fh;

	ck_assert_int_eq(osdfs_open(fs, ino, O_RDWR, &fh), 0);
	for (size_t i = 0; i < len; i++)
		model[i] = (uint8_t)(i * 13 + seed + i / 997);
	/* the tail first, then the rest in uneven pieces: partial stripes */
	ck_assert_int_eq(osdfs_write(fs, fh, model + len / 2, len - len / 2, len / 2),
			 (ssize_t)(len - len / 2));
	for (size_t off = 0; off < len / 2;) {
		size_t n = 1 + (off * 7 + seed) % 9000;

		n = n > len / 2 - off ? len / 2 - off : n;
		ck_assert_int_eq(osdfs_write(fs, fh, model + off, n, off), (ssize_t)n);
		off += n;
	}
	ck_assert_int_eq(osdfs_release(fs, fh), 0);
}

/* Read the whole file: its length, or the read's error. */
static ssize_t slurp(osdfs *fs, uint64_t ino, uint8_t *buf, size_t cap)
{
	osdfs_file *fh;
	ssize_t n;

	ck_assert_int_eq(osdfs_open(fs, ino, O_RDONLY, &fh), 0);
	n = osdfs_read(fs, fh, buf, cap, 0);
	ck_assert_int_eq(osdfs_release(fs, fh), 0);
	return n;
}

static void check_data(osdfs *fs, uint64_t ino, const uint8_t *model, size_t len)
{
	uint8_t *buf = malloc(len + 100);

	ck_assert_int_eq(slurp(fs, ino, buf, len + 100), (ssize_t)len);
	ck_assert(memcmp(buf, model, len) == 0);
	free(buf);
}

/* A new osdfs, RAID 5 over NDEV devices, mounted. */
static osdfs *fresh_fs(struct fx *f)
{
	fx_init(f, NDEV);
	ck_assert_int_eq(fx_open_all(f, "raid5,su=16K"), 0);
	ck_assert_int_eq(osdfs_mkfs(f->be, NULL), 0);
	return fx_mount(f->be);
}

static uint64_t used_inodes(osdfs *fs)
{
	struct osdfs_statfs s;

	ck_assert_int_eq(osdfs_statfs(fs, &s), 0);
	return s.files - s.ffree;
}

START_TEST(test_perfile_maps)
{
	size_t len = fx_scaled(400) * 1024;
	uint8_t *m1 = malloc(len), *m0 = malloc(len), *buf = malloc(len + 100);
	struct osdfs_fsck_report r;
	struct osdfs_data_map map;
	struct osdfs_stat st;
	uint64_t f1, f0, fd, objs;
	struct fx f;
	osdfs *fs;

	fs = fresh_fs(&f);
	f1 = mkfile(fs, "mirrored");
	f0 = mkfile(fs, "striped");
	fd = mkfile(fs, "default");
	map = get_map(fs, f.be, fd);
	ck_assert_int_eq(map.raid, OSDFS_RAID_5);
	objs = used_inodes(fs);
	ck_assert_int_eq(set_map(fs, f1, "raid1,su=8K"), 0);
	ck_assert_int_eq(set_map(fs, f0, "raid0,su=4K"), 0);
	ck_assert_uint_eq(used_inodes(fs), objs); /* a re-layout adds no object */
	map = get_map(fs, f.be, f1);
	ck_assert_int_eq(map.raid, OSDFS_RAID_0);
	ck_assert_uint_eq(map.mirror_cnt, 1);
	ck_assert_uint_eq(map.stripe_unit, 8192);
	map = get_map(fs, f.be, f0);
	ck_assert_int_eq(map.raid, OSDFS_RAID_0);
	ck_assert_uint_eq(map.mirror_cnt, 0);
	ck_assert_uint_eq(map.num_comps, NDEV); /* every device: any loss hits it */
	/* re-laying out an empty file again, here back to RAID 5, works too */
	ck_assert_int_eq(set_map(fs, fd, "raid5,su=32K,width=3"), 0);
	ck_assert_uint_eq(get_map(fs, f.be, fd).group_width, 3);
	fill(fs, f1, m1, len, 1);
	fill(fs, f0, m0, len, 2);
	check_data(fs, f1, m1, len);
	check_data(fs, f0, m0, len);
	/* refusals: non-empty file, bad text, a directory, removal */
	ck_assert_int_eq(set_map(fs, f1, "raid0"), -EBUSY);
	ck_assert_int_eq(set_map(fs, fd, "raid9"), -EINVAL);
	ck_assert_int_eq(set_map(fs, fd, "raid5,su=100"), -EINVAL);
	ck_assert_int_eq(set_map(fs, fd, "raid5,comps=9"), -EINVAL); /* > 5 devices */
	ck_assert_int_eq(osdfs_mkdir(fs, OSDFS_ROOT_INO, "d", 0755, NULL, &st), 0);
	ck_assert_int_eq(set_map(fs, st.ino, "raid1"), -EINVAL);
	ck_assert_int_eq(osdfs_getxattr(fs, st.ino, XNAME, buf, 100), -ENODATA);
	ck_assert_int_eq(osdfs_removexattr(fs, fd, XNAME), -EOPNOTSUPP);
	ck_assert_int_eq(get_map(fs, f.be, fd).group_width, 3); /* unchanged by refusals */
	ck_assert_int_eq(osdfs_listxattr(fs, f1, (char *)buf, 100), 0); /* not listed */
	ck_assert_int_eq(osdfs_unmount(fs), 0);
	ck_assert_int_eq(osdfs_fsck(f.be, NULL, &r), 0);
	ck_assert_uint_eq(r.total, 0);
	fx_close(&f);

	/* remount: the maps persist */
	ck_assert_int_eq(fx_open_all(&f, NULL), 0);
	fs = fx_mount(f.be);
	ck_assert_uint_eq(get_map(fs, f.be, f1).mirror_cnt, 1);
	ck_assert_uint_eq(get_map(fs, f.be, f0).stripe_unit, 4096);
	check_data(fs, f1, m1, len);
	check_data(fs, f0, m0, len);
	/* a dead device: the mirrored file reads on, the striped one cannot */
	fx_kill(&f, 2);
	check_data(fs, f1, m1, len);
	ck_assert_int_eq(slurp(fs, f0, buf, len + 100), -EIO);
	/* no re-layout while a device the file uses is down; the map stays */
	fd = mkfile(fs, "late");
	ck_assert_int_eq(set_map(fs, fd, "raid1"), -EIO);
	ck_assert_int_eq(get_map(fs, f.be, fd).raid, OSDFS_RAID_5);
	ck_assert_int_eq(osdfs_unmount(fs), 0);
	fx_close(&f);
	fx_fini(&f);
	free(m1);
	free(m0);
	free(buf);
}
END_TEST

static const struct osdfs_backend_ops *O(osdfs_backend *be)
{
	return osdfs_backend_ops_of(be);
}

static void *I(osdfs_backend *be)
{
	return osdfs_backend_impl(be);
}

/* 0 if the device holds object @p oid, else -ENOENT. */
static int has(osdfs_backend *dev, uint64_t oid)
{
	uint64_t size;

	return O(dev)->size(I(dev), oid, &size);
}

/* A re-layout that fails midway (a component slot already holds the id)
 * takes back what it did: the old map, and no new component left behind. */
START_TEST(test_undo)
{
	struct fx f;
	osdfs_backend *side[NDEV];
	uint64_t ino, oid;
	osdfs *fs;

	fs = fresh_fs(&f);
	ino = mkfile(fs, "f");
	oid = OSDFS__OID_BASE + ino;
	ck_assert_int_eq(set_map(fs, ino, "raid0,comps=1"), 0);
	for (unsigned s = 0; s < NDEV; s++) /* store s is slot s */
		ck_assert_int_eq(osdfs_backend_mem_attach(&side[s], f.store[s]), 0);
	for (unsigned c = 1; c < NDEV; c++) /* one component: on slot oid % NDEV only */
		ck_assert_int_eq(has(side[(oid + c) % NDEV], oid), -ENOENT);
	/* raid1 on 5 devices: 4 components; the one on slot oid + 3 is in the way */
	ck_assert_int_eq(O(side[(oid + 3) % NDEV])->create(I(side[(oid + 3) % NDEV]), oid, NULL, 0), 0);
	ck_assert_int_eq(set_map(fs, ino, "raid1"), -EEXIST);
	ck_assert_uint_eq(get_map(fs, f.be, ino).num_comps, 1);
	ck_assert_int_eq(has(side[(oid + 1) % NDEV], oid), -ENOENT);
	ck_assert_int_eq(has(side[(oid + 2) % NDEV], oid), -ENOENT);
	ck_assert_int_eq(O(side[(oid + 3) % NDEV])->remove(I(side[(oid + 3) % NDEV]), oid), 0);
	ck_assert_int_eq(set_map(fs, ino, "raid1"), 0);
	ck_assert_uint_eq(get_map(fs, f.be, ino).num_comps, 4);
	for (unsigned c = 0; c < NDEV; c++)
		ck_assert_int_eq(has(side[(oid + c) % NDEV], oid),
				 c < 4 ? 0 : -ENOENT);
	ck_assert_int_eq(osdfs_unmount(fs), 0);
	for (unsigned s = 0; s < NDEV; s++)
		osdfs_backend_free(side[s]);
	fx_close(&f);
	fx_fini(&f);
}
END_TEST

/* Another backend has no maps: get says no data, set is not supported. */
START_TEST(test_not_layout)
{
	struct osdfs_mount_options mo = OSDFS_MOUNT_OPTIONS_INIT;
	osdfs_backend *be;
	uint64_t ino;
	char buf[64];
	osdfs *fs;

	ck_assert_int_eq(osdfs_backend_mem_new(&be, 0), 0);
	ck_assert_int_eq(osdfs_mkfs(be, NULL), 0);
	ck_assert_int_eq(osdfs_mount(&fs, be, &mo), 0);
	ino = mkfile(fs, "f");
	ck_assert_int_eq(osdfs_getxattr(fs, ino, XNAME, buf, sizeof(buf)), -ENODATA);
	ck_assert_int_eq(set_map(fs, ino, "raid1"), -EOPNOTSUPP);
	ck_assert_int_eq(osdfs_unmount(fs), 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("layout_perfile");
	TCase *tc = tcase_create("perfile");
	SRunner *sr;
	int failed;

	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, test_perfile_maps);
	tcase_add_test(tc, test_undo);
	tcase_add_test(tc, test_not_layout);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
