/*
 * OBJECT STRUCTURE CHECK (OSD-2, service action 8880h): the target's scrub.
 * It verifies every data checksum of the addressed user object, of every
 * user object of the addressed partition, or of the whole store (root),
 * while other commands run. A mismatch ends it with MEDIUM ERROR,
 * UNRECOVERED READ ERROR, the damaged object in descriptor 06h and its
 * first bad byte in the information descriptor (docs/protocol-choices.md,
 * "OBJECT STRUCTURE CHECK").
 */
#include "exec/exec.h"

#include <errno.h>

#define CHECK_BATCH 256

static int check_object(struct osd__cmd *c, uint64_t pid, uint64_t oid)
{
	uint64_t bytes, bad;
	int rc = osd_store_verify(c->st, pid, oid, &bytes, &bad);
	struct osd_obj_id obj = { pid, oid };

	if (rc == -EIO)
		return osd__fail_medium(c, &obj, bad);
	if (rc == -ENOENT)
		return 0; /* removed meanwhile */
	if (rc == -ENOTSUP) /* a store made without checksums: nothing to check */
		return osd__fail_field(c, OSD_ASC_INVALID_OPCODE, 8);
	return rc < 0 ? osd__fail_store(c, rc, OSD__FP_OBJECT) : 0;
}

static int check_partition(struct osd__cmd *c, uint64_t pid)
{
	uint64_t ids[CHECK_BATCH], start = 0;

	do {
		size_t n = 0;
		uint64_t next = 0;
		int rc = osd_store_object_list(c->st, pid, start, OSD_OBJ_USER, ids, CHECK_BATCH,
					       &n, &next);

		if (rc == -ENOENT)
			return 0;
		if (rc < 0)
			return osd__fail_store(c, rc, OSD__FP_PARTITION);
		for (size_t i = 0; i < n; i++)
			if ((rc = check_object(c, pid, ids[i])) != 0)
				return rc;
		start = next;
	} while (start);
	return 0;
}

int osd__cmd_structure_check(struct osd__cmd *c)
{
	const struct osd_obj_id *o = &c->cdb.obj;
	uint64_t pids[CHECK_BATCH], start = 0;
	int rc = osd__need_object(c, o->partition, o->id, 0);

	if (rc)
		return rc;
	if (o->id) {
		enum osd_obj_type t;

		if (osd__object_type(c, o->partition, o->id, &t) == 0 && t != OSD_OBJ_USER)
			return 0; /* a collection holds no data */
		return check_object(c, o->partition, o->id);
	}
	if (o->partition)
		return check_partition(c, o->partition);
	do {
		size_t n = 0;
		uint64_t next = 0;

		rc = osd_store_partition_list(c->st, start, pids, CHECK_BATCH, &n, &next);
		if (rc < 0)
			return osd__fail_store(c, rc, OSD__FP_PARTITION);
		for (size_t i = 0; i < n; i++)
			if ((rc = check_partition(c, pids[i])) != 0)
				return rc;
		start = next;
	} while (start);
	return 0;
}
