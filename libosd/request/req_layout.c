/*
 * Data-out / data-in layout of a request (docs/protocol.md §5.2) and the CDB fields
 * that point into it:
 *
 *   data-out: [continuation] [payload] pad [set list | page value] pad
 *             [get list] pad [integrity block, ALLDATA]
 *   data-in:  [data] pad [retrieved attributes] pad [integrity block, ALLDATA]
 *
 * Every segment after the first starts at an offset the version can encode
 * (osd_offset_align; osd-r10 §4.12.5, osd2r03 §4.14.5); the pad bytes in
 * between are transferred as zeros.
 */
#include <errno.h>
#include <string.h>
#include <osd/attr.h>
#include <osd/attributes.h>
#include <osd/offset.h>
#include "proto/byteorder.h"
#include "request/private.h"

#define PER_ATTR_ALLOC 256u          /* default room per requested attribute value */
#define ALL_ATTRS_ALLOC (64u * 1024u) /* default room when "all" is requested */
#define MAX_LAYOUT_IOV 8             /* segments besides the caller's buffers */

/* Builds an iovec array segment by segment, tracking the running offset. */
struct seglist {
	struct iovec *iov;
	int cnt, cap;
	uint64_t off;
};

static void seg_add(struct seglist *s, void *base, size_t len)
{
	if (!len)
		return;
	s->iov[s->cnt].iov_base = base;
	s->iov[s->cnt].iov_len = len;
	s->cnt++;
	s->off += len;
}

/* Pad to the next encodable offset; returns that offset or OSD_OFFSET_NONE. */
static uint64_t seg_align(osd_req *req, struct seglist *s)
{
	uint64_t at = osd_offset_align(req->dev->version, s->off);
	uint64_t pad = at - s->off;
	void *zeros;

	if (at == OSD_OFFSET_NONE || at < s->off)
		return OSD_OFFSET_NONE;
	if (pad) {
		zeros = osd__arena_alloc(&req->arena, pad);
		if (!zeros)
			return OSD_OFFSET_NONE;
		seg_add(s, zeros, pad);
	}
	return at;
}

static int seg_init(osd_req *req, struct seglist *s, int cnt)
{
	s->cap = cnt + MAX_LAYOUT_IOV;
	s->iov = osd__arena_alloc(&req->arena, sizeof(*s->iov) * (size_t)s->cap);
	if (!s->iov)
		return -ENOMEM;
	s->cnt = 0;
	s->off = 0;
	return 0;
}

static long build_list(osd_req *req, enum osd_list_type type, const struct osd__attr_vec *vec,
		       uint8_t **out)
{
	enum osd_version v = req->dev->version;
	struct osd_attr_writer w;
	size_t len = osd_attr_header_len(v);
	int rc;

	for (unsigned i = 0; i < vec->n; i++)
		len += osd_attr_entry_len(v, type, vec->v[i].length);
	*out = osd__arena_alloc(&req->arena, len);
	if (!*out)
		return -ENOMEM;
	rc = osd_attr_writer_init(&w, v, type, *out, len);
	for (unsigned i = 0; rc == 0 && i < vec->n; i++)
		rc = osd_attr_writer_add(&w, &vec->v[i]);
	return rc ? rc : osd_attr_writer_finish(&w);
}

static uint32_t default_get_alloc(osd_req *req)
{
	enum osd_version v = req->dev->version;
	uint64_t len = osd_attr_header_len(v);

	for (unsigned i = 0; i < req->gets.n; i++) {
		const struct osd_attr *a = &req->gets.v[i];

		if (a->page == OSD_APAGE_ALL || a->number == OSD_ATTR_ALL)
			len += ALL_ATTRS_ALLOC;
		else
			len += osd_attr_entry_len(v, OSD_LIST_SET, PER_ATTR_ALLOC);
	}
	/* A CREATE of several objects answers with one entry per object, GET
	 * MEMBER ATTRIBUTES with one group per member: leave room for many. */
	if (req->cdb.num_objects > 1)
		len *= req->cdb.num_objects;
	if (req->cdb.action == OSD_ACT_GET_MEMBER_ATTRIBUTES && len < ALL_ATTRS_ALLOC)
		len = ALL_ATTRS_ALLOC;
	return len > UINT32_MAX ? UINT32_MAX : (uint32_t)len;
}

static int layout_out(osd_req *req, int alldata)
{
	enum osd_version v = req->dev->version;
	struct seglist s;
	uint64_t at;
	long n;
	int rc = seg_init(req, &s, req->out_data_cnt);

	if (rc)
		return rc;
	seg_add(&s, req->cont, req->cont_len);
	for (int i = 0; i < req->out_data_cnt; i++)
		seg_add(&s, req->out_data[i].iov_base, req->out_data[i].iov_len);

	if (req->page_mode) {
		struct osd_cdb_attr_page *pg = &req->cdb.attr.page;

		if (req->sets.n) {
			const struct osd_attr *a = &req->sets.v[0];

			if ((at = seg_align(req, &s)) == OSD_OFFSET_NONE)
				return -EINVAL;
			pg->set_page = a->page;
			pg->set_number = a->number;
			pg->set_length = a->length;
			pg->set_offset = at;
			req->set_list = (uint8_t *)a->value;
			req->set_list_len = a->length;
			seg_add(&s, (void *)a->value, a->length);
		}
	} else {
		struct osd_cdb_attr_list *l = &req->cdb.attr.list;

		if (req->sets.n) {
			n = build_list(req, OSD_LIST_SET, &req->sets, &req->set_list);
			if (n < 0)
				return (int)n;
			if ((at = seg_align(req, &s)) == OSD_OFFSET_NONE)
				return -EINVAL;
			req->set_list_len = (size_t)n;
			l->set_list_length = (uint32_t)n;
			l->set_list_offset = at;
			seg_add(&s, req->set_list, (size_t)n);
		}
		if (req->gets.n) {
			n = build_list(req, OSD_LIST_GET, &req->gets, &req->get_list);
			if (n < 0)
				return (int)n;
			if ((at = seg_align(req, &s)) == OSD_OFFSET_NONE)
				return -EINVAL;
			req->get_list_len = (size_t)n;
			l->get_list_length = (uint32_t)n;
			l->get_list_offset = at;
			seg_add(&s, req->get_list, (size_t)n);
		}
	}
	if (alldata) {
		/* filled in by osd__req_sign_data_out() once the CDB is signed */
		size_t len = osd_sec_integrity_len(v, OSD_ICV_DATA_OUT);

		if ((at = seg_align(req, &s)) == OSD_OFFSET_NONE)
			return -EINVAL;
		req->icv_out = osd__arena_alloc(&req->arena, len);
		if (!req->icv_out)
			return -ENOMEM;
		req->icv_out_len = len;
		req->cdb.data_out_icv_offset = at;
		seg_add(&s, req->icv_out, len);
	}
	req->out_iov = s.iov;
	req->xfer.out_iov = s.cnt ? s.iov : NULL;
	req->xfer.out_iovcnt = s.cnt;
	req->xfer.out_len = s.off;
	return 0;
}

static int layout_in(osd_req *req, int alldata)
{
	enum osd_version v = req->dev->version;
	struct seglist s;
	uint32_t alloc = 0;
	uint64_t at;
	int rc = seg_init(req, &s, req->in_data_cnt);

	if (rc)
		return rc;
	for (int i = 0; i < req->in_data_cnt; i++)
		seg_add(&s, req->in_data[i].iov_base, req->in_data[i].iov_len);
	if (req->page_mode)
		alloc = req->get_page_alloc;
	else if (req->gets.n)
		alloc = req->get_alloc ? req->get_alloc : default_get_alloc(req);
	if (alloc) {
		if ((at = seg_align(req, &s)) == OSD_OFFSET_NONE)
			return -EINVAL;
		/* not zeroed: every reader of it stops at what the target
		 * transferred (attr_received), and a get of extended
		 * attributes asks for 64 KiB of room */
		req->attr_in = osd__arena_alloc_raw(&req->arena, alloc);
		if (!req->attr_in)
			return -ENOMEM;
		req->attr_in_len = alloc;
		req->attr_in_off = at;
		if (req->page_mode) {
			req->cdb.attr.page.get_page = req->get_page;
			req->cdb.attr.page.get_alloc = alloc;
			req->cdb.attr.page.retrieved_offset = at;
		} else {
			req->cdb.attr.list.get_alloc = alloc;
			req->cdb.attr.list.retrieved_offset = at;
		}
		seg_add(&s, req->attr_in, alloc);
	}
	if (alldata) {
		size_t len = osd_sec_integrity_len(v, OSD_ICV_DATA_IN);

		if ((at = seg_align(req, &s)) == OSD_OFFSET_NONE)
			return -EINVAL;
		req->icv_in = osd__arena_alloc(&req->arena, len);
		if (!req->icv_in)
			return -ENOMEM;
		req->icv_in_len = len;
		req->icv_in_off = at;
		req->cdb.data_in_icv_offset = at;
		seg_add(&s, req->icv_in, len);
	}
	req->in_iov = s.iov;
	req->xfer.in_iov = s.cnt ? s.iov : NULL;
	req->xfer.in_iovcnt = s.cnt;
	req->xfer.in_len = s.off;
	return 0;
}

int osd__req_layout(osd_req *req)
{
	struct osd_cdb *c = &req->cdb;
	int alldata = c->cap.security_method == OSD_SEC_ALLDATA;
	int rc;

	c->attr_mode = req->page_mode ? OSD_ATTR_MODE_PAGE : OSD_ATTR_MODE_LIST;
	if (req->page_mode) {
		memset(&c->attr, 0, sizeof(c->attr));
		c->attr.page.retrieved_offset = OSD_OFFSET_NONE;
		c->attr.page.set_offset = OSD_OFFSET_NONE;
	}
	if (req->flags & OSD_REQ_FUA)
		c->options |= OSD_OPT_FUA;
	if (req->flags & OSD_REQ_DPO)
		c->options |= OSD_OPT_DPO;
	if (req->flags & OSD_REQ_BYPASS_TIMESTAMPS)
		c->timestamps_control = OSD_TIMESTAMPS_BYPASS;
	rc = layout_out(req, alldata);
	if (rc == 0)
		rc = layout_in(req, alldata);
	if (rc)
		return rc;
	rc = osd_cdb_encode(c, req->cdb_buf, sizeof(req->cdb_buf));
	if (rc < 0)
		return rc;
	req->xfer.cdb = req->cdb_buf;
	req->xfer.cdb_len = (size_t)rc;
	return 0;
}

/* R: the first 20 bytes of the request ICV as sent, which binds the data,
 * continuation and response ICVs to this request (docs/security.md 3). */
static const uint8_t *request_icv(const osd_req *req)
{
	return req->cdb_buf + osd_cdb_icv_offset(req->dev->version);
}

int osd__req_sign_data_out(osd_req *req)
{
	struct osd_sec_integrity counts = { req->out_data_len, req->set_list_len,
					    req->get_list_len };
	int cnt = req->out_data_cnt, n;
	uint8_t icv[OSD_HMAC_LEN];
	struct iovec *seg;
	int rc;

	if (!req->key)
		return 0;
	if (req->cont && req->cdb.cap.security_method >= OSD_SEC_CMDRSP) {
		struct iovec one = { req->cont, req->cont_len };

		/* bytes 8-39 are still zero: the ICV is computed over them zeroed */
		rc = osd_sec_bound_icv(req->key->key, OSD_ICV_CONTINUATION, request_icv(req),
				       &one, 1, icv);
		if (rc)
			return rc;
		memcpy(req->cont + 8, icv, OSD_HMAC_LEN);
	}
	if (!req->icv_out)
		return 0;
	seg = osd__arena_alloc(&req->arena, sizeof(*seg) * (size_t)(cnt + 2));
	if (!seg)
		return -ENOMEM;
	if (cnt)
		memcpy(seg, req->out_data, sizeof(*seg) * (size_t)cnt);
	n = cnt;
	if (req->set_list_len) {
		seg[n].iov_base = req->set_list;
		seg[n++].iov_len = req->set_list_len;
	}
	if (req->get_list_len) {
		seg[n].iov_base = req->get_list;
		seg[n++].iov_len = req->get_list_len;
	}
	rc = osd_sec_integrity_encode(req->key->key, req->dev->version, OSD_ICV_DATA_OUT,
				      request_icv(req), &counts, seg, n, req->icv_out,
				      req->icv_out_len);
	return rc < 0 ? rc : 0;
}

int osd__req_verify_data_in(osd_req *req)
{
	struct osd_sec_integrity counts;
	uint64_t data_bytes;
	struct iovec *seg;
	int n = 0, rc;

	if (!req->icv_in || !req->key)
		return 0;
	if (req->xfer.in_xferred < req->icv_in_off + req->icv_in_len ||
	    osd_sec_integrity_decode(req->dev->version, OSD_ICV_DATA_IN, req->icv_in,
				     req->icv_in_len, &counts) < 0 ||
	    counts.data_bytes > req->in_data_len || counts.attr_bytes > req->attr_in_len)
		return -EBADMSG;
	seg = osd__arena_alloc(&req->arena, sizeof(*seg) * (size_t)(req->in_data_cnt + 1));
	if (!seg)
		return -ENOMEM;
	/* DATA BYTES counted from the start of the data buffers. */
	data_bytes = counts.data_bytes;
	for (int i = 0; i < req->in_data_cnt && data_bytes; i++) {
		size_t take = req->in_data[i].iov_len < data_bytes ?
			      req->in_data[i].iov_len : (size_t)data_bytes;

		seg[n].iov_base = req->in_data[i].iov_base;
		seg[n++].iov_len = take;
		data_bytes -= take;
	}
	if (counts.attr_bytes) {
		seg[n].iov_base = req->attr_in;
		seg[n++].iov_len = (size_t)counts.attr_bytes;
	}
	rc = osd_sec_integrity_verify(req->key->key, req->dev->version, OSD_ICV_DATA_IN,
				      request_icv(req), req->icv_in, req->icv_in_len, seg, n);
	return rc == -EACCES ? -EBADMSG : rc;
}

int osd__req_verify_response(osd_req *req, const uint8_t *sense, size_t sense_len,
			     const uint8_t *ricv, size_t ricv_len)
{
	int rc = osd_sec_response_verify(req->key->key, request_icv(req), req->xfer.status,
					 sense, sense_len, ricv, ricv_len);

	return rc == -EACCES ? -EBADMSG : rc;
}
