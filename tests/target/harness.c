/* Test harness for the target suites (see harness.h). */
#include "harness.h"

#include <check.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "proto/byteorder.h"

#define DEFAULT_GET_ALLOC 8192
#define DOUT_BLOCK 24
#define DIN_BLOCK 16

static const uint8_t test_token[] = "channel-token-01";

void h_target_open(struct h_target *ht)
{
	const char *tmp = getenv("TMPDIR");

	snprintf(ht->dir, sizeof(ht->dir), "%s/osdtgt-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	ck_assert_ptr_nonnull(mkdtemp(ht->dir));
	ck_assert_int_eq(osd_target_open(&ht->tgt, ht->dir, NULL), 0);
}

void h_target_reopen(struct h_target *ht)
{
	osd_target_close(ht->tgt);
	ht->tgt = NULL;
	ck_assert_int_eq(osd_target_open(&ht->tgt, ht->dir, NULL), 0);
}

static int rm_cb(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	return remove(path);
}

void h_target_close(struct h_target *ht)
{
	osd_target_close(ht->tgt);
	ht->tgt = NULL;
	nftw(ht->dir, rm_cb, 16, FTW_DEPTH | FTW_PHYS);
}

void h_req(struct h_req *r, enum osd_version v, enum osd_action a, uint64_t pid, uint64_t oid)
{
	memset(r, 0, sizeof(*r));
	r->v = v;
	osd_cdb_init(&r->cdb, v, a);
	r->cdb.obj.partition = pid;
	r->cdb.obj.id = oid;
	r->get_alloc = DEFAULT_GET_ALLOC;
}

void h_req_free(struct h_req *r)
{
	free(r->out);
	free(r->in);
	free(r->cont);
	r->out = r->in = r->cont = NULL;
}

void h_set(struct h_req *r, uint32_t page, uint32_t num, const void *val, uint16_t len)
{
	ck_assert_uint_lt(r->nset, H_MAX_ATTRS);
	r->set[r->nset++] = (struct osd_attr){ page, num, len, val, 0 };
}

void h_set_u64(struct h_req *r, uint32_t page, uint32_t num, uint64_t v)
{
	ck_assert_uint_lt(r->nset, H_MAX_ATTRS);
	osd__put_be64(r->set_u64[r->nset], v);
	h_set(r, page, num, r->set_u64[r->nset], 8);
}

void h_get(struct h_req *r, uint32_t page, uint32_t num)
{
	ck_assert_uint_lt(r->nget, H_MAX_ATTRS);
	r->get[r->nget++] = (struct osd_attr){ page, num, 0, NULL, 0 };
}

static size_t align(struct h_req *r, size_t off)
{
	return (size_t)osd_offset_align(r->v, off);
}

/* Lay out data-out; returns the offsets the CDB needs. */
static void build_out(struct h_req *r, size_t *set_off, size_t *set_len, size_t *get_off,
		      size_t *get_len, size_t *blk_off)
{
	size_t pos = 0;
	struct osd_attr_writer w;
	long n;

	r->out = calloc(1, H_OUT_CAP);
	ck_assert_ptr_nonnull(r->out);
	if (r->cont) {
		memcpy(r->out, r->cont, r->cont_len);
		pos = r->cont_len;
	}
	if (r->payload) {
		ck_assert_uint_lt(pos + r->payload_len, H_OUT_CAP / 2);
		memcpy(r->out + pos, r->payload, r->payload_len);
		pos += r->payload_len;
	}
	*set_off = *get_off = *blk_off = (size_t)OSD_OFFSET_NONE;
	*set_len = *get_len = 0;
	if (r->nset) {
		pos = align(r, pos);
		*set_off = pos;
		if (r->page_mode) {
			memcpy(r->out + pos, r->set[0].value, r->set[0].length);
			*set_len = r->set[0].length;
		} else {
			ck_assert_int_eq(osd_attr_writer_init(&w, r->v, OSD_LIST_SET, r->out + pos,
							      H_OUT_CAP - pos), 0);
			for (size_t i = 0; i < r->nset; i++)
				ck_assert_int_eq(osd_attr_writer_add(&w, &r->set[i]), 0);
			n = osd_attr_writer_finish(&w);
			ck_assert_int_gt(n, 0);
			*set_len = (size_t)n;
		}
		pos += *set_len;
	}
	if (r->nget && !r->page_mode) {
		pos = align(r, pos);
		*get_off = pos;
		ck_assert_int_eq(osd_attr_writer_init(&w, r->v, OSD_LIST_GET, r->out + pos,
						      H_OUT_CAP - pos), 0);
		for (size_t i = 0; i < r->nget; i++)
			ck_assert_int_eq(osd_attr_writer_add(&w, &r->get[i]), 0);
		n = osd_attr_writer_finish(&w);
		ck_assert_int_gt(n, 0);
		*get_len = (size_t)n;
		pos += *get_len;
	}
	if (r->cred && r->cred->cap.security_method == OSD_SEC_ALLDATA) {
		pos = align(r, pos);
		*blk_off = pos;
		pos += DOUT_BLOCK + osd_cdb_icv_len(r->v);
	}
	r->out_len = pos;
}

static void fill_attr_params(struct h_req *r, size_t set_off, size_t set_len, size_t get_off,
			     size_t get_len)
{
	if (r->page_mode) {
		r->cdb.attr_mode = OSD_ATTR_MODE_PAGE;
		memset(&r->cdb.attr.page, 0, sizeof(r->cdb.attr.page));
		r->cdb.attr.page.retrieved_offset = OSD_OFFSET_NONE;
		r->cdb.attr.page.set_offset = OSD_OFFSET_NONE;
		if (r->nget) {
			r->cdb.attr.page.get_page = r->get[0].page;
			r->cdb.attr.page.get_alloc = r->get_alloc;
			r->cdb.attr.page.retrieved_offset = r->ret_off;
		}
		if (r->nset) {
			r->cdb.attr.page.set_page = r->set[0].page;
			r->cdb.attr.page.set_number = r->set[0].number;
			r->cdb.attr.page.set_length = (uint32_t)set_len;
			r->cdb.attr.page.set_offset = set_off;
		}
		return;
	}
	if (r->cdb.attr_mode == OSD_ATTR_MODE_CDB)
		return;
	r->cdb.attr_mode = OSD_ATTR_MODE_LIST;
	r->cdb.attr.list.set_list_length = (uint32_t)set_len;
	r->cdb.attr.list.set_list_offset = set_len ? set_off : OSD_OFFSET_NONE;
	r->cdb.attr.list.get_list_length = (uint32_t)get_len;
	r->cdb.attr.list.get_list_offset = get_len ? get_off : OSD_OFFSET_NONE;
	r->cdb.attr.list.get_alloc = r->nget ? r->get_alloc : 0;
	r->cdb.attr.list.retrieved_offset = r->nget ? r->ret_off : OSD_OFFSET_NONE;
}

static void sign(struct h_req *r, size_t blk_off, size_t set_off, size_t set_len,
		 size_t get_off, size_t get_len)
{
	const struct osd_credential *cr = r->cred;
	uint8_t method = cr->cap.security_method;
	osd_key *k = NULL;

	ck_assert_int_eq(osd_key_new(&k, cr->cap_key, OSD_HMAC_LEN), 0);
	ck_assert_int_eq(osd_sec_sign_cdb(k, method, r->cdb_bytes, (size_t)r->cdb_len, test_token,
					  sizeof(test_token), r->nonce_time ? r->nonce_time
									    : osd_now_ms()), 0);
	if (method == OSD_SEC_ALLDATA) {
		uint8_t *b = r->out + blk_off, mac[OSD_HMAC_LEN];
		struct iovec v[4] = { { b, DOUT_BLOCK } };
		int n = 1;

		osd__put_be64(b, r->payload ? r->payload_len : 0);
		osd__put_be64(b + 8, set_len);
		osd__put_be64(b + 16, get_len);
		if (r->payload_len)
			v[n++] = (struct iovec){ r->out + r->cont_len, r->payload_len };
		if (set_len)
			v[n++] = (struct iovec){ r->out + set_off, set_len };
		if (get_len)
			v[n++] = (struct iovec){ r->out + get_off, get_len };
		ck_assert_int_eq(osd_sec_bound_icv(k, OSD_ICV_DATA_OUT,
						   r->cdb_bytes + osd_cdb_icv_offset(r->v), v, n,
						   mac), 0);
		memcpy(b + DOUT_BLOCK, mac, OSD_HMAC_LEN);
		if (r->corrupt_payload && r->payload_len)
			r->out[r->cont_len] ^= 0x01;
	}
	osd_key_free(k);
}

static int execute(struct h_target *ht, struct h_req *r)
{
	struct iovec out = { r->out, r->out_len }, in = { r->in, r->in_len };

	memset(&r->x, 0, sizeof(r->x));
	r->x.cdb = r->cdb_bytes;
	r->x.cdb_len = (size_t)r->cdb_len;
	r->x.out_iov = r->out_len ? &out : NULL;
	r->x.out_iovcnt = r->out_len ? 1 : 0;
	r->x.out_len = r->out_len;
	r->x.in_iov = r->in_len ? &in : NULL;
	r->x.in_iovcnt = r->in_len ? 1 : 0;
	r->x.in_len = r->in_len;
	ck_assert_int_eq(osd_target_execute(ht->tgt, &r->x, test_token, sizeof(test_token)), 0);
	memset(&r->sense, 0, sizeof(r->sense));
	if (r->x.status == OSD_STATUS_CHECK_CONDITION)
		ck_assert_int_eq(osd_sense_decode(r->x.sense, r->x.sense_len, &r->sense), 0);
	return r->x.status;
}

int h_run(struct h_target *ht, struct h_req *r)
{
	size_t set_off, set_len, get_off, get_len, blk_off;

	build_out(r, &set_off, &set_len, &get_off, &get_len, &blk_off);
	if (r->payload && r->cdb.length == 0)
		r->cdb.length = r->payload_len;
	if (r->cont)
		r->cdb.cont_length = (uint32_t)r->cont_len;
	r->ret_off = r->nget ? align(r, r->data_in) : OSD_OFFSET_NONE;
	r->in_len = r->nget ? r->ret_off + r->get_alloc : r->data_in;
	if (r->cred && r->cred->cap.security_method == OSD_SEC_ALLDATA) {
		r->cdb.data_out_icv_offset = blk_off;
		r->cdb.data_in_icv_offset = align(r, r->in_len);
		r->in_len = r->cdb.data_in_icv_offset + DIN_BLOCK + osd_cdb_icv_len(r->v);
	}
	r->in = malloc(r->in_len ? r->in_len : 1);
	ck_assert_ptr_nonnull(r->in);
	memset(r->in, r->in_fill, r->in_len);
	fill_attr_params(r, set_off, set_len, get_off, get_len);
	if (r->cred) {
		r->cdb.cap = r->cred->cap;
	} else {
		osd_capability_init(&r->cdb.cap, r->v, &r->cdb.obj, 0,
				    r->v == OSD_V1 ? OSD_PERM_ALL_V1 : OSD_PERM_ALL_V2, OSD_SEC_NOSEC);
		r->cdb.cap.desc_type = OSD_CAP_DESC_PAR;
		r->cdb.cap.object_type = OSD_OBJ_ROOT;
		r->cdb.cap.allowed_partition = 0;
		r->cdb.cap.allowed_object = 0;
		r->cdb.cap.permissions |= OSD_PERM_GLOBAL;
	}
	r->cdb_len = osd_cdb_encode(&r->cdb, r->cdb_bytes, sizeof(r->cdb_bytes));
	ck_assert_int_eq(r->cdb_len, r->v == OSD_V1 ? OSD_CDB_V1_LEN : OSD_CDB_V2_LEN);
	if (r->cred)
		sign(r, blk_off, set_off, set_len, get_off, get_len);
	return execute(ht, r);
}

int h_rerun(struct h_target *ht, struct h_req *r)
{
	return execute(ht, r);
}

int h_attr(struct h_req *r, uint32_t page, uint32_t num, const uint8_t **val, uint16_t *len)
{
	struct osd_attr_reader rd;
	struct osd_attr a;
	size_t have;
	int rc;

	ck_assert_uint_ne(r->ret_off, OSD_OFFSET_NONE);
	ck_assert_uint_ge(r->x.in_xferred, r->ret_off);
	have = r->x.in_xferred - r->ret_off;
	if (have > r->get_alloc)
		have = r->get_alloc;
	ck_assert_int_eq(osd_attr_reader_init(&rd, r->v, r->in + r->ret_off, have), 0);
	while ((rc = osd_attr_reader_next(&rd, &a)) == 1) {
		if (a.page == page && a.number == num) {
			*val = a.value;
			*len = a.length;
			return a.length != 0;
		}
	}
	ck_assert_int_eq(rc, 0);
	return 0;
}

uint64_t h_attr_u64(struct h_req *r, uint32_t page, uint32_t num)
{
	const uint8_t *v;
	uint16_t len;
	uint64_t x = 0;

	ck_assert_msg(h_attr(r, page, num, &v, &len), "attribute %08x/%x missing", page, num);
	ck_assert_uint_le(len, 8);
	for (uint16_t i = 0; i < len; i++)
		x = x << 8 | v[i];
	return x;
}

void h_expect_good(struct h_req *r)
{
	ck_assert_msg(r->x.status == OSD_STATUS_GOOD, "status %u key %x asc %04x field %u",
		      r->x.status, r->sense.key, r->sense.asc, r->sense.field_pointer);
}

void h_expect_sense(struct h_req *r, uint8_t key, uint16_t asc)
{
	ck_assert_msg(r->x.status == OSD_STATUS_CHECK_CONDITION, "status %u", r->x.status);
	ck_assert_msg(r->sense.key == key && r->sense.asc == asc,
		      "got key %x asc %04x (field %u), want %x %04x", r->sense.key, r->sense.asc,
		      r->sense.field_pointer, key, asc);
}

void h_expect_field(struct h_req *r, uint8_t key, uint16_t asc, uint16_t field)
{
	h_expect_sense(r, key, asc);
	ck_assert(r->sense.has_field);
	ck_assert(r->sense.field_in_cdb);
	ck_assert_uint_eq(r->sense.field_pointer, field);
}

void h_create_partition(struct h_target *ht, enum osd_version v, uint64_t pid)
{
	struct h_req r;

	h_req(&r, v, OSD_ACT_CREATE_PARTITION, pid, 0);
	h_run(ht, &r);
	h_expect_good(&r);
	h_req_free(&r);
}

void h_create_object(struct h_target *ht, enum osd_version v, uint64_t pid, uint64_t oid)
{
	struct h_req r;

	h_req(&r, v, OSD_ACT_CREATE, pid, oid);
	h_run(ht, &r);
	h_expect_good(&r);
	h_req_free(&r);
}

void h_write(struct h_target *ht, enum osd_version v, uint64_t pid, uint64_t oid,
	     uint64_t off, const void *buf, size_t len)
{
	struct h_req r;

	h_req(&r, v, OSD_ACT_WRITE, pid, oid);
	r.payload = buf;
	r.payload_len = len;
	r.cdb.start = off;
	h_run(ht, &r);
	h_expect_good(&r);
	h_req_free(&r);
}

size_t h_read(struct h_target *ht, enum osd_version v, uint64_t pid, uint64_t oid,
	      uint64_t off, void *buf, size_t len)
{
	struct h_req r;
	size_t n;

	h_req(&r, v, OSD_ACT_READ, pid, oid);
	r.cdb.length = len;
	r.cdb.start = off;
	r.data_in = len;
	h_run(ht, &r);
	ck_assert(r.x.status == OSD_STATUS_GOOD || r.sense.key == OSD_SK_RECOVERED_ERROR);
	n = r.x.in_xferred < len ? r.x.in_xferred : len;
	memcpy(buf, r.in, n);
	h_req_free(&r);
	return n;
}
