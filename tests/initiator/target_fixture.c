#define _XOPEN_SOURCE 700
#include <check.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "target_fixture.h"

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

void fixture_rmtree(const char *dir)
{
	nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

osd_dev *fixture_dev(struct tgt_fixture *f, const struct osd_dev_options *opts)
{
	struct osd_transport tp;
	osd_dev *dev;
	int rc;

	ck_assert_int_eq(osd_target_loopback(f->tgt, &tp), 0);
	rc = osd_dev_open(&dev, &tp, opts);
	if (rc)
		tp.ops->destroy(tp.impl);
	ck_assert_int_eq(rc, 0);
	return dev;
}

void fixture_up(struct tgt_fixture *f, const struct osd_dev_options *dev_opts)
{
	const char *tmp = getenv("TMPDIR");
	struct osd_target_options to = OSD_TARGET_OPTIONS_INIT;

	memset(f, 0, sizeof(*f));
	snprintf(f->dir, sizeof(f->dir), "%s/osdinit.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	ck_assert_ptr_nonnull(mkdtemp(f->dir));
	ck_assert_int_eq(osd_target_open(&f->tgt, f->dir, &to), 0);
	if (dev_opts)
		f->dev = fixture_dev(f, dev_opts);
}

void fixture_down(struct tgt_fixture *f)
{
	osd_dev_close(f->dev);
	osd_target_close(f->tgt);
	if (f->dir[0])
		fixture_rmtree(f->dir);
	memset(f, 0, sizeof(*f));
}
