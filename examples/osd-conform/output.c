/*
 * Printing the results: a matrix of tests against runs (OSD version and
 * security method) with the sense of each non-PASS cell, or JSON.
 */
#include <stdio.h>
#include "output.h"

static const char *result_name(enum cf_result r)
{
	switch (r) {
	case CF_PASS: return "PASS";
	case CF_FAIL: return "FAIL";
	case CF_UNSUPPORTED: return "UNSUPPORTED";
	case CF_NA: return "N/A";
	default: return "";
	}
}

static int shown(const struct cf_report *r, unsigned t)
{
	for (unsigned i = 0; i < r->nruns; i++)
		if (r->runs[i].out[t].result != CF_NOT_SELECTED)
			return 1;
	return 0;
}

int cf_report_failed(const struct cf_report *r)
{
	for (unsigned i = 0; i < r->nruns; i++) {
		if (r->runs[i].cleanup_failed)
			return 1;
		for (unsigned t = 0; t < cf_num_tests; t++)
			if (r->runs[i].out[t].result == CF_FAIL)
				return 1;
	}
	return 0;
}

static void run_name(const struct cf_run *run, char *buf, size_t len)
{
	snprintf(buf, len, "OSD-%d/%s", run->ver, tc_security_name(run->method));
}

/* "PASS", "FAIL 5/24/00", "UNSUP 5/20/00", "n/a". */
static void cell(const struct cf_outcome *o, char *buf, size_t len)
{
	char code[16] = "";

	if (o->have_sense && o->result != CF_NA)
		cf_sense_code(&o->sense, code, sizeof(code));
	switch (o->result) {
	case CF_PASS:
		snprintf(buf, len, "PASS%s%s", *code ? " " : "", code);
		break;
	case CF_FAIL:
		snprintf(buf, len, "FAIL%s%s", *code ? " " : "", code);
		break;
	case CF_UNSUPPORTED:
		snprintf(buf, len, "UNSUP %s", code);
		break;
	default:
		snprintf(buf, len, "n/a");
	}
}

void cf_print_matrix(FILE *f, const struct cf_report *r, int verbose)
{
	unsigned count[4] = { 0, 0, 0, 0 };
	char name[32], buf[32];

	fprintf(f, "osd-conform %s: %s%s\n\n%-30s", osd_version_string(), r->target,
		r->destructive ? " (destructive)" : "", "TEST");
	for (unsigned i = 0; i < r->nruns; i++) {
		run_name(&r->runs[i], name, sizeof(name));
		fprintf(f, " %-15s", name);
	}
	fputc('\n', f);
	for (unsigned t = 0; t < cf_num_tests; t++) {
		if (!shown(r, t))
			continue;
		fprintf(f, "%-30s", cf_tests[t].name);
		for (unsigned i = 0; i < r->nruns; i++) {
			const struct cf_outcome *o = &r->runs[i].out[t];

			cell(o, buf, sizeof(buf));
			fprintf(f, " %-15s", buf);
			if (o->result <= CF_NA)
				count[o->result]++;
		}
		fputc('\n', f);
	}
	fprintf(f, "\nDetails:\n");
	for (unsigned i = 0; i < r->nruns; i++) {
		const struct cf_run *run = &r->runs[i];

		run_name(run, name, sizeof(name));
		if (run->partition)
			fprintf(f, "  %s: scratch partition 0x%llx\n", name,
				(unsigned long long)run->partition);
		if (run->setup_failed)
			fprintf(f, "  %s: no test ran: %s\n", name, run->setup_detail);
		for (unsigned t = 0; t < cf_num_tests && !run->setup_failed; t++) {
			const struct cf_outcome *o = &run->out[t];

			if (o->result == CF_NOT_SELECTED ||
			    (!verbose && o->result != CF_FAIL && o->result != CF_UNSUPPORTED))
				continue;
			fprintf(f, "  %s %s: %s: %s\n", name, cf_tests[t].name,
				result_name(o->result), o->detail);
		}
		if (run->cleanup_failed)
			fprintf(f, "  %s: clean-up FAILED: %s\n", name, run->cleanup_detail);
	}
	fprintf(f, "\n%u PASS, %u FAIL, %u UNSUPPORTED, %u N/A\n", count[CF_PASS],
		count[CF_FAIL], count[CF_UNSUPPORTED], count[CF_NA]);
}

static void json_outcome(FILE *f, unsigned t, const struct cf_outcome *o)
{
	fprintf(f, "{\"test\":");
	tc_json_string(f, cf_tests[t].name);
	fprintf(f, ",\"result\":\"%s\",\"sense\":", result_name(o->result));
	if (o->have_sense && o->result != CF_NA)
		fprintf(f, "{\"key\":%u,\"asc\":%u,\"ascq\":%u}", o->sense.key, o->sense.asc >> 8,
			o->sense.asc & 0xFF);
	else
		fprintf(f, "null");
	fprintf(f, ",\"detail\":");
	tc_json_string(f, o->detail);
	fprintf(f, ",\"cite\":");
	tc_json_string(f, cf_tests[t].cite);
	fputc('}', f);
}

void cf_print_json(FILE *f, const struct cf_report *r)
{
	fprintf(f, "{\"tool\":\"osd-conform\",\"version\":");
	tc_json_string(f, osd_version_string());
	fprintf(f, ",\"target\":");
	tc_json_string(f, r->target);
	fprintf(f, ",\"destructive\":%s,\"failed\":%s,\"runs\":[", r->destructive ? "true" : "false",
		cf_report_failed(r) ? "true" : "false");
	for (unsigned i = 0; i < r->nruns; i++) {
		const struct cf_run *run = &r->runs[i];
		int first = 1;

		fprintf(f, "%s{\"osd_version\":%d,\"security\":\"%s\",\"partition\":%llu,"
			"\"setup\":", i ? "," : "", run->ver, tc_security_name(run->method),
			(unsigned long long)run->partition);
		if (run->setup_failed)
			tc_json_string(f, run->setup_detail);
		else
			fprintf(f, "\"ok\"");
		fprintf(f, ",\"cleanup\":");
		if (run->cleanup_failed)
			tc_json_string(f, run->cleanup_detail);
		else
			fprintf(f, "\"ok\"");
		fprintf(f, ",\"results\":[");
		for (unsigned t = 0; t < cf_num_tests; t++) {
			if (run->out[t].result == CF_NOT_SELECTED)
				continue;
			if (!first)
				fputc(',', f);
			first = 0;
			json_outcome(f, t, &run->out[t]);
		}
		fprintf(f, "]}");
	}
	fprintf(f, "]}\n");
}
