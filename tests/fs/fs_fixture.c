/* The osdfs test fixture (see fs_fixture.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ftw.h>
#include <stdio.h>
#include <check.h>

#include "fs_fixture.h"

struct fs_fixture fx;

static const struct be_factory *selected(void)
{
	const char *name = getenv("OSDFS_TEST_BACKEND");

	return be_factory_find(name && *name ? name : "mem");
}

void fx_require_backend(void)
{
	const struct be_factory *f = selected();

	if (!f || (f->available && !f->available())) {
		fprintf(stderr, "backend %s not available: skipped\n",
			getenv("OSDFS_TEST_BACKEND") ? getenv("OSDFS_TEST_BACKEND") : "mem");
		exit(77);
	}
}

struct osdfs_mount_options fx_mount_options(void)
{
	struct osdfs_mount_options o = OSDFS_MOUNT_OPTIONS_INIT;

	o.flags = OSDFS_MOUNT_KEEP_BACKEND;
	return o;
}

void fx_start(uint64_t capacity)
{
	struct osdfs_mkfs_options mo = OSDFS_MKFS_OPTIONS_INIT;
	struct osdfs_mount_options o = fx_mount_options();
	const char *tmp = getenv("TMPDIR");
	int rc;

	memset(&fx, 0, sizeof(fx));
	fx.factory = selected();
	ck_assert_ptr_nonnull(fx.factory);
	snprintf(fx.dir, sizeof(fx.dir), "%s/osdfs-fs-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	ck_assert_ptr_nonnull(mkdtemp(fx.dir));
	rc = fx.factory->open(&fx.inst, fx.dir);
	ck_assert_int_eq(rc, 0);
	mo.capacity = capacity;
	mo.label = "test";
	ck_assert_int_eq(osdfs_mkfs(fx.inst.be, &mo), 0);
	ck_assert_int_eq(osdfs_mount(&fx.fs, fx.inst.be, &o), 0);
}

void fx_remount(void)
{
	struct osdfs_mount_options o = fx_mount_options();

	ck_assert_int_eq(osdfs_unmount(fx.fs), 0);
	fx.fs = NULL;
	ck_assert_int_eq(osdfs_mount(&fx.fs, fx.inst.be, &o), 0);
}

static int rm_entry(const char *path, const struct stat *sb, int type, struct FTW *ftw)
{
	(void)sb;
	(void)type;
	(void)ftw;
	return remove(path);
}

void fx_stop(void)
{
	if (fx.fs)
		osdfs_unmount(fx.fs);
	fx.fs = NULL;
	if (fx.inst.be)
		fx.factory->close(&fx.inst);
	if (fx.dir[0] && nftw(fx.dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS) != 0)
		fprintf(stderr, "could not remove %s\n", fx.dir);
	fx.dir[0] = '\0';
}

uint64_t fx_mkdir(uint64_t parent, const char *name)
{
	struct osdfs_stat st;

	ck_assert_int_eq(osdfs_mkdir(fx.fs, parent, name, 0755, NULL, &st), 0);
	return st.ino;
}

uint64_t fx_mkfile(uint64_t parent, const char *name, const char *content)
{
	struct osdfs_stat st;
	osdfs_file *fh;

	ck_assert_int_eq(osdfs_create(fx.fs, parent, name, 0644, O_RDWR | O_EXCL, NULL, &st, &fh),
			 0);
	if (content && *content)
		ck_assert_int_eq(osdfs_write(fx.fs, fh, content, strlen(content), 0),
				 (ssize_t)strlen(content));
	ck_assert_int_eq(osdfs_release(fx.fs, fh), 0);
	return st.ino;
}
