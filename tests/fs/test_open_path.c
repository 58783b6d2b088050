/*
 * The library entry points with the tools' key scheme (osd/keyring.h,
 * osdtarget/target.h osd_target_open_dev(), osdfs/open.h): the derived keys
 * against a known-good vector, key files, a CAPKEY filesystem opened by
 * directory, refusals (no key, another key: an integrity refusal, named as
 * such), and bad options.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <osd/keyring.h>
#include <osd/version.h>
#include <osdfs/backends.h>
#include <osdfs/open.h>
#include <osdtarget/target.h>

#define PART OSDFS_DEFAULT_PARTITION

static const uint8_t root_key[OSD_HMAC_LEN] = {
	0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x99,
	0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff, 0x00, 0x11, 0x22, 0x33,
};
/*
 * Working key 0 of partition 0x10000 under that root key: HMAC-SHA1 of the
 * partition key over seed "osdctl-key" 03 00 <P> (zero padded to 20 bytes),
 * key id 03 00 00 00 01 00 00 and 03 00; the partition key (f3840c8b...)
 * HMAC-SHA1 of the root key over "osdctl-key" 02 00 <P>, 02 00 00 00 01 00 00,
 * 02 00 (KEY TO SET 2 and 3, osd2r05 6.24; computed independently with
 * Python's hmac module). Filesystems the tools keyed depend on these bytes.
 */
static const char working_key_hex[] = "5fc63b01c931db0950025433871143b325a439d7";

static char dir[4096];

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

	snprintf(dir, sizeof(dir), "%s/osd-open-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void teardown(void)
{
	nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static void write_file(const char *name, const char *content, mode_t mode, char *path)
{
	FILE *f;

	sprintf(path, "%s/%s", dir, name);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(content, f);
	fclose(f);
	ck_assert_int_eq(chmod(path, mode), 0);
}

START_TEST(derived_keys_known_vector)
{
	uint8_t sid[OSD_SYSTEM_ID_LEN], wk[OSD_HMAC_LEN], expect[OSD_HMAC_LEN];
	struct osd_cred_request r;
	struct osd_credential c;
	osd_keyring *kr;
	osd_key *k;

	for (int i = 0; i < OSD_SYSTEM_ID_LEN; i++)
		sid[i] = (uint8_t)(0xA0 + i);
	for (int i = 0; i < OSD_HMAC_LEN; i++)
		sscanf(working_key_hex + 2 * i, "%2hhx", &wk[i]);
	ck_assert_int_eq(osd_keyring_new(&kr, sid, root_key, OSD_SEC_CAPKEY), 0);
	memset(&r, 0, sizeof(r));
	r.version = OSD_V2;
	r.obj.partition = PART;
	r.obj.id = 0x10001;
	r.permissions = OSD_PERM_READ;
	r.method = OSD_SEC_CAPKEY;
	ck_assert_int_eq(osd_keyring_credential(&r, &c, kr), 0);
	/* the capability key is the HMAC of the working key over capability and system id */
	ck_assert_int_eq(osd_key_new(&k, wk, sizeof(wk)), 0);
	ck_assert_int_eq(osd_capability_key(k, OSD_V2, &c.cap, sid, expect), 0);
	ck_assert_mem_eq(c.cap_key, expect, OSD_HMAC_LEN);
	osd_key_free(k);
	/* the same keys without a keyring, as osd-secd derives them */
	{
		static const uint8_t pkey_head[4] = { 0xf3, 0x84, 0x0c, 0x8b };
		uint8_t pk[OSD_HMAC_LEN], w[OSD_HMAC_LEN], w1[OSD_HMAC_LEN];

		ck_assert_int_eq(osd_keyring_derive_keys(root_key, PART, 0, pk, w), 0);
		ck_assert_mem_eq(w, wk, OSD_HMAC_LEN);
		ck_assert_mem_eq(pk, pkey_head, sizeof(pkey_head));
		ck_assert_int_eq(osd_keyring_derive_keys(root_key, PART, 1, pk, w1), 0);
		ck_assert_mem_eq(pk, pkey_head, sizeof(pkey_head));
		ck_assert(memcmp(w1, w, OSD_HMAC_LEN) != 0);
		ck_assert_int_eq(osd_keyring_derive_keys(root_key, 0, 0, pk, w), -EINVAL);
		ck_assert_int_eq(osd_keyring_derive_keys(root_key, PART, 16, pk, w), -EINVAL);
		ck_assert_int_eq(osd_keyring_derive_keys(NULL, PART, 0, pk, w), -EINVAL);
	}
	/* no root key: only NOSEC */
	osd_keyring_free(kr);
	ck_assert_int_eq(osd_keyring_new(&kr, sid, NULL, OSD_SEC_CAPKEY), 0);
	ck_assert_int_eq(osd_keyring_has_root_key(kr), 0);
	ck_assert_int_eq(osd_keyring_credential(&r, &c, kr), -ENOKEY);
	osd_keyring_free(kr);
	ck_assert_int_eq(osd_keyring_new(&kr, NULL, root_key, OSD_SEC_CAPKEY), -EINVAL);
}
END_TEST

START_TEST(key_files)
{
	char path[4200], err[512];
	uint8_t key[OSD_HMAC_LEN];

	write_file("hex", "00112233445566778899aabbccddeeff00112233\n", 0600, path);
	ck_assert_int_eq(osd_keyring_read_key_file(path, key, err, sizeof(err)), 0);
	ck_assert_mem_eq(key, root_key, OSD_HMAC_LEN);
	/* 20 raw bytes are the key even when the last one is a line ending or a
	 * space (a random key's, one time in 85); longer files may end in one */
	static const char *const raw_ends[] = { "\n", "\r", " ", "\x14\n", "\x14\r\n" };
	uint8_t want[OSD_HMAC_LEN];
	for (size_t i = 0; i < sizeof(raw_ends) / sizeof(raw_ends[0]); i++) {
		char raw[32];
		for (int b = 0; b < 19; b++)
			raw[b] = (char)(0x80 + b);
		strcpy(raw + 19, raw_ends[i]);
		memcpy(want, raw, OSD_HMAC_LEN);
		write_file("raw", raw, 0600, path);
		memset(key, 0, sizeof(key));
		ck_assert_int_eq(osd_keyring_read_key_file(path, key, err, sizeof(err)), 0);
		ck_assert_mem_eq(key, want, OSD_HMAC_LEN);
	}
	write_file("short", "012345678901234567\n", 0600, path); /* 18 bytes and a newline */
	ck_assert_int_eq(osd_keyring_read_key_file(path, key, err, sizeof(err)), -EINVAL);
	write_file("bad", "0011zz\n", 0600, path);
	ck_assert_int_eq(osd_keyring_read_key_file(path, key, err, sizeof(err)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "a key file holds 20 bytes or 40 hex digits"));
	write_file("open", "00112233445566778899aabbccddeeff00112233\n", 0644, path);
	ck_assert_int_eq(osd_keyring_read_key_file(path, key, err, sizeof(err)), -EPERM);
	ck_assert_ptr_nonnull(strstr(err, "permissions 0644"));
	ck_assert_ptr_nonnull(strstr(err, "are too open"));
	sprintf(path, "%s/missing", dir);
	ck_assert_int_eq(osd_keyring_read_key_file(path, key, NULL, 0), -ENOENT);
}
END_TEST

/* A CAPKEY filesystem as `osdfs --security capkey --key-file K mkfs` makes it. */
static void make_capkey_fs(const char *store, const char *content)
{
	struct osd_target_options to = OSD_TARGET_OPTIONS_INIT;
	struct osd_open_options o = OSD_OPEN_OPTIONS_INIT;
	osdfs_backend *be;
	osd_target *tgt;
	osdfs_file *fh;
	osd_dev *dev;
	osdfs *fs;
	struct osdfs_stat st;

	o.security = OSD_SEC_CAPKEY;
	o.root_key = root_key;
	ck_assert_int_eq(osd_target_open_dev(&tgt, &dev, store, &to, &o), 0);
	ck_assert_int_eq(osd_target_root_secured(tgt), 1);
	ck_assert_int_eq(osd_keyring_setup_partition(osd_dev_keyring(dev), dev, PART), 0);
	ck_assert_int_eq(osdfs_backend_osd_new(&be, dev, PART), 0);
	ck_assert_int_eq(osdfs_mkfs(be, NULL), 0);
	ck_assert_int_eq(osdfs_mount(&fs, be, NULL), 0);
	ck_assert_int_eq(osdfs_create(fs, OSDFS_ROOT_INO, "f", 0644, O_WRONLY, NULL, &st, &fh),
			 0);
	ck_assert_int_eq(osdfs_write(fs, fh, content, strlen(content), 0),
			 (ssize_t)strlen(content));
	ck_assert_int_eq(osdfs_release(fs, fh), 0);
	ck_assert_int_eq(osdfs_unmount(fs), 0);
	osd_dev_close(dev);
	osd_target_close(tgt);
}

static int open_fs(const char *store, enum osd_sec_method m, const uint8_t *key, osdfs **fs,
		   char *err, size_t size)
{
	struct osd_open_options dev = OSD_OPEN_OPTIONS_INIT;
	struct osdfs_open_options o = OSDFS_OPEN_OPTIONS_INIT;

	dev.security = m;
	dev.root_key = key;
	o.device = &dev;
	o.error = err;
	o.error_size = size;
	return osdfs_open_path(fs, store, &o);
}

START_TEST(capkey_filesystem_by_directory)
{
	static const char content[] = "bytes written under CAPKEY\n";
	uint8_t other[OSD_HMAC_LEN];
	char store[4200], err[1024], buf[64];
	struct osdfs_stat st;
	osdfs_file *fh;
	uint64_t ino;
	osdfs *fs;

	sprintf(store, "%s/store", dir);
	make_capkey_fs(store, content);
	ck_assert_int_eq(open_fs(store, OSD_SEC_CAPKEY, root_key, &fs, err, sizeof(err)), 0);
	ck_assert_int_eq(osdfs_lookup(fs, OSDFS_ROOT_INO, "f", &st), 0);
	ino = st.ino;
	ck_assert_int_eq(osdfs_open(fs, ino, O_RDONLY, &fh), 0);
	memset(buf, 0, sizeof(buf));
	ck_assert_int_eq(osdfs_read(fs, fh, buf, sizeof(buf), 0), (ssize_t)strlen(content));
	ck_assert_str_eq(buf, content);
	ck_assert_int_eq(osdfs_release(fs, fh), 0);
	ck_assert_int_eq(osdfs_unmount(fs), 0); /* closes the device and the store */

	/* NOSEC: the partition's default method refuses it */
	ck_assert_int_eq(open_fs(store, OSD_SEC_NOSEC, NULL, &fs, err, sizeof(err)), -EACCES);
	ck_assert_ptr_nonnull(strstr(err, "partition 0x10000"));
	/* another root key: the request ICV does not verify, and the error says so */
	memcpy(other, root_key, sizeof(other));
	other[0] ^= 1;
	ck_assert_int_eq(open_fs(store, OSD_SEC_CAPKEY, other, &fs, err, sizeof(err)), -EACCES);
	ck_assert_ptr_nonnull(strstr(err, "integrity check value did not verify"));
	/* the store is closed again after each failure: the right key still works */
	ck_assert_int_eq(open_fs(store, OSD_SEC_CAPKEY, root_key, &fs, err, sizeof(err)), 0);
	ck_assert_int_eq(osdfs_unmount(fs), 0);
}
END_TEST

START_TEST(bad_arguments)
{
	struct osd_open_options dev = OSD_OPEN_OPTIONS_INIT;
	struct osdfs_mount_options mo = OSDFS_MOUNT_OPTIONS_INIT;
	struct osdfs_open_options o = OSDFS_OPEN_OPTIONS_INIT;
	char store[4200], err[512];
	osd_target *tgt;
	osd_dev *d;
	osdfs *fs;

	sprintf(store, "%s/none", dir);
	o.error = err;
	o.error_size = sizeof(err);
	ck_assert_int_eq(osdfs_open_path(&fs, store, &o), -ENOENT);
	ck_assert_ptr_nonnull(strstr(err, "none: no OSD store here"));
	ck_assert_ptr_null(fs);
	mo.flags = OSDFS_MOUNT_KEEP_BACKEND;
	o.mount = &mo;
	ck_assert_int_eq(osdfs_open_path(&fs, store, &o), -EINVAL);
	o.mount = NULL;
	o.version = 99;
	ck_assert_int_eq(osdfs_open_path(&fs, store, &o), -EINVAL);
	/* a method other than NOSEC needs a key */
	dev.security = OSD_SEC_CAPKEY;
	dev.error = err;
	dev.error_size = sizeof(err);
	ck_assert_int_eq(osd_target_open_dev(&tgt, &d, store, NULL, &dev), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "needs the root key"));
	ck_assert_int_eq(osd_dev_open_url(&d, "iscsi://127.0.0.1:1/iqn.x/0", &dev), -EINVAL);
	dev.security = OSD_SEC_NOSEC;
	ck_assert_int_eq(osd_dev_open_url(&d, "http://x/", &dev), -EINVAL);
	ck_assert_int_eq(osd_dev_open_url(&d, "iscsi://127.0.0.1:1/iqn.2026-12.x:y/0", &dev) < 0,
			 1);
	ck_assert_ptr_nonnull(strstr(err, "cannot log in"));
}
END_TEST

START_TEST(versions)
{
	ck_assert_int_eq(OSD_VERSION_NUMBER, OSD_VERSION_ENCODE(OSD_VERSION_MAJOR,
								 OSD_VERSION_MINOR,
								 OSD_VERSION_PATCH));
	ck_assert_int_eq(osd_version_number(), OSD_VERSION_NUMBER);
	ck_assert_int_eq(osd_target_version_number(), OSD_VERSION_NUMBER);
	ck_assert_int_eq(osdfs_version_number(), OSD_VERSION_NUMBER);
	ck_assert_str_eq(osd_version_string(), OSD_VERSION_STRING);
	ck_assert_str_eq(osd_target_version_string(), OSD_VERSION_STRING);
	ck_assert_str_eq(osdfs_version_string(), OSD_VERSION_STRING);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("open_path");
	TCase *tc = tcase_create("open_path");
	SRunner *sr;
	int failed;

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, derived_keys_known_vector);
	tcase_add_test(tc, key_files);
	tcase_add_test(tc, capkey_filesystem_by_directory);
	tcase_add_test(tc, bad_arguments);
	tcase_add_test(tc, versions);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
