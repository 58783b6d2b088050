/*
 * The per-command permission table shared by initiator and target
 * (docs/security.md section 1). Piggy-backed attribute lists add GET_ATTR /
 * SET_ATTR; callers add those themselves.
 */
#include <osd/capability.h>
#include <osd/security.h>

/* Reserved bits included: no well-formed capability holds this. */
#define OSD_PERM_IMPOSSIBLE 0xFFFFu

uint16_t osd_sec_required_permissions(enum osd_action action)
{
	switch (action) {
	case OSD_ACT_FORMAT_OSD:
	case OSD_ACT_OBJECT_STRUCTURE_CHECK:
	case OSD_ACT_DETACH_CLONE:
	case OSD_ACT_REFRESH_SNAPSHOT_OR_CLONE:
	case OSD_ACT_RESTORE_PARTITION_FROM_SNAPSHOT:
	case OSD_ACT_PERFORM_SCSI_COMMAND:
	case OSD_ACT_PERFORM_TASK_MGMT:
		return OSD_PERM_DEV_MGMT;
	case OSD_ACT_CREATE_PARTITION:
	case OSD_ACT_CREATE:
	case OSD_ACT_CREATE_COLLECTION:
	case OSD_ACT_CREATE_USER_TRACKING_COLLECTION:
	case OSD_ACT_CREATE_CLONE:
	case OSD_ACT_CREATE_SNAPSHOT:
		return OSD_PERM_CREATE;
	case OSD_ACT_CREATE_AND_WRITE:
	case OSD_ACT_COPY_USER_OBJECTS:
		return OSD_PERM_CREATE | OSD_PERM_WRITE;
	case OSD_ACT_REMOVE_PARTITION:
	case OSD_ACT_REMOVE:
	case OSD_ACT_REMOVE_COLLECTION:
		return OSD_PERM_REMOVE;
	case OSD_ACT_READ:
	case OSD_ACT_LIST:
	case OSD_ACT_LIST_COLLECTION:
	case OSD_ACT_READ_MAP:
	case OSD_ACT_READ_MAPS_AND_COMPARE:
		return OSD_PERM_READ;
	case OSD_ACT_WRITE:
	case OSD_ACT_CLEAR:
	case OSD_ACT_PUNCH:
		return OSD_PERM_WRITE;
	case OSD_ACT_APPEND:
		return OSD_PERM_APPEND;
	case OSD_ACT_FLUSH:
	case OSD_ACT_FLUSH_COLLECTION:
	case OSD_ACT_FLUSH_PARTITION:
	case OSD_ACT_FLUSH_OSD:
		return OSD_PERM_OBJ_MGMT;
	case OSD_ACT_GET_ATTRIBUTES:
		return OSD_PERM_GET_ATTR;
	case OSD_ACT_SET_ATTRIBUTES:
		return OSD_PERM_SET_ATTR;
	case OSD_ACT_QUERY:
		return OSD_PERM_QUERY;
	case OSD_ACT_GET_MEMBER_ATTRIBUTES:
		return OSD_PERM_GET_ATTR | OSD_PERM_M_OBJECT;
	case OSD_ACT_SET_MEMBER_ATTRIBUTES:
		return OSD_PERM_SET_ATTR | OSD_PERM_M_OBJECT;
	case OSD_ACT_REMOVE_MEMBER_OBJECTS:
		return OSD_PERM_REMOVE | OSD_PERM_M_OBJECT;
	case OSD_ACT_SET_KEY:
	case OSD_ACT_SET_MASTER_KEY:
		return OSD_PERM_POL_SEC;
	}
	return OSD_PERM_IMPOSSIBLE;
}
