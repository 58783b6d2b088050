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
#include "conform.h"
#include "output.h"

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

static int selected(const regex_t *re, int have_re, const struct cf_test *t)
{
	return !have_re || regexec(re, t->name, 0, NULL, 0) == 0;
}

static void list_tests(const regex_t *re, int have_re)
{
	for (unsigned i = 0; i < cf_num_tests; i++) {
		const struct cf_test *t = &cf_tests[i];

		if (!selected(re, have_re, t))
			continue;
		printf("%-32s %s%s%s%s\n    %s\n    %s\n", t->name,
		       (t->flags & CF_BOTH) == CF_BOTH ? "OSD-1+2" : t->flags & CF_V2 ? "OSD-2" : "OSD-1",
		       t->flags & CF_DESTRUCTIVE ? ", destructive" : "",
		       t->flags & CF_KEYED ? ", needs --key-file" : "",
		       t->flags & CF_NONCE ? ", CMDRSP" : t->flags & CF_SECURED ?
		       ", not NOSEC" : "", t->what, t->cite);
	}
}

/* Why @p t does not apply to this run, or NULL. */
static const char *not_applicable(const struct cf_test *t, const struct cf_ctx *c,
				  int destructive)
{
	if (!(t->flags & (c->ver == OSD_V1 ? CF_V1 : CF_V2)))
		return c->ver == OSD_V1 ? "not an OSD-1 command" : "OSD-1 only";
	if ((t->flags & CF_DESTRUCTIVE) && !destructive)
		return "changes the whole OSD: needs --destructive";
	if ((t->flags & CF_KEYED) && !c->d->have_key)
		return "needs the root key (--key-file)";
	if ((t->flags & CF_SECURED) && c->method == OSD_SEC_NOSEC)
		return "not under NOSEC";
	if ((t->flags & CF_NONCE) && c->method != OSD_SEC_CMDRSP)
		return "CMDRSP only (the CDB is sent by hand, without ALLDATA's integrity data)";
	return NULL;
}

/*
 * Sets the scratch partition's default security method to the run's: what
 * the target enforces (osdctl and osdfs do the same, examples/common). A
 * target that refuses the value by name does not support the method.
 */
static int require_method(struct cf_ctx *c)
{
	const uint32_t ps = OSD_APAGE_PARTITION_BASE + OSD_APAGE_POLICY_SECURITY;
	const struct osd_obj_id part = { c->part, 0 };
	uint8_t m = (uint8_t)c->method;
	char code[16];

	if (cf_set_attr(c, &part, ps, OSD_ATTR_PS_DEFAULT_METHOD, &m, 1) == 0)
		return 0;
	if (c->res == CF_FAIL && c->have_sense && c->sense.key == OSD_SK_ILLEGAL_REQUEST &&
	    c->sense.asc == OSD_ASC_INVALID_FIELD_IN_PARAM_LIST)
		cf_set(c, CF_UNSUPPORTED, "the target refuses %s as the partition's default "
		       "security method (%s)", tc_security_name(c->method),
		       cf_sense_code(&c->sense, code, sizeof(code)));
	return -1;
}

/* Creates and secures the scratch partition; the outcome in c on failure. */
static int setup(struct cf_ctx *c)
{
	struct osd_obj_id p;
	osd_req *req = NULL;
	int rc = cf_exec(c, req, osd_req_create_partition(&req, c->dev, 0),
			 "CREATE PARTITION of the scratch partition");

	if (rc == 0 && osd_req_created_id(req, &p) < 0)
		cf_set(c, CF_FAIL, "CREATE PARTITION did not report the partition it made"), rc = -1;
	osd_req_free(req);
	if (rc < 0)
		return -1;
	c->part = p.partition;
	c->next_id = OSD_FIRST_ID;
	if (c->method != OSD_SEC_NOSEC &&
	    (rc = tc_device_set_partition_keys(c->d, c->part, 0)) < 0)
		return cf_set(c, CF_FAIL, "SET KEY of the scratch partition: %s",
			      *osd_dev_error(c->dev) ? osd_dev_error(c->dev) : strerror(-rc)), -1;
	return require_method(c);
}

/* Removes everything in the scratch partition, then the partition. */
static int cleanup(struct cf_ctx *c)
{
	struct osd_obj_id part = { c->part, 0 };
	osd_req *req = NULL;
	int rc;

	if (cf_list_all(c, OSD_ACT_LIST_COLLECTION, &part, 0) < 0)
		c->nids = 0; /* no collections (or no LIST COLLECTION): remove the objects anyway */
	for (size_t i = 0; i < c->nids; i++) {
		struct osd_obj_id col = { c->part, c->ids[i] };

		cf_exec(c, req, osd_req_remove_collection(&req, c->dev, &col,
							  OSD_REMOVE_COLLECTION_FORCE),
			"REMOVE COLLECTION");
		osd_req_free(req);
		req = NULL;
	}
	if (cf_list_all(c, OSD_ACT_LIST, &part, 0) < 0)
		return -1;
	for (size_t i = 0; i < c->nids; i++) {
		struct osd_obj_id obj = { c->part, c->ids[i] };

		if (cf_remove(c, &obj) < 0)
			return -1;
	}
	rc = cf_exec(c, req, osd_req_remove_partition(&req, c->dev, c->part), "REMOVE PARTITION");
	osd_req_free(req);
	return rc;
}

static void record(struct cf_outcome *o, const struct cf_ctx *c)
{
	o->result = c->res;
	snprintf(o->detail, sizeof(o->detail), "%s", c->detail);
	o->have_sense = c->have_sense;
	o->sense = c->sense;
}

static void fill_run(struct cf_run *run, enum cf_result r, const char *detail,
		     const struct cf_ctx *c)
{
	for (unsigned i = 0; i < cf_num_tests; i++) {
		if (run->out[i].result != CF_NOT_RUN)
			continue;
		run->out[i].result = r;
		snprintf(run->out[i].detail, sizeof(run->out[i].detail), "%s", detail);
		run->out[i].have_sense = c->have_sense;
		run->out[i].sense = c->sense;
	}
}

struct cf_options {
	struct tc_device_opts dev;
	unsigned versions;   /* bit 1: OSD-1, bit 2: OSD-2 */
	unsigned methods;    /* bit per enum osd_sec_method; 0 = default */
	int destructive, json, verbose, list, have_re;
	regex_t re;
};

/*
 * Whether the target takes CDBs of c->ver: a GET ATTRIBUTES of the root
 * without a capability, sent on a device opened with version detection (a
 * device forced to a version the target refuses would not open). Returns 1
 * (taken, or refused for another reason than the command), 0 (refused as
 * not implemented; the outcome is in c) or -1 (the device did not open).
 */
static int probe_version(const struct cf_options *opt, struct cf_ctx *c)
{
	struct tc_device_opts o = opt->dev;
	const struct osd_obj_id root = { 0, 0 };
	uint8_t cdb[OSD_CDB_MAX_LEN];
	struct tc_device d;
	struct osd_cdb f;
	struct cf_raw r;
	char code[16];
	int n, ok = 1;

	o.osd_version = OSD_VERSION_AUTO;
	o.security = OSD_SEC_NOSEC;
	if (tc_device_open(&d, &o, opt->destructive) < 0)
		return -1;
	c->d = &d;
	osd_cdb_init(&f, c->ver, OSD_ACT_GET_ATTRIBUTES);
	f.obj = root;
	n = osd_cdb_encode(&f, cdb, sizeof(cdb));
	if (n > 0 && cf_raw_exec(c, cdb, (size_t)n, NULL, 0, &r, "version probe") == 0 &&
	    r.have_sense && cf_sense_unsupported(&r.sense)) {
		c->have_sense = 1;
		c->sense = r.sense;
		cf_set(c, CF_UNSUPPORTED, "the target refuses OSD-%d CDBs (GET ATTRIBUTES: %s)",
		       c->ver, cf_sense_code(&r.sense, code, sizeof(code)));
		ok = 0;
	}
	tc_device_close(&d);
	c->d = NULL;
	return ok;
}

/* Marks every test not run yet with @p r and the reason; the run did not start. */
static void no_run(struct cf_run *run, enum cf_result r, const char *why, const struct cf_ctx *c)
{
	run->setup_failed = 1;
	snprintf(run->setup_detail, sizeof(run->setup_detail), "%s", why);
	fill_run(run, r, run->setup_detail, c);
}

/* Removes the scratch partition (if made), recording a failure. */
static void finish(struct cf_run *run, struct cf_ctx *c)
{
	if (c->part && cleanup(c) < 0) {
		run->cleanup_failed = 1;
		snprintf(run->cleanup_detail, sizeof(run->cleanup_detail), "%s", c->detail);
	}
}

/* Makes the scratch partition; on failure the tests left get the cause. */
static int start(struct cf_run *run, struct cf_ctx *c)
{
	if (setup(c) == 0) {
		run->partition = c->part;
		return 0;
	}
	if (c->d->root_refused)
		cf_set(c, CF_FAIL, "the OSD's root is secured and %s", c->d->have_key ?
		       "refused the root key of --key-file" : "needs --key-file with its root key");
	no_run(run, c->res == CF_UNSUPPORTED ? CF_UNSUPPORTED : CF_FAIL, c->detail, c);
	return -1;
}

static void run_test(struct cf_outcome *out, const struct cf_test *t, struct cf_ctx *c,
		     const struct cf_options *opt)
{
	const char *na = not_applicable(t, c, opt->destructive);

	c->have_sense = 0;
	c->detail[0] = '\0';
	if (na) {
		cf_set(c, CF_NA, "%s", na);
	} else {
		if (opt->verbose)
			fprintf(stderr, "osd-conform: OSD-%d %s: %s\n", c->ver,
				tc_security_name(c->method), t->name);
		c->res = CF_FAIL;
		t->run(c);
	}
	record(out, c);
}

/* Runs the selected tests not run yet: those flagged CF_PRE, or the others. */
static void run_tests(struct cf_run *run, struct cf_ctx *c, const struct cf_options *opt,
		      int pre)
{
	for (unsigned i = 0; i < cf_num_tests; i++)
		if (run->out[i].result == CF_NOT_RUN && !!(cf_tests[i].flags & CF_PRE) == pre)
			run_test(&run->out[i], &cf_tests[i], c, opt);
}

/* Whether a selected test still waits for the scratch partition. */
static int tests_left(const struct cf_run *run)
{
	for (unsigned i = 0; i < cf_num_tests; i++)
		if (run->out[i].result == CF_NOT_RUN)
			return 1;
	return 0;
}

/* One run: version x method. Returns -1 when the device did not open. */
static int run_one(struct cf_run *run, const struct cf_options *opt)
{
	struct tc_device_opts o = opt->dev;
	struct tc_device d;
	struct cf_ctx c;

	memset(&c, 0, sizeof(c));
	c.ver = run->ver;
	c.method = run->method;
	c.verbose = opt->verbose;
	o.osd_version = run->ver == OSD_V1 ? OSD_VERSION_1 : OSD_VERSION_2;
	o.security = run->method;
	for (unsigned i = 0; i < cf_num_tests; i++)
		run->out[i].result = selected(&opt->re, opt->have_re, &cf_tests[i]) ? CF_NOT_RUN :
				     CF_NOT_SELECTED;
	switch (probe_version(opt, &c)) {
	case 0:
		no_run(run, CF_UNSUPPORTED, c.detail, &c);
		return 0;
	case 1:
		if (tc_device_open(&d, &o, opt->destructive) == 0)
			break;
		/* fall through */
	default:
		no_run(run, CF_FAIL, "cannot open the device (the message above says why)", &c);
		return -1;
	}
	c.d = &d;
	c.dev = d.dev;
	run_tests(run, &c, opt, 1);
	if (tests_left(run)) {
		if (start(run, &c) == 0)
			run_tests(run, &c, opt, 0);
		finish(run, &c);
	}
	tc_device_close(&d);
	free(c.ids);
	return 0;
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
		list_tests(&opt.re, opt.have_re);
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
			if (run_one(run, &opt) < 0 && rep.nruns == 1) {
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
