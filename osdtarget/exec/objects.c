/*
 * Namespace commands: FORMAT OSD, CREATE/REMOVE PARTITION, CREATE, REMOVE,
 * CREATE/REMOVE COLLECTION, and the object checks every command shares.
 */
#include "exec/exec.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "proto/byteorder.h"

#define REMOVE_SCOPE_CONTENTS 1
#define FCR 0x01

int osd__object_type(struct osd__cmd *c, uint64_t pid, uint64_t oid, enum osd_obj_type *t)
{
	enum osd_obj_type mt = OSD_OBJ_USER;
	int rc;

	if (c->ns_shared && c->memo_have && c->memo_obj.partition == pid && c->memo_obj.id == oid) {
		rc = c->memo_rc;
		mt = c->memo_type;
	} else {
		rc = osd_store_object_type(c->st, pid, oid, &mt);
		if (c->ns_shared) {
			c->memo_have = 1;
			c->memo_rc = rc;
			c->memo_type = mt;
			c->memo_obj.partition = pid;
			c->memo_obj.id = oid;
		}
	}
	if (rc == 0 && t)
		*t = mt;
	return rc;
}

int osd__need_object(struct osd__cmd *c, uint64_t pid, uint64_t oid, enum osd_obj_type type)
{
	enum osd_obj_type t = 0; /* set on success; -O3 cannot see that */

	if (pid == 0 && oid != 0)
		return osd__fail_field(c, OSD_ASC_INVALID_FIELD_IN_CDB, OSD__FP_OBJECT);
	if (osd__object_type(c, pid, oid, &t) < 0) {
		if (pid && !osd_store_partition_exists(c->st, pid))
			return osd__fail_field(c, OSD_ASC_INVALID_FIELD_IN_CDB, OSD__FP_PARTITION);
		return osd__fail_field(c, OSD_ASC_INVALID_FIELD_IN_CDB,
				       oid ? OSD__FP_OBJECT : OSD__FP_PARTITION);
	}
	if (type && t != type)
		return osd__fail_field(c, OSD_ASC_INVALID_FIELD_IN_CDB,
				       oid ? OSD__FP_OBJECT : OSD__FP_PARTITION);
	return 0;
}

void osd__bump_generation(struct osd__cmd *c)
{
	pthread_mutex_lock(&c->tgt->list_lock);
	c->tgt->generation++;
	pthread_mutex_unlock(&c->tgt->list_lock);
}

/* A new partition inherits the root's partition default security method. */
static int inherit_security(struct osd__cmd *c, uint64_t pid)
{
	uint8_t method = 0;
	size_t len = 0;

	if (osd_store_attr_get(c->st, 0, 0, OSD_APAGE_ROOT_BASE + OSD_APAGE_POLICY_SECURITY,
			       OSD_ATTR_PS_PARTITION_DEFAULT_METHOD, &method, 1, &len) < 0 ||
	    len != 1 || method == OSD_SEC_NOSEC)
		return 0;
	return osd_store_attr_set(c->st, pid, 0, OSD_APAGE_PARTITION_BASE + OSD_APAGE_POLICY_SECURITY,
				  OSD_ATTR_PS_DEFAULT_METHOD, &method, 1, c->fua);
}

int osd__init_object(struct osd__cmd *c, uint64_t pid, uint64_t oid, enum osd_obj_type type)
{
	osd__stamp_created(c, pid, oid);
	osd__bump_generation(c);
	if (type == OSD_OBJ_PARTITION)
		return inherit_security(c, pid);
	return 0;
}

/* Put the created objects in c->aobjs so the attribute lists apply to them. */
static int set_list_targets(struct osd__cmd *c, uint64_t pid, uint64_t first, size_t n)
{
	struct osd_obj_id *v = calloc(n, sizeof(*v));

	if (!v)
		return osd__fail(c, OSD_SK_HARDWARE_ERROR, OSD_ASC_SYSTEM_RESOURCE_FAILURE);
	for (size_t i = 0; i < n; i++) {
		v[i].partition = pid;
		v[i].id = first + i;
	}
	c->aobjs = v;
	c->naobjs = n;
	c->multi = n > 1;
	return 0;
}

/* ---- FORMAT OSD ---- */

/* Root attributes that survive FORMAT OSD: identity and security state. */
struct kept_attr {
	uint32_t page, num;
	size_t len;
	uint8_t val[];
};

struct kept {
	struct kept_attr **v;
	size_t n;
	int err;
};

static int keep_cb(uint32_t page, uint32_t num, const void *val, size_t len, void *payload)
{
	struct kept *k = payload;
	int wanted = page == OSD__PRIV_PAGE_ROOT ||
		     page == OSD_APAGE_ROOT_BASE + OSD_APAGE_POLICY_SECURITY ||
		     (page == OSD_APAGE_ROOT_BASE + OSD_APAGE_INFORMATION &&
		      num == OSD_ATTR_RI_SYSTEM_ID);

	if (!wanted)
		return 0;
	struct kept_attr *a = malloc(sizeof(*a) + len);
	struct kept_attr **v = realloc(k->v, (k->n + 1) * sizeof(*v));

	if (!a || !v) {
		free(a);
		if (v)
			k->v = v;
		k->err = -ENOMEM;
		return 1;
	}
	a->page = page;
	a->num = num;
	a->len = len;
	memcpy(a->val, val, len);
	k->v = v;
	k->v[k->n++] = a;
	return 0;
}

static void kept_free(struct kept *k)
{
	for (size_t i = 0; i < k->n; i++)
		free(k->v[i]);
	free(k->v);
}

int osd__cmd_format(struct osd__cmd *c)
{
	struct kept k = { 0 };
	int rc;

	if (c->cdb.obj.partition || c->cdb.obj.id)
		return osd__fail_field(c, OSD_ASC_INVALID_FIELD_IN_CDB, OSD__FP_PARTITION);
	rc = osd_store_attr_iterate(c->st, 0, 0, OSD_STORE_ALL_PAGES, keep_cb, &k);
	if (rc == 0 && k.err)
		rc = k.err;
	if (rc == 0)
		rc = osd_store_format(c->st, c->cdb.length);
	for (size_t i = 0; rc == 0 && i < k.n; i++)
		rc = osd_store_attr_set(c->st, 0, 0, k.v[i]->page, k.v[i]->num, k.v[i]->val,
					k.v[i]->len, OSD_STORE_FUA);
	kept_free(&k);
	if (rc < 0)
		return osd__fail_store(c, rc, osd__fp_length(c));
	osd__init_object(c, 0, 0, OSD_OBJ_ROOT);
	return 0;
}

/* ---- partitions ---- */

int osd__cmd_create_partition(struct osd__cmd *c)
{
	uint64_t pid = c->cdb.obj.partition, max_id = 0;
	int rc;

	if (c->cdb.obj.id)
		return osd__fail_field(c, OSD_ASC_INVALID_FIELD_IN_CDB, OSD__FP_OBJECT);
	if (pid && pid < OSD_FIRST_ID)
		return osd__fail_field(c, OSD_ASC_INVALID_FIELD_IN_CDB, OSD__FP_PARTITION);
	if (!pid) {
		rc = osd_store_partition_stats(c->st, NULL, &max_id);
		if (rc < 0)
			return osd__fail_store(c, rc, OSD__FP_PARTITION);
		if (max_id == UINT64_MAX)
			return osd__fail(c, OSD_SK_DATA_PROTECT, OSD_ASC_QUOTA_ERROR);
		pid = max_id < OSD_FIRST_ID ? OSD_FIRST_ID : max_id + 1;
	}
	rc = osd_store_partition_create(c->st, pid, c->fua);
	if (rc < 0)
		return osd__fail_store(c, rc, OSD__FP_PARTITION);
	c->cc_type = OSD_OBJ_PARTITION;
	c->cc_pid = pid;
	c->cc_oid = 0;
	osd__init_object(c, pid, 0, OSD_OBJ_PARTITION);
	return set_list_targets(c, pid, 0, 1);
}

static int remove_contents(struct osd__cmd *c, uint64_t pid)
{
	uint64_t ids[256];
	size_t n;
	int rc;

	do {
		rc = osd_store_object_list(c->st, pid, 0, 0, ids, 256, &n, NULL);
		for (size_t i = 0; rc == 0 && i < n; i++)
			rc = osd_store_object_remove(c->st, pid, ids[i], 0);
	} while (rc == 0 && n);
	return rc;
}

int osd__cmd_remove_partition(struct osd__cmd *c)
{
	uint64_t pid = c->cdb.obj.partition;
	int rc;

	if (!pid)
		return osd__fail_field(c, OSD_ASC_INVALID_FIELD_IN_CDB, OSD__FP_PARTITION);
	if (c->cdb.obj.id)
		return osd__fail_field(c, OSD_ASC_INVALID_FIELD_IN_CDB, OSD__FP_OBJECT);
	rc = osd__need_object(c, pid, 0, OSD_OBJ_PARTITION);
	if (rc)
		return rc;
	if (c->ver == OSD_V2 && (c->cdb.cmd_options & 0x7) == REMOVE_SCOPE_CONTENTS) {
		rc = remove_contents(c, pid);
		if (rc < 0)
			return osd__fail_store(c, rc, OSD__FP_PARTITION);
	}
	rc = osd_store_partition_remove(c->st, pid, c->fua);
	if (rc < 0)
		return osd__fail_store(c, rc, OSD__FP_PARTITION);
	osd__bump_generation(c);
	/* The partition is gone: lists address nothing (the get list sees root-less ids). */
	return 0;
}

/* ---- user objects and collections ---- */

/* Choose ids for @p n new objects, or validate the requested one. */
static int pick_ids(struct osd__cmd *c, uint64_t pid, uint64_t requested, size_t n,
		    uint64_t *first)
{
	uint64_t max_id = 0;
	int rc;

	if (requested) {
		if (requested < OSD_FIRST_ID)
			return osd__fail_field(c, OSD_ASC_INVALID_FIELD_IN_CDB, OSD__FP_OBJECT);
		if (osd_store_object_type(c->st, pid, requested, NULL) == 0)
			return osd__fail_field(c, OSD_ASC_INVALID_FIELD_IN_CDB, OSD__FP_OBJECT);
		*first = requested;
		return 0;
	}
	rc = osd_store_object_stats(c->st, pid, NULL, &max_id);
	if (rc < 0)
		return osd__fail_store(c, rc, OSD__FP_PARTITION);
	*first = max_id < OSD_FIRST_ID ? OSD_FIRST_ID : max_id + 1;
	if (*first > UINT64_MAX - n)
		return osd__fail(c, OSD_SK_DATA_PROTECT, OSD_ASC_QUOTA_ERROR);
	return 0;
}

/* Partition quota 0x10002 (object count), kept as a stored attribute; 0 = none. */
static int check_object_count(struct osd__cmd *c, uint64_t pid, size_t n)
{
	uint8_t v[8];
	size_t len = 0;
	uint64_t limit, count = 0;

	if (osd_store_attr_get(c->st, pid, 0, OSD_APAGE_PARTITION_BASE + OSD_APAGE_QUOTAS,
			       OSD_ATTR_Q_PARTITION_OBJECT_COUNT, v, sizeof(v), &len) < 0 || len != 8)
		return 0;
	limit = osd__get_be64(v);
	if (!limit || osd_store_object_stats(c->st, pid, &count, NULL) < 0)
		return 0;
	if (count + n > limit)
		return osd__fail(c, OSD_SK_DATA_PROTECT, OSD_ASC_QUOTA_ERROR);
	return 0;
}

/* Create @p n objects of @p type from the CDB's partition/requested id. */
static int create_objects(struct osd__cmd *c, enum osd_obj_type type, size_t n)
{
	uint64_t pid = c->cdb.obj.partition, first = 0;
	int rc;

	if (!pid)
		return osd__fail_field(c, OSD_ASC_INVALID_FIELD_IN_CDB, OSD__FP_PARTITION);
	rc = osd__need_object(c, pid, 0, OSD_OBJ_PARTITION);
	if (rc)
		return rc;
	if (n > 1 && c->cdb.obj.id)
		return osd__fail_field(c, OSD_ASC_INVALID_FIELD_IN_CDB, OSD__FP_OBJECT);
	rc = check_object_count(c, pid, n);
	if (rc == 0)
		rc = pick_ids(c, pid, c->cdb.obj.id, n, &first);
	if (rc)
		return rc;
	for (size_t i = 0; i < n; i++) {
		rc = osd_store_object_create(c->st, pid, first + i, type, c->fua);
		if (rc < 0) {
			/* All or nothing: undo what this command created. */
			while (i--)
				osd_store_object_remove(c->st, pid, first + i, 0);
			return osd__fail_store(c, rc, OSD__FP_OBJECT);
		}
		osd__init_object(c, pid, first + i, type);
	}
	c->cc_type = (uint8_t)type;
	c->cc_pid = pid;
	c->cc_oid = first + n - 1;
	return set_list_targets(c, pid, first, n);
}

int osd__cmd_create(struct osd__cmd *c)
{
	size_t n = c->cdb.num_objects ? c->cdb.num_objects : 1;

	return create_objects(c, OSD_OBJ_USER, n);
}

int osd__cmd_create_and_write(struct osd__cmd *c)
{
	int rc = create_objects(c, OSD_OBJ_USER, 1);

	if (rc)
		return rc;
	rc = osd__write_payload(c, c->cc_pid, c->cc_oid);
	if (rc) {
		osd_store_object_remove(c->st, c->cc_pid, c->cc_oid, 0);
		osd__bump_generation(c);
	}
	return rc;
}

int osd__cmd_create_collection(struct osd__cmd *c)
{
	return create_objects(c, OSD_OBJ_COLLECTION, 1);
}

int osd__cmd_remove(struct osd__cmd *c)
{
	const struct osd_obj_id *o = &c->cdb.obj;
	int rc = osd__need_object(c, o->partition, o->id, OSD_OBJ_USER);

	if (rc)
		return rc;
	rc = osd_store_object_remove(c->st, o->partition, o->id, c->fua);
	if (rc < 0)
		return osd__fail_store(c, rc, OSD__FP_OBJECT);
	osd__bump_generation(c);
	return 0;
}

int osd__cmd_remove_collection(struct osd__cmd *c)
{
	const struct osd_obj_id *o = &c->cdb.obj;
	uint64_t *members = NULL;
	size_t n = 0;
	int rc = osd__need_object(c, o->partition, o->id, OSD_OBJ_COLLECTION);

	if (rc)
		return rc;
	rc = osd__collection_members(c, o->partition, o->id, &members, &n);
	if (rc)
		return rc;
	if (n && !(c->cdb.cmd_options & FCR)) {
		free(members);
		return osd__fail(c, OSD_SK_ILLEGAL_REQUEST, OSD_ASC_PARTITION_OR_COLLECTION_NOT_EMPTY);
	}
	for (size_t i = 0; i < n; i++)
		osd__leave_collection(c, o->partition, members[i], o->id);
	free(members);
	rc = osd_store_object_remove(c->st, o->partition, o->id, c->fua);
	if (rc < 0)
		return osd__fail_store(c, rc, OSD__FP_OBJECT);
	osd__bump_generation(c);
	return 0;
}
