/*
 * Commands on the devices of a multi-device filesystem: devices (the
 * table, the default data map, counters and recent events), scrub (check
 * every copy and parity, repair from redundancy) and rebuild (a new device
 * in place of one that is down, its data recreated from mirrors or parity).
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "osdfs_tool.h"

enum { OPT_SLOT = 400, OPT_REPLACE, OPT_DRY_RUN };

/* The layout backend of the devices given, or a message and NULL. */
static osdfs_backend *open_layout(struct tool *t, int readonly)
{
	if (tool_backend(t, 0, readonly) < 0)
		return NULL;
	if (!osdfs_backend_is_layout(t->be)) {
		tc_err("%s: %s holds a filesystem on one device (no device table)", t->cmd,
		       tool_fs_name(t));
		tool_release_backend(t);
		return NULL;
	}
	return t->be;
}

static void print_device(const struct osdfs_layout_device *d, int json, int first)
{
	char uuid[37];

	tc_format_uuid(d->uuid, uuid);
	if (!json) {
		printf("%-4u  %-10s  %6" PRIu64 "  %6" PRIu64 "  %7" PRIu64 "  %10" PRIu64
		       "  %s  %s\n", d->slot, tc_layout_state_name(d->state), d->errors,
		       d->medium_errors, d->repairs, d->unrepaired, uuid, d->address);
		return;
	}
	printf("%s{\"slot\":%u,\"state\":\"%s\",\"errors\":%" PRIu64 ",\"medium_errors\":%"
	       PRIu64 ",\"repairs\":%" PRIu64 ",\"unrepaired\":%" PRIu64 ",\"uuid\":\"%s\","
	       "\"address\":", first ? "" : ",", d->slot, tc_layout_state_name(d->state),
	       d->errors, d->medium_errors, d->repairs, d->unrepaired, uuid);
	tc_json_string(stdout, d->address);
	printf("}");
}

static const char *severity_name(int level)
{
	static const char *const names[] = { "emerg", "alert", "crit", "err", "warning",
					     "notice", "info", "debug" };

	return level >= 0 && level < 8 ? names[level] : "?";
}

/* One event: a text line, or a JSON object (after a comma unless @p first). */
static void print_event(FILE *f, const struct osdfs_layout_event *e, int json, int first)
{
	time_t tt = (time_t)e->time;
	struct tm tm;
	char when[32] = "?";

	if (gmtime_r(&tt, &tm))
		strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
	if (!json) {
		fprintf(f, "%s  %-7s  %-13s  ", when, severity_name(e->severity),
			osdfs_layout_event_name(e->kind));
		if (e->slot >= 0)
			fprintf(f, "slot %d  ", e->slot);
		if (e->oid)
			fprintf(f, "object 0x%" PRIx64 " offset %" PRIu64 "  ", e->oid, e->offset);
		fprintf(f, "%s\n", e->reason);
		return;
	}
	fprintf(f, "%s{\"time\":%" PRId64 ",\"utc\":\"%s\",\"severity\":\"%s\",\"kind\":\"%s\","
		"\"slot\":%d,\"object\":%" PRIu64 ",\"offset\":%" PRIu64 ",\"reason\":",
		first ? "" : ",", e->time, when, severity_name(e->severity),
		osdfs_layout_event_name(e->kind), e->slot, e->oid, e->offset);
	tc_json_string(f, e->reason);
	fprintf(f, "}");
}

static void print_events(osdfs_backend *be, int json)
{
	struct osdfs_layout_event ev[64];
	int n = osdfs_layout_events(be, ev, 64);

	if (json)
		printf(",\"events\":[");
	else if (n > 0)
		printf("events (newest last):\n");
	for (int i = 0; i < n; i++)
		print_event(stdout, &ev[i], json, i == 0);
	if (json)
		printf("]");
}

/* The dirty-region log: entries and the down slots it covers (resyncable). */
static void print_dirty_log(osdfs_backend *be, int json)
{
	uint64_t entries = 0, covered = 0;
	int of = osdfs_layout_dirty_log(be, &entries, &covered), first = 1;

	if (of < 0)
		return;
	if (json) {
		printf(",\"dirty_log\":{\"entries\":%" PRIu64 ",\"region_bytes\":%u,"
		       "\"overflow\":%s,\"covers\":[", entries, OSDFS_LAYOUT_REGION_BYTES,
		       of ? "true" : "false");
		for (unsigned s = 0; s < 64; s++)
			if (covered >> s & 1) {
				printf("%s%u", first ? "" : ",", s);
				first = 0;
			}
		printf("]}");
		return;
	}
	printf("dirty-region log: %" PRIu64 " entries of %u KiB regions", entries,
	       OSDFS_LAYOUT_REGION_BYTES >> 10);
	if (of)
		printf("; overflowed: a device that was down needs a rebuild");
	for (unsigned s = 0; s < 64; s++)
		if (covered >> s & 1) {
			printf("%s%u", first ? "; resyncs slot " : ", ", s);
			first = 0;
		}
	printf("\n");
}

int cmd_devices(struct tool *t, int argc, char **argv)
{
	struct osdfs_data_map map;
	char spec[128] = "?";
	int i = tool_getopt(t, tool_find_command("devices"), argc, argv, "", NULL,
			    tool_no_options, NULL);
	osdfs_backend *be;
	unsigned n;

	if (i <= 0)
		return -i;
	if (i < argc)
		return tc_usage_err("devices: unexpected argument '%s'", argv[i]);
	be = open_layout(t, 1); /* a report: records no state */
	if (!be)
		return TC_EXIT_FAILED;
	if (osdfs_layout_default_map(be, &map) == 0)
		osdfs_data_map_format(&map, spec, sizeof(spec));
	n = osdfs_layout_ndevices(be);
	printf(t->json ? "{\"devices\":[" : "SLOT  STATE       ERRORS  MEDIUM  REPAIRS  UNREPAIRED  "
	       "UUID%32sADDRESS\n", "");
	for (unsigned s = 0; s < n; s++) {
		struct osdfs_layout_device d;

		if (osdfs_layout_device(be, s, &d) == 0)
			print_device(&d, t->json, s == 0);
	}
	if (t->json) {
		printf("],\"layout\":");
		tc_json_string(stdout, spec);
		print_dirty_log(be, 1);
		print_events(be, 1);
		printf("}\n");
	} else {
		printf("default layout: %s\n", spec);
		print_dirty_log(be, 0);
		print_events(be, 0);
	}
	tool_release_backend(t);
	return 0;
}

uint64_t layout_medium_errors(osdfs_backend *be)
{
	unsigned n = osdfs_layout_ndevices(be);
	uint64_t sum = 0;

	for (unsigned s = 0; s < n; s++) {
		struct osdfs_layout_device d;

		if (osdfs_layout_device(be, s, &d) == 0)
			sum += d.medium_errors;
	}
	return sum;
}

/* ---- scrub ---- */

struct scrub_run {
	struct tool *t;
	struct tc_progress prog;
	uint64_t bytes_seen;
	pthread_mutex_t mu;   /* events arrive from the layout's I/O threads */
	int nfound;
};

static void on_scrub_event(const struct osdfs_layout_event *e, void *payload)
{
	struct scrub_run *r = payload;

	pthread_mutex_lock(&r->mu);
	if (!r->t->json && r->prog.shown)
		fputs("\r\033[K", stderr); /* the finding, not over the progress line */
	print_event(stdout, e, r->t->json, r->nfound == 0);
	fflush(stdout);
	r->nfound++;
	pthread_mutex_unlock(&r->mu);
}

static void on_scrub_progress(const struct osdfs_layout_scrub_stats *st, void *payload)
{
	struct scrub_run *r = payload;

	tc_progress_add(&r->prog, 1, st->bytes - r->bytes_seen);
	r->bytes_seen = st->bytes;
}

/* A mount elsewhere (its mount record) writes with locks this process does
 * not see: a row changing under the scrub could look damaged. Refused. */
static int refuse_mounted(struct tool *t, osdfs_backend *be)
{
	struct osdfs_mount_options mo = OSDFS_MOUNT_OPTIONS_INIT;
	char err[256] = "";
	osdfs *fs;
	int rc;

	mo.flags = OSDFS_MOUNT_RDONLY | OSDFS_MOUNT_KEEP_BACKEND;
	mo.error = err;
	mo.error_size = sizeof(err);
	rc = osdfs_mount(&fs, be, &mo);
	if (rc == 0)
		return osdfs_unmount(fs);
	if (rc == -EBUSY)
		tc_err("scrub: %s is mounted (%s): unmount it first", tool_fs_name(t), err);
	else
		tc_err_rc(rc, "scrub: %s%s%s", tool_fs_name(t), *err ? ": " : "", err);
	return rc;
}

static int scrub_opt(struct tool *t, int key, const char *arg, void *ctx)
{
	(void)t; (void)arg;
	if (key != OPT_DRY_RUN)
		return TC_EXIT_USAGE;
	*(int *)ctx = 1;
	return 0;
}

int cmd_scrub(struct tool *t, int argc, char **argv)
{
	static const struct option longs[] = {
		{ "dry-run", no_argument, NULL, OPT_DRY_RUN },
		{ NULL, 0, NULL, 0 },
	};
	struct osdfs_layout_scrub_stats st = { 0 };
	struct scrub_run r = { .t = t };
	int dry = 0, rc, status;
	int i = tool_getopt(t, tool_find_command("scrub"), argc, argv, "", longs, scrub_opt, &dry);
	osdfs_backend *be;

	if (i <= 0)
		return -i;
	if (i < argc)
		return tc_usage_err("scrub: unexpected argument '%s'", argv[i]);
	be = open_layout(t, dry); /* a dry run opens read-only: nothing is written */
	if (!be)
		return EXIT_FSCK_ERROR;
	rc = refuse_mounted(t, be);
	if (rc < 0) {
		tool_release_backend(t);
		return EXIT_FSCK_ERROR;
	}
	pthread_mutex_init(&r.mu, NULL);
	tc_progress_init(&r.prog, "scrub", t->progress, 0);
	if (t->json)
		printf("{\"findings\":[");
	osdfs_layout_set_event_handler(be, on_scrub_event, &r);
	rc = osdfs_layout_scrub(be, dry ? OSDFS_LAYOUT_SCRUB_DRY_RUN : 0, &st, on_scrub_progress,
				&r);
	osdfs_layout_set_event_handler(be, NULL, NULL);
	tc_progress_end(&r.prog, 0);
	tool_release_backend(t);
	pthread_mutex_destroy(&r.mu);
	if (rc < 0 && rc != -EIO) {
		if (t->json)
			printf("]}\n");
		tc_err_rc(rc, "scrub: %s", tool_fs_name(t));
		return EXIT_FSCK_ERROR;
	}
	status = st.unrepaired ? EXIT_FSCK_DAMAGED : st.repaired ? EXIT_FSCK_REPAIRED : 0;
	if (t->json)
		printf("],\"status\":\"%s\",\"dry_run\":%s,\"objects\":%" PRIu64 ",\"rows\":%"
		       PRIu64 ",\"bytes\":%" PRIu64 ",\"medium\":%" PRIu64 ",\"mismatches\":%"
		       PRIu64 ",\"repaired\":%" PRIu64 ",\"unrepaired\":%" PRIu64 "}\n",
		       status == 0 ? "clean" : status == EXIT_FSCK_REPAIRED ? "repaired" : "damaged",
		       dry ? "true" : "false", st.objects, st.rows, st.bytes, st.medium,
		       st.mismatches, st.repaired, st.unrepaired);
	else
		printf("scrub %s: %" PRIu64 " objects, %" PRIu64 " rows, %" PRIu64 " bytes read; "
		       "%" PRIu64 " read errors, %" PRIu64 " mismatches, %" PRIu64 " repaired, %"
		       PRIu64 " left%s\n", status == 0 ? "clean" : status == EXIT_FSCK_REPAIRED ?
		       "repaired" : "found damage", st.objects, st.rows, st.bytes, st.medium,
		       st.mismatches, st.repaired, st.unrepaired,
		       st.unrepaired && dry ? " (run without --dry-run to repair)" : "");
	return status;
}

struct rebuild_opts {
	long slot;            /* -1: the one that is down */
	const char *replace;  /* the new device, or NULL for a spare */
};

static int rebuild_opt(struct tool *t, int key, const char *arg, void *ctx)
{
	struct rebuild_opts *o = ctx;
	uint64_t v;

	if (key == OPT_REPLACE) {
		o->replace = arg;
		return 0;
	}
	if (key != OPT_SLOT)
		return TC_EXIT_USAGE;
	if (tc_parse_u64(arg, &v) < 0 || v >= OSDFS_LAYOUT_MAX_DEVICES)
		return tc_usage_err("%s: --slot: '%s' is not a slot number", t->cmd, arg);
	o->slot = (long)v;
	return 0;
}

/* The slot to rebuild: the one asked for, or the only one not up. */
static int pick_slot(struct tool *t, osdfs_backend *be, long want,
		     struct osdfs_layout_device *out)
{
	unsigned n = osdfs_layout_ndevices(be), found = 0;

	if (want >= 0) {
		if (osdfs_layout_device(be, (unsigned)want, out) < 0) {
			tc_err("rebuild: no slot %ld (the table has %u)", want, n);
			return -ERANGE;
		}
		if (out->state == OSDFS_LAYOUT_DEV_UP) {
			tc_err("rebuild: slot %ld (%s) is up", want, out->address);
			return -EBUSY;
		}
		return 0;
	}
	for (unsigned s = 0; s < n; s++) {
		struct osdfs_layout_device d;

		if (osdfs_layout_device(be, s, &d) == 0 && d.state != OSDFS_LAYOUT_DEV_UP) {
			*out = d;
			found++;
		}
	}
	if (found > 1) {
		tc_err("rebuild: %u devices are not up: choose one with --slot", found);
		return -EINVAL;
	}
	if (found == 0) {
		printf("%s: every device is up: nothing to rebuild\n", tool_fs_name(t));
		return 1;
	}
	return 0;
}

/* A new device in the slot: --replace TARGET, or a spare given as --target. */
static int replace_device(struct tool *t, osdfs_backend *be, unsigned slot, const char *target)
{
	osdfs_backend *child = NULL;
	const char *addr = NULL;
	int rc;

	if (target) {
		rc = tc_devset_open_spare(&t->set, &t->devopts, target, t->partition, &child);
		if (rc < 0)
			return rc;
		addr = t->set.addr[t->set.n - 1];
	}
	rc = osdfs_layout_replace(be, slot, child, addr);
	if (rc < 0)
		osdfs_backend_free(child);
	if (rc == -ENODEV)
		tc_err("rebuild: no new device for slot %u: give --replace TARGET, or the new "
		       "device as one more --target", slot);
	else if (rc < 0)
		tc_err_rc(rc, "rebuild: cannot put %s in slot %u", target ? target : "the spare",
			  slot);
	return rc;
}

static void on_progress(const struct osdfs_layout_rebuild_stats *st, void *payload)
{
	tc_progress_set(payload, st->objects, st->bytes);
}

static int run_rebuild(struct tool *t, osdfs_backend *be, unsigned slot)
{
	struct osdfs_layout_rebuild_stats st = { 0 };
	struct osdfs_backend_stat bs;
	struct osdfs_layout_device d;
	struct tc_progress prog;
	int rc;

	/* "rebuild: 40 of 89 objects, 1.2M (44%), 3.1M/s, 0:01 left": the
	 * filesystem's object count is the total the rebuild examines */
	tc_progress_init(&prog, "rebuild", t->progress, 0);
	prog.unit = "objects";
	if (osdfs_backend_ops_of(be)->statfs(osdfs_backend_impl(be), &bs) == 0)
		tc_progress_set_total(&prog, bs.objects, 0);
	rc = osdfs_layout_rebuild(be, slot, &st, on_progress, &prog);
	tc_progress_end(&prog, 1);
	osdfs_layout_device(be, slot, &d);
	printf("rebuilt slot %u (%s): %" PRIu64 " objects examined, %" PRIu64
	       " components and %" PRIu64 " bytes written, %" PRIu64 " unrecoverable; "
	       "state %s\n", slot, d.address, st.objects, st.components, st.bytes,
	       st.unrecoverable, tc_layout_state_name(d.state));
	if (rc < 0)
		tc_err_rc(rc, "rebuild: slot %u", slot);
	return rc;
}

/* A mount elsewhere keeps its own device table and writes it at unmount: a
 * rebuild under it would be undone (the mount records the slot down again).
 * A live holder is refused, naming it; a holder that is gone needs --force,
 * as every other takeover. */
static int refuse_held(struct tool *t, osdfs_backend *be)
{
	struct osdfs_holder h;
	char who[256];
	int rc = osdfs_holder_get(be, &h);

	if (rc == -EUCLEAN || (rc == 0 && h.state == OSDFS_HOLDER_NONE))
		return 0; /* no filesystem on the layout yet, or not mounted */
	if (rc < 0) {
		tc_err_rc(rc, "%s: %s: reading the mount record", t->cmd, tool_fs_name(t));
		return rc;
	}
	osdfs_holder_format(&h, who, sizeof(who));
	if (h.state == OSDFS_HOLDER_LIVE) {
		tc_err("%s: %s partition 0x%llx is %s: the mount would undo the change at "
		       "unmount; unmount it first", t->cmd, tool_fs_name(t),
		       (unsigned long long)t->partition, who);
		return -EBUSY;
	}
	if (!t->force) {
		tc_err("%s: %s partition 0x%llx was %s: the holder is gone; run 'osdfs --force "
		       "%s ...'", t->cmd, tool_fs_name(t), (unsigned long long)t->partition, who,
		       t->cmd);
		return -EBUSY;
	}
	return 0;
}

int cmd_rebuild(struct tool *t, int argc, char **argv)
{
	static const struct option longs[] = {
		{ "slot", required_argument, NULL, OPT_SLOT },
		{ "replace", required_argument, NULL, OPT_REPLACE },
		{ NULL, 0, NULL, 0 },
	};
	struct rebuild_opts o = { -1, NULL };
	struct osdfs_layout_device d;
	int i = tool_getopt(t, tool_find_command("rebuild"), argc, argv, "", longs,
			    rebuild_opt, &o);
	osdfs_backend *be;
	int rc;

	if (i <= 0)
		return -i;
	if (i < argc)
		return tc_usage_err("rebuild: unexpected argument '%s'", argv[i]);
	be = open_layout(t, 0);
	if (!be)
		return TC_EXIT_FAILED;
	rc = refuse_held(t, be);
	if (rc == 0)
		rc = pick_slot(t, be, o.slot, &d);
	if (rc == 0 && d.state == OSDFS_LAYOUT_DEV_DOWN)
		rc = replace_device(t, be, d.slot, o.replace);
	else if (rc == 0 && o.replace)
		printf("slot %u (%s) already holds its replacement: rebuilding it\n", d.slot,
		       d.address);
	if (rc == 0)
		rc = run_rebuild(t, be, d.slot);
	tool_release_backend(t);
	return rc < 0 ? TC_EXIT_FAILED : TC_EXIT_OK;
}

/* ---- resync ---- */

/* The newest resync-finished event of slot @p s: what the open did. */
static void print_open_resync(osdfs_backend *be, unsigned s)
{
	struct osdfs_layout_event ev[64];
	int n = osdfs_layout_events(be, ev, 64);

	while (n-- > 0)
		if (ev[n].kind == OSDFS_LAYOUT_EV_RESYNC_FINISHED && ev[n].slot == (int)s) {
			printf("resynced slot %u at open: %s\n", s, ev[n].reason);
			return;
		}
}

/* The slots not up, read without changing anything (the read-write open
 * that follows resyncs what it can by itself); -1 if refused. */
static int64_t slots_not_up(struct tool *t, long only, uint64_t *mask)
{
	osdfs_backend *be = open_layout(t, 1);
	unsigned n;

	*mask = 0;
	if (!be)
		return -1;
	if (refuse_held(t, be) < 0) {
		tool_release_backend(t);
		return -1;
	}
	n = osdfs_layout_ndevices(be);
	for (unsigned s = 0; s < n; s++) {
		struct osdfs_layout_device d;

		if ((only < 0 || s == (unsigned)only) && osdfs_layout_device(be, s, &d) == 0 &&
		    d.state != OSDFS_LAYOUT_DEV_UP)
			*mask |= 1ull << s;
	}
	tool_release_backend(t);
	return 0;
}

/* Resync slot @p s explicitly; 0, 1 if it needs a rebuild, or an error. */
static int resync_slot(struct tool *t, osdfs_backend *be, unsigned s)
{
	struct osdfs_layout_resync_stats st;
	struct osdfs_layout_device d;
	int rc = osdfs_layout_resync(be, s, &st);

	osdfs_layout_device(be, s, &d);
	if (rc == -ESTALE) {
		tc_err("%s: slot %u (%s): the dirty-region log does not cover its outage (it "
		       "was down before the log, or the log overflowed): run 'osdfs rebuild "
		       "--slot %u'", t->cmd, s, d.address, s);
		return 1;
	}
	if (rc == -ENODEV) {
		tc_err("%s: slot %u (%s) has no device: give it with --target", t->cmd, s,
		       d.address);
		return 1;
	}
	printf("resynced slot %u (%s): %" PRIu64 " log entries, %" PRIu64 " regions, %" PRIu64
	       " whole objects, %" PRIu64 " component writes, %" PRIu64 " bytes; state %s\n",
	       s, d.address, st.entries, st.regions, st.objects, st.components, st.bytes,
	       tc_layout_state_name(d.state));
	if (rc < 0)
		tc_err_rc(rc, "%s: slot %u", t->cmd, s);
	return rc;
}

int cmd_resync(struct tool *t, int argc, char **argv)
{
	static const struct option longs[] = {
		{ "slot", required_argument, NULL, OPT_SLOT },
		{ NULL, 0, NULL, 0 },
	};
	struct rebuild_opts o = { -1, NULL };
	int i = tool_getopt(t, tool_find_command("resync"), argc, argv, "", longs,
			    rebuild_opt, &o);
	unsigned fails = 0;
	osdfs_backend *be;
	uint64_t todo;

	if (i <= 0)
		return -i;
	if (i < argc)
		return tc_usage_err("resync: unexpected argument '%s'", argv[i]);
	if (slots_not_up(t, o.slot, &todo) < 0)
		return TC_EXIT_FAILED;
	if (!todo) {
		printf("%s: every device is up: nothing to resync\n", tool_fs_name(t));
		return TC_EXIT_OK;
	}
	be = open_layout(t, 0);
	if (!be)
		return TC_EXIT_FAILED;
	for (unsigned s = 0; s < 64; s++) {
		struct osdfs_layout_device d;

		if (!(todo >> s & 1) || osdfs_layout_device(be, s, &d) < 0)
			continue;
		if (d.state == OSDFS_LAYOUT_DEV_UP)
			print_open_resync(be, s);
		else
			fails += resync_slot(t, be, s) != 0;
	}
	tool_release_backend(t);
	return fails ? TC_EXIT_FAILED : TC_EXIT_OK;
}
