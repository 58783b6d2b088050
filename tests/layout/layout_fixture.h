/*
 * Layout test fixture: N in-memory devices (stores that outlive the
 * backends, so a layout can be reopened in any order), each behind a
 * fault-injecting wrapper that fails every call with -EIO once killed.
 */
#ifndef LAYOUT_FIXTURE_H
#define LAYOUT_FIXTURE_H

#include <stdatomic.h>
#include <sys/types.h>

#include <osdfs/backends.h>
#include <osdfs/layout.h>
#include <osdfs/osdfs.h>

#define FX_MAX 8

struct fault;

struct fx {
	unsigned n;
	osdfs_mem_store *store[FX_MAX + 2];
	struct fault *fault[FX_MAX + 2]; /* of the last open; valid while it lives */
	atomic_ulong writes[FX_MAX + 2];  /* data writes that reached store i, any open */
	atomic_ulong wbytes[FX_MAX + 2];  /* and their bytes */
	uint64_t count_oid;               /* writes to this object are also counted in */
	atomic_ulong oid_writes[FX_MAX + 2], oid_bytes[FX_MAX + 2];
	atomic_ulong oid_reads[FX_MAX + 2]; /* reads of count_oid that reached store i */
	atomic_ulong flushes[FX_MAX + 2];   /* flushes of everything (oid 0) that reached store i */
	atomic_ulong reset_reads[FX_MAX + 2]; /* reads of the reset count of store i's device */
	osdfs_backend *be;
	osdfs_mem_store *snap[FX_MAX + 2];  /* fx_snapshot() */
	int no_gather;                      /* fx_open(): no_write_gathering */
};

/* Create @p n empty stores. */
void fx_init(struct fx *f, unsigned n);
/* Open a layout on stores order[0..cnt-1] (-1 = missing device, -2 - i = store i's
 * device, dead from the start); map may be NULL. */
int fx_open(struct fx *f, const int *order, unsigned cnt, const char *map);
/* Open on every store in order. */
int fx_open_all(struct fx *f, const char *map);
/* A fault-wrapped device on store @p i (for osdfs_layout_replace). */
osdfs_backend *fx_device(struct fx *f, unsigned i);
/* The same, as a backend built against ops version 1 (no get_all_attrs). */
osdfs_backend *fx_device_v1(struct fx *f, unsigned i);
/* Fail every call of the device on store @p i from now on. */
void fx_kill(struct fx *f, unsigned i);
/* What store @p i holds now, kept as what its device made durable (as if
 * it had just completed a flush of everything). */
void fx_snapshot(struct fx *f, unsigned i);
/* The device on store @p i crashes with a volatile cache: killed, and its
 * store goes back to the last fx_snapshot(), losing every change it
 * acknowledged since (fx_device() then opens that). */
void fx_crash(struct fx *f, unsigned i);
/* Device i restarts at once, as a target back within the initiator's
 * failover window: its store goes back to the last fx_snapshot() while the
 * device keeps answering (not killed), and its reset count (backend op
 * reset_count) goes up by one. Call it with no operation in flight. */
void fx_restart(struct fx *f, unsigned i);
/* A medium error on the device of store @p i: its bytes [off, off + len) of
 * @p oid are flipped in the store and reads meeting them fail with -EIO
 * (everything else answers) until a write covers the whole range; with
 * @p fail_writes, writes meeting it fail with -EIO too. */
void fx_bad_range(struct fx *f, unsigned i, uint64_t oid, uint64_t off, uint64_t len,
		  int fail_writes);
/* Whether store @p i's bad range is still bad. */
int fx_bad_left(struct fx *f, unsigned i);
/* Read through store @p i's device (as the layout would: -EIO on the bad range). */
ssize_t fx_raw_read(struct fx *f, unsigned i, uint64_t oid, uint64_t off, void *buf, size_t len);
/* Overwrite bytes in store @p i behind the layout's back (silent corruption). */
void fx_raw_write(struct fx *f, unsigned i, uint64_t oid, uint64_t off, const void *buf,
		  size_t len);
void fx_close(struct fx *f);
void fx_fini(struct fx *f);
/* Mount osdfs on @p be, keeping the backend at unmount (asserts success). */
osdfs *fx_mount(osdfs_backend *be);
/* Scale knob: LAYOUT_TEST_SCALE (default 1.0) times @p n, at least 1. */
unsigned fx_scaled(unsigned n);

#endif
