/*
 * The software target's quirk emulation (osd_target_options.quirks), one
 * behaviour at a time, seen through libosd (exact sense, version fallback)
 * and through osdfs on the osd backend (what it falls back to, and the
 * superblock record of a PUNCH that is missing or not standard).
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <osd/attributes.h>
#include <osd/osd.h>
#include <osdfs/backends.h>
#include <osdfs/fsck.h>
#include <osdfs/osdfs.h>
#include <osdtarget/target.h>

#define PID 0x10000ULL
#define OID 0x10003ULL
#define PART_INFO (OSD_APAGE_PARTITION_BASE + OSD_APAGE_INFORMATION)
#define SUPER_OID 0x10000ULL   /* osdfs: the superblock object */
#define SUPER_PAGE 0x10000u    /* ... its attribute page and number */
#define PIECE 8192u

static char base[4096], store[4200];
static osd_target *tgt;
static osd_dev *dev;

static int rm_entry(const char *path, const struct stat *sb, int type, struct FTW *ftw)
{
	(void)sb;
	(void)type;
	(void)ftw;
	return remove(path);
}

static void setup(void)
{
	const char *tmp = getenv("TMPDIR");

	snprintf(base, sizeof(base), "%s/osd-quirks-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	ck_assert_ptr_nonnull(mkdtemp(base));
	snprintf(store, sizeof(store), "%s/store", base);
}

static void close_all(void)
{
	osd_dev_close(dev);
	dev = NULL;
	osd_target_close(tgt);
	tgt = NULL;
}

static void teardown(void)
{
	close_all();
	nftw(base, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* The loopback, counting the FLUSH commands (OSD-2 service action 8888h)
 * and keeping the object ids of the last FLUSH_IDS. */
#define FLUSH_IDS 64
static struct osd_transport_ops counting_ops;
static int (*loopback_submit)(void *impl, struct osd_xfer *xfer);
static unsigned flushes;
static uint64_t flushed[FLUSH_IDS];

static uint64_t cdb_be64(const uint8_t *p)
{
	uint64_t v = 0;

	for (int i = 0; i < 8; i++)
		v = v << 8 | p[i];
	return v;
}

static int counting_submit(void *impl, struct osd_xfer *x)
{
	if (x->cdb_len == 236 && x->cdb[8] == 0x88 && x->cdb[9] == 0x88) {
		flushed[flushes % FLUSH_IDS] = cdb_be64(x->cdb + 24);
		flushes++;
	}
	return loopback_submit(impl, x);
}

static int was_flushed(uint64_t oid)
{
	for (unsigned i = 0; i < flushes && i < FLUSH_IDS; i++)
		if (flushed[i] == oid)
			return 1;
	return 0;
}

/* (Re)open the store with @p quirks, a loopback device speaking @p v. */
static void open_quirks(unsigned quirks, enum osd_version_select v)
{
	struct osd_target_options to = OSD_TARGET_OPTIONS_INIT;
	struct osd_dev_options o = OSD_DEV_OPTIONS_INIT;
	struct osd_transport tp;

	to.quirks = quirks;
	ck_assert_int_eq(osd_target_open(&tgt, store, &to), 0);
	ck_assert_int_eq(osd_target_loopback(tgt, &tp), 0);
	counting_ops = *tp.ops;
	loopback_submit = tp.ops->submit;
	counting_ops.submit = counting_submit;
	tp.ops = &counting_ops;
	o.osd_version = v;
	ck_assert_int_eq(osd_dev_open(&dev, &tp, &o), 0);
}

static int run(osd_req *req)
{
	int rc = osd_req_execute(req);

	osd_req_free(req);
	return rc;
}

/* FORMAT, the partition, and user object OID. */
static void populate(void)
{
	const struct osd_obj_id obj = { PID, OID };
	osd_req *req;

	ck_assert_int_eq(osd_req_format(&req, dev, 0), 0);
	ck_assert_int_eq(run(req), 0);
	ck_assert_int_eq(osd_req_create_partition(&req, dev, PID), 0);
	ck_assert_int_eq(run(req), 0);
	ck_assert_int_eq(osd_req_create(&req, dev, &obj, 1), 0);
	ck_assert_int_eq(run(req), 0);
}

/* Execute @p req, expecting the refusal of an unimplemented service action:
 * ILLEGAL REQUEST, 20h/00h, field pointer at the SERVICE ACTION (byte 8). */
static void expect_unimplemented(osd_req *req)
{
	const struct osd_sense *s;

	ck_assert_int_eq(osd_req_execute(req), -EOPNOTSUPP);
	s = osd_req_sense(req);
	ck_assert_ptr_nonnull(s);
	ck_assert_uint_eq(s->key, OSD_SK_ILLEGAL_REQUEST);
	ck_assert_uint_eq(s->asc, OSD_ASC_INVALID_OPCODE);
	ck_assert(s->has_field && s->field_in_cdb);
	ck_assert_uint_eq(s->field_pointer, 8);
	osd_req_free(req);
}

static void inquiry(uint8_t d[96])
{
	uint8_t cdb[6] = { 0x12, 0, 0, 0, 96, 0 };
	struct iovec iov = { d, 96 };
	struct osd_xfer x = { 0 };

	x.cdb = cdb;
	x.cdb_len = sizeof(cdb);
	x.in_iov = &iov;
	x.in_iovcnt = 1;
	x.in_len = 96;
	ck_assert_int_eq(osd_target_execute(tgt, &x, NULL, 0), 0);
	ck_assert_uint_eq(x.status, OSD_STATUS_GOOD);
	ck_assert_uint_eq(x.in_xferred, 96);
}

START_TEST(unknown_quirk_refused)
{
	struct osd_target_options to = OSD_TARGET_OPTIONS_INIT;

	to.quirks = 0x100;
	ck_assert_int_eq(osd_target_open(&tgt, store, &to), -EINVAL);
	ck_assert_ptr_null(tgt);
	/* a version 2 caller has no quirks field: whatever is there is not read */
	to.version = 2;
	ck_assert_int_eq(osd_target_open(&tgt, store, &to), 0);
}
END_TEST

/* INQUIRY claims OSD-1 (0340h) only; 200-byte CDBs are refused; auto mode
 * falls back to OSD-2 and says so. */
START_TEST(osd1_descriptor)
{
	static const uint8_t want_vd[16] = { 0x03, 0x40 };
	static const uint8_t std_vd[16] = { 0x03, 0x55, 0x03, 0x56, 0x04, 0x40, 0x04, 0x48 };
	uint8_t d[96];
	osd_req *req;

	open_quirks(OSD_TARGET_QUIRK_OSD1_DESCRIPTOR, OSD_VERSION_AUTO);
	inquiry(d);
	ck_assert_mem_eq(d + 58, want_vd, sizeof(want_vd));
	ck_assert_int_eq(osd_dev_version(dev), OSD_V2);
	ck_assert_str_eq(osd_dev_error(dev), "INQUIRY claims OSD-1 but the target refused an "
			 "OSD-1 CDB (20h/00h INVALID COMMAND OPERATION CODE): speaking OSD-2");
	populate();
	close_all();

	/* told to speak OSD-1, the first command is refused as unsupported */
	open_quirks(OSD_TARGET_QUIRK_OSD1_DESCRIPTOR, OSD_VERSION_1);
	ck_assert_int_eq(osd_req_create_partition(&req, dev, PID + 1), 0);
	ck_assert_int_eq(osd_req_execute(req), -EOPNOTSUPP);
	ck_assert_uint_eq(osd_req_sense(req)->asc, OSD_ASC_INVALID_OPCODE);
	ck_assert(!osd_req_sense(req)->has_field);
	osd_req_free(req);
	close_all();

	/* without the quirk: the four standard descriptors, no message */
	open_quirks(0, OSD_VERSION_AUTO);
	inquiry(d);
	ck_assert_mem_eq(d + 58, std_vd, sizeof(std_vd));
	ck_assert_int_eq(osd_dev_version(dev), OSD_V2);
	ck_assert_str_eq(osd_dev_error(dev), "");
}
END_TEST

/* _i: which FLUSH is missing; the others still work. */
START_TEST(no_flush)
{
	static const unsigned quirk[4] = { OSD_TARGET_QUIRK_NO_FLUSH_PARTITION,
					   OSD_TARGET_QUIRK_NO_FLUSH_OSD,
					   OSD_TARGET_QUIRK_NO_FLUSH_COLLECTION,
					   OSD_TARGET_QUIRK_NO_FLUSH_OBJECT };
	const struct osd_obj_id coll = { PID, OID + 1 }, obj = { PID, OID };
	osd_req *req[4];

	open_quirks(quirk[_i], OSD_VERSION_2);
	populate();
	ck_assert_int_eq(osd_req_create_collection(&req[0], dev, &coll), 0);
	ck_assert_int_eq(run(req[0]), 0);
	ck_assert_int_eq(osd_req_flush_partition(&req[0], dev, PID, OSD_FLUSH_RANGE), 0);
	ck_assert_int_eq(osd_req_flush_osd(&req[1], dev, OSD_FLUSH_RANGE), 0);
	ck_assert_int_eq(osd_req_flush_collection(&req[2], dev, &coll, OSD_FLUSH_RANGE), 0);
	ck_assert_int_eq(osd_req_flush(&req[3], dev, &obj, OSD_FLUSH_DATA_AND_ATTRS, 0, 0), 0);
	for (int i = 0; i < 4; i++) {
		if (i == _i)
			expect_unimplemented(req[i]);
		else
			ck_assert_int_eq(run(req[i]), 0);
	}
}
END_TEST

START_TEST(no_object_count)
{
	const struct osd_obj_id part = { PID, 0 };
	const struct osd_sense *s;
	struct osd_attr a;
	uint64_t v = 0;
	osd_req *req;

	open_quirks(OSD_TARGET_QUIRK_NO_OBJECT_COUNT, OSD_VERSION_2);
	populate();
	ck_assert_int_eq(osd_req_get_attributes(&req, dev, &part), 0);
	ck_assert_int_eq(osd_req_add_get_attr(req, PART_INFO, OSD_ATTR_PI_NUM_OBJECTS), 0);
	ck_assert_int_eq(osd_req_execute(req), -EOPNOTSUPP);
	s = osd_req_sense(req);
	ck_assert_uint_eq(s->key, OSD_SK_ILLEGAL_REQUEST);
	ck_assert_uint_eq(s->asc, OSD_ASC_INVALID_FIELD_IN_PARAM_LIST);
	ck_assert_uint_eq(s->num_attrs, 1);
	ck_assert_uint_eq(s->attrs[0].page, PART_INFO);
	ck_assert_uint_eq(s->attrs[0].number, OSD_ATTR_PI_NUM_OBJECTS);
	osd_req_free(req);
	/* the partition's other attributes are there */
	ck_assert_int_eq(osd_get_attr_u64(dev, &part, PART_INFO, OSD_ATTR_PI_PARTITION_ID, &v), 0);
	ck_assert_uint_eq(v, PID);
	/* and all of the page leaves it out */
	ck_assert_int_eq(osd_req_get_attributes(&req, dev, &part), 0);
	ck_assert_int_eq(osd_req_add_get_attr(req, PART_INFO, OSD_ATTR_ALL), 0);
	ck_assert_int_eq(osd_req_execute(req), 0);
	ck_assert_int_eq(osd_req_find_attr(req, PART_INFO, OSD_ATTR_PI_PARTITION_ID, &a), 0);
	ck_assert_int_eq(osd_req_find_attr(req, PART_INFO, OSD_ATTR_PI_NUM_OBJECTS, &a), -ENOENT);
	osd_req_free(req);
}
END_TEST

static void write_obj(const struct osd_obj_id *obj, const char *data)
{
	struct iovec iov = { (void *)data, strlen(data) };
	osd_req *req;

	ck_assert_int_eq(osd_req_write(&req, dev, obj, 0, &iov, 1), 0);
	ck_assert_int_eq(run(req), 0);
}

static void expect_obj(const struct osd_obj_id *obj, const char *want, size_t want_len)
{
	char buf[64];
	struct iovec iov = { buf, sizeof(buf) };
	uint64_t len = 0;
	osd_req *req;

	ck_assert_int_eq(osd_get_attr_u64(dev, obj, OSD_APAGE_INFORMATION,
					  OSD_ATTR_UI_LOGICAL_LENGTH, &len), 0);
	ck_assert_uint_eq(len, want_len);
	ck_assert_int_eq(osd_req_read(&req, dev, obj, 0, &iov, 1), 0);
	ck_assert_int_eq(osd_req_execute(req), 0);
	ck_assert_uint_eq(osd_req_bytes_read(req), want_len);
	ck_assert_mem_eq(buf, want, want_len);
	osd_req_free(req);
}

START_TEST(punch_quirks)
{
	const struct osd_obj_id obj = { PID, OID };
	osd_req *req;

	open_quirks(OSD_TARGET_QUIRK_NO_PUNCH, OSD_VERSION_2);
	populate();
	write_obj(&obj, "AAAABBBBCCCC");
	ck_assert_int_eq(osd_req_punch(&req, dev, &obj, 4, 4), 0);
	expect_unimplemented(req);
	/* CLEAR is another service action: still there */
	ck_assert_int_eq(osd_req_clear(&req, dev, &obj, 4, 4), 0);
	ck_assert_int_eq(run(req), 0);
	expect_obj(&obj, "AAAA\0\0\0\0CCCC", 12);
	close_all();

	/* PUNCH_SHIFTS: the tail moves down and the length shrinks */
	open_quirks(OSD_TARGET_QUIRK_PUNCH_SHIFTS, OSD_VERSION_2);
	write_obj(&obj, "AAAABBBBCCCC");
	ck_assert_int_eq(osd_req_punch(&req, dev, &obj, 4, 4), 0);
	ck_assert_int_eq(run(req), 0);
	expect_obj(&obj, "AAAACCCC", 8);
	ck_assert_int_eq(osd_req_punch(&req, dev, &obj, 6, 100), 0); /* past the end */
	ck_assert_int_eq(run(req), 0);
	expect_obj(&obj, "AAAACC", 6);
	close_all();

	/* the standard PUNCH for comparison */
	open_quirks(0, OSD_VERSION_2);
	write_obj(&obj, "AAAABBBBCCCC");
	ck_assert_int_eq(osd_req_punch(&req, dev, &obj, 4, 4), 0);
	ck_assert_int_eq(run(req), 0);
	expect_obj(&obj, "AAAA\0\0\0\0CCCC", 12);
}
END_TEST

/* ---- osdfs on the quirky target ---- */

static osdfs_backend *new_backend(void)
{
	osdfs_backend *be;

	ck_assert_int_eq(osdfs_backend_osd_new(&be, dev, PID), 0);
	return be;
}

static void mkfs(void)
{
	osdfs_backend *be = new_backend();

	ck_assert_int_eq(osdfs_mkfs(be, NULL), 0);
	osdfs_backend_free(be);
}

static osdfs *mount_fs(void)
{
	struct osdfs_mount_options mo = OSDFS_MOUNT_OPTIONS_INIT;
	osdfs_backend *be = new_backend();
	osdfs *fs;

	ck_assert_int_eq(osdfs_mount(&fs, be, &mo), 0);
	return fs;
}

/* The superblock's ro_compat field (bytes 24-31, little-endian). */
static uint64_t super_ro_compat(void)
{
	const struct osd_obj_id sb = { PID, SUPER_OID };
	uint8_t v[160];
	size_t got = 0;
	uint64_t r = 0;

	ck_assert_int_eq(osd_get_attr(dev, &sb, SUPER_PAGE, 1, v, sizeof(v), &got), 0);
	ck_assert_uint_eq(got, 160);
	for (int i = 7; i >= 0; i--)
		r = r << 8 | v[24 + i];
	return r;
}

static void fsck_clean(void)
{
	struct osdfs_fsck_report rep;
	osdfs_backend *be = new_backend();

	ck_assert_int_eq(osdfs_fsck(be, NULL, &rep), 0);
	ck_assert_uint_eq(rep.total, 0);
	osdfs_backend_free(be);
}

/* Write A, B, C pieces, punch B; it must read back A, zeros, C. */
static void punch_file(osdfs *fs, const char *name)
{
	static unsigned char buf[3 * PIECE], want[3 * PIECE];
	osdfs_file *fh;

	memset(want, 'A', PIECE);
	memset(want + PIECE, 'B', PIECE);
	memset(want + 2 * PIECE, 'C', PIECE);
	ck_assert_int_eq(osdfs_create(fs, OSDFS_ROOT_INO, name, 0644, O_RDWR, NULL, NULL, &fh), 0);
	ck_assert_int_eq(osdfs_write(fs, fh, want, sizeof(want), 0), (ssize_t)sizeof(want));
	ck_assert_int_eq(osdfs_fsync(fs, osdfs_file_ino(fh), 0), 0);
	ck_assert_int_eq(osdfs_fallocate(fs, fh, OSDFS_FALLOC_KEEP_SIZE | OSDFS_FALLOC_PUNCH_HOLE,
					 PIECE, PIECE), 0);
	memset(want + PIECE, 0, PIECE);
	memset(buf, 0xEE, sizeof(buf));
	ck_assert_int_eq(osdfs_read(fs, fh, buf, sizeof(buf), 0), (ssize_t)sizeof(buf));
	ck_assert_mem_eq(buf, want, sizeof(want));
	ck_assert_int_eq(osdfs_release(fs, fh), 0);
}

/* A hole punched in a file's extended, never written tail reads as zeros
 * and leaves the object's length (the file size) alone, whichever way holes
 * are punched. */
static void punch_sparse_tail(osdfs *fs)
{
	static unsigned char buf[PIECE];
	const uint64_t size = 1u << 20;
	struct osd_obj_id obj = { PID, 0 };
	uint64_t len = 0;
	osdfs_file *fh;

	memset(buf, 'D', sizeof(buf));
	ck_assert_int_eq(osdfs_create(fs, OSDFS_ROOT_INO, "sparse", 0644, O_RDWR, NULL, NULL,
				      &fh), 0);
	ck_assert_int_eq(osdfs_write(fs, fh, buf, sizeof(buf), 0), (ssize_t)sizeof(buf));
	ck_assert_int_eq(osdfs_fallocate(fs, fh, 0, 0, size), 0);
	ck_assert_int_eq(osdfs_fallocate(fs, fh, OSDFS_FALLOC_KEEP_SIZE | OSDFS_FALLOC_PUNCH_HOLE,
					 size / 2, size / 4), 0);
	ck_assert_int_eq(osdfs_fsync(fs, osdfs_file_ino(fh), 0), 0);
	obj.id = SUPER_OID + osdfs_file_ino(fh);
	ck_assert_int_eq(osd_get_attr_u64(dev, &obj, OSD_APAGE_INFORMATION,
					  OSD_ATTR_UI_LOGICAL_LENGTH, &len), 0);
	ck_assert_uint_eq(len, size);
	memset(buf, 0xEE, sizeof(buf));
	ck_assert_int_eq(osdfs_read(fs, fh, buf, sizeof(buf), size / 2), (ssize_t)sizeof(buf));
	for (size_t i = 0; i < sizeof(buf); i++)
		ck_assert_uint_eq(buf[i], 0);
	ck_assert_int_eq(osdfs_release(fs, fh), 0);
}

/* _i: no quirk, no PUNCH, a shifting PUNCH. mkfs records what it found. */
START_TEST(osdfs_punch_probe)
{
	static const unsigned quirk[3] = { 0, OSD_TARGET_QUIRK_NO_PUNCH,
					   OSD_TARGET_QUIRK_PUNCH_SHIFTS };
	osdfs *fs;

	open_quirks(quirk[_i], OSD_VERSION_2);
	mkfs();
	ck_assert_uint_eq(super_ro_compat(), _i ? 1 : 0); /* PUNCH_ZEROES */
	fs = mount_fs();
	punch_file(fs, "f");
	punch_sparse_tail(fs);
	ck_assert_int_eq(osdfs_unmount(fs), 0);
	fsck_clean();
}
END_TEST

/* A filesystem made before the probe (no record) on a target that lost
 * PUNCH: the refusal makes osdfs write zeros instead. */
START_TEST(osdfs_old_super_no_punch)
{
	osdfs *fs;

	open_quirks(0, OSD_VERSION_2);
	mkfs();
	close_all();
	open_quirks(OSD_TARGET_QUIRK_NO_PUNCH, OSD_VERSION_2);
	ck_assert_uint_eq(super_ro_compat(), 0);
	fs = mount_fs();
	punch_file(fs, "f");
	ck_assert_int_eq(osdfs_unmount(fs), 0);
	fsck_clean();
}
END_TEST

static void make_files(osdfs *fs, int n)
{
	for (int i = 0; i < n; i++) {
		char name[16];
		osdfs_file *fh;

		snprintf(name, sizeof(name), "f%d", i);
		ck_assert_int_eq(osdfs_create(fs, OSDFS_ROOT_INO, name, 0644, O_RDWR, NULL, NULL,
					      &fh), 0);
		ck_assert_int_eq(osdfs_write(fs, fh, name, strlen(name), 0), (ssize_t)strlen(name));
		ck_assert_int_eq(osdfs_release(fs, fh), 0);
	}
}

/* Without NUMBER OF OBJECTS, statfs counts the objects: the same answer. */
START_TEST(osdfs_statfs_without_count)
{
	struct osdfs_statfs st;
	osdfs *fs;

	open_quirks(OSD_TARGET_QUIRK_NO_OBJECT_COUNT, OSD_VERSION_2);
	mkfs();
	fs = mount_fs();
	make_files(fs, 3);
	ck_assert_int_eq(osdfs_statfs(fs, &st), 0);
	ck_assert_uint_eq(st.files - st.ffree, 4); /* the root and 3 files */
	ck_assert_int_eq(osdfs_statfs(fs, &st), 0); /* remembered: no refusal again */
	ck_assert_uint_eq(st.files - st.ffree, 4);
	ck_assert_int_eq(osdfs_unmount(fs), 0);
	fsck_clean();
}
END_TEST

/* Neither FLUSH PARTITION nor FLUSH OSD (quirks combine in the library):
 * mkfs, sync and unmount succeed, FLUSHing object by object only the
 * objects changed since the last whole flush. */
START_TEST(osdfs_flush_by_object)
{
	osdfs_file *fh;
	uint64_t ino;
	osdfs *fs;

	open_quirks(OSD_TARGET_QUIRK_NO_FLUSH_PARTITION | OSD_TARGET_QUIRK_NO_FLUSH_OSD,
		    OSD_VERSION_2);
	mkfs();
	fs = mount_fs();
	make_files(fs, 20);
	ck_assert_int_eq(osdfs_sync(fs), 0);
	ck_assert_uint_ge(flushes, 21); /* the 20 files and the root at least */
	ck_assert_int_eq(osdfs_sync(fs), 0);
	flushes = 0;
	ck_assert_int_eq(osdfs_sync(fs), 0); /* nothing changed: nothing to flush */
	ck_assert_uint_eq(flushes, 0);
	ck_assert_int_eq(osdfs_resolve(fs, "/f7", 1, &ino), 0);
	ck_assert_int_eq(osdfs_open(fs, ino, O_RDWR, &fh), 0);
	ck_assert_int_eq(osdfs_write(fs, fh, "changed", 7, 0), 7);
	ck_assert_int_eq(osdfs_release(fs, fh), 0);
	ck_assert_int_eq(osdfs_sync(fs), 0);
	ck_assert(was_flushed(SUPER_OID + ino));
	ck_assert_uint_le(flushes, 3); /* the file, perhaps the superblock */
	ck_assert_int_eq(osdfs_unmount(fs), 0);
	fsck_clean();
}
END_TEST

/* Without FLUSH of one object, fsync flushes the partition instead. */
START_TEST(osdfs_fsync_without_object_flush)
{
	osdfs_file *fh;
	osdfs *fs;

	open_quirks(OSD_TARGET_QUIRK_NO_FLUSH_OBJECT, OSD_VERSION_2);
	mkfs();
	fs = mount_fs();
	ck_assert_int_eq(osdfs_create(fs, OSDFS_ROOT_INO, "f", 0644, O_RDWR, NULL, NULL, &fh), 0);
	ck_assert_int_eq(osdfs_write(fs, fh, "data", 4, 0), 4);
	ck_assert_int_eq(osdfs_fsync(fs, osdfs_file_ino(fh), 0), 0);
	ck_assert_int_eq(osdfs_release(fs, fh), 0);
	ck_assert_int_eq(osdfs_unmount(fs), 0);
	fsck_clean();
}
END_TEST

int main(void)
{
	Suite *s = suite_create("quirks");
	TCase *tc = tcase_create("quirks");
	SRunner *sr;
	int failed;

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, unknown_quirk_refused);
	tcase_add_test(tc, osd1_descriptor);
	tcase_add_loop_test(tc, no_flush, 0, 4);
	tcase_add_test(tc, no_object_count);
	tcase_add_test(tc, punch_quirks);
	tcase_add_loop_test(tc, osdfs_punch_probe, 0, 3);
	tcase_add_test(tc, osdfs_old_super_no_punch);
	tcase_add_test(tc, osdfs_statfs_without_count);
	tcase_add_test(tc, osdfs_flush_by_object);
	tcase_add_test(tc, osdfs_fsync_without_object_flush);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
