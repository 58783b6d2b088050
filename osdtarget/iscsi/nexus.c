/*
 * The initiator ports this target process has seen (spc4r37 §4.5.6 and
 * Annex D): what the unit attention of a new I_T nexus reports depends on
 * it. A port (iSCSI InitiatorName and ISID, RFC 7143 §4.4.1: the initiator
 * side of the I_T nexus) that logs in for the first time since the process
 * started meets a device that may have been powered on or reset meanwhile,
 * 29h/00h POWER ON, RESET, OR BUS DEVICE RESET OCCURRED (rather than 01h
 * POWER ON OCCURRED: libiscsi's iscsi-ls passes over exactly 29h/00h, and
 * LIO reports it for a new nexus); one seen before reconnects after a lost
 * connection while the device kept running (its volatile cache included),
 * 29h/07h I_T NEXUS LOSS OCCURRED. The set is bounded: past ISCSI_SEEN_MAX
 * ports the oldest is forgotten, which only makes its next login report
 * 29h/00h, the side on which an initiator resyncs what it may have lost.
 */
#include "iscsi/server.h"

#include <stdlib.h>
#include <string.h>

int osd__tgt_iscsi_port_seen(struct osd_target_iscsi *srv, const char *name,
			     const uint8_t isid[6])
{
	struct iscsi_seen_port *p;
	int seen = 0;

	pthread_mutex_lock(&srv->lock);
	for (unsigned i = 0; i < srv->nseen && !seen; i++)
		seen = memcmp(srv->seen[i].isid, isid, 6) == 0 && strcmp(srv->seen[i].name, name) == 0;
	if (!seen && !srv->seen)
		srv->seen = calloc(ISCSI_SEEN_MAX, sizeof(*srv->seen));
	if (!seen && srv->seen) { /* no memory: not kept, reported as new next time too */
		char *copy = strdup(name);

		if (copy) {
			p = &srv->seen[srv->seen_next];
			free(p->name);
			p->name = copy;
			memcpy(p->isid, isid, 6);
			srv->seen_next = (srv->seen_next + 1) % ISCSI_SEEN_MAX;
			if (srv->nseen < ISCSI_SEEN_MAX)
				srv->nseen++;
		}
	}
	pthread_mutex_unlock(&srv->lock);
	return seen;
}

void osd__tgt_iscsi_ports_free(struct osd_target_iscsi *srv)
{
	for (unsigned i = 0; i < srv->nseen; i++)
		free(srv->seen[i].name);
	free(srv->seen);
	srv->seen = NULL;
	srv->nseen = srv->seen_next = 0;
}
