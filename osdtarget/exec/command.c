/*
 * The OSD command engine: decode, security, the command itself, the
 * piggy-backed attribute lists in the documented order, then status and sense.
 */
#include "exec/exec.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "proto/command.h"
#include "response.h"
#include "security/access.h"

/* How a command uses the namespace lock and which objects its lists address. */
#define CMD_EXCL 0x1      /* changes the namespace: exclusive lock */
#define CMD_GET_FIRST 0x2 /* GET ATTRIBUTES: get list before set list */
#define CMD_CONT_SG 0x4   /* may carry a scatter/gather continuation */
#define CMD_CONT_QUERY 0x8 /* carries a query-list continuation */
#define CMD_KEYS 0x10     /* may change or remove keys: cached capability keys go */

/* The target's half of a command: its handler and how it locks. Keyed by the
 * command's descriptor slot (proto/command.h), which says everything else
 * (codes, CDB slots, permissions, described object); a descriptor without a
 * row here must be listed as UNSUPPORTED (test_target_commands checks). */
struct cmd_entry {
	osd__cmd_fn fn;    /* NULL: attributes only (GET/SET ATTRIBUTES) */
	unsigned flags;
	unsigned char state; /* CMD_RUNS or CMD_UNSUPPORTED; 0: no row (a bug) */
};

#define CMD_RUNS 1
#define CMD_UNSUPPORTED 2
#define RUNS(a, f, fl) [OSD__CMD_INDEX(a)] = { (f), (fl), CMD_RUNS }
#define UNSUPPORTED(a) [OSD__CMD_INDEX(a)] = { NULL, 0, CMD_UNSUPPORTED }

static const struct cmd_entry commands[OSD__CMD_SLOTS] = {
	RUNS(OSD_ACT_FORMAT_OSD, osd__cmd_format, CMD_EXCL | CMD_KEYS),
	RUNS(OSD_ACT_OBJECT_STRUCTURE_CHECK, osd__cmd_structure_check, 0),
	RUNS(OSD_ACT_CREATE_PARTITION, osd__cmd_create_partition, CMD_EXCL),
	RUNS(OSD_ACT_REMOVE_PARTITION, osd__cmd_remove_partition, CMD_EXCL | CMD_KEYS),
	RUNS(OSD_ACT_CREATE, osd__cmd_create, CMD_EXCL),
	RUNS(OSD_ACT_CREATE_AND_WRITE, osd__cmd_create_and_write, CMD_EXCL | CMD_CONT_SG),
	RUNS(OSD_ACT_REMOVE, osd__cmd_remove, CMD_EXCL),
	RUNS(OSD_ACT_CREATE_COLLECTION, osd__cmd_create_collection, CMD_EXCL),
	RUNS(OSD_ACT_REMOVE_COLLECTION, osd__cmd_remove_collection, CMD_EXCL),
	RUNS(OSD_ACT_READ, osd__cmd_read, CMD_CONT_SG),
	RUNS(OSD_ACT_WRITE, osd__cmd_write, CMD_CONT_SG),
	RUNS(OSD_ACT_APPEND, osd__cmd_append, 0),
	RUNS(OSD_ACT_CLEAR, osd__cmd_clear, 0),
	RUNS(OSD_ACT_PUNCH, osd__cmd_punch_entry, 0),
	RUNS(OSD_ACT_FLUSH, osd__cmd_flush, 0),
	RUNS(OSD_ACT_FLUSH_COLLECTION, osd__cmd_flush, 0),
	RUNS(OSD_ACT_FLUSH_PARTITION, osd__cmd_flush, 0),
	RUNS(OSD_ACT_FLUSH_OSD, osd__cmd_flush, 0),
	RUNS(OSD_ACT_LIST, osd__cmd_list, 0),
	RUNS(OSD_ACT_LIST_COLLECTION, osd__cmd_list_collection, 0),
	RUNS(OSD_ACT_QUERY, osd__cmd_query, CMD_EXCL | CMD_CONT_QUERY),
	RUNS(OSD_ACT_GET_ATTRIBUTES, NULL, CMD_GET_FIRST),
	RUNS(OSD_ACT_SET_ATTRIBUTES, NULL, 0),
	RUNS(OSD_ACT_GET_MEMBER_ATTRIBUTES, osd__cmd_get_member_attributes, 0),
	RUNS(OSD_ACT_SET_MEMBER_ATTRIBUTES, osd__cmd_set_member_attributes, CMD_EXCL),
	RUNS(OSD_ACT_REMOVE_MEMBER_OBJECTS, osd__cmd_remove_member_objects, CMD_EXCL),
	RUNS(OSD_ACT_SET_KEY, osd__cmd_set_key, CMD_EXCL | CMD_KEYS),
	RUNS(OSD_ACT_SET_MASTER_KEY, osd__cmd_set_master_key, CMD_EXCL | CMD_KEYS),
	/* Answered INVALID COMMAND OPERATION CODE (docs/target.md). */
	UNSUPPORTED(OSD_ACT_COPY_USER_OBJECTS),
	UNSUPPORTED(OSD_ACT_CREATE_USER_TRACKING_COLLECTION),
	UNSUPPORTED(OSD_ACT_CREATE_CLONE),
	UNSUPPORTED(OSD_ACT_CREATE_SNAPSHOT),
	UNSUPPORTED(OSD_ACT_DETACH_CLONE),
	UNSUPPORTED(OSD_ACT_REFRESH_SNAPSHOT_OR_CLONE),
	UNSUPPORTED(OSD_ACT_RESTORE_PARTITION_FROM_SNAPSHOT),
	UNSUPPORTED(OSD_ACT_READ_MAP),
	UNSUPPORTED(OSD_ACT_READ_MAPS_AND_COMPARE),
	UNSUPPORTED(OSD_ACT_PERFORM_SCSI_COMMAND),
	UNSUPPORTED(OSD_ACT_PERFORM_TASK_MGMT),
};

/* The row of a command the target runs, or NULL (unknown or unsupported). */
static const struct cmd_entry *find_command(enum osd_action a)
{
	const struct osd__cmd_desc *d = osd__cmd_desc_of(a);
	const struct cmd_entry *e = d ? &commands[OSD__CMD_INDEX(a)] : NULL;

	return e && e->state == CMD_RUNS ? e : NULL;
}

int osd__target_cmd_state(enum osd_action a)
{
	const struct osd__cmd_desc *d = osd__cmd_desc_of(a);

	if (!d)
		return -ENOENT;
	switch (commands[OSD__CMD_INDEX(a)].state) {
	case CMD_RUNS:
		return 1;
	case CMD_UNSUPPORTED:
		return 0;
	default:
		return -EINVAL;
	}
}

/* Does the CDB ask to set attributes (list, page or CDB mode)? */
static int has_set(const struct osd_cdb *cdb)
{
	switch (cdb->attr_mode) {
	case OSD_ATTR_MODE_LIST:
		return cdb->attr.list.set_list_length != 0;
	case OSD_ATTR_MODE_PAGE:
		return cdb->attr.page.set_page != 0;
	case OSD_ATTR_MODE_CDB:
		return 1;
	default:
		return 0;
	}
}

static void decode_failure(struct osd__cmd *c, int rc, uint16_t field)
{
	if (rc == -ENOTSUP || field == 0 || field == 7 || field == 8)
		osd__fail_field(c, OSD_ASC_INVALID_OPCODE, rc == -ENOTSUP ? 8 : field);
	else
		osd__fail_field(c, OSD_ASC_INVALID_FIELD_IN_CDB, field);
}

/* Continuation segments only where the command defines one. */
static int check_continuation(struct osd__cmd *c, const struct cmd_entry *e)
{
	if (c->ver != OSD_V2 || !c->cdb.cont_length)
		return 0;
	if (!(e->flags & (CMD_CONT_SG | CMD_CONT_QUERY)))
		return osd__fail_field(c, OSD_ASC_INVALID_FIELD_IN_CDB, 48);
	return osd__parse_continuation(c);
}

static int run_lists(struct osd__cmd *c, const struct cmd_entry *e)
{
	int rc;

	if (e->flags & CMD_GET_FIRST) {
		rc = osd__attrs_get(c);
		if (rc == 0)
			rc = osd__attrs_set(c);
		return rc;
	}
	rc = osd__attrs_set(c);
	if (rc == 0)
		rc = osd__attrs_get(c);
	return rc;
}

static int run(struct osd__cmd *c, const struct cmd_entry *e,
	       const uint8_t *token, size_t token_len)
{
	struct osd_obj_id self = c->cdb.obj;
	enum osd_obj_type t = osd_obj_type_of(&self);
	int rc;

	/* A (P,O) id may name a collection: ask the store. */
	if (t == OSD_OBJ_USER)
		osd__object_type(c, self.partition, self.id, &t);
	c->cc_type = (uint8_t)t;
	c->cc_pid = self.partition;
	c->cc_oid = self.id;
	rc = check_continuation(c, e);
	if (rc == 0)
		rc = osd__sec_check(c, token, token_len);
	if (rc)
		return rc;
	c->done_funcs |= OSD_CFUNC_VALIDATION | OSD_CFUNC_CMD_CAP_V;
	if (has_set(&c->cdb))
		c->done_funcs |= OSD_CFUNC_SA_CAP_V;
	c->done_funcs |= OSD_CFUNC_GA_CAP_V;
	/* Lists address the command's object unless a creating command redirects them. */
	c->aobjs = &c->cdb.obj;
	c->naobjs = 1;
	if (e->fn) {
		rc = e->fn(c);
		if (rc)
			return rc;
	} else {
		rc = osd__need_object(c, self.partition, self.id, 0);
		if (rc)
			return rc;
	}
	c->done_funcs |= OSD_CFUNC_COMMAND | OSD_CFUNC_IMP_ST_ATT;
	return run_lists(c, e);
}

/* Descriptor 06h, command functions, and the recovered-error or failure sense. */
static void fill_sense(struct osd__cmd *c)
{
	const uint32_t all = OSD_CFUNC_VALIDATION | OSD_CFUNC_CMD_CAP_V | OSD_CFUNC_COMMAND |
			     OSD_CFUNC_IMP_ST_ATT | OSD_CFUNC_SA_CAP_V | OSD_CFUNC_SET_ATT |
			     OSD_CFUNC_GA_CAP_V | OSD_CFUNC_GET_ATT;

	if (!c->failed && c->recovered) {
		memset(&c->sense, 0, sizeof(c->sense));
		c->sense.response_code = 0x72;
		c->sense.key = OSD_SK_RECOVERED_ERROR;
		c->sense.asc = OSD_ASC_READ_PAST_END_OF_OBJECT;
		c->sense.has_csi = 1;
		c->sense.csi = c->csi;
	}
	c->sense.has_object = 1;
	c->sense.object = c->has_sense_obj ? c->sense_obj : c->cdb.obj;
	c->sense.completed = c->done_funcs;
	c->sense.not_initiated = all & ~c->done_funcs;
}

int osd__final_response_icv(struct osd__cmd *c, uint8_t icv[OSD_HMAC_LEN])
{
	uint8_t sense[OSD_SENSE_MAX_LEN];
	uint32_t done = c->done_funcs;
	int n;

	if (!c->recovered)
		return osd__sec_response_icv(c, OSD_STATUS_GOOD, NULL, 0, icv);
	/* The recovered-error sense the command will end with, 07h zeroed. */
	c->done_funcs |= OSD_CFUNC_SET_ATT | OSD_CFUNC_GET_ATT;
	fill_sense(c);
	c->done_funcs = done;
	c->sense.has_ricv = 1;
	c->sense.ricv_len = (uint8_t)osd_cdb_icv_len(c->ver);
	memset(c->sense.ricv, 0, sizeof(c->sense.ricv));
	n = osd_sense_encode(&c->sense, sense, sizeof(sense));
	if (n < 0)
		return n;
	return osd__sec_response_icv(c, OSD_STATUS_CHECK_CONDITION, sense, (size_t)n, icv);
}

/* Encode the final sense, with descriptor 07h under CMDRSP/ALLDATA. */
static void finish_sense(struct osd__cmd *c)
{
	fill_sense(c);
	if (!c->capkey || c->method < OSD_SEC_CMDRSP) {
		osd__resp_sense(c->x, &c->sense);
		return;
	}
	uint8_t icv[OSD_HMAC_LEN];

	c->sense.has_ricv = 1;
	c->sense.ricv_len = (uint8_t)osd_cdb_icv_len(c->ver);
	memset(c->sense.ricv, 0, sizeof(c->sense.ricv));
	osd__resp_sense(c->x, &c->sense);
	if (osd__sec_response_icv(c, OSD_STATUS_CHECK_CONDITION, c->x->sense,
				  c->x->sense_len, icv) == 0) {
		memcpy(c->sense.ricv, icv, OSD_HMAC_LEN);
		osd__resp_sense(c->x, &c->sense);
	}
}

/* Keep a readable account of the last refused command for osd_target_error(). */
static void record_failure(struct osd__cmd *c)
{
	osd__target_seterr(c->tgt, 0, "%s (P 0x%llx, O 0x%llx): sense key %x, %s",
			   osd_action_name(c->cdb.action),
			   (unsigned long long)c->cdb.obj.partition,
			   (unsigned long long)c->cdb.obj.id, c->sense.key,
			   osd_asc_string(c->sense.asc));
}

static void finish(struct osd__cmd *c)
{
	if (c->failed)
		record_failure(c);
	if (c->capkey && c->method == OSD_SEC_ALLDATA && !c->failed)
		osd__sec_datain_block(c);
	if (c->failed || c->recovered)
		finish_sense(c);
	else
		osd__resp_good(c->x);
}

static void cmd_release(struct osd__cmd *c)
{
	osd__sec_release(c);
	free(c->sg);
	free(c->query);
	if (c->aobjs != &c->cdb.obj)
		free(c->aobjs);
}

void osd__cmd_init(struct osd__cmd *c, osd_target *tgt, struct osd_xfer *x)
{
	memset(c, 0, sizeof(*c));
	c->tgt = tgt;
	c->st = tgt->st;
	c->x = x;
	c->raw = x->cdb;
	c->raw_len = x->cdb_len;
	c->now = osd_now_ms();
	c->aobjs = &c->cdb.obj;
}

void osd__exec_osd(osd_target *tgt, struct osd_xfer *x, const uint8_t *token, size_t token_len)
{
	struct osd__cmd cmd, *c = &cmd; /* on the stack: no allocation per command */
	uint16_t field = 0;
	int rc;

	osd__cmd_init(c, tgt, x);
	rc = osd_cdb_decode(x->cdb, x->cdb_len, &c->cdb, &field);
	if (rc < 0) {
		decode_failure(c, rc, field);
		osd__resp_sense(x, &c->sense);
		return;
	}
	c->ver = c->cdb.version;
	c->bypass_ts = c->cdb.timestamps_control == OSD_TIMESTAMPS_BYPASS;
	c->fua = (c->cdb.options & OSD_OPT_FUA) || tgt->sync_writes ? OSD_STORE_FUA : 0;

	const struct cmd_entry *e = find_command(c->cdb.action);

	if (!e) {
		osd__fail_field(c, OSD_ASC_INVALID_OPCODE, 8);
		osd__resp_sense(x, &c->sense);
		return;
	}
	if (osd__quirk_refuses(tgt, c)) {
		osd__resp_sense(x, &c->sense);
		return;
	}
	if (c->cdb.timestamps_control != OSD_TIMESTAMPS_NORMAL && !c->bypass_ts) {
		osd__fail_field(c, OSD_ASC_INVALID_FIELD_IN_CDB, 12);
		osd__resp_sense(x, &c->sense);
		return;
	}
	int excl = (e->flags & CMD_EXCL) || has_set(&c->cdb);

	if (excl)
		pthread_rwlock_wrlock(&tgt->cmd_lock);
	else
		pthread_rwlock_rdlock(&tgt->cmd_lock);
	c->ns_shared = !excl;
	if (run(c, e, token, token_len) && !c->failed)
		osd__fail(c, OSD_SK_HARDWARE_ERROR, OSD_ASC_SYSTEM_RESOURCE_FAILURE);
	finish(c);
	/* Still exclusive: no command can use an old key after this. */
	if (e->flags & CMD_KEYS)
		osd__capkey_invalidate(&tgt->capkeys);
	pthread_rwlock_unlock(&tgt->cmd_lock);
	cmd_release(c);
}
