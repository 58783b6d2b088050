/*
 * Setting attributes from a set list, a page-mode value or CDB fields:
 * every entry is validated against the object first, then all are applied,
 * so a refused list changes nothing.
 */
#include "exec/exec.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "exec/attr_pages.h"
#include "proto/byteorder.h"

#define MAX_METHOD OSD_SEC_ALLDATA

static int refuse(struct osd__cmd *c, const struct osd_attr *a)
{
	return osd__fail_attr(c, OSD_ASC_INVALID_FIELD_IN_PARAM_LIST, a->page, a->number);
}

static uint64_t value_u64(const struct osd_attr *a)
{
	uint64_t v = 0;
	const uint8_t *p = a->value;

	for (uint16_t i = 0; i < a->length; i++)
		v = v << 8 | p[i];
	return v;
}

/* Extra value rules of some stored standard attributes. */
static int value_ok(enum osd_obj_type t, const struct osd_attr *a)
{
	if (a->page != osd__page_base(t) + OSD_APAGE_POLICY_SECURITY || !a->length)
		return 1;
	switch (a->number) {
	case OSD_ATTR_PS_DEFAULT_METHOD:
	case OSD_ATTR_PS_PARTITION_DEFAULT_METHOD:
		return value_u64(a) <= MAX_METHOD;
	case OSD_ATTR_PS_NONCE_LIST_DEPTH:
		return value_u64(a) >= 1;
	default:
		return 1;
	}
}

static int validate(struct osd__cmd *c, const struct osd_obj_id *o, enum osd_obj_type t,
		    const struct osd_attr *a)
{
	uint16_t need;
	enum osd__set_rule rule;
	enum osd_obj_type ct;

	if (osd__page_is_private(a->page))
		return refuse(c, a);
	rule = osd__set_rule_of(t, a->page, a->number, &need);
	if (rule == OSD__SET_REFUSE)
		return refuse(c, a);
	if (a->length && need && a->length != need)
		return refuse(c, a);
	if (!value_ok(t, a))
		return refuse(c, a);
	switch (rule) {
	case OSD__SET_LENGTH:
		return a->length == 8 ? 0 : refuse(c, a);
	case OSD__SET_MEMBERSHIP:
		if (!a->length)
			return 0;
		if (osd_store_object_type(c->st, o->partition, value_u64(a), &ct) < 0 ||
		    ct != OSD_OBJ_COLLECTION)
			return refuse(c, a);
		return 0;
	default:
		return 0;
	}
}

static int store_fail(struct osd__cmd *c, const struct osd_obj_id *o, int rc)
{
	if (rc == -EDQUOT)
		return osd__fail(c, OSD_SK_DATA_PROTECT, OSD_ASC_QUOTA_ERROR);
	if (rc < 0)
		return osd__fail_store(c, rc, o->id ? OSD__FP_OBJECT : OSD__FP_PARTITION);
	return 0;
}

/* Apply an attribute that is not a stored value (the logical length, the
 * quota); 1 if @p a is a stored value, left to the caller. */
static int apply_special(struct osd__cmd *c, const struct osd_obj_id *o, enum osd_obj_type t,
			 const struct osd_attr *a)
{
	uint16_t need;
	uint64_t v;
	int rc;

	switch (osd__set_rule_of(t, a->page, a->number, &need)) {
	case OSD__SET_LENGTH:
		rc = osd_store_truncate(c->st, o->partition, o->id, value_u64(a),
					osd__data_flags(c));
		if (rc == 0)
			osd__touch(c, o->partition, o->id, OSD__TS_DATA_WRITE);
		break;
	case OSD__SET_QUOTA:
		v = a->length ? value_u64(a) : 0;
		rc = osd_store_set_quota(c->st, o->partition, o->id, v ? v : OSD_STORE_NO_QUOTA,
					 c->fua);
		break;
	default:
		return 1;
	}
	return store_fail(c, o, rc);
}

/*
 * Apply validated attributes: the length and quota first, then the stored
 * values with the attributes-modified timestamp, logged as one record by
 * the store (a SET ATTRIBUTES of one value wrote two). They are distinct
 * attributes, so the order between the two kinds does not matter.
 */
static int apply_all(struct osd__cmd *c, const struct osd_obj_id *o, enum osd_obj_type t,
		     const struct osd_attr *v, size_t n)
{
	/* A command sets a few values as a rule: those (and the timestamp) go
	 * on the stack. */
	struct osd_store_attr local[8];
	struct osd_store_attr *s = n + 1 <= sizeof(local) / sizeof(local[0]) ?
				   local : malloc((n + 1) * sizeof(*s));
	uint8_t ts[OSD__TS_LEN];
	size_t k = 0;
	int rc = 0;

	if (!s)
		return osd__fail(c, OSD_SK_HARDWARE_ERROR, OSD_ASC_SYSTEM_RESOURCE_FAILURE);
	for (size_t i = 0; i < n && rc == 0; i++)
		if ((rc = apply_special(c, o, t, &v[i])) == 1) {
			s[k++] = (struct osd_store_attr){ v[i].page, v[i].number, v[i].value,
							  v[i].length };
			rc = 0;
		}
	if (rc == 0 && n)
		k += (size_t)osd__ts_attr_write(c, o->partition, o->id, &s[k], ts);
	if (rc == 0 && k)
		rc = store_fail(c, o, osd_store_attrs_set(c->st, o->partition, o->id, s, k,
							  c->fua));
	if (s != local)
		free(s);
	return rc;
}

/* Validate then apply @p n attributes on one object. */
static int set_attrs(struct osd__cmd *c, const struct osd_obj_id *o, const struct osd_attr *v,
		     size_t n)
{
	enum osd_obj_type t = osd_obj_type_of(o);
	int rc = osd__need_object(c, o->partition, o->id, 0);

	if (rc)
		return rc;
	if (t == OSD_OBJ_USER)
		osd_store_object_type(c->st, o->partition, o->id, &t);
	for (size_t i = 0; i < n; i++)
		if ((rc = validate(c, o, t, &v[i])))
			return rc;
	return apply_all(c, o, t, v, n);
}

/* Parse a type-09h list into a vector of entries pointing into @p list. */
static int parse_set_list(struct osd__cmd *c, const uint8_t *list, size_t len,
			  struct osd_attr **out, size_t *n)
{
	struct osd_attr_reader r;
	struct osd_attr a, *v = NULL;
	size_t cnt = 0, cap = 0;
	int rc;

	*out = NULL;
	*n = 0;
	if (osd_attr_reader_init(&r, c->ver, list, len) < 0 || r.type != OSD_LIST_SET)
		return osd__fail(c, OSD_SK_ILLEGAL_REQUEST, OSD_ASC_INVALID_FIELD_IN_PARAM_LIST);
	if (osd_attr_reader_truncated(&r))
		return osd__fail(c, OSD_SK_ILLEGAL_REQUEST, OSD_ASC_PARAM_LIST_LENGTH_ERROR);
	while ((rc = osd_attr_reader_next(&r, &a)) == 1) {
		if (cnt == cap) {
			struct osd_attr *nv = realloc(v, (cap = cap ? cap * 2 : 16) * sizeof(*v));

			if (!nv) {
				free(v);
				return osd__fail(c, OSD_SK_HARDWARE_ERROR,
						 OSD_ASC_SYSTEM_RESOURCE_FAILURE);
			}
			v = nv;
		}
		v[cnt++] = a;
	}
	if (rc < 0) {
		free(v);
		return osd__fail(c, OSD_SK_ILLEGAL_REQUEST, OSD_ASC_PARAM_LIST_LENGTH_ERROR);
	}
	*out = v;
	*n = cnt;
	return 0;
}

/* The attributes the CDB asks to set, whatever the mode; *buf holds their bytes. */
static int gather(struct osd__cmd *c, struct osd_attr **v, size_t *n, uint8_t **buf)
{
	const struct osd_cdb *cdb = &c->cdb;
	struct osd_attr one = { 0 };
	int rc;

	*v = NULL;
	*n = 0;
	*buf = NULL;
	switch (cdb->attr_mode) {
	case OSD_ATTR_MODE_LIST:
		rc = osd__dout_copy(c, cdb->attr.list.set_list_offset,
				    cdb->attr.list.set_list_length, buf);
		return rc ? rc : parse_set_list(c, *buf, cdb->attr.list.set_list_length, v, n);
	case OSD_ATTR_MODE_PAGE:
		if (cdb->attr.page.set_length > OSD_ATTR_MAX_LEN)
			return osd__fail_field(c, OSD_ASC_INVALID_FIELD_IN_CDB, 72);
		rc = osd__dout_copy(c, cdb->attr.page.set_offset, cdb->attr.page.set_length, buf);
		if (rc)
			return rc;
		one.page = cdb->attr.page.set_page;
		one.number = cdb->attr.page.set_number;
		one.length = (uint16_t)cdb->attr.page.set_length;
		one.value = one.length ? *buf : NULL;
		break;
	default: /* CDB mode */
		if (cdb->attr.one.length > sizeof(cdb->attr.one.value))
			return osd__fail_field(c, OSD_ASC_INVALID_FIELD_IN_CDB, 60);
		one.page = cdb->attr.one.page;
		one.number = cdb->attr.one.number;
		one.length = cdb->attr.one.length;
		one.value = one.length ? cdb->attr.one.value : NULL;
		break;
	}
	*v = malloc(sizeof(**v));
	if (!*v)
		return osd__fail(c, OSD_SK_HARDWARE_ERROR, OSD_ASC_SYSTEM_RESOURCE_FAILURE);
	**v = one;
	*n = 1;
	return 0;
}

static int wants_set(const struct osd_cdb *cdb)
{
	switch (cdb->attr_mode) {
	case OSD_ATTR_MODE_LIST:
		return cdb->attr.list.set_list_length != 0;
	case OSD_ATTR_MODE_PAGE:
		return cdb->attr.page.set_page != 0;
	case OSD_ATTR_MODE_CDB:
		return 1;
	default:
		return 0;
	}
}

int osd__attrs_set(struct osd__cmd *c)
{
	struct osd_attr *v;
	uint8_t *buf;
	size_t n;
	int rc = 0;

	if (!wants_set(&c->cdb)) {
		c->done_funcs |= OSD_CFUNC_SET_ATT;
		return 0;
	}
	rc = gather(c, &v, &n, &buf);
	/* Validate against every addressed object before changing any. */
	for (size_t i = 0; rc == 0 && i < c->naobjs; i++) {
		const struct osd_obj_id *o = &c->aobjs[i];
		enum osd_obj_type t = osd_obj_type_of(o);

		rc = osd__need_object(c, o->partition, o->id, 0);
		if (rc == 0 && t == OSD_OBJ_USER)
			osd_store_object_type(c->st, o->partition, o->id, &t);
		for (size_t k = 0; rc == 0 && k < n; k++)
			rc = validate(c, o, t, &v[k]);
	}
	for (size_t i = 0; rc == 0 && i < c->naobjs; i++)
		rc = set_attrs(c, &c->aobjs[i], v, n);
	free(v);
	free(buf);
	if (rc == 0)
		c->done_funcs |= OSD_CFUNC_SET_ATT;
	return rc;
}
