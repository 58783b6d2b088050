/* A real software target in a temporary directory, reached through the
 * loopback transport, shared by the integration tests. */
#ifndef TEST_TARGET_FIXTURE_H
#define TEST_TARGET_FIXTURE_H

#include <osd/osd.h>
#include <osdtarget/target.h>

struct tgt_fixture {
	char dir[256];
	osd_target *tgt;
	osd_dev *dev;
};

/* Make a fresh store and open a device on it (no device when @p dev_opts is NULL). */
void fixture_up(struct tgt_fixture *f, const struct osd_dev_options *dev_opts);
/* Open a device on the fixture's target. */
osd_dev *fixture_dev(struct tgt_fixture *f, const struct osd_dev_options *opts);
/* Close everything and remove the directory. */
void fixture_down(struct tgt_fixture *f);
/* rm -r of a test directory. */
void fixture_rmtree(const char *dir);

#endif
