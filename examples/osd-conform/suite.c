/*
 * One run of the suite: the version probe, the scratch partition (made,
 * keyed, given the run's security method, removed with everything in it),
 * and each selected test in turn.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "suite.h"

int cf_selected(const struct cf_options *opt, const struct cf_test *t)
{
	return !opt->have_re || regexec(&opt->re, t->name, 0, NULL, 0) == 0;
}

/* Why @p t does not apply to this run, or NULL. */
static const char *not_applicable(const struct cf_test *t, const struct cf_ctx *c,
				  int destructive)
{
	if (!(t->flags & (c->ver == OSD_V1 ? CF_V1 : CF_V2)))
		return c->ver == OSD_V1 ? "not an OSD-1 command" : "OSD-1 only";
	if ((t->flags & CF_DESTRUCTIVE) && !destructive)
		return "changes the whole OSD: needs --destructive";
	if ((t->flags & CF_KEYED) && !tc_device_has_key(c->d))
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
	if (osd_keyring_root_state(c->d->kr) & OSD_KEYRING_ROOT_REFUSED)
		cf_set(c, CF_FAIL, "the OSD's root is secured and %s", tc_device_has_key(c->d) ?
		       "refused the root key of --key-file" : "needs --key-file with its root key");
	no_run(run, c->res == CF_UNSUPPORTED ? CF_UNSUPPORTED : CF_FAIL, c->detail, c);
	return -1;
}

static void run_test(struct cf_outcome *out, const struct cf_test *t, struct cf_ctx *c,
		     const struct cf_options *opt)
{
	const char *na = not_applicable(t, c, opt->destructive);

	c->have_sense = 0;
	c->sense_checked = 0;
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
	if (c->res == CF_PASS && !c->sense_checked)
		c->have_sense = 0; /* the sense of some setup command, not the result */
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

int cf_run_one(struct cf_run *run, const struct cf_options *opt)
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
		run->out[i].result = cf_selected(opt, &cf_tests[i]) ? CF_NOT_RUN :
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
