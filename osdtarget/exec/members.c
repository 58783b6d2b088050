/*
 * Collection membership, kept on each user object's collections page
 * (0x00000004): attribute n (1..0xFFFFFF00) holds the 8-byte id of a
 * collection the object belongs to. The member commands and FCR use it.
 */
#include "exec/exec.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "proto/byteorder.h"

#define COLL_PAGE (OSD_APAGE_USER_BASE + OSD_APAGE_COLLECTIONS)
#define COLL_NUM_MAX 0xFFFFFF00u
#define SCAN_BATCH 512

struct coll_scan {
	uint64_t cid;
	int found;          /* an attribute names cid */
	uint32_t max_num;   /* highest attribute number in use */
	uint32_t nums[64];  /* numbers naming cid (leave) */
	size_t n;
};

static int scan_cb(uint32_t page, uint32_t num, const void *val, size_t len, void *payload)
{
	struct coll_scan *s = payload;

	(void)page;
	if (num > s->max_num)
		s->max_num = num;
	if (len == 8 && osd__get_be64(val) == s->cid) {
		s->found = 1;
		if (s->n < sizeof(s->nums) / sizeof(s->nums[0]))
			s->nums[s->n++] = num;
	}
	return 0;
}

static int scan(struct osd__cmd *c, uint64_t pid, uint64_t oid, uint64_t cid, struct coll_scan *s)
{
	memset(s, 0, sizeof(*s));
	s->cid = cid;
	return osd_store_attr_iterate(c->st, pid, oid, COLL_PAGE, scan_cb, s);
}

int osd__collection_members(struct osd__cmd *c, uint64_t pid, uint64_t cid,
			    uint64_t **ids, size_t *n)
{
	uint64_t batch[SCAN_BATCH], next = 0, start;
	uint64_t *v = NULL;
	size_t cnt = 0, cap = 0, got;
	int rc;

	*ids = NULL;
	*n = 0;
	do {
		start = next;
		rc = osd_store_object_list(c->st, pid, start, OSD_OBJ_USER, batch, SCAN_BATCH,
					   &got, &next);
		for (size_t i = 0; rc == 0 && i < got; i++) {
			struct coll_scan s;

			if (scan(c, pid, batch[i], cid, &s) < 0 || !s.found)
				continue;
			if (cnt == cap) {
				uint64_t *nv = realloc(v, (cap = cap ? cap * 2 : 64) * sizeof(*v));

				if (!nv) {
					rc = -ENOMEM;
					break;
				}
				v = nv;
			}
			v[cnt++] = batch[i];
		}
	} while (rc == 0 && next);
	if (rc < 0) {
		free(v);
		return osd__fail_store(c, rc, OSD__FP_PARTITION);
	}
	*ids = v;
	*n = cnt;
	return 0;
}

int osd__join_collection(struct osd__cmd *c, uint64_t pid, uint64_t oid, uint64_t cid)
{
	struct coll_scan s;
	uint8_t val[8];
	int rc = scan(c, pid, oid, cid, &s);

	if (rc < 0)
		return osd__fail_store(c, rc, OSD__FP_OBJECT);
	if (s.found)
		return 0;
	if (s.max_num >= COLL_NUM_MAX)
		return osd__fail(c, OSD_SK_DATA_PROTECT, OSD_ASC_QUOTA_ERROR);
	osd__put_be64(val, cid);
	rc = osd_store_attr_set(c->st, pid, oid, COLL_PAGE, s.max_num + 1, val, 8, c->fua);
	return rc < 0 ? osd__fail_store(c, rc, OSD__FP_OBJECT) : 0;
}

void osd__leave_collection(struct osd__cmd *c, uint64_t pid, uint64_t oid, uint64_t cid)
{
	struct coll_scan s;

	do {
		if (scan(c, pid, oid, cid, &s) < 0)
			return;
		for (size_t i = 0; i < s.n; i++)
			osd_store_attr_set(c->st, pid, oid, COLL_PAGE, s.nums[i], NULL, 0, c->fua);
	} while (s.n == sizeof(s.nums) / sizeof(s.nums[0]));
}

/* Redirect the command's attribute lists to every member of the collection. */
static int target_members(struct osd__cmd *c, uint64_t **ids, size_t *n)
{
	const struct osd_obj_id *o = &c->cdb.obj;
	int rc = osd__need_object(c, o->partition, o->id, OSD_OBJ_COLLECTION);

	if (rc == 0)
		rc = osd__collection_members(c, o->partition, o->id, ids, n);
	return rc;
}

static int lists_to(struct osd__cmd *c, const uint64_t *ids, size_t n)
{
	struct osd_obj_id *v = calloc(n ? n : 1, sizeof(*v));

	if (!v)
		return osd__fail(c, OSD_SK_HARDWARE_ERROR, OSD_ASC_SYSTEM_RESOURCE_FAILURE);
	for (size_t i = 0; i < n; i++) {
		v[i].partition = c->cdb.obj.partition;
		v[i].id = ids[i];
	}
	c->aobjs = v;
	c->naobjs = n;
	c->multi = 1;
	return 0;
}

int osd__cmd_get_member_attributes(struct osd__cmd *c)
{
	uint64_t *ids;
	size_t n;
	int rc = target_members(c, &ids, &n);

	if (rc)
		return rc;
	rc = lists_to(c, ids, n);
	free(ids);
	return rc;
}

int osd__cmd_set_member_attributes(struct osd__cmd *c)
{
	return osd__cmd_get_member_attributes(c);
}

int osd__cmd_remove_member_objects(struct osd__cmd *c)
{
	uint64_t *ids;
	size_t n;
	int rc = target_members(c, &ids, &n);

	if (rc)
		return rc;
	for (size_t i = 0; rc == 0 && i < n; i++) {
		int err = osd_store_object_remove(c->st, c->cdb.obj.partition, ids[i], c->fua);

		if (err < 0 && err != -ENOENT)
			rc = osd__fail_store(c, err, OSD__FP_OBJECT);
	}
	free(ids);
	osd__bump_generation(c);
	return rc;
}
