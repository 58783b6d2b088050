/*
 * Commands on the devices of a multi-device filesystem: devices (the
 * table and the default data map) and rebuild (a new device in place of
 * one that is down, its data recreated from mirrors or parity).
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "osdfs_tool.h"

enum { OPT_SLOT = 400, OPT_REPLACE };

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
		printf("%-4u  %-10s  %6" PRIu64 "  %s  %s\n", d->slot,
		       tc_layout_state_name(d->state), d->errors, uuid, d->address);
		return;
	}
	printf("%s{\"slot\":%u,\"state\":\"%s\",\"errors\":%" PRIu64 ",\"uuid\":\"%s\","
	       "\"address\":", first ? "" : ",", d->slot, tc_layout_state_name(d->state),
	       d->errors, uuid);
	tc_json_string(stdout, d->address);
	printf("}");
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
	printf(t->json ? "{\"devices\":[" : "SLOT  STATE       ERRORS  UUID%32sADDRESS\n", "");
	for (unsigned s = 0; s < n; s++) {
		struct osdfs_layout_device d;

		if (osdfs_layout_device(be, s, &d) == 0)
			print_device(&d, t->json, s == 0);
	}
	if (t->json) {
		printf("],\"layout\":");
		tc_json_string(stdout, spec);
		printf("}\n");
	} else {
		printf("default layout: %s\n", spec);
	}
	tool_release_backend(t);
	return 0;
}

struct rebuild_opts {
	long slot;            /* -1: the one that is down */
	const char *replace;  /* the new device, or NULL for a spare */
};

static int rebuild_opt(struct tool *t, int key, const char *arg, void *ctx)
{
	struct rebuild_opts *o = ctx;
	uint64_t v;

	(void)t;
	if (key == OPT_REPLACE) {
		o->replace = arg;
		return 0;
	}
	if (key != OPT_SLOT)
		return TC_EXIT_USAGE;
	if (tc_parse_u64(arg, &v) < 0 || v >= OSDFS_LAYOUT_MAX_DEVICES)
		return tc_usage_err("rebuild: --slot: '%s' is not a slot number", arg);
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
