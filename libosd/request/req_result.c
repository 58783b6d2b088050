/* Decoding a completed exchange into the request's result, and the result
 * accessors (sense, attributes, ids, LIST/QUERY answers). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <osd/attributes.h>
#include "proto/byteorder.h"
#include "request/private.h"

static void describe_failure(osd_req *req)
{
	char sense[384];
	const char *name = osd_action_name(req->cdb.action);
	unsigned long long p = req->cdb.obj.partition, o = req->cdb.obj.id;

	if (req->has_sense) {
		osd_sense_describe(&req->sense, sense, sizeof(sense));
		osd__errmsg(req, "%s of 0x%llx/0x%llx: %s", name, p, o, sense);
	} else {
		osd__errmsg(req, "%s of 0x%llx/0x%llx: %s", name, p, o, strerror(-req->result));
	}
}

/* CHECK CONDITION: errno from the sense; RECOVERED ERROR is a success. */
static int check_condition(osd_req *req)
{
	const struct osd_sense *s = &req->sense;
	size_t len = req->xfer.sense_len;

	if (len > sizeof(req->xfer.sense))
		len = sizeof(req->xfer.sense);
	if (osd_sense_decode(req->xfer.sense, len, &req->sense) < 0)
		return -EIO;
	req->has_sense = 1;
	if (s->key == OSD_SK_RECOVERED_ERROR && s->asc == OSD_ASC_READ_PAST_END_OF_OBJECT) {
		req->is_short = 1;
		if (s->has_csi && s->csi < req->bytes_read)
			req->bytes_read = s->csi;
		return 0;
	}
	return osd_sense_errno_cmd(s, req->cdb.action);
}

/*
 * CMDRSP/ALLDATA response ICV (docs/security.md 3.3), checked wherever the
 * target returned one: sense descriptor 07h under CHECK CONDITION, or
 * current-command attribute 1 when the request retrieved it. A target that
 * did not verify our request sends none, and nothing can be checked then.
 */
static int verify_response(osd_req *req)
{
	size_t sense_len = req->xfer.sense_len;
	const uint8_t *ricv = NULL;
	size_t ricv_len = 0;
	struct osd_attr a;
	int rc;

	if (!req->key || req->cdb.cap.security_method < OSD_SEC_CMDRSP)
		return 0;
	if (sense_len > sizeof(req->xfer.sense))
		sense_len = sizeof(req->xfer.sense);
	if (req->has_sense && req->sense.has_ricv) {
		ricv = req->sense.ricv;
		ricv_len = req->sense.ricv_len;
	} else if (req->xfer.status == OSD_STATUS_GOOD && !req->page_mode &&
		   osd_req_find_attr(req, OSD_APAGE_CURRENT_COMMAND, OSD_ATTR_CC_RESPONSE_ICV,
				     &a) == 0) {
		ricv = a.value;
		ricv_len = a.length;
		sense_len = 0;
	}
	if (!ricv)
		return 0;
	pthread_mutex_lock(&req->dev->lock);
	rc = osd__req_verify_response(req, sense_len ? req->xfer.sense : NULL, sense_len,
				      ricv, ricv_len);
	pthread_mutex_unlock(&req->dev->lock);
	return rc;
}

void osd__req_complete(osd_req *req, int err)
{
	uint64_t data_in = req->xfer.in_xferred;

	/* What the command delivered of its own data (not attributes). */
	req->bytes_read = req->in_data_len;
	if (req->cdb.action != OSD_ACT_READ && data_in < req->in_data_len)
		req->bytes_read = data_in;
	if (err < 0) {
		req->result = err;
		req->bytes_read = 0;
	} else if (req->xfer.status == OSD_STATUS_GOOD) {
		req->result = 0;
	} else if (req->xfer.status == OSD_STATUS_CHECK_CONDITION) {
		req->result = check_condition(req);
	} else {
		req->result = req->xfer.status == OSD_STATUS_BUSY ? -EBUSY : -EIO;
	}
	if (err == 0 && verify_response(req) != 0) {
		req->result = -EBADMSG;
		osd__errmsg(req, "%s: response integrity check value mismatch",
			    osd_action_name(req->cdb.action));
	}
	/* Only ALLDATA lays out a data-in integrity block (icv_in): do not take
	 * the lock for the others, which have nothing to check. */
	if (req->result == 0 && req->key && req->icv_in) {
		pthread_mutex_lock(&req->dev->lock);
		req->result = osd__req_verify_data_in(req);
		pthread_mutex_unlock(&req->dev->lock);
		if (req->result)
			osd__errmsg(req, "%s: data-in integrity check value mismatch",
				    osd_action_name(req->cdb.action));
	}
	if (req->result && !req->errmsg)
		describe_failure(req);
	if (req->result)
		req->bytes_read = req->is_short ? req->bytes_read : 0;
}

int osd_req_result(const osd_req *req)
{
	return req ? req->result : -EINVAL;
}

const struct osd_sense *osd_req_sense(const osd_req *req)
{
	return req && req->has_sense ? &req->sense : NULL;
}

const char *osd_req_error(const osd_req *req)
{
	return req && req->errmsg ? req->errmsg : "";
}

enum osd_action osd_req_action(const osd_req *req)
{
	return req->cdb.action;
}

uint64_t osd_req_bytes_read(const osd_req *req)
{
	return req && req->state == OSD__REQ_DONE ? req->bytes_read : 0;
}

int osd_req_is_short(const osd_req *req)
{
	return req && req->is_short;
}

/* Bytes of the retrieved-attributes area the target actually transferred. */
static size_t attr_bytes(const osd_req *req)
{
	uint64_t x = req->xfer.in_xferred;

	if (!req->attr_in || req->state != OSD__REQ_DONE || x <= req->attr_in_off)
		return 0;
	x -= req->attr_in_off;
	return x < req->attr_in_len ? (size_t)x : req->attr_in_len;
}

void osd_req_rewind_attrs(osd_req *req)
{
	if (req)
		req->rd_state = 0;
}

/* Every retrieved attribute, including those the request asked for itself. */
static int next_raw(osd_req *req, struct osd_attr *attr)
{
	int rc;

	if (req->rd_state == 0) {
		size_t n = attr_bytes(req);

		if (!n)
			return -ENODATA;
		rc = osd_attr_reader_init(&req->rd, req->dev->version, req->attr_in, n);
		req->rd_state = rc < 0 ? rc : 1;
	}
	if (req->rd_state < 0)
		return req->rd_state;
	rc = osd_attr_reader_next(&req->rd, attr);
	if (rc < 0)
		req->rd_state = rc;
	return rc;
}

/* A current-command attribute only the library asked for. */
static int is_own(const osd_req *req, const struct osd_attr *a)
{
	uint32_t bit = a->number < 32 ? 1u << a->number : 0;

	return a->page == OSD_APAGE_CURRENT_COMMAND && (req->cc_auto & bit) &&
	       !(req->cc_user & bit);
}

int osd_req_next_attr(osd_req *req, struct osd_attr *attr)
{
	int rc;

	if (!req || !attr || req->page_mode)
		return -EINVAL;
	while ((rc = next_raw(req, attr)) == 1 && is_own(req, attr))
		;
	return rc;
}

int osd_req_find_attr(osd_req *req, uint32_t page, uint32_t number, struct osd_attr *attr)
{
	struct osd_attr a;
	int rc;

	if (!req || req->page_mode)
		return -EINVAL;
	osd_req_rewind_attrs(req);
	while ((rc = next_raw(req, &a)) == 1) {
		if (a.page == page && a.number == number) {
			osd_req_rewind_attrs(req);
			if (!a.value && a.length == 0)
				return -ENOENT;
			if (attr)
				*attr = a;
			return 0;
		}
	}
	osd_req_rewind_attrs(req);
	return rc == 0 || rc == -ENODATA ? -ENOENT : rc;
}

int osd_req_attrs_truncated(osd_req *req)
{
	struct osd_attr a;

	if (!req || req->page_mode)
		return 0;
	osd_req_rewind_attrs(req);
	while (next_raw(req, &a) == 1)
		;
	int t = req->rd_state == 1 && osd_attr_reader_truncated(&req->rd);

	osd_req_rewind_attrs(req);
	return t;
}

int osd_req_page(const osd_req *req, const uint8_t **buf, size_t *len)
{
	size_t n;

	if (!req || !buf || !len)
		return -EINVAL;
	n = req->page_mode ? attr_bytes(req) : 0;
	if (n < 8)
		return -ENODATA;
	/* Bound by PAGE LENGTH when it says less than was transferred. */
	if (8 + (uint64_t)osd__get_be32(req->attr_in + 4) < n)
		n = 8 + osd__get_be32(req->attr_in + 4);
	*buf = req->attr_in;
	*len = n;
	return 0;
}

static int cc_u64(osd_req *req, uint32_t number, uint64_t *v)
{
	struct osd_attr a;
	int rc = osd_req_find_attr(req, OSD_APAGE_CURRENT_COMMAND, number, &a);

	if (rc)
		return rc == -ENOENT ? -ENODATA : rc;
	if (a.length != 8)
		return -EBADMSG;
	*v = osd__get_be64(a.value);
	return 0;
}

int osd_req_created_id(osd_req *req, struct osd_obj_id *obj)
{
	struct osd_obj_id o = { 0, 0 };
	int rc;

	if (!req || !obj)
		return -EINVAL;
	if (req->result)
		return -ENODATA;
	rc = cc_u64(req, OSD_ATTR_CC_PARTITION_ID, &o.partition);
	if (rc == -ENODATA)
		o.partition = req->cdb.obj.partition;
	else if (rc)
		return rc;
	if (req->cdb.action != OSD_ACT_CREATE_PARTITION) {
		rc = cc_u64(req, OSD_ATTR_CC_OBJECT_ID, &o.id);
		if (rc)
			return rc;
	} else if (o.partition == 0) {
		return -ENODATA;
	}
	*obj = o;
	return 0;
}

int osd_req_append_offset(osd_req *req, uint64_t *offset)
{
	if (!req || !offset)
		return -EINVAL;
	if (req->result)
		return -ENODATA;
	return cc_u64(req, OSD_ATTR_CC_APPEND_OFFSET, offset);
}

int osd_req_list_result(const osd_req *req, struct osd_list_result *res,
			struct osd_list_cursor *next)
{
	int rc;

	if (!req || !res || (req->cdb.action != OSD_ACT_LIST &&
			     req->cdb.action != OSD_ACT_LIST_COLLECTION))
		return -EINVAL;
	if (req->state != OSD__REQ_DONE || req->result)
		return -ENODATA;
	rc = osd_list_decode(req->dev->version, req->in_buf, (size_t)req->bytes_read, res);
	if (rc == 0 && next) {
		next->next_id = res->continuation_id;
		next->list_id = res->list_id;
	}
	return rc;
}

int osd_req_query_result(const osd_req *req, struct osd_list_result *res)
{
	if (!req || !res || req->cdb.action != OSD_ACT_QUERY)
		return -EINVAL;
	if (req->state != OSD__REQ_DONE || req->result)
		return -ENODATA;
	return osd_query_result_decode(req->in_buf, (size_t)req->bytes_read, res);
}

int osd_req_data_in(const osd_req *req, const uint8_t **buf, size_t *len)
{
	if (!req || !buf || !len)
		return -EINVAL;
	if (req->state != OSD__REQ_DONE)
		return -ENODATA;
	*buf = req->in_buf;
	*len = req->in_buf ? (size_t)req->bytes_read : 0;
	return 0;
}
