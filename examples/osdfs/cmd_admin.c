/* Commands on the whole partition: mkfs and fsck (neither mounts). */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
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
	case 'f':
		t->force = 1;
		return 0;
	default:
		return TC_EXIT_USAGE;
	}
}

/* Describes the osdfs filesystem on t->be (1), or other objects there (1),
 * or nothing (0). */
static int describe_contents(struct tool *t, char *desc, size_t size)
{
	const struct osdfs_backend_ops *ops = osdfs_backend_ops_of(t->be);
	struct osdfs_mount_options mo = OSDFS_MOUNT_OPTIONS_INIT;
	struct osdfs_backend_stat bst = { 0 };
	struct osdfs_info info;
	struct osdfs_stat root;
	char made[32] = "at an unknown time", used[16];
	osdfs *fs;

	ops->statfs(osdfs_backend_impl(t->be), &bst);
	tc_format_size(bst.used, used, sizeof(used));
	mo.flags = OSDFS_MOUNT_RDONLY | OSDFS_MOUNT_FORCE | OSDFS_MOUNT_KEEP_BACKEND;
	if (osdfs_mount(&fs, t->be, &mo) == 0) {
		time_t when;
		struct tm tm;

		osdfs_get_info(fs, &info);
		if (osdfs_getattr(fs, OSDFS_ROOT_INO, &root) == 0) {
			when = (time_t)root.crtime.sec;
			if (gmtime_r(&when, &tm))
				strftime(made, sizeof(made), "%Y-%m-%d %H:%M UTC", &tm);
		}
		osdfs_unmount(fs);
		unsigned long long inodes = bst.objects ? bst.objects - 1 : 0;

		snprintf(desc, size, "a filesystem%s%s%s made %s with %llu inode%s, %s used",
			 *info.label ? " labelled '" : "", info.label, *info.label ? "'" : "", made,
			 inodes, inodes == 1 ? "" : "s", used);
		return 1;
	}
	if (bst.objects == 0)
		return 0;
	snprintf(desc, size, "%llu objects that are not an osdfs filesystem (%s)",
		 (unsigned long long)bst.objects, used);
	return 1;
}

/* Refuses to erase a filesystem or store, or to build one among foreign
 * files, unless forced; never erases a filesystem whose holder is alive.
 * Returns 0 to go on, or an exit code. */
static int mkfs_guard(struct tool *t)
{
	struct osdfs_holder h;
	char desc[256], who[256];
	const char *store = NULL;
	unsigned existing = 0;
	int rc = 0;

	for (unsigned i = 0; i < t->targets.n; i++) {
		struct tc_dir_survey s;

		if (tc_target_is_url(t->targets.v[i])) {
			existing++;
			continue;
		}
		if (tc_guard_dir(t->targets.v[i], t->force, "-f") < 0)
			return TC_EXIT_FAILED;
		if (tc_dir_survey(t->targets.v[i], &s) == 0 && s.store) {
			existing++;
			store = t->targets.v[i];
		}
	}
	if (existing == 0)
		return 0; /* only new stores: nothing to erase */
	if (existing < t->targets.n) { /* old and new devices: no filesystem to open */
		if (store && !t->force) {
			tc_err("mkfs: %s holds an OSD store; mkfs would erase what its partition "
			       "0x%llx holds (-f to erase)", store, (unsigned long long)t->partition);
			return TC_EXIT_FAILED;
		}
		return 0;
	}
	if (tool_backend(t, 0, 1) < 0)
		return 0; /* no partition or filesystem there yet: nothing to erase */
	if (osdfs_holder_get(t->be, &h) == 0 && h.state == OSDFS_HOLDER_LIVE) {
		tc_err("mkfs: %s partition 0x%llx is %s; unmount it there first", tool_fs_name(t),
		       (unsigned long long)t->partition, osdfs_holder_format(&h, who, sizeof(who)));
		rc = TC_EXIT_FAILED;
	} else if (!t->force && describe_contents(t, desc, sizeof(desc))) {
		tc_err("mkfs: %s partition 0x%llx holds %s; mkfs would erase it (-f to erase)",
		       tool_fs_name(t), (unsigned long long)t->partition, desc);
		rc = TC_EXIT_FAILED;
	}
	tool_release_backend(t);
	return rc;
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
	int i = tool_getopt(t, tool_find_command("mkfs"), argc, argv, "f", longs, mkfs_opt, &mo);
	int rc;

	if (i <= 0)
		return -i;
	if (i < argc)
		return tc_usage_err("mkfs: unexpected argument '%s'", argv[i]);
	if ((t->layout_given || t->targets.n > 1) &&
	    osdfs_data_map_check(&t->map, t->targets.n, err, sizeof(err)) < 0)
		return tc_usage_err("mkfs: the layout does not fit %u device%s: %s", t->targets.n,
				    t->targets.n == 1 ? "" : "s", err);
	rc = mkfs_guard(t);
	if (rc != 0)
		return rc;
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

/* A live holder: a check is allowed with a warning, a repair is not. A
 * holder that is gone: a repair takes the filesystem over, with --force. */
static int fsck_holder_check(struct tool *t, int repair)
{
	struct osdfs_holder h;
	char who[256];

	if (osdfs_holder_get(t->be, &h) < 0 || h.state == OSDFS_HOLDER_NONE)
		return 0;
	osdfs_holder_format(&h, who, sizeof(who));
	if (h.state == OSDFS_HOLDER_LIVE && repair) {
		tc_err("fsck: %s partition 0x%llx is %s: not repaired while in use (unmount it "
		       "there first; a check without --repair is allowed)", tool_fs_name(t),
		       (unsigned long long)t->partition, who);
		return -EBUSY;
	}
	if (h.state == OSDFS_HOLDER_LIVE) {
		tc_err("fsck: warning: %s partition 0x%llx is %s: checking it in use, changes "
		       "under way may show as damage", tool_fs_name(t),
		       (unsigned long long)t->partition, who);
		return 0;
	}
	if (repair && !t->force) {
		tc_err("fsck: %s partition 0x%llx was %s: a repair takes it over; run "
		       "'osdfs --force fsck --repair'", tool_fs_name(t),
		       (unsigned long long)t->partition, who);
		return -EBUSY;
	}
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
	if (fsck_holder_check(t, repair) < 0) {
		tool_release_backend(t);
		return EXIT_FSCK_ERROR;
	}
	if (repair)
		tool_trap_signals(); /* a repair runs to its end; the signal counts after */
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
		       !rep.unrepaired || repair ? ""
		       : rep.found[OSDFS_FSCK_MOUNT_RECORD] ? " (run 'osdfs --force fsck --repair')"
							     : " (run 'osdfs fsck --repair')");
	}
	if (rebuilt && !t->json)
		printf("%" PRIu64 " read%s failed on a device that answered and %s rebuilt from "
		       "redundancy%s\n", rebuilt, rebuilt == 1 ? "" : "s", rebuilt == 1 ? "was" : "were",
		       repair ? " and rewritten" : ": run 'osdfs scrub' to repair");
	return status;
}
