/*
 * Retrieving attributes: values of standard (computed or maintained) and
 * stored attributes, the "all" forms, the get list in list mode, the page in
 * page mode, and their placement in data-in.
 */
#include "exec/exec.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "exec/attr_pages.h"
#include "proto/byteorder.h"
#include "response.h"

#define UNIDENTIFIED_PAGE "Unidentified Attributes Page"

int osd__page_is_private(uint32_t page)
{
	return page == OSD__PRIV_PAGE_ROOT || page == OSD__PRIV_PAGE_PARTITION;
}

static void put_padded(uint8_t *buf, size_t *len, const char *s, size_t width)
{
	size_t n = strlen(s);

	memset(buf, ' ', width);
	memcpy(buf, s, n < width ? n : width);
	*len = width;
}

static void put_u64(uint8_t *buf, size_t *len, uint64_t v, size_t width)
{
	uint8_t tmp[8];

	osd__put_be64(tmp, v);
	memcpy(buf, tmp + 8 - width, width);
	*len = width;
}

/* Values the engine computes (src == OSD__SRC_COMPUTED). */
static int computed(struct osd__cmd *c, const struct osd_obj_id *o, enum osd_obj_type t,
		    const struct osd__std_attr *a, uint32_t page, uint8_t *buf, size_t *len)
{
	uint64_t v = 0;
	int rc = 0;

	if (a->number == OSD_ATTR_PAGE_ID) {
		*len = 40;
		return osd__std_page_ident(t, page, buf);
	}
	if (a->rel_page == OSD_APAGE_QUOTAS) {
		rc = osd_store_get_quota(c->st, o->partition, o->id, &v);
		put_u64(buf, len, rc < 0 || v == OSD_STORE_NO_QUOTA ? 0 : v, 8);
		return rc == 0;
	}
	switch (a->number) {
	case OSD_ATTR_PI_PARTITION_ID:
		v = o->partition;
		break;
	case OSD_ATTR_UI_OBJECT_ID:
		v = o->id;
		break;
	case OSD_ATTR_RI_VENDOR_ID:
		put_padded(buf, len, OSD__VENDOR_ID, 8);
		return 1;
	case OSD_ATTR_RI_PRODUCT_ID:
		put_padded(buf, len, OSD__PRODUCT_ID, 16);
		return 1;
	case OSD_ATTR_RI_PRODUCT_MODEL:
		put_padded(buf, len, OSD__PRODUCT_MODEL, 32);
		return 1;
	case OSD_ATTR_RI_PRODUCT_REVISION:
		put_padded(buf, len, OSD__PRODUCT_REV, 4);
		return 1;
	case OSD_ATTR_RI_SERIAL:
		osd__target_serial(c->tgt, (char *)buf);
		*len = OSD__SERIAL_LEN;
		return 1;
	case OSD_ATTR_RI_MAX_CONT_LEN: /* == OSD_ATTR_CI_TYPE (0xA) */
		if (t == OSD_OBJ_COLLECTION) {
			buf[0] = 0; /* linked collection */
			*len = 1;
			return 1;
		}
		put_u64(buf, len, OSD__MAX_CONT_LEN, 4);
		return 1;
	case OSD_ATTR_RI_TOTAL_CAPACITY:
		rc = osd_store_capacity(c->st, &v, NULL);
		break;
	case OSD_ATTR_RI_USED_CAPACITY:
		rc = osd_store_used(c->st, o->partition, o->id, &v);
		break;
	case OSD_ATTR_UI_LOGICAL_LENGTH:
		rc = osd_store_length(c->st, o->partition, o->id, &v);
		break;
	case OSD_ATTR_RI_NUM_PARTITIONS:
		rc = osd_store_partition_stats(c->st, &v, NULL);
		break;
	case OSD_ATTR_PI_NUM_OBJECTS:
		rc = osd_store_object_stats(c->st, o->partition, &v, NULL);
		break;
	case OSD_ATTR_RI_CLOCK:
		put_u64(buf, len, osd_now_ms(), 6);
		return 1;
	default:
		return 0;
	}
	if (rc < 0)
		return 0;
	put_u64(buf, len, v, a->length ? a->length : 8);
	return 1;
}

static int stored(struct osd__cmd *c, const struct osd_obj_id *o, uint32_t page, uint32_t num,
		  uint8_t *buf, size_t *len)
{
	size_t n = 0;

	if (osd_store_attr_get(c->st, o->partition, o->id, page, num, buf, OSD_ATTR_MAX_LEN, &n) < 0)
		return 0;
	*len = n < OSD_ATTR_MAX_LEN ? n : OSD_ATTR_MAX_LEN;
	return n > 0;
}

/* The response ICV as the final status will carry it. */
static int cc_ricv(struct osd__cmd *c, uint8_t *buf, size_t *len)
{
	uint8_t icv[OSD_HMAC_LEN];

	if (!c->capkey || osd__final_response_icv(c, icv) < 0)
		return 0;
	*len = osd_cdb_icv_len(c->ver);
	memset(buf, 0, *len);
	memcpy(buf, icv, OSD_HMAC_LEN);
	return 1;
}

static int cc_value(struct osd__cmd *c, uint32_t num, uint8_t *buf, size_t *len)
{
	switch (num) {
	case OSD_ATTR_PAGE_ID:
		*len = 40;
		return osd__std_page_ident(OSD_OBJ_ROOT, OSD_APAGE_CURRENT_COMMAND, buf);
	case OSD_ATTR_CC_RESPONSE_ICV:
		return cc_ricv(c, buf, len);
	case OSD_ATTR_CC_OBJECT_TYPE:
		buf[0] = c->cc_type;
		*len = 1;
		return 1;
	case OSD_ATTR_CC_PARTITION_ID:
		put_u64(buf, len, c->cc_pid, 8);
		return 1;
	case OSD_ATTR_CC_OBJECT_ID:
		put_u64(buf, len, c->cc_oid, 8);
		return 1;
	case OSD_ATTR_CC_APPEND_OFFSET:
		if (!c->has_append)
			return 0;
		put_u64(buf, len, c->cc_append, 8);
		return 1;
	default:
		return 0;
	}
}

/* Identification of any page of the object (directory page values). */
static int page_ident(struct osd__cmd *c, const struct osd_obj_id *o, enum osd_obj_type t,
		      uint32_t page, uint8_t *buf, size_t *len)
{
	*len = 40;
	if (osd__std_page_ident(t, page, buf))
		return 1;
	size_t n = 0;

	memset(buf, 0, 40);
	if (osd_store_attr_get(c->st, o->partition, o->id, page, 0, buf, 40, &n) == 0 && n)
		return 1;
	memset(buf, ' ', 8);
	memcpy(buf + 8, UNIDENTIFIED_PAGE, sizeof(UNIDENTIFIED_PAGE) - 1);
	return 1;
}

static int is_directory(enum osd_obj_type t, uint32_t page)
{
	return page == osd__page_base(t) + OSD_APAGE_DIRECTORY;
}

/* ---- page enumeration ---- */

struct pagevec {
	uint32_t *v;
	size_t n, cap;
	int err;
};

static int pagevec_add(struct pagevec *pv, uint32_t page)
{
	if (pv->n && pv->v[pv->n - 1] == page)
		return 0;
	if (pv->n == pv->cap) {
		size_t cap = pv->cap ? pv->cap * 2 : 16;
		uint32_t *v = realloc(pv->v, cap * sizeof(*v));

		if (!v)
			return pv->err = -ENOMEM;
		pv->v = v;
		pv->cap = cap;
	}
	pv->v[pv->n++] = page;
	return 0;
}

struct page_scan {
	struct pagevec *pv;
	enum osd_obj_type t;
};

static int page_scan_cb(uint32_t page, uint32_t num, const void *val, size_t len, void *payload)
{
	struct page_scan *ps = payload;

	(void)num;
	(void)val;
	(void)len;
	if (osd__page_is_private(page) || !osd__page_applies(ps->t, page))
		return 0;
	return pagevec_add(ps->pv, page) ? 1 : 0;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* Every page the object has (standard ones and stored ones), ascending, unique. */
static int page_list(struct osd__cmd *c, const struct osd_obj_id *o, enum osd_obj_type t,
		     struct pagevec *pv)
{
	uint32_t std[8];
	size_t n = osd__std_pages(t, std, 8);
	struct page_scan ps = { pv, t };

	memset(pv, 0, sizeof(*pv));
	for (size_t i = 0; i < n; i++)
		pagevec_add(pv, std[i]);
	osd_store_attr_iterate(c->st, o->partition, o->id, OSD_STORE_ALL_PAGES, page_scan_cb, &ps);
	if (pv->err)
		return pv->err;
	qsort(pv->v, pv->n, sizeof(*pv->v), cmp_u32);
	size_t k = 0;

	for (size_t i = 0; i < pv->n; i++)
		if (!k || pv->v[k - 1] != pv->v[i])
			pv->v[k++] = pv->v[i];
	pv->n = k;
	return 0;
}

static int page_exists(struct osd__cmd *c, const struct osd_obj_id *o, enum osd_obj_type t,
		       uint32_t page)
{
	struct pagevec pv;
	int found = 0;

	if (page_list(c, o, t, &pv) == 0)
		found = bsearch(&page, pv.v, pv.n, sizeof(*pv.v), cmp_u32) != NULL;
	free(pv.v);
	return found;
}

/* Directory page: attribute 0 is its own identification, n names page n. */
static int dir_value(struct osd__cmd *c, const struct osd_obj_id *o, enum osd_obj_type t,
		     uint32_t number, uint8_t *buf, size_t *len)
{
	if (number == 0 || number == osd__page_base(t)) {
		*len = 40;
		return osd__std_page_ident(t, osd__page_base(t), buf);
	}
	if (!page_exists(c, o, t, number))
		return 0;
	return page_ident(c, o, t, number, buf, len);
}

/*
 * The stored attributes of one page of a fixed page format, read with one
 * store call instead of one per field. Values longer than a slot are not
 * kept (the field then asks the store itself).
 */
#define PREFETCH_MAX 8
#define PREFETCH_VAL 8

struct prefetch {
	int valid;           /* 0: nothing prefetched */
	uint32_t page;
	size_t n;
	int overflow;        /* some attribute was not kept: ask the store */
	struct {
		uint32_t number;
		uint8_t len;
		uint8_t val[PREFETCH_VAL];
	} v[PREFETCH_MAX];
};

static int prefetch_cb(uint32_t page, uint32_t num, const void *val, size_t len, void *payload)
{
	struct prefetch *pf = payload;

	(void)page;
	if (pf->n == PREFETCH_MAX || len > PREFETCH_VAL) {
		pf->overflow = 1;
		return 0;
	}
	pf->v[pf->n].number = num;
	pf->v[pf->n].len = (uint8_t)len;
	memcpy(pf->v[pf->n].val, val, len);
	pf->n++;
	return 0;
}

/* -1: not known from @p pf (ask the store); 0: not stored; 1: found. */
static int prefetched(const struct prefetch *pf, uint32_t page, uint32_t num, uint8_t *buf,
		      size_t *len)
{
	if (!pf || !pf->valid || pf->page != page)
		return -1;
	for (size_t i = 0; i < pf->n; i++) {
		if (pf->v[i].number == num) {
			memcpy(buf, pf->v[i].val, pf->v[i].len);
			*len = pf->v[i].len;
			return pf->v[i].len > 0;
		}
	}
	return pf->overflow ? -1 : 0;
}

/* osd__attr_value(), with stored values of @p pf's page taken from @p pf. */
static int attr_value_pf(struct osd__cmd *c, const struct osd_obj_id *o, enum osd_obj_type t,
			 uint32_t page, uint32_t number, uint8_t *buf, size_t *len,
			 const struct prefetch *pf)
{
	const struct osd__std_attr *a;
	int known;

	*len = 0;
	if (page == OSD_APAGE_CURRENT_COMMAND)
		return cc_value(c, number, buf, len);
	if (osd__page_is_private(page) || !osd__page_applies(t, page))
		return 0;
	if (is_directory(t, page))
		return dir_value(c, o, t, number, buf, len);
	a = osd__std_find(t, page, number);
	if (a && a->src == OSD__SRC_COMPUTED)
		return computed(c, o, t, a, page, buf, len);
	known = prefetched(pf, page, number, buf, len);
	if (known == 1 || (known < 0 && stored(c, o, page, number, buf, len)))
		return 1;
	if (a && a->dflt != OSD__NO_DEFAULT) {
		put_u64(buf, len, a->dflt, a->length);
		return 1;
	}
	return 0;
}

int osd__attr_value(struct osd__cmd *c, const struct osd_obj_id *o, enum osd_obj_type t,
		    uint32_t page, uint32_t number, uint8_t *buf, size_t *len)
{
	return attr_value_pf(c, o, t, page, number, buf, len, NULL);
}

/* ---- collecting retrieved entries ---- */

struct entry {
	uint32_t page, number;
	uint16_t len;        /* OSD_ATTR_LEN_UNDEFINED when undefined */
	uint64_t object;
	uint8_t *val;
};

struct entries {
	struct entry *v;
	size_t n, cap;
	int err;
	uint8_t *scratch;    /* OSD_ATTR_MAX_LEN bytes */
};

static void entries_add(struct entries *e, uint64_t object, uint32_t page, uint32_t number,
			const uint8_t *val, size_t len, int defined)
{
	if (e->err)
		return;
	if (e->n == e->cap) {
		size_t cap = e->cap ? e->cap * 2 : 32;
		struct entry *v = realloc(e->v, cap * sizeof(*v));

		if (!v) {
			e->err = -ENOMEM;
			return;
		}
		e->v = v;
		e->cap = cap;
	}
	struct entry *x = &e->v[e->n];

	x->page = page;
	x->number = number;
	x->object = object;
	x->val = NULL;
	x->len = defined ? (uint16_t)len : OSD_ATTR_LEN_UNDEFINED;
	if (defined && len) {
		x->val = malloc(len);
		if (!x->val) {
			e->err = -ENOMEM;
			return;
		}
		memcpy(x->val, val, len);
	}
	e->n++;
}

static void entries_free(struct entries *e)
{
	for (size_t i = 0; i < e->n; i++)
		free(e->v[i].val);
	free(e->v);
	free(e->scratch);
}

/* One attribute: defined or an explicit "undefined" entry. */
static void get_one(struct osd__cmd *c, struct entries *e, const struct osd_obj_id *o,
		    enum osd_obj_type t, uint32_t page, uint32_t num, int keep_undefined)
{
	size_t len = 0;
	int def;

	if (osd__quirk_hides_attr(c, t, page, num))
		return; /* not provided: not even listed as undefined */
	def = osd__attr_value(c, o, t, page, num, e->scratch, &len);
	if (def || keep_undefined)
		entries_add(e, o->id, page, num, e->scratch, len, def);
}

/* Attribute numbers of a page: table entries plus stored ones, ascending. */
struct numvec {
	uint32_t *v;
	size_t n, cap;
	int err;
};

static void numvec_add(struct numvec *nv, uint32_t num)
{
	if (nv->err)
		return;
	if (nv->n == nv->cap) {
		size_t cap = nv->cap ? nv->cap * 2 : 32;
		uint32_t *v = realloc(nv->v, cap * sizeof(*v));

		if (!v) {
			nv->err = -ENOMEM;
			return;
		}
		nv->v = v;
		nv->cap = cap;
	}
	nv->v[nv->n++] = num;
}

static int num_scan_cb(uint32_t page, uint32_t num, const void *val, size_t len, void *payload)
{
	(void)page;
	(void)val;
	(void)len;
	numvec_add(payload, num);
	return 0;
}

static void get_page_all(struct osd__cmd *c, struct entries *e, const struct osd_obj_id *o,
			 enum osd_obj_type t, uint32_t page)
{
	struct numvec nv = { 0 };

	if (page == OSD_APAGE_CURRENT_COMMAND) {
		for (uint32_t n = 0; n <= OSD_ATTR_CC_APPEND_OFFSET; n++)
			numvec_add(&nv, n);
	} else if (is_directory(t, page)) {
		struct pagevec pv;

		numvec_add(&nv, 0);
		if (page_list(c, o, t, &pv) == 0)
			for (size_t i = 0; i < pv.n; i++)
				if (pv.v[i] != page)
					numvec_add(&nv, pv.v[i]);
		free(pv.v);
	} else if (!osd__page_is_private(page) && osd__page_applies(t, page)) {
		const struct osd__std_attr *a;
		size_t i = 0;

		while ((a = osd__std_next(t, page, &i)))
			numvec_add(&nv, a->number);
		osd_store_attr_iterate(c->st, o->partition, o->id, page, num_scan_cb, &nv);
	}
	if (nv.err)
		e->err = nv.err;
	if (nv.n)
		qsort(nv.v, nv.n, sizeof(*nv.v), cmp_u32);
	for (size_t i = 0; i < nv.n; i++)
		if (i == 0 || nv.v[i] != nv.v[i - 1])
			get_one(c, e, o, t, page, nv.v[i], 0);
	free(nv.v);
}

/* A get-list entry, expanding the "all pages" / "all attributes" forms. */
static void get_request(struct osd__cmd *c, struct entries *e, const struct osd_obj_id *o,
			enum osd_obj_type t, uint32_t page, uint32_t num)
{
	struct pagevec pv;

	if (page != OSD_APAGE_ALL) {
		if (num == OSD_ATTR_ALL)
			get_page_all(c, e, o, t, page);
		else
			get_one(c, e, o, t, page, num, 1);
		return;
	}
	if (page_list(c, o, t, &pv) < 0) {
		e->err = -ENOMEM;
		return;
	}
	for (size_t i = 0; i < pv.n; i++) {
		if (num == OSD_ATTR_ALL)
			get_page_all(c, e, o, t, pv.v[i]);
		else
			get_one(c, e, o, t, pv.v[i], num, 0);
	}
	free(pv.v);
}

static enum osd_obj_type type_of(struct osd__cmd *c, const struct osd_obj_id *o)
{
	enum osd_obj_type t = osd_obj_type_of(o);

	if (t == OSD_OBJ_USER)
		osd__object_type(c, o->partition, o->id, &t);
	return t;
}

/* ---- output ---- */

/* Encode the entries as a 09h (or multi-object) list in a new buffer. */
static int encode_list(struct osd__cmd *c, const struct entries *e, uint8_t **out, size_t *len)
{
	enum osd_list_type type = !c->multi ? OSD_LIST_SET :
				  c->ver == OSD_V1 ? OSD_LIST_CREATE_MULTI : OSD_LIST_MULTI;
	size_t size = osd_attr_header_len(c->ver);
	struct osd_attr_writer w;

	/* Generous bound: multi-object group headers add 16 bytes per entry at most. */
	for (size_t i = 0; i < e->n; i++)
		size += osd_attr_entry_len(c->ver, type, e->v[i].len == OSD_ATTR_LEN_UNDEFINED ?
						   0 : e->v[i].len) + 16;
	*out = malloc(size);
	if (!*out)
		return -ENOMEM;
	osd_attr_writer_init(&w, c->ver, type, *out, size);
	for (size_t i = 0; i < e->n; i++) {
		struct osd_attr a = { e->v[i].page, e->v[i].number, e->v[i].len, e->v[i].val,
				      e->v[i].object };

		osd_attr_writer_add(&w, &a);
	}
	long n = osd_attr_writer_finish(&w);

	if (n < 0) {
		free(*out);
		*out = NULL;
		return (int)n;
	}
	*len = (size_t)n;
	return 0;
}

/* Copy retrieved bytes to data-in at the retrieved-attributes offset. */
static int place(struct osd__cmd *c, uint64_t off, uint32_t alloc, const uint8_t *buf, size_t len)
{
	if (off == OSD_OFFSET_NONE)
		return osd__fail_field(c, OSD_ASC_INVALID_FIELD_IN_CDB,
				       c->cdb.attr_mode == OSD_ATTR_MODE_LIST ? 64 : 60);
	if (len > alloc)
		len = alloc;
	if (off > c->x->in_len)
		return osd__fail_field(c, OSD_ASC_INVALID_FIELD_IN_CDB,
				       c->cdb.attr_mode == OSD_ATTR_MODE_LIST ? 64 : 60);
	if (len > c->x->in_len - off)
		len = c->x->in_len - (size_t)off;
	/* Zero fill between the command data and the retrieved attributes. */
	osd__resp_zero(c->x, c->data_len, (size_t)off);
	osd__resp_data(c->x, (size_t)off, buf, len);
	c->attr_off = off;
	c->attr_len = len;
	return 0;
}

static int fail_nomem(struct osd__cmd *c)
{
	return osd__fail(c, OSD_SK_HARDWARE_ERROR, OSD_ASC_SYSTEM_RESOURCE_FAILURE);
}

/* List mode: read the type-01h list and retrieve for every addressed object. */
static int get_list(struct osd__cmd *c, struct entries *e)
{
	const struct osd_cdb_attr_list *l = &c->cdb.attr.list;
	struct osd_attr_reader r;
	struct osd_attr a;
	uint8_t *list;
	int rc = osd__dout_copy(c, l->get_list_offset, l->get_list_length, &list);

	if (rc)
		return rc;
	if (osd_attr_reader_init(&r, c->ver, list, l->get_list_length) < 0 || r.type != OSD_LIST_GET) {
		free(list);
		return osd__fail(c, OSD_SK_ILLEGAL_REQUEST, OSD_ASC_INVALID_FIELD_IN_PARAM_LIST);
	}
	for (size_t i = 0; i < c->naobjs; i++) {
		enum osd_obj_type t = type_of(c, &c->aobjs[i]);

		osd_attr_reader_init(&r, c->ver, list, l->get_list_length);
		while ((rc = osd_attr_reader_next(&r, &a)) == 1) {
			if (osd__quirk_hides_attr(c, t, a.page, a.number)) {
				free(list);
				return osd__fail_attr(c, OSD_ASC_INVALID_FIELD_IN_PARAM_LIST,
						      a.page, a.number);
			}
			get_request(c, e, &c->aobjs[i], t, a.page, a.number);
		}
		if (rc < 0) {
			free(list);
			return osd__fail(c, OSD_SK_ILLEGAL_REQUEST, OSD_ASC_PARAM_LIST_LENGTH_ERROR);
		}
	}
	free(list);
	return e->err ? fail_nomem(c) : 0;
}

/* The longest fixed page format (current command, v2: 60 bytes) plus its header. */
#define FIXED_PAGE_MAX 128

/*
 * Page mode: a fixed page format where one is defined (built in @p fixed,
 * FIXED_PAGE_MAX bytes), else a 09h list of the page in a new buffer.
 */
static int get_page(struct osd__cmd *c, struct entries *e, uint8_t *fixed, uint8_t **out,
		    size_t *len)
{
	uint32_t page = c->cdb.attr.page.get_page;
	/* A member command on an empty collection addresses no object: use the
	 * collection itself. */
	const struct osd_obj_id *o = c->naobjs ? &c->aobjs[c->naobjs - 1] : &c->cdb.obj;
	enum osd_obj_type t = type_of(c, o);
	const struct osd__page_field *f;
	size_t nf = osd__page_layout(t, c->ver, page, &f);

	if (c->multi && page != OSD_APAGE_CURRENT_COMMAND)
		return osd__fail_field(c, OSD_ASC_INVALID_FIELD_IN_CDB, OSD__FP_ATTR_PARAMS);
	if (!nf) {
		get_page_all(c, e, o, t, page);
		if (e->err)
			return fail_nomem(c);
		return encode_list(c, e, out, len) < 0 ? fail_nomem(c) : 0;
	}
	size_t body = 0;

	for (size_t i = 0; i < nf; i++)
		body += f[i].size;
	if (8 + body > FIXED_PAGE_MAX)
		return fail_nomem(c);
	*out = fixed;
	memset(fixed, 0, 8 + body);
	struct prefetch pf = { .page = page };

	/* The current command page is computed; elsewhere, on failure, fields ask the store. */
	pf.valid = page != OSD_APAGE_CURRENT_COMMAND &&
		   osd_store_attr_iterate(c->st, o->partition, o->id, page, prefetch_cb, &pf) == 0;
	osd__put_be32(*out, page);
	osd__put_be32(*out + 4, (uint32_t)body);
	for (size_t i = 0, pos = 8; i < nf; pos += f[i].size, i++) {
		size_t vlen = 0;

		if (f[i].number == 0 && f[i].size == 3)
			continue; /* reserved */
		if (attr_value_pf(c, o, t, page, f[i].number, e->scratch, &vlen, &pf))
			memcpy(*out + pos, e->scratch, vlen < f[i].size ? vlen : f[i].size);
	}
	*len = 8 + body;
	return 0;
}

static int wants_get(const struct osd_cdb *cdb)
{
	if (cdb->attr_mode == OSD_ATTR_MODE_LIST)
		return cdb->attr.list.get_list_length != 0;
	if (cdb->attr_mode == OSD_ATTR_MODE_PAGE)
		return cdb->attr.page.get_page != 0;
	return 0;
}

static void touch_all(struct osd__cmd *c)
{
	for (size_t i = 0; i < c->naobjs; i++)
		if (osd__object_type(c, c->aobjs[i].partition, c->aobjs[i].id, NULL) == 0)
			osd__touch(c, c->aobjs[i].partition, c->aobjs[i].id, OSD__TS_ATTR_READ);
}

int osd__attrs_get(struct osd__cmd *c)
{
	struct entries e = { 0 };
	uint8_t *out = NULL, fixed[FIXED_PAGE_MAX];
	size_t len = 0;
	int rc;

	if (!wants_get(&c->cdb)) {
		c->done_funcs |= OSD_CFUNC_GET_ATT;
		return 0;
	}
	e.scratch = malloc(OSD_ATTR_MAX_LEN);
	if (!e.scratch)
		return fail_nomem(c);
	if (c->cdb.attr_mode == OSD_ATTR_MODE_LIST) {
		rc = get_list(c, &e);
		if (rc == 0 && encode_list(c, &e, &out, &len) < 0)
			rc = fail_nomem(c);
		if (rc == 0)
			rc = place(c, c->cdb.attr.list.retrieved_offset, c->cdb.attr.list.get_alloc,
				   out, len);
	} else {
		rc = get_page(c, &e, fixed, &out, &len);
		if (rc == 0)
			rc = place(c, c->cdb.attr.page.retrieved_offset, c->cdb.attr.page.get_alloc,
				   out, len);
	}
	if (out != fixed)
		free(out);
	entries_free(&e);
	if (rc == 0) {
		touch_all(c);
		c->done_funcs |= OSD_CFUNC_GET_ATT;
	}
	return rc;
}
