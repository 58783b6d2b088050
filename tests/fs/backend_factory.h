/*
 * Backends under test: each factory makes a fresh backend (and whatever it
 * needs: a software target, a device) and tears it down again.
 */
#ifndef TESTS_FS_BACKEND_FACTORY_H
#define TESTS_FS_BACKEND_FACTORY_H

#include <stdbool.h>
#include <osdfs/sys/backend.h>

struct be_instance {
	osdfs_backend *be;
	void *priv; /* factory state */
};

struct be_factory {
	const char *name;
	bool exact_accounting;  /* statfs used = data + attribute bytes exactly */
	bool enforces_capacity; /* writes beyond the formatted capacity get -ENOSPC */
	bool punch_frees;       /* punching whole 64 KiB units returns their space */
	/* Offset of the far byte in the sparse-file test: the OSD target counts
	 * logical growth against its capacity, so it gets a smaller one. */
	uint64_t sparse_offset;
	bool deferred;          /* completions wait for poll() (event-loop transport) */
	bool (*available)(void);
	/* Make a backend; @dir is a private scratch directory to create files under. */
	int (*open)(struct be_instance *inst, const char *dir);
	void (*close)(struct be_instance *inst);
};

/* The partition the osd factories use. */
#define BE_OSD_PARTITION 0x10000ULL

/* priv of the "osd1"/"osd2" factories: the target and the device. */
struct osd_target;
struct osd_dev;
struct be_osd_env {
	struct osd_target *tgt;
	struct osd_dev *dev;
};

/* The factory called @name ("mem", "osd1", "osd2"), or NULL. */
const struct be_factory *be_factory_find(const char *name);

#endif
