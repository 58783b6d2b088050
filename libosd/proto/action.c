/* Service-action codes, names and object-type helpers. */
#include <errno.h>
#include <osd/sys/transport.h>
#include <osd/types.h>
#include "proto/command.h"

/*
 * Codes: every v2 code but the two PERFORM ones is 0x8880 + slot, and the
 * v1 code of those is the v2 code with bit 7 clear (0x8800 + slot); the
 * PERFORM commands are 0x8F7C + index in v2, 2 more in v1 (clause 6 of
 * osd-r10 and OSD-2, docs/protocol.md §4). Names and which version has
 * which command come from the descriptor table (proto/command.c).
 */
#define PERFORM_V1_DELTA 2
#define V1_MAIN_FIRST (OSD__CMD_MAIN_FIRST & ~0x80u)

static int is_perform(enum osd_action action)
{
	return action == OSD_ACT_PERFORM_SCSI_COMMAND || action == OSD_ACT_PERFORM_TASK_MGMT;
}

int osd_action_code(enum osd_version version, enum osd_action action)
{
	const struct osd__cmd_desc *d = osd__cmd_desc_of(action);

	if (!d)
		return -ENOTSUP;
	if (version == OSD_V2)
		return (int)action;
	if (version != OSD_V1 || !d->in_v1)
		return -ENOTSUP;
	if (is_perform(action))
		return (int)action + PERFORM_V1_DELTA;
	return (int)action & ~0x80;
}

/* The descriptor whose v1 code is @p code, or NULL. */
static const struct osd__cmd_desc *find_v1(unsigned code)
{
	const struct osd__cmd_desc *d = NULL;
	unsigned perform_v1 = OSD__CMD_PERFORM_FIRST + PERFORM_V1_DELTA;

	if (code >= V1_MAIN_FIRST && code - V1_MAIN_FIRST < OSD__CMD_MAIN_SLOTS)
		d = osd__cmd_desc_at(code - V1_MAIN_FIRST);
	else if (code >= perform_v1 && code - perform_v1 < OSD__CMD_PERFORM_SLOTS)
		d = osd__cmd_desc_at(OSD__CMD_MAIN_SLOTS + code - perform_v1);
	return d && d->in_v1 ? d : NULL;
}

int osd_action_from_code(uint16_t code, enum osd_action *action, enum osd_version *version)
{
	const struct osd__cmd_desc *d = osd__cmd_desc_of((enum osd_action)code);

	if (d) {
		*action = d->action;
		*version = OSD_V2;
		return 0;
	}
	d = find_v1(code);
	if (d) {
		*action = d->action;
		*version = OSD_V1;
		return 0;
	}
	return -EBADMSG;
}

const char *osd_action_name(enum osd_action action)
{
	const struct osd__cmd_desc *d = osd__cmd_desc_of(action);

	return d ? d->name : "UNKNOWN";
}

enum osd_xfer_resend osd_action_resend(enum osd_action action)
{
	const struct osd__cmd_desc *d = osd__cmd_desc_of(action);

	return d ? (enum osd_xfer_resend)d->resend : OSD_XFER_RESEND_NEVER;
}

enum osd_obj_type osd_obj_type_of(const struct osd_obj_id *obj)
{
	if (obj->partition == 0)
		return OSD_OBJ_ROOT;
	if (obj->id == 0)
		return OSD_OBJ_PARTITION;
	return OSD_OBJ_USER;
}
