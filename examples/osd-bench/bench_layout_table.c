/*
 * The table of osd-bench --layout: one row per data map and device count,
 * medians of the runs, and three pairs of ratios, all against figures of the
 * same invocation:
 *   /1dev   to one device: the first map that fits one device, on one
 *   /line   to the most the links can carry of the file: reads, every link
 *           the file uses (parity rotates, copies share the reads); writes,
 *           the data units' share of them (parity and copies are the cost)
 *   /raid0  to the first plain RAID 0 map on as many devices
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "bench.h"
#include "bench_layout.h"

#define MIB 1048576.0

struct medians {
	double w, r;
};

static void print_header(const struct layout_results *res)
{
	char when[32];
	double load[1] = { -1 };
	time_t now = time(NULL);

	strftime(when, sizeof(when), "%Y-%m-%d %H:%M UTC", gmtime(&now));
	getloadavg(load, 1);
	printf("osd-bench --layout: osdfs on the layout backend over osd-targetd processes,\n"
	       "one per device, reached over iSCSI; %u MiB file, %u MiB I/O, write includes\n"
	       "fsync, read after a remount; median of %d run%s.\n",
	       res->mib, res->io_mib, res->runs, res->runs == 1 ? "" : "s");
	if (res->rate_bps)
		printf("links: each daemon in its own network namespace behind a veth pair, tbf\n"
		       "%.6g Mbit/s (%.1f MiB/s) each way.\n",
		       res->rate_bps / 1e6, res->rate_bps / 8 / MIB);
	else
		printf("links: none, every daemon on 127.0.0.1 (unshaped).\n");
	printf("%s, nproc %ld, load average %.2f: every daemon, osdfs and the initiator\n"
	       "share these cores.\n\n", when, sysconf(_SC_NPROCESSORS_ONLN), load[0]);
}

/* "%8.2f" of a / b, or "-" where there is nothing to compare with. */
static void ratio(double a, double b)
{
	if (b > 0)
		printf(" %7.2f", a / b);
	else
		printf(" %7s", "-");
}

static void print_row(const struct layout_results *res, int width, unsigned l, unsigned c,
		      struct medians med[LAYOUT_MAX_SPECS][LAYOUT_MAX_COUNTS], int base_l,
		      int base_c, int raid0)
{
	const struct layout_cell *cell = &res->cell[l][c];
	const struct medians *m = &med[l][c];
	double link = res->rate_bps / 8 / MIB;
	int base = base_l >= 0;

	printf("%-*s %4u", width, res->spec[l], res->devs[c]);
	if (!cell->fits) {
		printf(" %-8s %11s %10s\n", "n/a", "n/a", "n/a");
		return;
	}
	printf(" %-8s %11.1f %10.1f", cell->stripe, m->w, m->r);
	ratio(m->w, base ? med[base_l][base_c].w : 0);
	ratio(m->r, base ? med[base_l][base_c].r : 0);
	ratio(m->w, link * cell->data_links);
	ratio(m->r, link * cell->links);
	ratio(m->w, raid0 >= 0 && res->cell[raid0][c].fits ? med[raid0][c].w : 0);
	ratio(m->r, raid0 >= 0 && res->cell[raid0][c].fits ? med[raid0][c].r : 0);
	printf("\n");
}

void bench_layout_print(struct layout_results *res)
{
	static struct medians med[LAYOUT_MAX_SPECS][LAYOUT_MAX_COUNTS];
	int width = 6, base_l = -1, raid0 = -1;

	print_header(res);
	for (unsigned l = 0; l < res->nspecs; l++) {
		int len = (int)strlen(res->spec[l]);

		width = len > width ? len : width;
		if (raid0 < 0 && res->plain_raid0[l])
			raid0 = (int)l;
		if (base_l < 0 && res->devs[0] == 1 && res->cell[l][0].fits)
			base_l = (int)l;
		for (unsigned c = 0; c < res->ncounts; c++) {
			if (!res->cell[l][c].fits)
				continue;
			med[l][c].w = bench_median(res->cell[l][c].write, res->runs);
			med[l][c].r = bench_median(res->cell[l][c].read, res->runs);
		}
	}
	printf("%-*s %4s %-8s %11s %10s %7s %7s %7s %7s %7s %7s\n", width, "layout", "devs",
	       "stripe", "write MiB/s", "read MiB/s", "w/1dev", "r/1dev", "w/line", "r/line",
	       "w/raid0", "r/raid0");
	for (unsigned l = 0; l < res->nspecs; l++)
		for (unsigned c = 0; c < res->ncounts; c++)
			print_row(res, width, l, c, med, base_l, 0, raid0);
	printf("\n1dev: to %s on 1 device. line: to the link rate times the links\n"
	       "the file uses (reads) or their data units (writes; the stripe without\n"
	       "parity and copies). raid0: to %s on as many devices. -: nothing\n"
	       "to compare with.\n",
	       base_l >= 0 ? res->spec[base_l] : "(no map measured)",
	       raid0 >= 0 ? res->spec[raid0] : "(no RAID 0 map given)");
}
