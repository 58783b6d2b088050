/* Request constructors (one per service action) and builders (attributes,
 * options, credential). Nothing here talks to the transport. */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <osd/attributes.h>
#include <osd/capability.h>
#include "proto/byteorder.h"
#include "proto/command.h"
#include "request/private.h"

#define DEFAULT_LIST_ALLOC (64u * 1024u)
#define QUERY_CONT_HEADER_LEN 40
#define CONT_DESC_HEADER_LEN 8
#define CONT_DESC_QUERY 0x0002
#define QUERY_LIST_HEADER_LEN 4
#define QUERY_ENTRY_FIXED_LEN 16

int osd__req_new(osd_req **out, osd_dev *dev, enum osd_action action,
		 const struct osd_obj_id *obj)
{
	const struct osd__cmd_desc *d = osd__cmd_desc_of(action);
	osd_req *req;

	if (!out || !dev)
		return -EINVAL;
	*out = NULL;
	if (!d || osd_action_code(dev->version, action) < 0) {
		osd__dev_set_error(dev, "%s is not an OSD-%d command", osd_action_name(action),
				   (int)dev->version);
		return -ENOTSUP;
	}
	req = malloc(sizeof(*req));
	if (!req)
		return -ENOMEM;
	memset(req, 0, offsetof(osd_req, arena));
	osd__arena_init(&req->arena);
	req->dev = dev;
	req->desc = d;
	req->perms = d->perms;
	osd_xfer_init(&req->xfer);
	req->xfer.resend = d->resend;
	req->result = -EINPROGRESS;
	osd_cdb_init(&req->cdb, dev->version, action);
	if (obj)
		req->cdb.obj = *obj;
	*out = req;
	return 0;
}

static int copy_iov(osd_req *req, const struct iovec *iov, int iovcnt,
		    const struct iovec **dst, int *dstcnt, uint64_t *total)
{
	uint64_t sum = 0;

	if (iovcnt < 0 || (iovcnt > 0 && !iov))
		return -EINVAL;
	for (int i = 0; i < iovcnt; i++) {
		if (iov[i].iov_len && !iov[i].iov_base)
			return -EINVAL;
		sum += iov[i].iov_len;
	}
	if (iovcnt) {
		*dst = osd__arena_dup(&req->arena, iov, sizeof(*iov) * (size_t)iovcnt);
		if (!*dst)
			return -ENOMEM;
	}
	*dstcnt = iovcnt;
	*total = sum;
	return 0;
}

int osd__req_set_out_iov(osd_req *req, const struct iovec *iov, int iovcnt)
{
	return copy_iov(req, iov, iovcnt, &req->out_data, &req->out_data_cnt,
			&req->out_data_len);
}

int osd__req_set_in_iov(osd_req *req, const struct iovec *iov, int iovcnt)
{
	return copy_iov(req, iov, iovcnt, &req->in_data, &req->in_data_cnt,
			&req->in_data_len);
}

int osd__req_own_in_buf(osd_req *req, size_t len)
{
	struct iovec one;

	req->in_buf = osd__arena_alloc(&req->arena, len ? len : 1);
	if (!req->in_buf)
		return -ENOMEM;
	one.iov_base = req->in_buf;
	one.iov_len = len;
	return osd__req_set_in_iov(req, &one, len ? 1 : 0);
}

/* Constructors share this shape: make the request, then apply the
 * command-specific part; on failure nothing is returned. */
static int finish(osd_req **out, osd_req *req, int rc)
{
	if (rc < 0) {
		osd__req_destroy(req);
		*out = NULL;
		return rc;
	}
	*out = req;
	return 0;
}

static int valid_user_obj(const struct osd_obj_id *obj, int id_may_be_zero)
{
	if (!obj || obj->partition == 0)
		return 0;
	return id_may_be_zero || obj->id != 0;
}

int osd__req_add_cc_get(osd_req *req, uint32_t number)
{
	uint32_t bit = 1u << number, user = req->cc_user;
	int rc;

	if ((req->cc_auto | req->cc_user) & bit)
		return 0; /* already asked for */
	rc = osd_req_add_get_attr(req, OSD_APAGE_CURRENT_COMMAND, number);
	req->cc_user = user;
	if (rc == 0) {
		req->cc_auto |= bit;
		req->auto_gets++;
	}
	return rc;
}

/* Commands that create something ask for the ids the target chose. */
static int want_created_ids(osd_req *req)
{
	int rc = osd__req_add_cc_get(req, OSD_ATTR_CC_PARTITION_ID);

	return rc ? rc : osd__req_add_cc_get(req, OSD_ATTR_CC_OBJECT_ID);
}

int osd_req_format(osd_req **out, osd_dev *dev, uint64_t capacity)
{
	struct osd_obj_id root = { 0, 0 };
	int rc = osd__req_new(out, dev, OSD_ACT_FORMAT_OSD, &root);

	if (rc)
		return rc;
	(*out)->cdb.length = capacity;
	return 0;
}

int osd_req_object_structure_check(osd_req **out, osd_dev *dev, const struct osd_obj_id *obj)
{
	struct osd_obj_id root = { 0, 0 };

	if (obj && obj->partition == 0 && obj->id != 0)
		return -EINVAL;
	return osd__req_new(out, dev, OSD_ACT_OBJECT_STRUCTURE_CHECK, obj ? obj : &root);
}

int osd_req_create_partition(osd_req **out, osd_dev *dev, uint64_t partition)
{
	struct osd_obj_id p = { partition, 0 };
	osd_req *req;
	int rc;

	if (partition != 0 && partition < OSD_FIRST_ID)
		return -EINVAL;
	rc = osd__req_new(&req, dev, OSD_ACT_CREATE_PARTITION, &p);
	if (rc)
		return rc;
	return finish(out, req, want_created_ids(req));
}

int osd_req_remove_partition(osd_req **out, osd_dev *dev, uint64_t partition)
{
	struct osd_obj_id p = { partition, 0 };

	if (partition == 0)
		return -EINVAL;
	return osd__req_new(out, dev, OSD_ACT_REMOVE_PARTITION, &p);
}

int osd_req_create(osd_req **out, osd_dev *dev, const struct osd_obj_id *obj, unsigned count)
{
	osd_req *req;
	int rc;

	if (!valid_user_obj(obj, 1) || count > 0xFFFF || (count > 1 && obj->id != 0))
		return -EINVAL;
	rc = osd__req_new(&req, dev, OSD_ACT_CREATE, obj);
	if (rc)
		return rc;
	req->cdb.num_objects = (uint16_t)count;
	return finish(out, req, want_created_ids(req));
}

static int data_cmd(osd_req **out, osd_dev *dev, enum osd_action action,
		    const struct osd_obj_id *obj, uint64_t offset, const struct iovec *iov,
		    int iovcnt, int id_may_be_zero)
{
	osd_req *req;
	int rc;

	if (!valid_user_obj(obj, id_may_be_zero))
		return -EINVAL;
	rc = osd__req_new(&req, dev, action, obj);
	if (rc)
		return rc;
	if (action == OSD_ACT_READ)
		rc = osd__req_set_in_iov(req, iov, iovcnt);
	else
		rc = osd__req_set_out_iov(req, iov, iovcnt);
	req->cdb.length = action == OSD_ACT_READ ? req->in_data_len : req->out_data_len;
	req->cdb.start = offset;
	if (rc == 0 && action == OSD_ACT_CREATE_AND_WRITE)
		rc = want_created_ids(req);
	if (rc == 0 && action == OSD_ACT_APPEND)
		rc = osd__req_add_cc_get(req, OSD_ATTR_CC_APPEND_OFFSET);
	return finish(out, req, rc);
}

int osd_req_create_and_write(osd_req **out, osd_dev *dev, const struct osd_obj_id *obj,
			     uint64_t offset, const struct iovec *iov, int iovcnt)
{
	return data_cmd(out, dev, OSD_ACT_CREATE_AND_WRITE, obj, offset, iov, iovcnt, 1);
}

int osd_req_write(osd_req **out, osd_dev *dev, const struct osd_obj_id *obj,
		  uint64_t offset, const struct iovec *iov, int iovcnt)
{
	return data_cmd(out, dev, OSD_ACT_WRITE, obj, offset, iov, iovcnt, 0);
}

int osd_req_read(osd_req **out, osd_dev *dev, const struct osd_obj_id *obj,
		 uint64_t offset, const struct iovec *iov, int iovcnt)
{
	return data_cmd(out, dev, OSD_ACT_READ, obj, offset, iov, iovcnt, 0);
}

int osd_req_append(osd_req **out, osd_dev *dev, const struct osd_obj_id *obj,
		   const struct iovec *iov, int iovcnt)
{
	return data_cmd(out, dev, OSD_ACT_APPEND, obj, 0, iov, iovcnt, 0);
}

static int range_cmd(osd_req **out, osd_dev *dev, enum osd_action action,
		     const struct osd_obj_id *obj, uint64_t offset, uint64_t length)
{
	int rc;

	if (!valid_user_obj(obj, 0))
		return -EINVAL;
	rc = osd__req_new(out, dev, action, obj);
	if (rc)
		return rc;
	(*out)->cdb.length = length;
	(*out)->cdb.start = offset;
	return 0;
}

int osd_req_clear(osd_req **out, osd_dev *dev, const struct osd_obj_id *obj,
		  uint64_t offset, uint64_t length)
{
	return range_cmd(out, dev, OSD_ACT_CLEAR, obj, offset, length);
}

int osd_req_punch(osd_req **out, osd_dev *dev, const struct osd_obj_id *obj,
		  uint64_t offset, uint64_t length)
{
	return range_cmd(out, dev, OSD_ACT_PUNCH, obj, offset, length);
}

int osd_req_remove(osd_req **out, osd_dev *dev, const struct osd_obj_id *obj)
{
	if (!valid_user_obj(obj, 0))
		return -EINVAL;
	return osd__req_new(out, dev, OSD_ACT_REMOVE, obj);
}

static int flush_cmd(osd_req **out, osd_dev *dev, enum osd_action action,
		     const struct osd_obj_id *obj, enum osd_flush_scope scope)
{
	int rc;

	if ((unsigned)scope > OSD_FLUSH_RANGE)
		return -EINVAL;
	rc = osd__req_new(out, dev, action, obj);
	if (rc)
		return rc;
	(*out)->cdb.flush_scope = (uint8_t)scope;
	(*out)->is_collection = action == OSD_ACT_FLUSH_COLLECTION;
	return 0;
}

int osd_req_flush(osd_req **out, osd_dev *dev, const struct osd_obj_id *obj,
		  enum osd_flush_scope scope, uint64_t offset, uint64_t length)
{
	int rc;

	if (!valid_user_obj(obj, 0))
		return -EINVAL;
	if (scope == OSD_FLUSH_RANGE && dev && dev->version == OSD_V1)
		return -ENOTSUP;
	rc = flush_cmd(out, dev, OSD_ACT_FLUSH, obj, scope);
	if (rc == 0 && scope == OSD_FLUSH_RANGE) {
		(*out)->cdb.length = length;
		(*out)->cdb.start = offset;
	}
	return rc;
}

int osd_req_flush_collection(osd_req **out, osd_dev *dev, const struct osd_obj_id *obj,
			     enum osd_flush_scope scope)
{
	if (!valid_user_obj(obj, 0))
		return -EINVAL;
	return flush_cmd(out, dev, OSD_ACT_FLUSH_COLLECTION, obj, scope);
}

int osd_req_flush_partition(osd_req **out, osd_dev *dev, uint64_t partition,
			    enum osd_flush_scope scope)
{
	struct osd_obj_id p = { partition, 0 };

	if (partition == 0)
		return -EINVAL;
	return flush_cmd(out, dev, OSD_ACT_FLUSH_PARTITION, &p, scope);
}

int osd_req_flush_osd(osd_req **out, osd_dev *dev, enum osd_flush_scope scope)
{
	struct osd_obj_id root = { 0, 0 };

	return flush_cmd(out, dev, OSD_ACT_FLUSH_OSD, &root, scope);
}

static int list_cmd(osd_req **out, osd_dev *dev, enum osd_action action,
		    const struct osd_obj_id *obj, const struct osd_list_cursor *from,
		    uint32_t alloc_len)
{
	osd_req *req;
	int rc;

	if (alloc_len == 0)
		alloc_len = DEFAULT_LIST_ALLOC;
	if (alloc_len < OSD_LIST_HEADER_LEN)
		return -EINVAL;
	rc = osd__req_new(&req, dev, action, obj);
	if (rc)
		return rc;
	req->is_collection = action == OSD_ACT_LIST_COLLECTION;
	req->cdb.length = alloc_len;
	if (from) {
		req->cdb.start = from->next_id;
		req->cdb.list_id = from->list_id;
	}
	return finish(out, req, osd__req_own_in_buf(req, alloc_len));
}

int osd_req_list(osd_req **out, osd_dev *dev, uint64_t partition,
		 const struct osd_list_cursor *from, uint32_t alloc_len)
{
	struct osd_obj_id p = { partition, 0 };

	if (partition != 0 && partition < OSD_FIRST_ID)
		return -EINVAL;
	return list_cmd(out, dev, OSD_ACT_LIST, &p, from, alloc_len);
}

int osd_req_list_collection(osd_req **out, osd_dev *dev, const struct osd_obj_id *obj,
			    const struct osd_list_cursor *from, uint32_t alloc_len)
{
	if (!valid_user_obj(obj, 1))
		return -EINVAL;
	return list_cmd(out, dev, OSD_ACT_LIST_COLLECTION, obj, from, alloc_len);
}

int osd_req_create_collection(osd_req **out, osd_dev *dev, const struct osd_obj_id *obj)
{
	osd_req *req;
	int rc;

	if (!valid_user_obj(obj, 1))
		return -EINVAL;
	rc = osd__req_new(&req, dev, OSD_ACT_CREATE_COLLECTION, obj);
	if (rc)
		return rc;
	req->is_collection = obj->id != 0;
	return finish(out, req, want_created_ids(req));
}

int osd_req_remove_collection(osd_req **out, osd_dev *dev, const struct osd_obj_id *obj,
			      unsigned flags)
{
	int rc;

	if (!valid_user_obj(obj, 0) || (flags & ~OSD_REMOVE_COLLECTION_FORCE))
		return -EINVAL;
	rc = osd__req_new(out, dev, OSD_ACT_REMOVE_COLLECTION, obj);
	if (rc)
		return rc;
	(*out)->is_collection = 1;
	if (flags & OSD_REMOVE_COLLECTION_FORCE)
		(*out)->cdb.cmd_options |= 0x01;
	return 0;
}

int osd_req_get_attributes(osd_req **out, osd_dev *dev, const struct osd_obj_id *obj)
{
	if (!obj)
		return -EINVAL;
	return osd__req_new(out, dev, OSD_ACT_GET_ATTRIBUTES, obj);
}

int osd_req_set_attributes(osd_req **out, osd_dev *dev, const struct osd_obj_id *obj)
{
	if (!obj)
		return -EINVAL;
	return osd__req_new(out, dev, OSD_ACT_SET_ATTRIBUTES, obj);
}

static int member_cmd(osd_req **out, osd_dev *dev, enum osd_action action,
		      const struct osd_obj_id *obj)
{
	int rc;

	if (!valid_user_obj(obj, 0))
		return -EINVAL;
	rc = osd__req_new(out, dev, action, obj);
	if (rc == 0)
		(*out)->is_collection = 1;
	return rc;
}

int osd_req_get_member_attributes(osd_req **out, osd_dev *dev, const struct osd_obj_id *obj)
{
	return member_cmd(out, dev, OSD_ACT_GET_MEMBER_ATTRIBUTES, obj);
}

int osd_req_set_member_attributes(osd_req **out, osd_dev *dev, const struct osd_obj_id *obj)
{
	return member_cmd(out, dev, OSD_ACT_SET_MEMBER_ATTRIBUTES, obj);
}

int osd_req_remove_member_objects(osd_req **out, osd_dev *dev, const struct osd_obj_id *obj)
{
	return member_cmd(out, dev, OSD_ACT_REMOVE_MEMBER_OBJECTS, obj);
}

static size_t query_entry_len(const struct osd_query_criterion *c)
{
	return QUERY_ENTRY_FIXED_LEN + (c->min ? c->min_len : 0) + (c->max ? c->max_len : 0);
}

/*
 * Continuation segment: 40-byte header, one query-list descriptor, then the
 * 8-byte terminator descriptor. Descriptor 0002h takes no PAD LENGTH, so the
 * query list itself is made a multiple of 8: the last criterion's QUERY ENTRY
 * LENGTH covers the zero fill (a reader stops at the bounds it parsed), and
 * an empty list gets a zero-length entry header as its fill.
 */
static int build_query_cont(osd_req *req, enum osd_query_match match,
			    const struct osd_query_criterion *crit, unsigned n)
{
	size_t qlen = QUERY_LIST_HEADER_LEN, pad, total;
	uint8_t *p, *last = NULL;

	for (unsigned i = 0; i < n; i++) {
		if (query_entry_len(&crit[i]) > 0xFFFF - 8u)
			return -EINVAL;
		qlen += query_entry_len(&crit[i]);
	}
	pad = (8 - qlen % 8) % 8;
	total = QUERY_CONT_HEADER_LEN + CONT_DESC_HEADER_LEN + qlen + pad + CONT_DESC_HEADER_LEN;
	if (total > UINT32_MAX)
		return -EINVAL;
	p = osd__arena_alloc(&req->arena, total);
	if (!p)
		return -ENOMEM;
	req->cont = p;
	req->cont_len = total;
	req->cdb.cont_length = (uint32_t)total;
	p[0] = 0x01; /* CDB CONTINUATION FORMAT */
	osd__put_be16(p + 2, (uint16_t)osd_action_code(OSD_V2, OSD_ACT_QUERY));
	p += QUERY_CONT_HEADER_LEN;
	osd__put_be16(p, CONT_DESC_QUERY);
	osd__put_be32(p + 4, (uint32_t)(qlen + pad));
	p += CONT_DESC_HEADER_LEN;
	p[0] = (uint8_t)(match & 0x0F);
	p += QUERY_LIST_HEADER_LEN;
	for (unsigned i = 0; i < n; i++) {
		const struct osd_query_criterion *c = &crit[i];
		uint16_t mn = c->min ? c->min_len : 0, mx = c->max ? c->max_len : 0;

		/* QUERY ENTRY LENGTH counts the bytes after the length field. */
		last = p;
		osd__put_be16(p + 2, (uint16_t)(query_entry_len(c) - 4));
		osd__put_be32(p + 4, c->page);
		osd__put_be32(p + 8, c->number);
		osd__put_be16(p + 12, mn);
		if (mn)
			memcpy(p + 14, c->min, mn);
		osd__put_be16(p + 14 + mn, mx);
		if (mx)
			memcpy(p + 16 + mn, c->max, mx);
		p += query_entry_len(c);
	}
	if (last)
		osd__put_be16(last + 2, (uint16_t)(osd__get_be16(last + 2) + pad));
	/* fill and terminator (type 0000h) are already zero */
	return 0;
}

int osd_req_query(osd_req **out, osd_dev *dev, const struct osd_obj_id *obj,
		  enum osd_query_match match, const struct osd_query_criterion *criteria,
		  unsigned num_criteria, uint32_t alloc_len)
{
	osd_req *req;
	int rc;

	if (!valid_user_obj(obj, 0) || (num_criteria && !criteria) ||
	    (match != OSD_QUERY_ANY && match != OSD_QUERY_ALL))
		return -EINVAL;
	rc = osd__req_new(&req, dev, OSD_ACT_QUERY, obj);
	if (rc)
		return rc;
	req->is_collection = 1;
	if (alloc_len == 0)
		alloc_len = DEFAULT_LIST_ALLOC;
	req->cdb.length = alloc_len;
	rc = build_query_cont(req, match, criteria, num_criteria);
	if (rc == 0)
		rc = osd__req_own_in_buf(req, alloc_len);
	return finish(out, req, rc);
}

int osd_req_set_key(osd_req **out, osd_dev *dev, const struct osd_set_key_params *p)
{
	struct osd_obj_id obj = { 0, 0 };
	osd_req *req;
	int rc;

	if (!p || p->key_to_set < OSD_KEY_ROOT || p->key_to_set > OSD_KEY_WORKING ||
	    p->key_version > 15 || (p->key_to_set != OSD_KEY_ROOT && p->partition == 0))
		return -EINVAL;
	obj.partition = p->key_to_set == OSD_KEY_ROOT ? 0 : p->partition;
	rc = osd__req_new(&req, dev, OSD_ACT_SET_KEY, &obj);
	if (rc)
		return rc;
	req->cdb.cmd_options |= (uint8_t)p->key_to_set;
	req->cdb.key_version = p->key_version;
	memcpy(req->cdb.key_id, p->key_id, OSD_KEY_ID_LEN);
	memcpy(req->cdb.seed, p->seed, OSD_SEED_LEN);
	*out = req;
	return 0;
}

int osd_req_set_master_key(osd_req **out, osd_dev *dev, const struct osd_set_master_key_params *p)
{
	struct osd_obj_id root = { 0, 0 };
	struct iovec one;
	osd_req *req;
	int rc;

	if (!p || p->dh_step > 3 || (p->params_len && !p->params))
		return -EINVAL;
	rc = osd__req_new(&req, dev, OSD_ACT_SET_MASTER_KEY, &root);
	if (rc)
		return rc;
	req->cdb.cmd_options |= p->dh_step;
	memcpy(req->cdb.key_id, p->key_id, OSD_KEY_ID_LEN);
	req->cdb.param_list_length = p->params_len;
	req->cdb.alloc_length = p->alloc_len;
	one.iov_base = osd__arena_dup(&req->arena, p->params, p->params_len);
	one.iov_len = p->params_len;
	rc = one.iov_base ? osd__req_set_out_iov(req, &one, p->params_len ? 1 : 0) : -ENOMEM;
	if (rc == 0)
		rc = osd__req_own_in_buf(req, p->alloc_len);
	return finish(out, req, rc);
}

/* ---- attributes and options ---- */

static int attr_push(osd_req *req, struct osd__attr_vec *vec, const struct osd_attr *a)
{
	if (vec->n == vec->cap) {
		unsigned cap = vec->cap ? vec->cap * 2 : 8;
		struct osd_attr *v = osd__arena_alloc(&req->arena, sizeof(*v) * cap);

		if (!v)
			return -ENOMEM;
		if (vec->n)
			memcpy(v, vec->v, sizeof(*v) * vec->n);
		vec->v = v;
		vec->cap = cap;
	}
	vec->v[vec->n++] = *a;
	return 0;
}

int osd_req_add_get_attr(osd_req *req, uint32_t page, uint32_t number)
{
	struct osd_attr a = { .page = page, .number = number };

	if (!req || req->state != OSD__REQ_BUILDING || req->page_mode)
		return -EINVAL;
	if (page == OSD_APAGE_CURRENT_COMMAND || page == OSD_APAGE_ALL)
		req->cc_user |= number < 32 ? 1u << number : 0xFFFFFFFFu;
	return attr_push(req, &req->gets, &a);
}

int osd_req_add_set_attr(osd_req *req, uint32_t page, uint32_t number,
			 const void *value, uint16_t len)
{
	struct osd_attr a = { .page = page, .number = number, .length = len };

	if (!req || req->state != OSD__REQ_BUILDING || (len && !value) ||
	    len > OSD_ATTR_MAX_LEN || page == OSD_APAGE_ALL || number == OSD_ATTR_ALL)
		return -EINVAL;
	if (req->page_mode && req->sets.n)
		return -EINVAL;
	if (len) {
		a.value = osd__arena_dup(&req->arena, value, len);
		if (!a.value)
			return -ENOMEM;
	}
	return attr_push(req, &req->sets, &a);
}

int osd_req_add_set_attr_u64(osd_req *req, uint32_t page, uint32_t number, uint64_t value)
{
	uint8_t be[8];

	osd__put_be64(be, value);
	return osd_req_add_set_attr(req, page, number, be, sizeof(be));
}

int osd_req_get_page(osd_req *req, uint32_t page, uint32_t alloc_len)
{
	if (!req || req->state != OSD__REQ_BUILDING || page == 0 || alloc_len < 8 ||
	    req->gets.n > req->auto_gets || req->sets.n > 1)
		return -EINVAL;
	/* Page mode has no get list: the automatic current-command gets go, and
	 * created ids / append offsets are then not reported. */
	req->gets.n = 0;
	req->auto_gets = 0;
	req->page_mode = 1;
	req->get_page = page;
	req->get_page_alloc = alloc_len;
	return 0;
}

int osd_req_set_get_alloc(osd_req *req, uint32_t bytes)
{
	if (!req || req->state != OSD__REQ_BUILDING)
		return -EINVAL;
	req->get_alloc = bytes;
	return 0;
}

int osd_req_set_flags(osd_req *req, unsigned flags)
{
	if (!req || req->state != OSD__REQ_BUILDING ||
	    (flags & ~(OSD_REQ_FUA | OSD_REQ_DPO | OSD_REQ_BYPASS_TIMESTAMPS)))
		return -EINVAL;
	req->flags = flags;
	return 0;
}

int osd_req_set_credential(osd_req *req, const struct osd_credential *cred)
{
	if (!req || !cred || req->state != OSD__REQ_BUILDING ||
	    cred->version != req->dev->version)
		return -EINVAL;
	req->cred = *cred;
	req->has_cred = 1;
	return 0;
}
