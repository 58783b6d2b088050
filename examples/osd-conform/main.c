/*
 * osd-conform: qualifies an OSD target command by command.
 *
 *   osd-conform [options] TARGET
 *
 * TARGET is a store directory or an iscsi:// URL, as for the other tools.
 * Every selected test runs once per OSD version and security method, in a
 * scratch partition the target names and that is removed afterwards. Exit
 * codes: 0 no test failed, 1 a test (or the clean-up) failed, 2 usage error.
 */
#include <errno.h>
#include <getopt.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "suite.h"

enum {
	OPT_TEST = 't', OPT_HELP = 'h', OPT_VERSION = 'V', OPT_VERBOSE = 'v',
	OPT_OSD_VERSION = 256, OPT_SECURITY, OPT_KEY_FILE, OPT_INITIATOR_NAME,
	OPT_HEADER_DIGEST, OPT_DATA_DIGEST, OPT_CHAP_USER, OPT_CHAP_SECRET_FILE,
	OPT_TARGET, OPT_JSON, OPT_LIST, OPT_DESTRUCTIVE
};

static const struct option long_opts[] = {
	{ "target", required_argument, NULL, OPT_TARGET },
	{ "osd-version", required_argument, NULL, OPT_OSD_VERSION },
	{ "security", required_argument, NULL, OPT_SECURITY },
	{ "key-file", required_argument, NULL, OPT_KEY_FILE },
	{ "initiator-name", required_argument, NULL, OPT_INITIATOR_NAME },
	{ "header-digest", required_argument, NULL, OPT_HEADER_DIGEST },
	{ "data-digest", required_argument, NULL, OPT_DATA_DIGEST },
	{ "chap-user", required_argument, NULL, OPT_CHAP_USER },
	{ "chap-secret-file", required_argument, NULL, OPT_CHAP_SECRET_FILE },
	{ "test", required_argument, NULL, OPT_TEST },
	{ "list", no_argument, NULL, OPT_LIST },
	{ "destructive", no_argument, NULL, OPT_DESTRUCTIVE },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "verbose", no_argument, NULL, OPT_VERBOSE },
	{ "help", no_argument, NULL, OPT_HELP },
	{ "version", no_argument, NULL, OPT_VERSION },
	{ NULL, 0, NULL, 0 },
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: osd-conform [options] TARGET\n\n"
		"Runs a command-by-command conformance suite against the OSD TARGET (a store\n"
		"directory or iscsi://host[:port]/iqn/lun) and prints a matrix of PASS, FAIL and\n"
		"UNSUPPORTED per OSD version and security method. The tests work in a scratch\n"
		"partition they create and remove; FORMAT OSD and SET MASTER KEY run only with\n"
		"--destructive.\n\n"
		"Options:\n"
		"      --osd-version V    1, 2 or both (default both)\n"
		"      --security LIST    methods to run, comma-separated: nosec, capkey, cmdrsp,\n"
		"                         alldata, or all (default: all with --key-file, else nosec)\n"
		"      --key-file FILE    the target's root key (20 bytes or 40 hex digits)\n"
		"  -t, --test REGEX       only the tests whose name matches REGEX (POSIX ERE)\n"
		"      --list             list the tests (those -t selects) and exit\n"
		"      --destructive      also run the tests that change the whole OSD\n"
		"      --json             machine-readable results on stdout\n"
		"  -v, --verbose          details of passing tests too, progress on stderr\n"
		"  -h, --help             this help\n"
		"  -V, --version          print the version\n\n%s\n"
		"Exit status: 0 no test failed, 1 a test failed, 2 usage error.\n",
		tc_device_iscsi_help);
}

static int usage_error(const char *msg, const char *arg)
{
	return tc_usage_err("%s%s%s", msg, arg ? ": " : "", arg ? arg : "");
}

/* "nosec,capkey" or "all" into a bit per method. */
static int parse_methods(const char *s, unsigned *mask)
{
	char buf[128], *save = NULL;

	if (strlen(s) >= sizeof(buf))
		return -EINVAL;
	strcpy(buf, s);
	*mask = 0;
	for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		struct tc_device_opts o = TC_DEVICE_OPTS_INIT;

		if (strcmp(t, "all") == 0) {
			*mask |= 0xF;
			continue;
		}
		if (strcmp(t, "nosec") && strcmp(t, "capkey") && strcmp(t, "cmdrsp") &&
		    strcmp(t, "alldata"))
			return -EINVAL;
		tc_device_option(&o, "security", t);
		*mask |= 1u << o.security;
	}
	return *mask ? 0 : -EINVAL;
}

static void list_tests(const struct cf_options *opt)
{
	for (unsigned i = 0; i < cf_num_tests; i++) {
		const struct cf_test *t = &cf_tests[i];

		if (!cf_selected(opt, t))
			continue;
		printf("%-32s %s%s%s%s\n    %s\n    %s\n", t->name,
		       (t->flags & CF_BOTH) == CF_BOTH ? "OSD-1+2" : t->flags & CF_V2 ? "OSD-2" : "OSD-1",
		       t->flags & CF_DESTRUCTIVE ? ", destructive" : "",
		       t->flags & CF_KEYED ? ", needs --key-file" : "",
		       t->flags & CF_NONCE ? ", CMDRSP" : t->flags & CF_SECURED ?
		       ", not NOSEC" : "", t->what, t->cite);
	}
}

static int parse_args(int argc, char **argv, struct cf_options *opt)
{
	int c, idx;

	opterr = 0;
	while ((c = getopt_long(argc, argv, "t:vhV", long_opts, &idx)) != -1) {
		const char *name = NULL;

		for (const struct option *lo = long_opts; lo->name; lo++)
			if (lo->val == c)
				name = lo->name;
		switch (c) {
		case OPT_OSD_VERSION:
			if (!strcmp(optarg, "1") || !strcmp(optarg, "2"))
				opt->versions = 1u << (optarg[0] - '0');
			else if (!strcmp(optarg, "both"))
				opt->versions = 6;
			else
				return usage_error("--osd-version: not 1, 2 or both", optarg);
			break;
		case OPT_SECURITY:
			if (parse_methods(optarg, &opt->methods) < 0)
				return usage_error("--security: not a list of nosec, capkey, cmdrsp, "
						   "alldata or all", optarg);
			break;
		case OPT_TARGET:
		case OPT_KEY_FILE:
		case OPT_INITIATOR_NAME:
		case OPT_HEADER_DIGEST:
		case OPT_DATA_DIGEST:
		case OPT_CHAP_USER:
		case OPT_CHAP_SECRET_FILE:
			if (tc_device_option(&opt->dev, name, optarg) < 0)
				return tc_usage_err("invalid --%s", name);
			break;
		case OPT_TEST:
			if (opt->have_re)
				regfree(&opt->re);
			if (regcomp(&opt->re, optarg, REG_EXTENDED | REG_NOSUB) != 0)
				return usage_error("-t: not a regular expression", optarg);
			opt->have_re = 1;
			break;
		case OPT_LIST: opt->list = 1; break;
		case OPT_DESTRUCTIVE: opt->destructive = 1; break;
		case OPT_JSON: opt->json = 1; break;
		case OPT_VERBOSE: opt->verbose = 1; break;
		case OPT_HELP: usage(stdout); return -1;
		case OPT_VERSION: printf("osd-conform %s\n", osd_version_string()); return -1;
		default:
			return usage_error("unknown or incomplete option", argv[optind - 1]);
		}
	}
	if (opt->list)
		return 0;
	if (optind < argc && tc_device_option(&opt->dev, "target", argv[optind++]) < 0)
		return tc_usage_err("invalid TARGET");
	if (optind < argc)
		return usage_error("too many arguments", argv[optind]);
	if (!opt->dev.target_dir)
		return usage_error("no TARGET given (a store directory or an iscsi:// URL)", NULL);
	if (opt->dev.iscsi_opts && !opt->dev.remote)
		return usage_error("the iSCSI options need an iscsi:// TARGET", NULL);
	if ((opt->dev.chap_user != NULL) != (opt->dev.chap_secret_file != NULL))
		return usage_error("--chap-user and --chap-secret-file go together", NULL);
	if (!opt->methods)
		opt->methods = opt->dev.key_file ? 0xF : 1u << OSD_SEC_NOSEC;
	if ((opt->methods & ~(1u << OSD_SEC_NOSEC)) && !opt->dev.key_file)
		return usage_error("--security other than nosec needs --key-file", NULL);
	return 0;
}

int main(int argc, char **argv)
{
	struct cf_options opt;
	struct cf_report rep;
	int rc;

	memset(&opt, 0, sizeof(opt));
	opt.dev = (struct tc_device_opts)TC_DEVICE_OPTS_INIT;
	opt.dev.create_cmd = "'osdctl format' (or osd-conform --destructive)";
	opt.versions = 6;
	tc_set_prog("osd-conform");
	rc = parse_args(argc, argv, &opt);
	if (rc != 0) {
		if (opt.have_re)
			regfree(&opt.re);
		return rc < 0 ? TC_EXIT_OK : rc;
	}
	if (opt.list) {
		list_tests(&opt);
		rc = TC_EXIT_OK;
		goto out;
	}
	memset(&rep, 0, sizeof(rep));
	rep.target = opt.dev.target_dir;
	rep.destructive = opt.destructive;
	for (int v = 1; v <= 2; v++) {
		for (int m = OSD_SEC_NOSEC; m <= OSD_SEC_ALLDATA; m++) {
			struct cf_run *run;

			if (!(opt.versions & (1u << v)) || !(opt.methods & (1u << m)))
				continue;
			run = &rep.runs[rep.nruns++];
			run->ver = (enum osd_version)v;
			run->method = (enum osd_sec_method)m;
			/* a target that cannot be reached at all gets no matrix */
			if (cf_run_one(run, &opt) < 0 && rep.nruns == 1) {
				rc = TC_EXIT_FAILED;
				goto out;
			}
		}
	}
	if (opt.json)
		cf_print_json(stdout, &rep);
	else
		cf_print_matrix(stdout, &rep, opt.verbose);
	rc = cf_report_failed(&rep) ? TC_EXIT_FAILED : TC_EXIT_OK;
out:
	if (opt.have_re)
		regfree(&opt.re);
	return rc;
}
