/* Shared helpers of the store tests: temporary directories and patterns. */
#ifndef TESTS_TARGET_STORE_HELPERS_H
#define TESTS_TARGET_STORE_HELPERS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "store/store.h"

/** Make a fresh directory under $TMPDIR; returns a malloc'ed path. */
char *th_mkdtemp(void);
/** Remove a directory tree and free the path. */
void th_rmtree(char *path);
/** Open (create) a store or fail the test. */
struct osd_store *th_open(const char *dir);
/** th_open(); with @p files every new object gets a data file of its own
 *  (no packing: tests of the data files themselves). */
struct osd_store *th_open_files(const char *dir, int files);
/** Deterministic bytes for (seed, offset). */
void th_fill(uint8_t *buf, size_t len, uint64_t seed, uint64_t off);
/** 1 if buf matches th_fill(seed, off). */
int th_check(const uint8_t *buf, size_t len, uint64_t seed, uint64_t off);
/** Path of a file inside dir (static buffer per call site use). */
void th_path(char *out, size_t outlen, const char *dir, const char *name);
/** Path of the data file of generation @p gen in store @p dir (@p sums: its sidecar). */
void th_obj_path(char *out, size_t outlen, const char *dir, uint64_t gen, int sums);
/** Entries of directory @p path whose names do not start with '.', and, when
 *  @p keep is not NULL, for which keep(name) is true; 0 if @p path is absent. */
unsigned th_dir_entries(const char *path, int (*keep)(const char *name));
/** th_dir_entries() summed over the fan-out directories data/00..ff of store @p dir. */
unsigned th_data_entries(const char *dir, int (*keep)(const char *name));
/** Flip bits of the byte at @p at of file @p path (damage), or fail the test. */
void th_flip(const char *path, off_t at);
/** Rewrite the log of (closed) store @p dir as an older build wrote it: its
 *  header of version @p version, its DATA and GENS records (version 3) left
 *  out.
 *  @return the header written (OSD__FILE_HDR bytes into @p hdr). */
void th_log_downgrade(const char *dir, uint32_t version, uint8_t *hdr);

#endif
