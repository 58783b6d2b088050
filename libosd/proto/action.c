/* Service-action codes, names and object-type helpers. */
#include <errno.h>
#include <osd/types.h>

struct action_info {
	enum osd_action action;
	const char *name; /* NULL: no action has this code */
	unsigned char in_v1; /* exists in OSD-1 */
};

/*
 * Indexed by code so that decoding a CDB is a lookup, not a search: every
 * v2 code but the two PERFORM ones is 0x8880 + index, and the v1 code of
 * those is the v2 code with bit 7 clear (0x8800 + index).
 */
#define MAIN_FIRST OSD_ACT_OBJECT_STRUCTURE_CHECK
#define MAIN_ROW(a, n, v1) [(a) - MAIN_FIRST] = { (a), (n), (v1) }

static const struct action_info actions[] = {
	MAIN_ROW(OSD_ACT_OBJECT_STRUCTURE_CHECK, "OBJECT STRUCTURE CHECK", 0),
	MAIN_ROW(OSD_ACT_FORMAT_OSD, "FORMAT OSD", 1),
	MAIN_ROW(OSD_ACT_CREATE, "CREATE", 1),
	MAIN_ROW(OSD_ACT_LIST, "LIST", 1),
	MAIN_ROW(OSD_ACT_PUNCH, "PUNCH", 0),
	MAIN_ROW(OSD_ACT_READ, "READ", 1),
	MAIN_ROW(OSD_ACT_WRITE, "WRITE", 1),
	MAIN_ROW(OSD_ACT_APPEND, "APPEND", 1),
	MAIN_ROW(OSD_ACT_FLUSH, "FLUSH", 1),
	MAIN_ROW(OSD_ACT_CLEAR, "CLEAR", 0),
	MAIN_ROW(OSD_ACT_REMOVE, "REMOVE", 1),
	MAIN_ROW(OSD_ACT_CREATE_PARTITION, "CREATE PARTITION", 1),
	MAIN_ROW(OSD_ACT_REMOVE_PARTITION, "REMOVE PARTITION", 1),
	MAIN_ROW(OSD_ACT_GET_ATTRIBUTES, "GET ATTRIBUTES", 1),
	MAIN_ROW(OSD_ACT_SET_ATTRIBUTES, "SET ATTRIBUTES", 1),
	MAIN_ROW(OSD_ACT_CREATE_AND_WRITE, "CREATE AND WRITE", 1),
	MAIN_ROW(OSD_ACT_COPY_USER_OBJECTS, "COPY USER OBJECTS", 0),
	MAIN_ROW(OSD_ACT_CREATE_USER_TRACKING_COLLECTION, "CREATE USER TRACKING COLLECTION", 0),
	MAIN_ROW(OSD_ACT_CREATE_COLLECTION, "CREATE COLLECTION", 1),
	MAIN_ROW(OSD_ACT_REMOVE_COLLECTION, "REMOVE COLLECTION", 1),
	MAIN_ROW(OSD_ACT_LIST_COLLECTION, "LIST COLLECTION", 1),
	MAIN_ROW(OSD_ACT_SET_KEY, "SET KEY", 1),
	MAIN_ROW(OSD_ACT_SET_MASTER_KEY, "SET MASTER KEY", 1),
	MAIN_ROW(OSD_ACT_FLUSH_COLLECTION, "FLUSH COLLECTION", 1),
	MAIN_ROW(OSD_ACT_FLUSH_PARTITION, "FLUSH PARTITION", 1),
	MAIN_ROW(OSD_ACT_FLUSH_OSD, "FLUSH OSD", 1),
	MAIN_ROW(OSD_ACT_QUERY, "QUERY", 0),
	MAIN_ROW(OSD_ACT_REMOVE_MEMBER_OBJECTS, "REMOVE MEMBER OBJECTS", 0),
	MAIN_ROW(OSD_ACT_GET_MEMBER_ATTRIBUTES, "GET MEMBER ATTRIBUTES", 0),
	MAIN_ROW(OSD_ACT_SET_MEMBER_ATTRIBUTES, "SET MEMBER ATTRIBUTES", 0),
	MAIN_ROW(OSD_ACT_CREATE_CLONE, "CREATE CLONE", 0),
	MAIN_ROW(OSD_ACT_CREATE_SNAPSHOT, "CREATE SNAPSHOT", 0),
	MAIN_ROW(OSD_ACT_DETACH_CLONE, "DETACH CLONE", 0),
	MAIN_ROW(OSD_ACT_REFRESH_SNAPSHOT_OR_CLONE, "REFRESH SNAPSHOT OR CLONE", 0),
	MAIN_ROW(OSD_ACT_RESTORE_PARTITION_FROM_SNAPSHOT, "RESTORE PARTITION FROM SNAPSHOT", 0),
	MAIN_ROW(OSD_ACT_READ_MAP, "READ MAP", 0),
	MAIN_ROW(OSD_ACT_READ_MAPS_AND_COMPARE, "READ MAPS AND COMPARE", 0),
};

#define NUM_ACTIONS (sizeof(actions) / sizeof(actions[0]))

/* The two PERFORM commands, 0x8F7C + index in v2, 2 more in v1. */
#define PERFORM_FIRST OSD_ACT_PERFORM_SCSI_COMMAND
#define PERFORM_V1_DELTA 2

static const struct action_info perform[] = {
	{ OSD_ACT_PERFORM_SCSI_COMMAND, "PERFORM SCSI COMMAND", 1 },
	{ OSD_ACT_PERFORM_TASK_MGMT, "PERFORM TASK MANAGEMENT FUNCTION", 1 },
};

#define NUM_PERFORM (sizeof(perform) / sizeof(perform[0]))
#define V1_MAIN_FIRST (MAIN_FIRST & ~0x80)

static const struct action_info *find_action(enum osd_action action)
{
	const struct action_info *ai = NULL;
	unsigned a = (unsigned)action;

	if (a >= (unsigned)MAIN_FIRST && a - MAIN_FIRST < NUM_ACTIONS)
		ai = &actions[a - MAIN_FIRST];
	else if (a >= (unsigned)PERFORM_FIRST && a - PERFORM_FIRST < NUM_PERFORM)
		ai = &perform[a - PERFORM_FIRST];
	return ai && ai->name ? ai : NULL;
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

/* The v2 action whose v1 code is @p code, or NULL. */
static const struct action_info *find_v1(unsigned code)
{
	const struct action_info *ai = NULL;

	if (code >= V1_MAIN_FIRST && code - V1_MAIN_FIRST < NUM_ACTIONS)
		ai = &actions[code - V1_MAIN_FIRST];
	else if (code >= PERFORM_FIRST + PERFORM_V1_DELTA &&
		 code - (PERFORM_FIRST + PERFORM_V1_DELTA) < NUM_PERFORM)
		ai = &perform[code - (PERFORM_FIRST + PERFORM_V1_DELTA)];
	return ai && ai->name && ai->in_v1 ? ai : NULL;
}

int osd_action_from_code(uint16_t code, enum osd_action *action, enum osd_version *version)
{
	const struct action_info *ai = find_action((enum osd_action)code);

	if (ai) {
		*action = ai->action;
		*version = OSD_V2;
		return 0;
	}
	ai = find_v1(code);
	if (ai) {
		*action = ai->action;
		*version = OSD_V1;
		return 0;
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
