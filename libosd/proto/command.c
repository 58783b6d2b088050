/*
 * The command descriptor table: one row per OSD service action (clause 6,
 * commands, of osd-r10 and OSD-2; osd2r03 §4.11.2.2 for the permissions and
 * the described object; docs/protocol.md §3-§4, docs/security.md §1). The codec's
 * code and slot tables, osd_sec_required_permissions(), the capability's
 * object on both sides, the target's dispatch table and the transport's
 * resend class are all read from here (docs/architecture.md).
 */
#include "proto/command.h"

#include <osd/capability.h>
#include <osd/cdb.h>
#include <osd/sys/transport.h>

#define NEVER OSD_XFER_RESEND_NEVER
#define ALWAYS OSD_XFER_RESEND_ALWAYS
#define REPEAT OSD_XFER_RESEND_REPEATABLE

#define LEN OSD__U_LEN
#define SBA OSD__U_SBA
#define LID OSD__U_LID
#define CCL OSD__U_CCL
#define NOBJ OSD__U_NOBJ
#define MAP OSD__U_MAP
#define FLUSHSC OSD__U_FLUSH

#define P_CREATE OSD_PERM_CREATE
#define P_REMOVE OSD_PERM_REMOVE
#define P_READ OSD_PERM_READ
#define P_WRITE OSD_PERM_WRITE
#define P_OBJ OSD_PERM_OBJ_MGMT
#define P_DEV OSD_PERM_DEV_MGMT
#define P_SEC OSD_PERM_POL_SEC
#define P_M OSD_PERM_M_OBJECT

/* CMD(action, name, in OSD-1, CDB slots, byte-11 bits v1, v2, max FLUSH
 *     SCOPE, permissions, described object, resend, data, range check) */
#define CMD(a, n, v1, u, o1, o2, sc, pm, cs, rs, dt, rg)                        \
	[OSD__CMD_INDEX(a)] = { (a), (n), (v1), (u), (o1), (o2), (sc), (pm),    \
				OSD__CAP_##cs, (rs), OSD__DATA_##dt, OSD__RANGE_##rg }

static const struct osd__cmd_desc descs[OSD__CMD_SLOTS] = {
	CMD(OSD_ACT_OBJECT_STRUCTURE_CHECK, "OBJECT STRUCTURE CHECK", 0, CCL, 0, 0, 0,
	    P_DEV, ROOT, ALWAYS, NONE, NONE),
	CMD(OSD_ACT_FORMAT_OSD, "FORMAT OSD", 1, LEN | CCL, 0, 0, 0,
	    P_DEV, ROOT, NEVER, NONE, NONE),
	CMD(OSD_ACT_CREATE, "CREATE", 1, NOBJ | CCL, 0, 0, 0,
	    P_CREATE, PARTITION, NEVER, NONE, NONE),
	CMD(OSD_ACT_LIST, "LIST", 1, LEN | SBA | LID, 0x0F, 0x4F, 0,
	    P_READ, PARTITION, ALWAYS, IN, NONE),
	CMD(OSD_ACT_PUNCH, "PUNCH", 0, LEN | SBA | CCL, 0, 0, 0,
	    P_WRITE, SELF, REPEAT, NONE, BYTES),
	CMD(OSD_ACT_READ, "READ", 1, LEN | SBA | CCL, 0, 0, 0,
	    P_READ, SELF, ALWAYS, IN, BYTES),
	CMD(OSD_ACT_WRITE, "WRITE", 1, LEN | SBA | CCL, 0, 0, 0,
	    P_WRITE, SELF, REPEAT, OUT, BYTES),
	CMD(OSD_ACT_APPEND, "APPEND", 1, LEN | CCL, 0, 0, 0,
	    OSD_PERM_APPEND, SELF, NEVER, OUT, REFUSED),
	CMD(OSD_ACT_FLUSH, "FLUSH", 1, LEN | SBA | FLUSHSC | CCL, 0, 0, 2,
	    P_OBJ, SELF, ALWAYS, NONE, FLUSH),
	CMD(OSD_ACT_CLEAR, "CLEAR", 0, LEN | SBA | CCL, 0, 0, 0,
	    P_WRITE, SELF, REPEAT, NONE, BYTES),
	CMD(OSD_ACT_REMOVE, "REMOVE", 1, CCL, 0, 0, 0,
	    P_REMOVE, SELF, NEVER, NONE, NONE),
	CMD(OSD_ACT_CREATE_PARTITION, "CREATE PARTITION", 1, CCL, 0, 0, 0,
	    P_CREATE, ROOT, NEVER, NONE, NONE),
	CMD(OSD_ACT_REMOVE_PARTITION, "REMOVE PARTITION", 1, CCL, 0, 0x07, 0,
	    P_REMOVE, PARTITION, NEVER, NONE, NONE),
	CMD(OSD_ACT_GET_ATTRIBUTES, "GET ATTRIBUTES", 1, CCL, 0, 0, 0,
	    OSD_PERM_GET_ATTR, SELF, ALWAYS, NONE, NONE),
	CMD(OSD_ACT_SET_ATTRIBUTES, "SET ATTRIBUTES", 1, CCL, 0, 0, 0,
	    OSD_PERM_SET_ATTR, SELF, REPEAT, NONE, NONE),
	CMD(OSD_ACT_CREATE_AND_WRITE, "CREATE AND WRITE", 1, LEN | SBA | CCL, 0, 0, 0,
	    P_CREATE | P_WRITE, PARTITION, NEVER, OUT, BYTES),
	CMD(OSD_ACT_COPY_USER_OBJECTS, "COPY USER OBJECTS", 0, OSD__U_DUP | CCL, 0, 0, 0,
	    P_CREATE | P_WRITE, SELF, NEVER, NONE, NONE),
	CMD(OSD_ACT_CREATE_USER_TRACKING_COLLECTION, "CREATE USER TRACKING COLLECTION", 0,
	    SBA | CCL, 0, 0, 0, P_CREATE, PARTITION, NEVER, NONE, NONE),
	CMD(OSD_ACT_CREATE_COLLECTION, "CREATE COLLECTION", 1, CCL, 0, 0, 0,
	    P_CREATE, PARTITION, NEVER, NONE, NONE),
	CMD(OSD_ACT_REMOVE_COLLECTION, "REMOVE COLLECTION", 1, CCL, 0x01, 0x01, 0,
	    P_REMOVE, SELF, NEVER, NONE, NONE),
	CMD(OSD_ACT_LIST_COLLECTION, "LIST COLLECTION", 1, LEN | SBA | LID, 0x0F, 0x4F, 0,
	    P_READ, SELF, ALWAYS, IN, NONE),
	CMD(OSD_ACT_SET_KEY, "SET KEY", 1, OSD__U_KEY, 0x03, 0x03, 0,
	    P_SEC, KEY, NEVER, NONE, NONE),
	CMD(OSD_ACT_SET_MASTER_KEY, "SET MASTER KEY", 1, OSD__U_MKEY, 0x03, 0x03, 0,
	    P_SEC, ROOT, NEVER, NONE, NONE),
	CMD(OSD_ACT_FLUSH_COLLECTION, "FLUSH COLLECTION", 1, FLUSHSC | CCL, 0, 0, 2,
	    P_OBJ, SELF, ALWAYS, NONE, NONE),
	CMD(OSD_ACT_FLUSH_PARTITION, "FLUSH PARTITION", 1, FLUSHSC | CCL, 0, 0, 2,
	    P_OBJ, PARTITION, ALWAYS, NONE, NONE),
	CMD(OSD_ACT_FLUSH_OSD, "FLUSH OSD", 1, FLUSHSC | CCL, 0, 0, 2,
	    P_OBJ, ROOT, ALWAYS, NONE, NONE),
	CMD(OSD_ACT_QUERY, "QUERY", 0, LEN | SBA | CCL, 0, 0x80, 0,
	    OSD_PERM_QUERY, SELF, ALWAYS, IN, NONE),
	CMD(OSD_ACT_REMOVE_MEMBER_OBJECTS, "REMOVE MEMBER OBJECTS", 0, CCL, 0, 0, 0,
	    P_REMOVE | P_M, SELF, NEVER, NONE, NONE),
	CMD(OSD_ACT_GET_MEMBER_ATTRIBUTES, "GET MEMBER ATTRIBUTES", 0, CCL, 0, 0, 0,
	    OSD_PERM_GET_ATTR | P_M, SELF, ALWAYS, NONE, NONE),
	CMD(OSD_ACT_SET_MEMBER_ATTRIBUTES, "SET MEMBER ATTRIBUTES", 0, CCL, 0, 0, 0,
	    OSD_PERM_SET_ATTR | P_M, SELF, NEVER, NONE, NONE),
	CMD(OSD_ACT_CREATE_CLONE, "CREATE CLONE", 0, CCL, 0, 0, 0,
	    P_CREATE, SELF, NEVER, NONE, NONE),
	CMD(OSD_ACT_CREATE_SNAPSHOT, "CREATE SNAPSHOT", 0, CCL, 0, 0, 0,
	    P_CREATE, SELF, NEVER, NONE, NONE),
	CMD(OSD_ACT_DETACH_CLONE, "DETACH CLONE", 0, CCL, 0, 0, 0,
	    P_DEV, SELF, NEVER, NONE, NONE),
	CMD(OSD_ACT_REFRESH_SNAPSHOT_OR_CLONE, "REFRESH SNAPSHOT OR CLONE", 0, CCL, 0, 0, 0,
	    P_DEV, SELF, NEVER, NONE, NONE),
	CMD(OSD_ACT_RESTORE_PARTITION_FROM_SNAPSHOT, "RESTORE PARTITION FROM SNAPSHOT", 0,
	    CCL, 0, 0, 0, P_DEV, SELF, NEVER, NONE, NONE),
	CMD(OSD_ACT_READ_MAP, "READ MAP", 0, LEN | SBA | MAP, 0, 0, 0,
	    P_READ, SELF, ALWAYS, IN, NONE),
	CMD(OSD_ACT_READ_MAPS_AND_COMPARE, "READ MAPS AND COMPARE", 0, CCL, 0, 0, 0,
	    P_READ, SELF, NEVER, NONE, NONE),
	CMD(OSD_ACT_PERFORM_SCSI_COMMAND, "PERFORM SCSI COMMAND", 1, CCL, 0, 0, 0,
	    P_DEV, ROOT, NEVER, NONE, NONE),
	CMD(OSD_ACT_PERFORM_TASK_MGMT, "PERFORM TASK MANAGEMENT FUNCTION", 1, CCL, 0, 0, 0,
	    P_DEV, ROOT, NEVER, NONE, NONE),
};

const struct osd__cmd_desc *osd__cmd_desc_at(size_t index)
{
	if (index >= OSD__CMD_SLOTS || !descs[index].name)
		return NULL;
	return &descs[index];
}

const struct osd__cmd_desc *osd__cmd_desc_of(enum osd_action action)
{
	unsigned a = (unsigned)action;

	if (a >= OSD__CMD_MAIN_FIRST && a - OSD__CMD_MAIN_FIRST < OSD__CMD_MAIN_SLOTS)
		return osd__cmd_desc_at(OSD__CMD_INDEX(a));
	if (a >= OSD__CMD_PERFORM_FIRST && a - OSD__CMD_PERFORM_FIRST < OSD__CMD_PERFORM_SLOTS)
		return osd__cmd_desc_at(OSD__CMD_INDEX(a));
	return NULL;
}

struct osd_obj_id osd__cmd_cap_object(const struct osd__cmd_desc *d,
				      const struct osd_obj_id *obj, uint8_t cmd_options)
{
	struct osd_obj_id root = { 0, 0 }, part = { obj->partition, 0 };

	switch (d->cap_scope) {
	case OSD__CAP_ROOT:
		return root;
	case OSD__CAP_PARTITION:
		return part;
	case OSD__CAP_KEY:
		return (cmd_options & 3) == OSD_KEY_ROOT ? root : part;
	default:
		return *obj;
	}
}
