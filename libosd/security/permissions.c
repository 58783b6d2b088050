/*
 * The permissions a command needs (osd2r03 §4.11.2.2, docs/security.md
 * section 1), from the command descriptor table shared by initiator and
 * target. Piggy-backed attribute lists add GET_ATTR / SET_ATTR; callers add
 * those themselves.
 */
#include <osd/capability.h>
#include <osd/security.h>
#include "proto/command.h"

/* Reserved bits included: no well-formed capability holds this. */
#define OSD_PERM_IMPOSSIBLE 0xFFFFu

uint16_t osd_sec_required_permissions(enum osd_action action)
{
	const struct osd__cmd_desc *d = osd__cmd_desc_of(action);

	return d ? d->perms : OSD_PERM_IMPOSSIBLE;
}
