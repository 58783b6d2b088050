/*
 * Layout events while mounted: device down or back, repairs, unrecoverable
 * reads, mismatches (osdfs_layout_set_event_handler()), and the resyncs the
 * open did before (a returned device brought up), each logged with
 * its severity: on stderr in the foreground, to syslog (facility daemon)
 * once in the background, where stderr is /dev/null. The devices keep the
 * same events for 'osdfs devices'.
 */
#include <inttypes.h>
#include <stdio.h>
#include <syslog.h>
#include <osdfs/layout.h>

#include "mount.h"

static int use_syslog;

static const char *level_name(int level)
{
	static const char *const names[] = { "emerg", "alert", "crit", "error", "warning",
					     "notice", "info", "debug" };

	return level >= 0 && level < 8 ? names[level] : "?";
}

static void log_line(int level, const char *text)
{
	if (use_syslog)
		syslog(LOG_DAEMON | level, "%s", text);
	else
		fprintf(stderr, "%s: %s: %s\n", tc_prog(), level_name(level), text);
}

static void on_event(const struct osdfs_layout_event *e, void *payload)
{
	char text[512];
	int n;

	(void)payload;
	n = snprintf(text, sizeof(text), "layout: %s", osdfs_layout_event_name(e->kind));
	if (e->slot >= 0 && n > 0 && (size_t)n < sizeof(text))
		n += snprintf(text + n, sizeof(text) - (size_t)n, ", slot %d", e->slot);
	if (e->oid && n > 0 && (size_t)n < sizeof(text))
		n += snprintf(text + n, sizeof(text) - (size_t)n, ", object 0x%" PRIx64
			      " offset %" PRIu64, e->oid, e->offset);
	if (n > 0 && (size_t)n < sizeof(text))
		snprintf(text + n, sizeof(text) - (size_t)n, ": %s", e->reason);
	log_line(e->severity, text);
}

/* The resyncs the open did (devices back since the last mount: only what
 * changed while they were away was copied), recorded before the handler. */
static void log_open_resyncs(osdfs_backend *be, int64_t opened)
{
	struct osdfs_layout_event ev[64];
	int n = osdfs_layout_events(be, ev, 64);

	for (int i = 0; i < n; i++)
		if (ev[i].time >= opened && (ev[i].kind == OSDFS_LAYOUT_EV_RESYNC_STARTED ||
					     ev[i].kind == OSDFS_LAYOUT_EV_RESYNC_FINISHED ||
					     ev[i].kind == OSDFS_LAYOUT_EV_RETURNED))
			on_event(&ev[i], NULL);
}

void mnt_events_attach(osdfs_backend *be, int foreground, int64_t opened)
{
	unsigned n = osdfs_layout_ndevices(be);

	if (!osdfs_backend_is_layout(be))
		return;
	use_syslog = !foreground;
	if (use_syslog)
		openlog(tc_prog(), LOG_PID, LOG_DAEMON);
	log_open_resyncs(be, opened);
	osdfs_layout_set_event_handler(be, on_event, NULL);
	for (unsigned s = 0; s < n; s++) {
		struct osdfs_layout_device d;
		char text[400];

		if (osdfs_layout_device(be, s, &d) < 0 || d.state == OSDFS_LAYOUT_DEV_UP)
			continue;
		snprintf(text, sizeof(text), "layout: slot %u (%s) is %s at mount: running degraded",
			 s, d.address, d.state == OSDFS_LAYOUT_DEV_DOWN ? "down" : "rebuilding");
		log_line(LOG_WARNING, text);
	}
}
