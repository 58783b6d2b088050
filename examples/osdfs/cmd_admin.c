/* Commands on the whole partition: mkfs and fsck (neither mounts). */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "osdfs_tool.h"

enum { OPT_CAPACITY = 300, OPT_LABEL, OPT_BLOCK_SIZE, OPT_LAYOUT, OPT_REPAIR, OPT_VERIFY_DATA };

static int mkfs_opt(struct tool *t, int key, const char *arg, void *ctx)
{
	struct osdfs_mkfs_options *mo = ctx;
	char err[256] = "";
	uint64_t v;

	switch (key) {
	case OPT_LAYOUT:
		if (osdfs_data_map_parse(&t->map, arg, err, sizeof(err)) < 0)
			return tc_usage_err("mkfs: --layout: '%s': %s", arg, err);
		t->layout_given = 1;
		return 0;
	case OPT_CAPACITY:
		if (tc_parse_size(arg, &mo->capacity) < 0)
			return tc_usage_err("mkfs: --capacity: '%s' is not a size (like 10G)", arg);
		return 0;
	case OPT_LABEL:
		if (strlen(arg) > OSDFS_LABEL_MAX)
			return tc_usage_err("mkfs: --label: longer than %d bytes", OSDFS_LABEL_MAX);
		mo->label = arg;
		return 0;
	case OPT_BLOCK_SIZE:
		if (tc_parse_size(arg, &v) < 0 || v < 1024 || v > 32768 || (v & (v - 1)))
			return tc_usage_err("mkfs: --block-size: '%s' is not a power of two "
					    "from 1K to 32K", arg);
		mo->block_size = (uint32_t)v;
		return 0;
	default:
		return TC_EXIT_USAGE;
	}
}

int cmd_mkfs(struct tool *t, int argc, char **argv)
{
	static const struct option longs[] = {
		{ "capacity", required_argument, NULL, OPT_CAPACITY },
		{ "label", required_argument, NULL, OPT_LABEL },
		{ "block-size", required_argument, NULL, OPT_BLOCK_SIZE },
		{ "layout", required_argument, NULL, OPT_LAYOUT },
		{ NULL, 0, NULL, 0 },
	};
	struct osdfs_mkfs_options mo = OSDFS_MKFS_OPTIONS_INIT;
	char err[256] = "", spec[128];
	int i = tool_getopt(t, tool_find_command("mkfs"), argc, argv, "", longs, mkfs_opt, &mo);
	int rc;

	if (i <= 0)
		return -i;
	if (i < argc)
		return tc_usage_err("mkfs: unexpected argument '%s'", argv[i]);
	if ((t->layout_given || t->targets.n > 1) &&
	    osdfs_data_map_check(&t->map, t->targets.n, err, sizeof(err)) < 0)
		return tc_usage_err("mkfs: the layout does not fit %u device%s: %s", t->targets.n,
				    t->targets.n == 1 ? "" : "s", err);
	mo.root_uid = (uint32_t)getuid();
	mo.root_gid = (uint32_t)getgid();
	/* devices made and keyed before the format, which keeps the keys */
	if (tool_backend(t, 1, 0) < 0)
		return TC_EXIT_FAILED;
	rc = osdfs_mkfs(t->be, &mo);
	spec[0] = '\0';
	if (rc == 0 && osdfs_layout_default_map(t->be, &t->map) == 0)
		osdfs_data_map_format(&t->map, spec, sizeof(spec)); /* widths resolved */
	tool_release_backend(t);
	if (rc < 0)
		return tool_fail_partition(t, rc);
	printf("osdfs: created a %s%sfilesystem on %s partition 0x%" PRIx64
	       " (block size %u%s%s)\n", spec, *spec ? " " : "", tool_fs_name(t), t->partition,
	       mo.block_size, mo.label ? ", label " : "", mo.label ? mo.label : "");
	return 0;
}

struct fsck_out {
	int json;
	int first;
	struct tc_progress prog;
	const char *phase;
};

/* The phase's line: "fsck: inodes: 5000 of 100000 inodes (5%), 2500 inodes/s, 0:38 left". */
static void on_fsck_progress(const struct osdfs_fsck_progress *p, void *payload)
{
	struct fsck_out *o = payload;

	if (o->phase != p->phase) {
		o->phase = p->phase;
		o->prog.label = strcmp(p->phase, "inodes") == 0 ? "fsck: reading inodes" :
			"fsck: reading directories";
		o->prog.unit = p->phase;
		o->prog.shown = 0; /* drawn at once, however soon after the last line */
		clock_gettime(CLOCK_MONOTONIC, &o->prog.start); /* rate and ETA per phase */
	}
	tc_progress_set_total(&o->prog, p->total, 0);
	tc_progress_set(&o->prog, p->done, 0);
}

static void on_finding(enum osdfs_fsck_kind kind, const char *msg, void *p)
{
	struct fsck_out *o = p;

	tc_progress_end(&o->prog, 0); /* a finding line, then the progress line again */
	if (o->json) {
		printf("%s{\"kind\":\"%s\",\"message\":", o->first ? "" : ",", osdfs_fsck_kind_name(kind));
		tc_json_string(stdout, msg);
		printf("}");
		o->first = 0;
	} else {
		printf("%s: %s\n", osdfs_fsck_kind_name(kind), msg);
	}
}

static int fsck_opt(struct tool *t, int key, const char *arg, void *ctx)
{
	struct osdfs_fsck_options *fo = ctx;

	(void)t; (void)arg;
	if (key == OPT_REPAIR)
		fo->repair = 1;
	else if (key == OPT_VERIFY_DATA)
		fo->verify_data = 1;
	else
		return TC_EXIT_USAGE;
	return 0;
}

int cmd_fsck(struct tool *t, int argc, char **argv)
{
	static const struct option longs[] = {
		{ "repair", no_argument, NULL, OPT_REPAIR },
		{ "verify-data", no_argument, NULL, OPT_VERIFY_DATA },
		{ NULL, 0, NULL, 0 },
	};
	struct osdfs_fsck_options fo = OSDFS_FSCK_OPTIONS_INIT;
	struct osdfs_fsck_report rep;
	struct fsck_out out = { .json = t->json, .first = 1 };
	int repair, rc, status;
	uint64_t rebuilt;
	int i = tool_getopt(t, tool_find_command("fsck"), argc, argv, "", longs, fsck_opt, &fo);

	if (i <= 0)
		return -i;
	if (i < argc)
		return tc_usage_err("fsck: unexpected argument '%s'", argv[i]);
	repair = fo.repair;
	if (tool_backend(t, 0, !repair) < 0)
		return EXIT_FSCK_ERROR;
	fo.cb = on_finding;
	fo.payload = &out;
	tc_progress_init(&out.prog, "fsck", t->progress, 0);
	fo.progress = on_fsck_progress;
	fo.progress_payload = &out;
	if (t->json)
		printf("{\"findings\":[");
	rebuilt = layout_medium_errors(t->be);
	rc = osdfs_fsck(t->be, &fo, &rep);
	tc_progress_end(&out.prog, 0);
	rebuilt = layout_medium_errors(t->be) - rebuilt;
	tool_release_backend(t);
	if (rc < 0 && rc != -EUCLEAN) {
		if (t->json)
			printf("]}\n");
		tool_fail_partition(t, rc);
		return EXIT_FSCK_ERROR;
	}
	status = rep.unrepaired ? EXIT_FSCK_DAMAGED : rep.total ? EXIT_FSCK_REPAIRED : 0;
	if (t->json) {
		printf("],\"status\":\"%s\",\"inodes\":%" PRIu64 ",\"directories\":%" PRIu64
		       ",\"entries\":%" PRIu64 ",\"data_bytes\":%" PRIu64 ",\"rebuilt_reads\":%"
		       PRIu64 ",\"found\":%" PRIu64 ",\"repaired\":%" PRIu64 ",\"unrepaired\":%"
		       PRIu64 ",\"by_kind\":{",
		       status == 0 ? "clean" : status == EXIT_FSCK_REPAIRED ? "repaired" : "damaged",
		       rep.inodes, rep.directories, rep.entries, rep.data_bytes, rebuilt, rep.total,
		       rep.repaired, rep.unrepaired);
		for (int k = 0; k < OSDFS_FSCK_KIND_COUNT; k++)
			printf("%s\"%s\":%" PRIu64, k ? "," : "", osdfs_fsck_kind_name(k), rep.found[k]);
		printf("}}\n");
	} else if (status == 0) {
		printf("clean: %" PRIu64 " inodes, %" PRIu64 " directories, %" PRIu64 " entries",
		       rep.inodes, rep.directories, rep.entries);
		if (fo.verify_data)
			printf(", %" PRIu64 " data bytes read", rep.data_bytes);
		printf("\n");
	} else {
		const char *sep = "by kind: ";

		for (int k = 0; k < OSDFS_FSCK_KIND_COUNT; k++) {
			if (rep.found[k]) {
				printf("%s%" PRIu64 " %s", sep, rep.found[k], osdfs_fsck_kind_name(k));
				sep = ", ";
			}
		}
		printf("\n%" PRIu64 " problems found, %" PRIu64 " repaired, %" PRIu64 " left%s\n",
		       rep.total, rep.repaired, rep.unrepaired,
		       rep.unrepaired && !repair ? " (run 'osdfs fsck --repair')" : "");
	}
	if (rebuilt && !t->json)
		printf("%" PRIu64 " read%s failed on a device that answered and %s rebuilt from "
		       "redundancy%s\n", rebuilt, rebuilt == 1 ? "" : "s", rebuilt == 1 ? "was" : "were",
		       repair ? " and rewritten" : ": run 'osdfs scrub' to repair");
	return status;
}
