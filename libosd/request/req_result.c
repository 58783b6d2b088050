/* Decoding a completed exchange into the request's result, and the result
 * accessors (sense, attributes, ids, LIST/QUERY answers). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <osd/attributes.h>
#include "proto/answer.h"
#include "proto/byteorder.h"
#include "iov/iov.h"
#include "request/private.h"

#define SENSE_HDR 8 /* both sense formats: ADDITIONAL SENSE LENGTH in byte 7 */
#define PAGE_HDR 8  /* retrieved page: page number, PAGE LENGTH */

static void describe_failure(osd_req *req)
{
	char sense[384];
	const char *name = osd_action_name(req->cdb.action);
	unsigned long long p = req->cdb.obj.partition, o = req->cdb.obj.id;

	if (req->has_sense) {
		osd_sense_describe(&req->sense, sense, sizeof(sense));
		/* A target refuses a request ICV that does not verify with INVALID
		 * FIELD IN CDB pointing at it (osd2r05 4.11.4): say so, so that an
		 * integrity refusal is not taken for a weak security method. */
		if (req->sense.has_field && req->sense.field_in_cdb &&
		    req->sense.field_pointer == osd_cdb_icv_offset(req->dev->version))
			osd__errmsg(req, "%s of 0x%llx/0x%llx: %s (the request integrity check "
				    "value did not verify)", name, p, o, sense);
		else
			osd__errmsg(req, "%s of 0x%llx/0x%llx: %s", name, p, o, sense);
	} else {
		osd__errmsg(req, "%s of 0x%llx/0x%llx: %s", name, p, o, strerror(-req->result));
	}
}

/* An answer refused: the error names the command, its object and the field. */
static int malformed(osd_req *req, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int malformed(osd_req *req, int err, const char *fmt, ...)
{
	char why[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	osd__errmsg(req, "%s of 0x%llx/0x%llx: %s", osd_action_name(req->cdb.action),
		    (unsigned long long)req->cdb.obj.partition,
		    (unsigned long long)req->cdb.obj.id, why);
	return err;
}

/*
 * What the transport itself reports must be possible: no more data-in than
 * the command made room for, no more sense than struct osd_xfer holds.
 */
static int check_transport(osd_req *req)
{
	const struct osd_xfer *x = &req->xfer;

	if (x->in_xferred > x->in_len)
		return malformed(req, -EPROTO, "data-in of %zu bytes exceeds the %zu bytes asked for",
				 x->in_xferred, x->in_len);
	if (x->status == OSD_STATUS_CHECK_CONDITION && x->sense_len > sizeof(x->sense))
		return malformed(req, -EPROTO, "sense of %u bytes exceeds the %zu-byte sense buffer",
				 x->sense_len, sizeof(x->sense));
	return 0;
}

/* CHECK CONDITION: errno from the sense; RECOVERED ERROR is a success. */
static int check_condition(osd_req *req)
{
	const struct osd_sense *s = &req->sense;
	size_t len = req->xfer.sense_len;

	/* Sense may be cut at 252 bytes (docs/protocol.md §11.1), never sooner:
	 * a shorter buffer holds all the ADDITIONAL SENSE LENGTH promises. */
	if (len >= SENSE_HDR && len < sizeof(req->xfer.sense) &&
	    SENSE_HDR + (size_t)req->xfer.sense[7] > len)
		return malformed(req, -EBADMSG,
				 "sense ADDITIONAL SENSE LENGTH %u exceeds the %zu bytes received",
				 req->xfer.sense[7], len);
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

static size_t attr_received(const osd_req *req);

/*
 * The most LIST LENGTH can be when every requested attribute comes back
 * with the longest value, once per object a CREATE made; unbounded for
 * "all" requests and for GET MEMBER ATTRIBUTES (the members are unknown).
 */
static uint64_t attr_list_bound(const osd_req *req)
{
	enum osd_version v = req->dev->version;
	enum osd_list_type type = v == OSD_V1 && req->cdb.num_objects > 1 ?
				  OSD_LIST_CREATE_MULTI : OSD_LIST_SET;
	uint64_t per_object = v == OSD_V2 ? 16 : 0; /* room for a 0Eh object header */

	if (req->cdb.action == OSD_ACT_GET_MEMBER_ATTRIBUTES)
		return OSD__NO_LIST_BOUND;
	for (unsigned i = 0; i < req->gets.n; i++) {
		const struct osd_attr *g = &req->gets.v[i];

		if (g->page == OSD_ATTR_ALL || g->number == OSD_ATTR_ALL)
			return OSD__NO_LIST_BOUND;
		per_object += osd_attr_entry_len(v, type, OSD_ATTR_MAX_LEN);
	}
	return per_object * (req->cdb.num_objects > 1 ? req->cdb.num_objects : 1);
}

/* Whether the get list asked for @p a (directly or with an "all" wildcard). */
static int was_requested(const osd_req *req, const struct osd_attr *a)
{
	for (unsigned i = 0; i < req->gets.n; i++) {
		const struct osd_attr *g = &req->gets.v[i];

		if ((g->page == OSD_ATTR_ALL || g->page == a->page) &&
		    (g->number == OSD_ATTR_ALL || g->number == a->number))
			return 1;
	}
	return 0;
}

/*
 * Retrieved attributes, list mode. Nothing at all reads as "no attributes"
 * (osd_req_next_attr() says -ENODATA); anything else must be a well-formed
 * list of the attributes asked for: an entry the target was not asked for
 * is most likely an entry misread after a length that lied.
 */
static int check_attr_list(osd_req *req)
{
	size_t n = attr_received(req);
	struct osd_attr_reader r;
	char why[200];
	struct osd_attr a;
	int rc;

	if (!n)
		return 0;
	rc = osd__attr_answer_check(req->dev->version, req->attr_in, n, req->attr_in_len,
				    attr_list_bound(req), why, sizeof(why));
	if (rc < 0)
		return malformed(req, rc, "%s", why);
	osd_attr_reader_init(&r, req->dev->version, req->attr_in, n);
	while ((rc = osd_attr_reader_next(&r, &a)) == 1 && was_requested(req, &a))
		;
	if (rc == 1)
		return malformed(req, -EBADMSG, "retrieved attribute 0x%x/0x%x was not requested",
				 a.page, a.number);
	return 0;
}

/* Retrieved page (page mode): PAGE LENGTH as for a list's LIST LENGTH. */
static int check_attr_page(osd_req *req)
{
	size_t n = attr_received(req);
	uint32_t len;

	if (!n)
		return 0;
	if (n < PAGE_HDR)
		return malformed(req, -EBADMSG,
				 "retrieved page of %zu bytes is shorter than its %d-byte header",
				 n, PAGE_HDR);
	len = osd__get_be32(req->attr_in + 4);
	if (len > n - PAGE_HDR && n < req->attr_in_len)
		return malformed(req, -EBADMSG,
				 "retrieved page 0x%x length %u exceeds the %zu bytes received",
				 osd__get_be32(req->attr_in), len, n);
	return 0;
}

/* LIST / LIST COLLECTION / QUERY parameter data against its allocation. */
static int check_list(osd_req *req)
{
	int query = req->cdb.action == OSD_ACT_QUERY;
	size_t hdr = query ? 12 : OSD_LIST_HEADER_LEN;
	char why[200];
	int rc;

	/* An allocation too small for the header asked for nothing to check. */
	if (!req->in_buf || req->in_data_len < hdr)
		return 0;
	rc = osd__list_answer_check(req->dev->version, query, req->in_buf,
				    (size_t)req->bytes_read, (size_t)req->in_data_len,
				    why, sizeof(why));
	return rc < 0 ? malformed(req, rc, "%s", why) : 0;
}

/* A successful answer is only as good as its data-in: check what we parse. */
static int check_answer(osd_req *req)
{
	int rc = 0;

	switch (req->cdb.action) {
	case OSD_ACT_LIST:
	case OSD_ACT_LIST_COLLECTION:
	case OSD_ACT_QUERY:
		rc = check_list(req);
		break;
	default:
		break;
	}
	if (rc == 0 && req->attr_in)
		rc = req->page_mode ? check_attr_page(req) : check_attr_list(req);
	return rc;
}

/* A READ past the end: the caller's buffer beyond the bytes read reads as
 * zeros, whatever the target sent there (docs/initiator.md). */
static void zero_fill_short_read(osd_req *req)
{
	if (req->cdb.action != OSD_ACT_READ || !req->in_data || req->bytes_read >= req->in_data_len)
		return;
	osd__iov_write(req->in_data, req->in_data_cnt, (size_t)req->bytes_read, NULL,
		       (size_t)(req->in_data_len - req->bytes_read));
}

void osd__req_complete(osd_req *req, int err)
{
	uint64_t data_in = req->xfer.in_xferred;
	int bad = 0;

	/* What the command delivered of its own data (not attributes). */
	req->bytes_read = req->in_data_len;
	if (req->cdb.action != OSD_ACT_READ && data_in < req->in_data_len)
		req->bytes_read = data_in;
	if (err < 0) {
		req->result = err;
		req->bytes_read = 0;
	} else if ((bad = check_transport(req)) < 0) {
		req->result = bad;
	} else if (req->xfer.status == OSD_STATUS_GOOD) {
		req->result = 0;
	} else if (req->xfer.status == OSD_STATUS_CHECK_CONDITION) {
		req->result = check_condition(req);
	} else {
		req->result = req->xfer.status == OSD_STATUS_BUSY ? -EBUSY : -EIO;
	}
	if (err == 0 && !bad && verify_response(req) != 0) {
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
	/* After the integrity checks: a tampered answer is reported as such. */
	if (req->result == 0 && err == 0)
		req->result = bad = check_answer(req);
	if (bad)
		req->bad_answer = bad;
	if (req->result && !req->errmsg)
		describe_failure(req);
	if (req->result)
		req->bytes_read = req->is_short ? req->bytes_read : 0;
	else if (req->is_short)
		zero_fill_short_read(req);
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
	return req->state == OSD__REQ_DONE ? attr_received(req) : 0;
}

/* The same while the answer is being taken in (osd__req_complete). */
static size_t attr_received(const osd_req *req)
{
	uint64_t x = req->xfer.in_xferred;

	if (!req->attr_in || x <= req->attr_in_off)
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

	if (req->bad_answer)
		return req->bad_answer;
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
	n = req->page_mode && !req->bad_answer ? attr_bytes(req) : 0;
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
