/* Benchmark modes of osd-bench. Each mode lives in its own bench_<mode>.c and
 * prints its results itself; numbers are medians of several runs and, where a
 * mode has a baseline, ratios measured in the same run. */
#ifndef OSD_BENCH_H
#define OSD_BENCH_H

#include <stdint.h>

/* --proto: CDB encode, decode, encode+sign per command. */
int osd_bench_proto(int argc, char **argv);
/* --target: the software target in process through the loopback transport. */
int osd_bench_target(int argc, char **argv);
/* --fs: osdfs on the mem backend and on the software target. */
int osd_bench_fs(int argc, char **argv);

/* Monotonic clock in nanoseconds. */
uint64_t bench_now_ns(void);
/* Median of n values (sorts v in place). */
double bench_median(double *v, int n);

#endif
