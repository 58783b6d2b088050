/*
 * A freshly made and mounted osdfs for each test, on the backend named by
 * the environment variable OSDFS_TEST_BACKEND ("mem" when unset; any name
 * backend_factory.c knows). The backend outlives unmount (the mount is made
 * with OSDFS_MOUNT_KEEP_BACKEND), so tests can remount and check
 * persistence.
 */
#ifndef TESTS_FS_FS_FIXTURE_H
#define TESTS_FS_FS_FIXTURE_H

#include <stdint.h>
#include <osdfs/osdfs.h>

#include "backend_factory.h"

struct fs_fixture {
	const struct be_factory *factory;
	struct be_instance inst;
	char dir[256];
	osdfs *fs;
};

/* The one fixture of a test process (check forks one process per test). */
extern struct fs_fixture fx;

/* Exits with 77 (skipped) if the selected backend is unavailable. */
void fx_require_backend(void);
/* mkfs with @p capacity bytes (0 = backend default) and mount. */
void fx_start(uint64_t capacity);
/* Unmount (asserting success) and mount again. */
void fx_remount(void);
/* Mount options used by fx_start and fx_remount. */
struct osdfs_mount_options fx_mount_options(void);
/* Unmount and release everything. */
void fx_stop(void);

/* Shortcuts on fx.fs that assert success and return the new inode number. */
uint64_t fx_mkdir(uint64_t parent, const char *name);
uint64_t fx_mkfile(uint64_t parent, const char *name, const char *content);

#endif
