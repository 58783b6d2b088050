/*
 * LIST with continuations, collections and their members: CREATE/REMOVE
 * COLLECTION, LIST COLLECTION, FLUSH COLLECTION, and the OSD-2 QUERY and
 * member commands.
 */
#include <stdio.h>
#include <string.h>
#include "conform.h"
#include "tests.h"

#define APP_PAGE (OSD_APAGE_USER_BASE + OSD_APAGE_APP_FIRST)

/* Creates @p n objects in *objs. */
static int create_n(struct cf_ctx *c, struct osd_obj_id *objs, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		objs[i].id = 0;
		if (cf_create(c, &objs[i]) < 0)
			return -1;
	}
	return 0;
}

enum cf_result t_list(struct cf_ctx *c)
{
	struct osd_obj_id objs[5], part = { c->part, 0 };

	if (create_n(c, objs, 5) < 0)
		return c->res;
	/* room for two ids per answer: the continuation must carry the rest */
	if (cf_list_all(c, OSD_ACT_LIST, &part, OSD_LIST_HEADER_LEN + 16) < 0)
		return c->res;
	for (unsigned i = 0; i < 5; i++)
		if (!cf_listed(c, objs[i].id))
			return cf_set(c, CF_FAIL, "LIST of 0x%llx lacks object 0x%llx (%zu ids listed)",
				      (unsigned long long)c->part, (unsigned long long)objs[i].id,
				      c->nids);
	return cf_set(c, CF_PASS, "%zu ids in 2-id answers", c->nids);
}

enum cf_result t_list_partitions(struct cf_ctx *c)
{
	const struct osd_obj_id root = { 0, 0 };

	if (cf_list_all(c, OSD_ACT_LIST, &root, 0) < 0)
		return c->res;
	if (!cf_listed(c, c->part))
		return cf_set(c, CF_FAIL, "LIST of the root lacks partition 0x%llx",
			      (unsigned long long)c->part);
	return cf_set(c, CF_PASS, "%zu partitions", c->nids);
}

enum cf_result t_collection(struct cf_ctx *c)
{
	struct osd_obj_id col, objs[3], all = { c->part, 0 };

	if (cf_create_collection(c, &col) < 0 || create_n(c, objs, 3) < 0 ||
	    cf_add_member(c, &objs[0], &col) < 0 || cf_add_member(c, &objs[2], &col) < 0)
		return c->res;
	if (cf_list_all(c, OSD_ACT_LIST_COLLECTION, &col, 0) < 0)
		return c->res;
	if (c->nids != 2 || !cf_listed(c, objs[0].id) || !cf_listed(c, objs[2].id))
		return cf_set(c, CF_FAIL, "LIST COLLECTION: %zu members listed, expected the 2 added",
			      c->nids);
	if (cf_list_all(c, OSD_ACT_LIST_COLLECTION, &all, 0) < 0)
		return c->res;
	if (!cf_listed(c, col.id))
		return cf_set(c, CF_FAIL, "LIST COLLECTION of the partition lacks collection 0x%llx",
			      (unsigned long long)col.id);
	return cf_set(c, CF_PASS, "members and collections listed");
}

enum cf_result t_remove_collection(struct cf_ctx *c)
{
	struct osd_obj_id col, obj = { 0, 0 }, all = { c->part, 0 };
	osd_req *req = NULL;
	enum cf_result r;
	int rc;

	if (cf_create_collection(c, &col) < 0 || cf_create(c, &obj) < 0 ||
	    cf_add_member(c, &obj, &col) < 0)
		return c->res;
	r = cf_expect(c, req, osd_req_remove_collection(&req, c->dev, &col, 0),
		      "REMOVE COLLECTION of a non-empty collection", OSD_SK_ILLEGAL_REQUEST,
		      OSD_ASC_PARTITION_OR_COLLECTION_NOT_EMPTY, 0, 0);
	osd_req_free(req);
	req = NULL;
	if (r != CF_PASS)
		return r;
	rc = cf_exec(c, req, osd_req_remove_collection(&req, c->dev, &col,
							OSD_REMOVE_COLLECTION_FORCE),
		     "REMOVE COLLECTION (FCR)");
	osd_req_free(req);
	if (rc < 0 || cf_list_all(c, OSD_ACT_LIST_COLLECTION, &all, 0) < 0)
		return c->res;
	if (cf_listed(c, col.id))
		return cf_set(c, CF_FAIL, "the removed collection is still listed");
	/* the member survives its collection */
	if (cf_write(c, &obj, 0, "m", 1) < 0)
		return c->res;
	return cf_set(c, CF_PASS, "2C/0A without FCR, removed with FCR, member kept");
}

enum cf_result t_flush_collection(struct cf_ctx *c)
{
	struct osd_obj_id col;
	osd_req *req = NULL;
	int rc;

	if (cf_create_collection(c, &col) < 0)
		return c->res;
	rc = cf_exec(c, req, osd_req_flush_collection(&req, c->dev, &col, OSD_FLUSH_DATA_AND_ATTRS),
		     "FLUSH COLLECTION");
	osd_req_free(req);
	return rc < 0 ? c->res : cf_set(c, CF_PASS, "GOOD");
}

/* A collection with three members whose attribute APP_PAGE/1 is 1, 5 and 9. */
static int member_setup(struct cf_ctx *c, struct osd_obj_id *col, struct osd_obj_id objs[3])
{
	if (cf_create_collection(c, col) < 0 || create_n(c, objs, 3) < 0)
		return -1;
	for (unsigned i = 0; i < 3; i++) {
		uint8_t v = (uint8_t)(1 + 4 * i);

		if (cf_add_member(c, &objs[i], col) < 0 || cf_set_attr(c, &objs[i], APP_PAGE, 1, &v, 1) < 0)
			return -1;
	}
	return 0;
}

enum cf_result t_query(struct cf_ctx *c)
{
	struct osd_obj_id col, objs[3];
	struct osd_query_criterion q = { APP_PAGE, 1, "\x04", 1, "\x0A", 1 };
	struct osd_list_result res;
	osd_req *req = NULL;
	int rc;

	if (member_setup(c, &col, objs) < 0)
		return c->res;
	rc = cf_exec(c, req, osd_req_query(&req, c->dev, &col, OSD_QUERY_ALL, &q, 1, 0), "QUERY");
	if (rc == 0 && (rc = osd_req_query_result(req, &res)) < 0)
		cf_set(c, CF_FAIL, "QUERY: undecodable answer");
	if (rc == 0) {
		uint64_t a = res.num_ids > 0 ? osd_list_id(&res, 0) : 0;
		uint64_t b = res.num_ids > 1 ? osd_list_id(&res, 1) : 0;

		if (res.num_ids != 2 || !((a == objs[1].id && b == objs[2].id) ||
					  (a == objs[2].id && b == objs[1].id)))
			cf_set(c, CF_FAIL, "QUERY [4, 10] matched %zu objects, expected 0x%llx and 0x%llx",
			       res.num_ids, (unsigned long long)objs[1].id,
			       (unsigned long long)objs[2].id), rc = -1;
	}
	osd_req_free(req);
	return rc < 0 ? c->res : cf_set(c, CF_PASS, "2 of 3 members matched");
}

enum cf_result t_get_member_attributes(struct cf_ctx *c)
{
	struct osd_obj_id col, objs[3];
	struct osd_attr a;
	unsigned seen = 0;
	osd_req *req = NULL;
	int rc;

	if (member_setup(c, &col, objs) < 0)
		return c->res;
	rc = osd_req_get_member_attributes(&req, c->dev, &col);
	if (rc == 0)
		rc = osd_req_add_get_attr(req, APP_PAGE, 1);
	rc = cf_exec(c, req, rc, "GET MEMBER ATTRIBUTES");
	while (rc == 0 && osd_req_next_attr(req, &a) == 1) {
		for (unsigned i = 0; i < 3; i++)
			if (a.object_id == objs[i].id && a.page == APP_PAGE && a.number == 1 &&
			    a.length == 1 && *(const uint8_t *)a.value == 1 + 4 * i)
				seen |= 1u << i;
	}
	osd_req_free(req);
	if (rc < 0)
		return c->res;
	if (seen != 7)
		return cf_set(c, CF_FAIL, "the attribute of %s member(s) was not returned right",
			      seen == 0 ? "every" : "some");
	return cf_set(c, CF_PASS, "one value per member");
}

enum cf_result t_set_member_attributes(struct cf_ctx *c)
{
	struct osd_obj_id col, objs[3];
	osd_req *req = NULL;
	uint8_t v[8];
	size_t got;
	int rc;

	if (member_setup(c, &col, objs) < 0)
		return c->res;
	rc = osd_req_set_member_attributes(&req, c->dev, &col);
	if (rc == 0)
		rc = osd_req_add_set_attr(req, APP_PAGE, 2, "all", 3);
	rc = cf_exec(c, req, rc, "SET MEMBER ATTRIBUTES");
	osd_req_free(req);
	for (unsigned i = 0; rc == 0 && i < 3; i++) {
		if (cf_get_attr(c, &objs[i], APP_PAGE, 2, v, sizeof(v), &got) < 0)
			return c->res;
		if (got != 3 || memcmp(v, "all", 3))
			return cf_set(c, CF_FAIL, "member 0x%llx did not get the value",
				      (unsigned long long)objs[i].id);
	}
	return rc < 0 ? c->res : cf_set(c, CF_PASS, "every member set");
}

enum cf_result t_remove_member_objects(struct cf_ctx *c)
{
	struct osd_obj_id col, objs[3], other = { 0, 0 };
	uint8_t b[4];
	struct iovec iov = { b, sizeof(b) };
	osd_req *req = NULL;
	enum cf_result r;
	int rc;

	if (member_setup(c, &col, objs) < 0 || cf_create(c, &other) < 0)
		return c->res;
	rc = cf_exec(c, req, osd_req_remove_member_objects(&req, c->dev, &col),
		     "REMOVE MEMBER OBJECTS");
	osd_req_free(req);
	req = NULL;
	if (rc < 0 || cf_list_all(c, OSD_ACT_LIST_COLLECTION, &col, 0) < 0)
		return c->res;
	if (c->nids != 0)
		return cf_set(c, CF_FAIL, "%zu members left", c->nids);
	if (cf_write(c, &other, 0, "o", 1) < 0) /* an object outside the collection stays */
		return c->res;
	r = cf_expect(c, req, osd_req_read(&req, c->dev, &objs[1], 0, &iov, 1),
		      "READ of a removed member", OSD_SK_ILLEGAL_REQUEST,
		      OSD_ASC_INVALID_FIELD_IN_CDB, 24, 31);
	osd_req_free(req);
	return r;
}

enum cf_result t_create_collection_existing(struct cf_ctx *c)
{
	struct osd_obj_id col;
	osd_req *req = NULL;
	enum cf_result r;

	if (cf_create_collection(c, &col) < 0)
		return c->res;
	r = cf_expect(c, req, osd_req_create_collection(&req, c->dev, &col),
		      "CREATE COLLECTION of an existing id", OSD_SK_ILLEGAL_REQUEST,
		      OSD_ASC_INVALID_FIELD_IN_CDB, 16, 31);
	osd_req_free(req);
	return r;
}
