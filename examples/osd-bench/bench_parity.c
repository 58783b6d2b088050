/*
 * osd-bench --parity: the layout's RAID 5/6 parity code in memory, GB/s of
 * data units processed: P (RAID 5), P+Q (RAID 6), and recovery of one lost
 * data unit (RAID 5) and of two (RAID 6), each with our portable code and
 * with ISA-L when the build found it (the code the layout runs), at stripe
 * units of --unit KiB, on buffers aligned to 64 bytes and on buffers 16
 * bytes off (malloc's alignment: ISA-L's pq_gen/xor_gen need 32, so those
 * go through ec_encode_data). Every figure is the median of --runs runs.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "layout/layout_int.h"

#define MODE "--parity"
#define MAX_RUNS 21
#define WORK (256u << 20) /* data bytes processed per run */

enum op { GEN_P, GEN_PQ, REC_1, REC_2, NOPS };

static const char *const op_name[NOPS] = { "P", "P+Q", "recover 1", "recover 2" };
static const unsigned op_np[NOPS] = { 1, 2, 1, 2 };

struct cell {
	unsigned nd;     /* data units per row */
	size_t unit;     /* bytes per unit */
	unsigned skew;   /* bytes off 64-byte alignment */
	int portable;    /* our code, not ISA-L */
	uint8_t *u[OSDFS_LAYOUT_MAX_DEVICES + 2];
};

static void run_op(struct cell *c, enum op op)
{
	unsigned lost1[1] = { 1 }, lost2[2] = { 0, c->nd - 1 };
	uint8_t *q = op_np[op] == 2 ? c->u[c->nd + 1] : NULL;

	switch (op) {
	case GEN_P:
	case GEN_PQ:
		if (c->portable)
			lay_gf_gen_portable((const uint8_t *const *)c->u, c->nd, c->unit, c->u[c->nd], q);
		else
			lay_gf_gen((const uint8_t *const *)c->u, c->nd, c->unit, c->u[c->nd], q);
		break;
	case REC_1:
	case REC_2: {
		unsigned *lost = op == REC_1 ? lost1 : lost2, nl = op == REC_1 ? 1 : 2;

		if (c->portable)
			lay_gf_recover_portable(c->u, c->nd, op_np[op], c->unit, lost, nl);
		else
			lay_gf_recover(c->u, c->nd, op_np[op], c->unit, lost, nl);
		break;
	}
	default:
		break;
	}
}

/* GB/s of data units (nd x unit bytes per call), median of @p runs. */
static double measure(struct cell *c, enum op op, int runs)
{
	double r[MAX_RUNS];
	size_t calls = WORK / (c->nd * c->unit);

	if (calls == 0)
		calls = 1;
	run_op(c, op); /* warm: tables, caches */
	for (int i = 0; i < runs; i++) {
		uint64_t t0 = bench_now_ns();

		for (size_t k = 0; k < calls; k++)
			run_op(c, op);
		r[i] = (double)calls * (double)(c->nd * c->unit) / (double)(bench_now_ns() - t0);
	}
	return bench_median(r, runs);
}

static void usage(FILE *f)
{
	fprintf(f, "usage: osd-bench --parity [--runs N] [--unit KiB]\n"
		   "  --runs N     runs per figure, the median is printed (default 5, at most %d)\n"
		   "  --unit KiB   stripe unit (default 64, at most 4096)\n",
		MAX_RUNS);
}

static int parse_args(int argc, char **argv, unsigned *runs, unsigned *unit_kib)
{
	static const struct option opts[] = {
		{ "runs", required_argument, NULL, 'r' },
		{ "unit", required_argument, NULL, 'u' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c, rc = 0;

	optind = 1;
	while (!rc && (c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'r': rc = bench_parse_count(MODE, optarg, MAX_RUNS, runs); break;
		case 'u': rc = bench_parse_count(MODE, optarg, 4096, unit_kib); break;
		case 'h': usage(stdout); return 1;
		default: return -EINVAL;
		}
	}
	if (!rc && optind < argc) {
		fprintf(stderr, "osd-bench " MODE ": unexpected argument '%s'\n", argv[optind]);
		rc = -EINVAL;
	}
	return rc;
}

int osd_bench_parity(int argc, char **argv)
{
	static const unsigned nds[] = { 3, 4, 8 };
	unsigned runs = 5, unit_kib = 64;
	int rc = parse_args(argc, argv, &runs, &unit_kib);
	size_t unit, slot;
	uint8_t *mem;

	if (rc)
		return rc > 0 ? 0 : 2;
	unit = (size_t)unit_kib << 10;
	slot = unit + 64;
	mem = aligned_alloc(64, slot * (OSDFS_LAYOUT_MAX_DEVICES + 2));
	if (!mem)
		bench_die(MODE, "buffers", -ENOMEM, NULL);
	for (size_t i = 0; i < slot * (OSDFS_LAYOUT_MAX_DEVICES + 2); i++)
		mem[i] = (uint8_t)(i * 7 + i / 4093);
	printf("osd-bench --parity: the layout's GF(2^8) parity code in memory, GB/s of\n"
	       "data units (GB = 1e9 bytes), %u KiB units, median of %u run%s; ISA-L: %s.\n"
	       "aligned: buffers on 64 bytes; +16: 16 bytes off (as malloc gives).\n\n",
	       unit_kib, runs, runs == 1 ? "" : "s",
	       lay_gf_have_isal() ? "built in" : "not built in (second column n/a)");
	printf("%-10s %-4s %-8s %10s %10s %8s\n", "op", "Wd", "buffers", "ours", "ISA-L",
	       "ratio");
	for (unsigned op = 0; op < NOPS; op++) {
		for (unsigned i = 0; i < sizeof(nds) / sizeof(nds[0]); i++) {
			for (unsigned skew = 0; skew <= 16; skew += 16) {
				struct cell c = { nds[i], unit, skew, 1, { NULL } };
				double ours, isal = 0;

				for (unsigned k = 0; k < c.nd + 2; k++)
					c.u[k] = mem + k * slot + skew;
				ours = measure(&c, (enum op)op, (int)runs);
				c.portable = 0;
				if (lay_gf_have_isal())
					isal = measure(&c, (enum op)op, (int)runs);
				printf("%-10s %-4u %-8s %10.2f ", op_name[op], c.nd,
				       skew ? "+16" : "aligned", ours);
				if (isal > 0)
					printf("%10.2f %7.1fx\n", isal, isal / ours);
				else
					printf("%10s %8s\n", "n/a", "n/a");
			}
		}
	}
	free(mem);
	return 0;
}
