/* SET KEY (partition and working keys) and SET MASTER KEY (not implemented). */
#include "exec/exec.h"

#include <string.h>

#include "security/keystore.h"

#define MAX_KEY_VERSION 15

/* SET KEY: derive the child from its parent with the CDB's seed (docs/security.md 2.1). */
int osd__cmd_set_key(struct osd__cmd *c)
{
	enum osd_key_to_set kind = (enum osd_key_to_set)(c->cdb.cmd_options & 3);
	uint64_t pid = c->cdb.obj.partition;
	uint8_t parent[OSD_HMAC_LEN], child[OSD_HMAC_LEN];
	osd_key *pk = NULL;
	int rc;

	/* The root key's parent would be the master key, which does not exist here. */
	if (kind != OSD_KEY_PARTITION && kind != OSD_KEY_WORKING)
		return osd__fail_field(c, OSD_ASC_INVALID_FIELD_IN_CDB, OSD__FP_CMD_OPTIONS);
	if (!pid)
		return osd__fail_field(c, OSD_ASC_INVALID_FIELD_IN_CDB, OSD__FP_PARTITION);
	rc = osd__need_object(c, pid, 0, OSD_OBJ_PARTITION);
	if (rc)
		return rc;
	if (c->cdb.key_version > MAX_KEY_VERSION ||
	    (kind == OSD_KEY_PARTITION && c->cdb.key_version))
		return osd__fail_field(c, OSD_ASC_INVALID_FIELD_IN_CDB, OSD__FP_OBJECT);
	if (kind == OSD_KEY_WORKING) {
		uint8_t mask[2];
		size_t len = 0;

		if (osd_store_attr_get(c->st, pid, 0,
				       OSD_APAGE_PARTITION_BASE + OSD_APAGE_POLICY_SECURITY,
				       OSD_ATTR_PS_FROZEN_WORKING_KEYS, mask, 2, &len) == 0 &&
		    len == 2 && ((mask[0] << 8 | mask[1]) >> c->cdb.key_version) & 1)
			return osd__fail(c, OSD_SK_ILLEGAL_REQUEST,
					 OSD_ASC_SECURITY_WORKING_KEY_FROZEN);
	}
	rc = kind == OSD_KEY_PARTITION ? osd__key_load(c->st, 0, OSD_KEY_ROOT, 0, parent)
				       : osd__key_load(c->st, pid, OSD_KEY_PARTITION, 0, parent);
	if (rc < 0)
		return osd__fail_field(c, OSD_ASC_INVALID_FIELD_IN_CDB, OSD__FP_CMD_OPTIONS);
	rc = osd_key_new(&pk, parent, OSD_HMAC_LEN);
	if (rc == 0)
		rc = osd_key_derive(pk, c->cdb.seed, c->cdb.key_id, (uint8_t)kind,
				    c->cdb.key_version, child);
	osd_key_free(pk);
	if (rc == 0)
		rc = osd__key_save(c->st, pid, kind, c->cdb.key_version, child, c->cdb.key_id);
	memset(parent, 0, sizeof(parent));
	memset(child, 0, sizeof(child));
	if (rc < 0)
		return osd__fail_store(c, rc, OSD__FP_PARTITION);
	return 0;
}

/*
 * SET MASTER KEY needs the Diffie-Hellman exchange, which this target does not
 * implement (docs/target.md): refused with the field pointer at DH_STEP.
 */
int osd__cmd_set_master_key(struct osd__cmd *c)
{
	return osd__fail_field(c, OSD_ASC_INVALID_FIELD_IN_CDB, OSD__FP_CMD_OPTIONS);
}
