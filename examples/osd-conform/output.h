/* The results of every run, printed as a matrix or as JSON (output.c). */
#ifndef OSD_CONFORM_OUTPUT_H
#define OSD_CONFORM_OUTPUT_H

#include <stdio.h>
#include "conform.h"

#define CF_MAX_TESTS 64
#define CF_MAX_RUNS 8 /* 2 versions x 4 methods */

struct cf_outcome {
	enum cf_result result;
	char detail[512];
	struct osd_sense sense;
	int have_sense;
};

struct cf_run {
	enum osd_version ver;
	enum osd_sec_method method;
	uint64_t partition;      /* the scratch partition (0: none made) */
	int setup_failed;        /* open or scratch partition failed: every test has its cause */
	char setup_detail[512];
	int cleanup_failed;
	char cleanup_detail[512];
	struct cf_outcome out[CF_MAX_TESTS];
};

struct cf_report {
	const char *target;
	int destructive;
	unsigned nruns;
	struct cf_run runs[CF_MAX_RUNS];
};

/* Whether a test or a clean-up failed. */
int cf_report_failed(const struct cf_report *r);
/* The matrix, then the detail of every FAIL and UNSUPPORTED (every
 * result with @p verbose), then the totals. */
void cf_print_matrix(FILE *f, const struct cf_report *r, int verbose);
/* One JSON object with every result. */
void cf_print_json(FILE *f, const struct cf_report *r);

#endif
