/*
 * Checks of a command that need none of its data-out (exec/precheck.h):
 * the CDB decodes, and the security checks of docs/security.md section 5
 * pass except those that need data-out or consume state (the nonce, the
 * ALLDATA data-out integrity block, CDB continuation ICVs and ranges).
 */
#include "exec/precheck.h"

#include <errno.h>
#include <string.h>

#include "exec/exec.h"
#include "response.h"
#include "security/access.h"

#define OSD_OPCODE 0x7F

/*
 * GET ATTRIBUTES of the root with a get list and no set list may be the
 * credential-less bootstrap read that access.c recognises from the list
 * itself, in data-out: it cannot be judged here.
 */
static int maybe_bootstrap(const struct osd_cdb *cdb)
{
	return cdb->action == OSD_ACT_GET_ATTRIBUTES && !cdb->obj.partition && !cdb->obj.id &&
	       cdb->attr_mode == OSD_ATTR_MODE_LIST && cdb->attr.list.get_list_length &&
	       !cdb->attr.list.set_list_length;
}

/* The sense of a refused command, as command.c would end it: nothing
 * done, and under CMDRSP/ALLDATA with a verified key the response ICV. */
static void refuse(struct osd__cmd *c)
{
	const uint32_t all = OSD_CFUNC_VALIDATION | OSD_CFUNC_CMD_CAP_V | OSD_CFUNC_COMMAND |
			     OSD_CFUNC_IMP_ST_ATT | OSD_CFUNC_SA_CAP_V | OSD_CFUNC_SET_ATT |
			     OSD_CFUNC_GA_CAP_V | OSD_CFUNC_GET_ATT;
	uint8_t icv[OSD_HMAC_LEN];

	c->sense.has_object = 1;
	c->sense.object = c->cdb.obj;
	c->sense.completed = 0;
	c->sense.not_initiated = all;
	if (c->capkey && c->method >= OSD_SEC_CMDRSP) {
		c->sense.has_ricv = 1;
		c->sense.ricv_len = (uint8_t)osd_cdb_icv_len(c->ver);
		memset(c->sense.ricv, 0, sizeof(c->sense.ricv));
	}
	osd__resp_sense(c->x, &c->sense);
	if (c->sense.has_ricv && osd__sec_response_icv(c, OSD_STATUS_CHECK_CONDITION, c->x->sense,
						       c->x->sense_len, icv) == 0) {
		memcpy(c->sense.ricv, icv, OSD_HMAC_LEN);
		osd__resp_sense(c->x, &c->sense);
	}
}

int osd__target_precheck(osd_target *tgt, struct osd_xfer *x, const uint8_t *token,
			 size_t token_len)
{
	struct osd__cmd cmd, *c = &cmd;
	uint16_t field = 0;
	int rc;

	if (!tgt || !x || (!x->cdb && x->cdb_len) || x->out_len)
		return -EINVAL;
	x->status = OSD_STATUS_GOOD;
	x->sense_len = 0;
	x->in_xferred = 0;
	if (!x->cdb_len || x->cdb[0] != OSD_OPCODE)
		return 1; /* plain SCSI commands carry no credential */
	osd__cmd_init(c, tgt, x);
	if (osd_cdb_decode(x->cdb, x->cdb_len, &c->cdb, &field) < 0 ||
	    osd__quirk_refuses(tgt, c) ||
	    (c->cdb.timestamps_control != OSD_TIMESTAMPS_NORMAL &&
	     c->cdb.timestamps_control != OSD_TIMESTAMPS_BYPASS)) {
		/* Refused before anything runs: the real path gives the exact sense. */
		osd_target_execute(tgt, x, token, token_len);
		return 0;
	}
	if (maybe_bootstrap(&c->cdb))
		return 1;
	c->ver = c->cdb.version;
	c->precheck = 1;
	/* The iSCSI connection thread calls this: it must not wait behind a
	 * long exclusive command (it answers NOP-Outs meanwhile). Unchecked
	 * here, the command is checked in full when it executes; its data-out
	 * stays within the server's bounds either way. */
	if (pthread_rwlock_tryrdlock(&tgt->cmd_lock)) {
		osd__sec_release(c);
		return 1;
	}
	c->ns_shared = 1;
	rc = osd__sec_check(c, token, token_len);
	pthread_rwlock_unlock(&tgt->cmd_lock);
	if (rc && !c->failed)
		osd__fail(c, OSD_SK_HARDWARE_ERROR, OSD_ASC_SYSTEM_RESOURCE_FAILURE);
	if (rc)
		refuse(c);
	osd__sec_release(c);
	return rc ? 0 : 1;
}
