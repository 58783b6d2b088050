/* Running the suite: one run per OSD version and security method (suite.c). */
#ifndef OSD_CONFORM_SUITE_H
#define OSD_CONFORM_SUITE_H

#include <regex.h>
#include "conform.h"
#include "output.h"

/* What the command line asked for. */
struct cf_options {
	struct tc_device_opts dev;
	unsigned versions;   /* bit 1: OSD-1, bit 2: OSD-2 */
	unsigned methods;    /* bit per enum osd_sec_method; 0 = default */
	int destructive, json, verbose, list, have_re;
	regex_t re;
};

/* Whether -t selects @p t. */
int cf_selected(const struct cf_options *opt, const struct cf_test *t);

/*
 * One run (run->ver x run->method): opens the device, runs the selected
 * tests in a scratch partition, removes it; every outcome into run->out.
 * Returns -1 when the device did not open (a message was printed), else 0.
 */
int cf_run_one(struct cf_run *run, const struct cf_options *opt);

#endif
