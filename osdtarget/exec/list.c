/*
 * LIST (partitions of the root, user objects of a partition), LIST COLLECTION
 * (collections of a partition, members of a collection) and QUERY.
 */
#include "exec/exec.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <osd/list.h>

#include "proto/byteorder.h"
#include "response.h"

#define LIST_ATTR 0x40
#define LIST_BATCH 8192 /* ids per store call: bounds the time its lock is held */
#define QUERY_ALL 1
#define QUERY_HEADER_LEN 4
#define QUERY_ENTRY_MIN 16

/* A growable id vector. */
struct idvec {
	uint64_t *v;
	size_t n, cap;
};

/* Room for @p more ids past the n held. */
static int idvec_reserve(struct idvec *iv, size_t more)
{
	if (iv->cap - iv->n >= more)
		return 0;
	size_t cap = iv->cap ? iv->cap : 64;

	while (cap - iv->n < more)
		cap *= 2;
	uint64_t *v = realloc(iv->v, cap * sizeof(*v));

	if (!v)
		return -ENOMEM;
	iv->v = v;
	iv->cap = cap;
	return 0;
}

static int idvec_push(struct idvec *iv, uint64_t id)
{
	int rc = idvec_reserve(iv, 1);

	if (rc == 0)
		iv->v[iv->n++] = id;
	return rc;
}

/* Partition ids, or object ids of @p type in @p pid, from @p start on: at
 * most @p limit of them (the answer's room plus the continuation id), so a
 * LIST walk of n objects costs O(n), not O(n^2 / page). The store copies
 * them straight into @p iv. */
static int collect(struct osd__cmd *c, uint64_t pid, enum osd_obj_type type, uint64_t start,
		   size_t limit, struct idvec *iv)
{
	uint64_t next = start;
	size_t n;
	int rc;

	do {
		size_t want = limit - iv->n < LIST_BATCH ? limit - iv->n : LIST_BATCH;

		if ((rc = idvec_reserve(iv, want)))
			break;
		start = next;
		if (!pid)
			rc = osd_store_partition_list(c->st, start, iv->v + iv->n, want, &n, &next);
		else
			rc = osd_store_object_list(c->st, pid, start, type, iv->v + iv->n, want, &n,
						   &next);
		if (rc == 0)
			iv->n += n;
	} while (rc == 0 && next && iv->n < limit);
	return rc;
}

/* Ids a LIST answer of the CDB's allocation length has room for. */
static size_t list_room(const struct osd__cmd *c)
{
	size_t alloc = c->cdb.length < c->x->in_len ? (size_t)c->cdb.length : c->x->in_len;

	return alloc < OSD_LIST_HEADER_LEN ? 0 : (alloc - OSD_LIST_HEADER_LEN) / 8;
}

/* Partitions (few) are all collected; a partition's objects up to the
 * answer's room, with their total counted by the store. */
static int collect_list(struct osd__cmd *c, uint64_t pid, enum osd_obj_type type,
			uint64_t start, struct idvec *iv, uint64_t *total)
{
	int rc;

	if (!pid) {
		rc = collect(c, 0, type, start, SIZE_MAX, iv);
		*total = iv->n;
		return rc;
	}
	rc = osd_store_object_count(c->st, pid, start, type, total);
	if (rc == 0)
		rc = collect(c, pid, type, start, list_room(c) + 1, iv);
	/* a racing create or remove: the count may be one call older */
	if (*total < iv->n)
		*total = iv->n;
	return rc;
}

/* LIST IDENTIFIER handling: new ids for new listings, LSTCHG when the namespace moved. */
static uint32_t list_state(struct osd__cmd *c, uint64_t pid, uint64_t cid, int *changed)
{
	osd_target *t = c->tgt;
	uint32_t id = c->cdb.list_id;

	*changed = 0;
	pthread_mutex_lock(&t->list_lock);
	if (id) {
		struct osd__list_state *s = &t->lists[id % OSD__LIST_IDS];

		if (s->id != id || s->partition != pid || s->collection != cid ||
		    s->generation != t->generation)
			*changed = 1;
	} else {
		id = ++t->next_list_id ? t->next_list_id : ++t->next_list_id;
		struct osd__list_state *s = &t->lists[id % OSD__LIST_IDS];

		s->id = id;
		s->partition = pid;
		s->collection = cid;
		s->generation = t->generation;
	}
	pthread_mutex_unlock(&t->list_lock);
	return id;
}

/* Write a LIST result for @p iv into data-in at offset 0. */
static int emit_list(struct osd__cmd *c, struct idvec *iv, uint64_t total, uint8_t format,
		     int root_bit, uint64_t pid, uint64_t cid)
{
	size_t alloc = c->cdb.length < c->x->in_len ? (size_t)c->cdb.length : c->x->in_len;
	int changed;

	if (!c->cdb.length)
		return 0;
	if (c->cdb.length < OSD_LIST_HEADER_LEN)
		return osd__fail_field(c, OSD_ASC_INVALID_FIELD_IN_CDB, osd__fp_length(c));
	if (alloc < OSD_LIST_HEADER_LEN)
		return osd__fail_field(c, OSD_ASC_INVALID_FIELD_IN_CDB, osd__fp_length(c));
	size_t fit = (alloc - OSD_LIST_HEADER_LEN) / 8;
	size_t n = iv->n < fit ? iv->n : fit;
	uint64_t cont = n < iv->n ? iv->v[n] : 0;
	uint32_t id = list_state(c, pid, cid, &changed);
	uint8_t *buf = malloc(alloc);

	if (!buf)
		return osd__fail(c, OSD_SK_HARDWARE_ERROR, OSD_ASC_SYSTEM_RESOURCE_FAILURE);
	int len = osd_list_encode(c->ver, format, root_bit, cont, id, iv->v, n, total, buf, alloc);

	if (len < 0) {
		free(buf);
		return osd__fail(c, OSD_SK_HARDWARE_ERROR, OSD_ASC_SYSTEM_RESOURCE_FAILURE);
	}
	/* LSTCHG: v1 byte 23 bit 1, v2 the same bit below the format. */
	if (changed)
		buf[23] |= 0x02;
	osd__resp_data(c->x, 0, buf, (size_t)len);
	c->data_len = (size_t)len;
	free(buf);
	return 0;
}

static int check_list_options(struct osd__cmd *c)
{
	/* Per-object attributes in LIST (LIST_ATTR) are not implemented. */
	if (c->ver == OSD_V2 && (c->cdb.cmd_options & LIST_ATTR))
		return osd__fail_field(c, OSD_ASC_INVALID_FIELD_IN_CDB, OSD__FP_CMD_OPTIONS);
	/* Only ascending order (SORT ORDER 0) exists. */
	if (c->ver == OSD_V1 && (c->cdb.cmd_options & 0x0F))
		return osd__fail_field(c, OSD_ASC_INVALID_FIELD_IN_CDB, OSD__FP_CMD_OPTIONS);
	return 0;
}

int osd__cmd_list(struct osd__cmd *c)
{
	const struct osd_obj_id *o = &c->cdb.obj;
	struct idvec iv = { 0 };
	uint64_t total = 0;
	int rc = check_list_options(c);

	if (rc)
		return rc;
	if (o->id)
		return osd__fail_field(c, OSD_ASC_INVALID_FIELD_IN_CDB, OSD__FP_OBJECT);
	if (o->partition && (rc = osd__need_object(c, o->partition, 0, OSD_OBJ_PARTITION)))
		return rc;
	rc = collect_list(c, o->partition, OSD_OBJ_USER, c->cdb.start, &iv, &total);
	if (rc < 0)
		rc = osd__fail_store(c, rc, OSD__FP_PARTITION);
	else if (!o->partition)
		rc = emit_list(c, &iv, total, OSD_LIST_FMT_PARTITIONS, 1, 0, 0);
	else
		rc = emit_list(c, &iv, total, OSD_LIST_FMT_USER_OBJECTS, 0, o->partition, 0);
	free(iv.v);
	return rc;
}

/* Members of a collection from @p start on. */
static int collect_members(struct osd__cmd *c, uint64_t pid, uint64_t cid, uint64_t start,
			   struct idvec *iv)
{
	uint64_t *ids;
	size_t n;
	int rc = osd__collection_members(c, pid, cid, &ids, &n);

	for (size_t i = 0; rc == 0 && i < n; i++)
		if (ids[i] >= start && idvec_push(iv, ids[i]) < 0)
			rc = osd__fail(c, OSD_SK_HARDWARE_ERROR, OSD_ASC_SYSTEM_RESOURCE_FAILURE);
	free(ids);
	return rc;
}

int osd__cmd_list_collection(struct osd__cmd *c)
{
	const struct osd_obj_id *o = &c->cdb.obj;
	struct idvec iv = { 0 };
	uint64_t total = 0;
	int rc = check_list_options(c);

	if (rc)
		return rc;
	if (!o->partition)
		return osd__fail_field(c, OSD_ASC_INVALID_FIELD_IN_CDB, OSD__FP_PARTITION);
	rc = osd__need_object(c, o->partition, o->id, o->id ? OSD_OBJ_COLLECTION : OSD_OBJ_PARTITION);
	if (rc)
		return rc;
	if (!o->id) {
		rc = collect_list(c, o->partition, OSD_OBJ_COLLECTION, c->cdb.start, &iv, &total);
		if (rc < 0)
			rc = osd__fail_store(c, rc, OSD__FP_PARTITION);
		else
			rc = emit_list(c, &iv, total, OSD_LIST_FMT_COLLECTIONS, 1, o->partition, 0);
	} else {
		rc = collect_members(c, o->partition, o->id, c->cdb.start, &iv);
		if (rc == 0)
			rc = emit_list(c, &iv, iv.n, OSD_LIST_FMT_USER_OBJECTS, 0, o->partition,
				       o->id);
	}
	free(iv.v);
	return rc;
}

/* ---- QUERY ---- */

/* Compare two big-endian unsigned values of any lengths. */
static int be_compare(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen)
{
	while (alen > blen) {
		if (*a)
			return 1;
		a++;
		alen--;
	}
	while (blen > alen) {
		if (*b)
			return -1;
		b++;
		blen--;
	}
	return memcmp(a, b, alen);
}

struct criterion {
	uint32_t page, number;
	const uint8_t *min, *max;
	uint16_t min_len, max_len;
};

/* Parse criterion at @p p (entry of @p len bytes after the 4-byte entry header). */
static int parse_criterion(const uint8_t *p, size_t len, struct criterion *cr)
{
	if (len < 12)
		return -EBADMSG;
	cr->page = osd__get_be32(p);
	cr->number = osd__get_be32(p + 4);
	cr->min_len = osd__get_be16(p + 8);
	if ((size_t)cr->min_len + 12 > len)
		return -EBADMSG;
	cr->min = p + 10;
	cr->max_len = osd__get_be16(p + 10 + cr->min_len);
	if ((size_t)cr->min_len + cr->max_len + 12 > len)
		return -EBADMSG;
	cr->max = p + 12 + cr->min_len;
	return 0;
}

static int matches_one(struct osd__cmd *c, uint64_t pid, uint64_t oid, const struct criterion *cr)
{
	struct osd_obj_id o = { pid, oid };
	uint8_t val[OSD_ATTR_MAX_LEN];
	size_t len = 0;

	if (!osd__attr_value(c, &o, OSD_OBJ_USER, cr->page, cr->number, val, &len) || !len)
		return 0;
	if (cr->min_len && be_compare(val, len, cr->min, cr->min_len) < 0)
		return 0;
	if (cr->max_len && be_compare(val, len, cr->max, cr->max_len) > 0)
		return 0;
	return 1;
}

/* Evaluate the query list against one object: 1 match, 0 not, <0 malformed. */
static int query_match(struct osd__cmd *c, uint64_t pid, uint64_t oid)
{
	const uint8_t *q = c->query;
	int all = (q[0] & 0x0F) == QUERY_ALL;
	size_t pos = QUERY_HEADER_LEN;
	int any = 0, seen = 0;

	while (pos + 4 <= c->query_len) {
		uint16_t elen = osd__get_be16(q + pos + 2);
		struct criterion cr;

		if (elen == 0)
			break; /* zero padding up to the descriptor's 8-byte multiple */
		if (elen > c->query_len - pos - 4 || parse_criterion(q + pos + 4, elen, &cr) < 0)
			return -EBADMSG;
		int m = matches_one(c, pid, oid, &cr);

		seen = 1;
		if (all && !m)
			return 0;
		any |= m;
		pos += 4 + (size_t)elen;
	}
	return seen ? (all ? 1 : any) : 1;
}

static int query_results(struct osd__cmd *c, const uint64_t *ids, size_t n)
{
	size_t alloc = c->cdb.length < c->x->in_len ? (size_t)c->cdb.length : c->x->in_len;
	uint8_t *buf = malloc(alloc ? alloc : 1);

	if (!buf)
		return osd__fail(c, OSD_SK_HARDWARE_ERROR, OSD_ASC_SYSTEM_RESOURCE_FAILURE);
	size_t fit = alloc > 12 ? (alloc - 12) / 8 : 0;
	int len = osd_query_result_encode(ids, n < fit ? n : fit, n, buf, alloc);

	if (len < 0) {
		free(buf);
		return osd__fail_field(c, OSD_ASC_INVALID_FIELD_IN_CDB, osd__fp_length(c));
	}
	osd__resp_data(c->x, 0, buf, (size_t)len);
	c->data_len = (size_t)len;
	free(buf);
	return 0;
}

/* MATCHES COLLECTION: add every match to that collection instead of returning ids. */
static int add_matches(struct osd__cmd *c, uint64_t pid, uint64_t target, const uint64_t *ids,
		       size_t n)
{
	int rc = osd__need_object(c, pid, target, OSD_OBJ_COLLECTION);

	for (size_t i = 0; rc == 0 && i < n; i++)
		rc = osd__join_collection(c, pid, ids[i], target);
	return rc;
}

int osd__cmd_query(struct osd__cmd *c)
{
	const struct osd_obj_id *o = &c->cdb.obj;
	uint64_t *members = NULL, matches_id = c->cdb.start;
	size_t n = 0, k = 0;
	int rc = osd__need_object(c, o->partition, o->id, OSD_OBJ_COLLECTION);

	if (rc)
		return rc;
	if (!c->query)
		return osd__fail_field(c, OSD_ASC_INVALID_FIELD_IN_CDB, 48);
	if ((c->query[0] & 0x0F) > QUERY_ALL)
		return osd__fail(c, OSD_SK_ILLEGAL_REQUEST, OSD_ASC_INVALID_FIELD_IN_PARAM_LIST);
	if (c->cdb.cmd_options & 0x80)  /* IMMED_TR: command tracking is not implemented */
		return osd__fail_field(c, OSD_ASC_INVALID_FIELD_IN_CDB, OSD__FP_CMD_OPTIONS);
	if (matches_id && c->cdb.length)
		return osd__fail_field(c, OSD_ASC_INVALID_FIELD_IN_CDB, osd__fp_length(c));
	rc = osd__collection_members(c, o->partition, o->id, &members, &n);
	if (rc)
		return rc;
	for (size_t i = 0; i < n; i++) {
		int m = query_match(c, o->partition, members[i]);

		if (m < 0) {
			free(members);
			return osd__fail(c, OSD_SK_ILLEGAL_REQUEST, OSD_ASC_INVALID_FIELD_IN_PARAM_LIST);
		}
		if (m)
			members[k++] = members[i];
	}
	if (matches_id)
		rc = add_matches(c, o->partition, matches_id, members, k);
	else if (c->cdb.length)
		rc = query_results(c, members, k);
	free(members);
	return rc;
}
