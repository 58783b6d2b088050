/* Benchmark modes of osd-bench. Each mode lives in its own bench_<mode>.c and
 * prints its results itself; numbers are medians of several runs and, where a
 * mode has a baseline, ratios measured in the same run. */
#ifndef OSD_BENCH_H
#define OSD_BENCH_H

#include <stddef.h>
#include <stdint.h>

/* --proto: CDB encode, decode, encode+sign per command. */
int osd_bench_proto(int argc, char **argv);
/* --target: the software target in process through the loopback transport. */
int osd_bench_target(int argc, char **argv);
/* --fs: osdfs on the mem backend and on the software target. */
int osd_bench_fs(int argc, char **argv);
/* --iscsi: the software target over iSCSI on 127.0.0.1 next to loopback. */
int osd_bench_iscsi(int argc, char **argv);
/* --fuse: osdfs-mount beside a FUSE passthrough and the native filesystem. */
int osd_bench_fuse(int argc, char **argv);
/* --layout: osdfs over several osd-targetd processes (layout backend),
 * optionally each behind a shaped link. */
int osd_bench_layout(int argc, char **argv);
/* --parity: the layout's P, P+Q and recovery code in memory, ours vs ISA-L. */
int osd_bench_parity(int argc, char **argv);
/* --scale: open, memory, LIST, fsck, small objects at growing object counts. */
int osd_bench_scale(int argc, char **argv);

struct osd_dev;
struct osd_req;
/* Prints "osd-bench MODE: WHAT: reason" (the device's last error if it has
 * one, else strerror(-rc)) and exits 1. */
void bench_die(const char *mode, const char *what, int rc, struct osd_dev *dev)
	__attribute__((noreturn));
/* Executes @p req and frees it; bench_die() if it fails. */
void bench_exec_or_die(const char *mode, struct osd_dev *dev, struct osd_req *req,
		       const char *what);

/* Parses a decimal count 1..max into *out; prints "osd-bench MODE: bad
 * count" and returns -EINVAL otherwise. */
int bench_parse_count(const char *mode, const char *s, unsigned max, unsigned *out);

/* Monotonic clock in nanoseconds. */
uint64_t bench_now_ns(void);
/* Median of n values (sorts v in place). */
double bench_median(double *v, int n);
/* -v/--verbose before the mode: bench_median() also prints every run (stderr). */
extern int bench_verbose;
/* Make a fresh directory <base>/<prefix>.XXXXXX into buf. 0 or -errno
 * (-ENAMETOOLONG when it does not fit). */
int bench_mkdtemp(const char *base, const char *prefix, char *buf, size_t size);
/* Remove a directory tree made by bench_mkdtemp. 0 or -errno. */
int bench_rmtree(const char *dir);

struct osd_credential;
struct osd_cred_request;
struct osd_target;
/* The root key the target and device benchmarks install on their store. */
extern const uint8_t bench_root_key[20];
/* One OSD-wide CAPKEY credential (root PAR capability with GLOBAL, every
 * permission; docs/security.md 5) for @p tgt signed with bench_root_key. */
int bench_root_credential(struct osd_target *tgt, struct osd_credential *out);
/* Credential source for devices that only use that credential: refuses. */
int bench_no_credential(const struct osd_cred_request *want, struct osd_credential *out,
			void *payload);

#endif
