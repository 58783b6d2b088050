/* Service-action codes, names and object-type helpers. */
#include <errno.h>
#include <osd/types.h>

struct action_info {
	enum osd_action action;
	const char *name;
	unsigned char in_v1; /* exists in OSD-1 */
};

static const struct action_info actions[] = {
	{ OSD_ACT_OBJECT_STRUCTURE_CHECK, "OBJECT STRUCTURE CHECK", 0 },
	{ OSD_ACT_FORMAT_OSD, "FORMAT OSD", 1 },
	{ OSD_ACT_CREATE, "CREATE", 1 },
	{ OSD_ACT_LIST, "LIST", 1 },
	{ OSD_ACT_PUNCH, "PUNCH", 0 },
	{ OSD_ACT_READ, "READ", 1 },
	{ OSD_ACT_WRITE, "WRITE", 1 },
	{ OSD_ACT_APPEND, "APPEND", 1 },
	{ OSD_ACT_FLUSH, "FLUSH", 1 },
	{ OSD_ACT_CLEAR, "CLEAR", 0 },
	{ OSD_ACT_REMOVE, "REMOVE", 1 },
	{ OSD_ACT_CREATE_PARTITION, "CREATE PARTITION", 1 },
	{ OSD_ACT_REMOVE_PARTITION, "REMOVE PARTITION", 1 },
	{ OSD_ACT_GET_ATTRIBUTES, "GET ATTRIBUTES", 1 },
	{ OSD_ACT_SET_ATTRIBUTES, "SET ATTRIBUTES", 1 },
	{ OSD_ACT_CREATE_AND_WRITE, "CREATE AND WRITE", 1 },
	{ OSD_ACT_COPY_USER_OBJECTS, "COPY USER OBJECTS", 0 },
	{ OSD_ACT_CREATE_USER_TRACKING_COLLECTION, "CREATE USER TRACKING COLLECTION", 0 },
	{ OSD_ACT_CREATE_COLLECTION, "CREATE COLLECTION", 1 },
	{ OSD_ACT_REMOVE_COLLECTION, "REMOVE COLLECTION", 1 },
	{ OSD_ACT_LIST_COLLECTION, "LIST COLLECTION", 1 },
	{ OSD_ACT_SET_KEY, "SET KEY", 1 },
	{ OSD_ACT_SET_MASTER_KEY, "SET MASTER KEY", 1 },
	{ OSD_ACT_FLUSH_COLLECTION, "FLUSH COLLECTION", 1 },
	{ OSD_ACT_FLUSH_PARTITION, "FLUSH PARTITION", 1 },
	{ OSD_ACT_FLUSH_OSD, "FLUSH OSD", 1 },
	{ OSD_ACT_QUERY, "QUERY", 0 },
	{ OSD_ACT_REMOVE_MEMBER_OBJECTS, "REMOVE MEMBER OBJECTS", 0 },
	{ OSD_ACT_GET_MEMBER_ATTRIBUTES, "GET MEMBER ATTRIBUTES", 0 },
	{ OSD_ACT_SET_MEMBER_ATTRIBUTES, "SET MEMBER ATTRIBUTES", 0 },
	{ OSD_ACT_CREATE_CLONE, "CREATE CLONE", 0 },
	{ OSD_ACT_CREATE_SNAPSHOT, "CREATE SNAPSHOT", 0 },
	{ OSD_ACT_DETACH_CLONE, "DETACH CLONE", 0 },
	{ OSD_ACT_REFRESH_SNAPSHOT_OR_CLONE, "REFRESH SNAPSHOT OR CLONE", 0 },
	{ OSD_ACT_RESTORE_PARTITION_FROM_SNAPSHOT, "RESTORE PARTITION FROM SNAPSHOT", 0 },
	{ OSD_ACT_READ_MAP, "READ MAP", 0 },
	{ OSD_ACT_READ_MAPS_AND_COMPARE, "READ MAPS AND COMPARE", 0 },
	{ OSD_ACT_PERFORM_SCSI_COMMAND, "PERFORM SCSI COMMAND", 1 },
	{ OSD_ACT_PERFORM_TASK_MGMT, "PERFORM TASK MANAGEMENT FUNCTION", 1 },
};

#define NUM_ACTIONS (sizeof(actions) / sizeof(actions[0]))

/* The two PERFORM commands are the only ones not following v1 = v2 & ~0x80. */
#define PERFORM_V1_DELTA 2

static const struct action_info *find_action(enum osd_action action)
{
	for (size_t i = 0; i < NUM_ACTIONS; i++)
		if (actions[i].action == action)
			return &actions[i];
	return NULL;
}

static int is_perform(enum osd_action action)
{
	return action == OSD_ACT_PERFORM_SCSI_COMMAND || action == OSD_ACT_PERFORM_TASK_MGMT;
}

int osd_action_code(enum osd_version version, enum osd_action action)
{
	const struct action_info *ai = find_action(action);

	if (!ai)
		return -ENOTSUP;
	if (version == OSD_V2)
		return (int)action;
	if (version != OSD_V1 || !ai->in_v1)
		return -ENOTSUP;
	if (is_perform(action))
		return (int)action + PERFORM_V1_DELTA;
	return (int)action & ~0x80;
}

int osd_action_from_code(uint16_t code, enum osd_action *action, enum osd_version *version)
{
	for (size_t i = 0; i < NUM_ACTIONS; i++) {
		const struct action_info *ai = &actions[i];

		if ((uint16_t)ai->action == code) {
			*action = ai->action;
			*version = OSD_V2;
			return 0;
		}
		if (ai->in_v1 && osd_action_code(OSD_V1, ai->action) == code) {
			*action = ai->action;
			*version = OSD_V1;
			return 0;
		}
	}
	return -EBADMSG;
}

const char *osd_action_name(enum osd_action action)
{
	const struct action_info *ai = find_action(action);

	return ai ? ai->name : "UNKNOWN";
}

enum osd_obj_type osd_obj_type_of(const struct osd_obj_id *obj)
{
	if (obj->partition == 0)
		return OSD_OBJ_ROOT;
	if (obj->id == 0)
		return OSD_OBJ_PARTITION;
	return OSD_OBJ_USER;
}
