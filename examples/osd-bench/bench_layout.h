/* osd-bench --layout: what the runs measured (bench_layout.c) and the table
 * made of it (bench_layout_table.c). */
#ifndef OSD_BENCH_LAYOUT_H
#define OSD_BENCH_LAYOUT_H

#include <stdint.h>

#define LAYOUT_MAX_SPECS 8   /* --layout given at most this often */
#define LAYOUT_MAX_COUNTS 8  /* entries of --devices */
#define LAYOUT_MAX_DEV 16    /* the largest device count */
#define LAYOUT_MAX_RUNS 21

/* One data map on one device count. */
struct layout_cell {
	int fits;              /* the map fits this many devices */
	unsigned links;        /* links the file's components use (reads can
				  use every one: parity rotates, copies share) */
	unsigned data_links;   /* the share of them a write's data gets, the rest
				  carrying parity and copies: groups x (width -
				  parity units) */
	char stripe[40];       /* e.g. "8", "4+1", "2x2", "2*(4+1)" */
	double write[LAYOUT_MAX_RUNS], read[LAYOUT_MAX_RUNS]; /* MiB/s per run */
};

struct layout_results {
	const char *spec[LAYOUT_MAX_SPECS];
	int plain_raid0[LAYOUT_MAX_SPECS]; /* RAID 0 without mirrors */
	unsigned nspecs;
	unsigned devs[LAYOUT_MAX_COUNTS];  /* ascending */
	unsigned ncounts;
	int runs;
	unsigned mib;
	unsigned io_mib;                   /* bytes per write and read call */
	uint64_t rate_bps;                 /* 0: loopback, unshaped */
	struct layout_cell cell[LAYOUT_MAX_SPECS][LAYOUT_MAX_COUNTS];
};

/* Prints the header and one row per map and device count, with the ratios
 * to one device, to the links' line rate and to RAID 0 (sorts the runs). */
void bench_layout_print(struct layout_results *res);

#endif
