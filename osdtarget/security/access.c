/*
 * The security checks of docs/security.md section 5, in that order, plus the
 * ALLDATA data-out / data-in integrity blocks and the response ICV.
 */
#include "security/access.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <openssl/crypto.h>

#include "exec/attr_pages.h"
#include "proto/byteorder.h"
#include "proto/command.h"
#include "response.h"
#include "security/keystore.h"

#define CAP_FORMAT_BYTE 0
#define CAP_KEY_VERSION_BYTE 1
#define CAP_METHOD_BYTE 2
#define CAP_EXPIRATION 4
#define CAP_CREATED 42
#define CAP_OBJECT_TYPE 48
#define CAP_PERMISSIONS 49
#define CAP_DESC_TYPE 55
#define CAP_ATTR_ACCESS_V2 56
#define CAP_TAG_V1 56
#define CAP_TAG_V2 60
#define CAP_BOOT_EPOCH_V2 64
#define CAP_RANGE_V2 88
#define DOUT_BLOCK_COUNTS 24
#define DIN_BLOCK_COUNTS 16
#define CONT_ICV_AT 8
#define CONT_ICV_LEN 32
#define DEFAULT_OLDEST 60000
#define DEFAULT_NEWEST 10000
#define DEFAULT_DEPTH 1024
#define FLUSH_SCOPE_RANGE 2
/* Room for a get list of a few entries: the bootstrap GET names at most two. */
#define BOOTSTRAP_LIST_MAX 64

static int cap_fail(struct osd__cmd *c, size_t cap_field)
{
	return osd__fail_field(c, OSD_ASC_INVALID_FIELD_IN_CDB, OSD__FP_CAP + cap_field);
}

/* The object the capability must describe (docs/security.md section 1),
 * as the command's descriptor says. */
static struct osd_obj_id described(const struct osd__cmd *c)
{
	return osd__cmd_cap_object(osd__cmd_desc_of(c->cdb.action), &c->cdb.obj,
				   c->cdb.cmd_options);
}

/* Read a stored numeric attribute of @p len bytes; @p dflt if absent. */
static uint64_t attr_num(struct osd__cmd *c, uint64_t pid, uint64_t oid, uint32_t page,
			 uint32_t num, size_t len, uint64_t dflt)
{
	uint8_t v[8];
	size_t got = 0;
	uint64_t r = 0;

	if (osd_store_attr_get(c->st, pid, oid, page, num, v, sizeof(v), &got) < 0 || got != len)
		return dflt;
	for (size_t i = 0; i < len; i++)
		r = r << 8 | v[i];
	return r;
}

/*
 * The root's method is its policy attribute, but never below CAPKEY once a
 * root key is installed: the attribute defaults to NOSEC and is itself set
 * with a root command, so a keyed root that stayed NOSEC let anyone FORMAT it
 * or raise the attribute and lock its owner out (docs/security.md 5, check 2).
 */
static uint8_t required_method(struct osd__cmd *c, const struct osd_obj_id *d)
{
	/* SET KEY of a partition key is signed by the root key (2.2): the root's floor too. */
	int rooted = !d->partition || (c->cdb.action == OSD_ACT_SET_KEY &&
				       (c->cdb.cmd_options & 3) == OSD_KEY_PARTITION);
	uint8_t m;

	if (!d->partition)
		m = (uint8_t)attr_num(c, 0, 0, OSD_APAGE_ROOT_BASE + OSD_APAGE_POLICY_SECURITY,
				      OSD_ATTR_PS_DEFAULT_METHOD, 1, OSD_SEC_NOSEC);
	else
		m = (uint8_t)attr_num(c, d->partition, 0,
				      OSD_APAGE_PARTITION_BASE + OSD_APAGE_POLICY_SECURITY,
				      OSD_ATTR_PS_DEFAULT_METHOD, 1, OSD_SEC_NOSEC);
	if (rooted && m < OSD_SEC_CAPKEY && osd__root_key_present(c->st))
		m = OSD_SEC_CAPKEY;
	return m;
}

/* Secret selection of docs/security.md 2.2: which key, not yet its bytes. */
static int select_secret(const struct osd__cmd *c, struct osd__capkey_id *id)
{
	const struct osd_capability *cap = &c->cdb.cap;
	uint64_t pid = c->cdb.obj.partition;

	id->pid = 0;
	id->kind = OSD_KEY_ROOT;
	id->version = 0;
	if (cap->object_type == OSD_OBJ_ROOT)
		return 0;
	if (c->cdb.action == OSD_ACT_SET_KEY) {
		switch (c->cdb.cmd_options & 3) {
		case OSD_KEY_PARTITION:
			return 0;
		case OSD_KEY_WORKING:
			id->pid = pid;
			id->kind = OSD_KEY_PARTITION;
			return 0;
		default:
			break;
		}
	}
	if (!pid)
		return -ENOKEY;
	id->pid = pid;
	id->kind = OSD_KEY_WORKING;
	id->version = cap->key_version;
	return 0;
}

/* K = HMAC(secret, capability || system id), made anew (cache miss). */
static int compute_capkey(struct osd__cmd *c, const struct osd__capkey_id *id,
			  uint8_t ck[OSD_HMAC_LEN])
{
	uint8_t secret[OSD_HMAC_LEN];
	osd_key *sk = NULL;
	int rc;

	if (osd__key_load(c->st, id->pid, (enum osd_key_to_set)id->kind, id->version, secret) < 0)
		return cap_fail(c, CAP_KEY_VERSION_BYTE);
	rc = osd_key_new(&sk, secret, OSD_HMAC_LEN);
	if (rc == 0)
		rc = osd_capability_key(sk, c->ver, &c->cdb.cap, c->tgt->system_id, ck);
	osd_key_free(sk);
	OPENSSL_cleanse(secret, sizeof(secret));
	return rc < 0 ? osd__fail(c, OSD_SK_HARDWARE_ERROR, OSD_ASC_SYSTEM_RESOURCE_FAILURE) : 0;
}

/* Checks 4 and the key half of 5: the capability key, from the cache if known. */
static int make_capkey(struct osd__cmd *c)
{
	struct osd__capkey_id id;
	uint8_t ck[OSD_HMAC_LEN];
	uint64_t gen;
	int rc;

	if (select_secret(c, &id) < 0)
		return cap_fail(c, CAP_KEY_VERSION_BYTE);
	id.cap_len = (uint8_t)(c->ver == OSD_V1 ? OSD_CAP_V1_LEN : OSD_CAP_V2_LEN);
	memcpy(id.cap, c->raw + OSD__FP_CAP, id.cap_len);
	c->capent = osd__capkey_take(&c->tgt->capkeys, &id, &gen);
	if (!c->capent) {
		if ((rc = compute_capkey(c, &id, ck)))
			return rc;
		c->capent = osd__capkey_new(&id, gen, ck);
		OPENSSL_cleanse(ck, sizeof(ck));
		if (!c->capent)
			return osd__fail(c, OSD_SK_HARDWARE_ERROR, OSD_ASC_SYSTEM_RESOURCE_FAILURE);
	}
	c->capkey = c->capent->key;
	return 0;
}

/* Give the capability key back (to the cache if it verified a request). */
void osd__sec_release(struct osd__cmd *c)
{
	osd__capkey_put(&c->tgt->capkeys, c->capent);
	c->capent = NULL;
	c->capkey = NULL;
}

static const uint8_t *request_icv(const struct osd__cmd *c)
{
	return c->raw + osd_cdb_icv_offset(c->ver);
}

/* An ICV field holds the 20 HMAC bytes left-justified and zeros after. */
static int icv_field_ok(const uint8_t *field, size_t len, const uint8_t mac[OSD_HMAC_LEN])
{
	uint8_t diff = 0;

	for (size_t i = 0; i < len; i++)
		diff |= field[i] ^ (i < OSD_HMAC_LEN ? mac[i] : 0);
	return diff == 0;
}

/* CMDRSP/ALLDATA: the CDB continuation segment carries its own ICV. */
static int check_continuation_icv(struct osd__cmd *c)
{
	uint8_t *seg, mac[OSD_HMAC_LEN], field[CONT_ICV_LEN];
	int rc, ok;

	if (!c->cont_len)
		return 0;
	rc = osd__dout_copy(c, 0, c->cont_len, &seg);
	if (rc)
		return rc;
	memcpy(field, seg + CONT_ICV_AT, CONT_ICV_LEN);
	memset(seg + CONT_ICV_AT, 0, CONT_ICV_LEN);
	struct iovec iov = { seg, c->cont_len };

	ok = osd_sec_bound_icv(c->capkey, OSD_ICV_CONTINUATION, request_icv(c), &iov, 1, mac) == 0 &&
	     icv_field_ok(field, CONT_ICV_LEN, mac);
	free(seg);
	return ok ? 0 : osd__fail_field(c, OSD_ASC_INVALID_FIELD_IN_CDB, 48);
}

/*
 * CAPKEY: the request ICV is HMAC(K, token), the same for every command on
 * the channel; the entry remembers it for the last token, so a repeated
 * capability is verified by comparing, without hashing.
 */
static int capkey_icv_ok(struct osd__cmd *c, const uint8_t *token, size_t token_len)
{
	struct osd__capkey *e = c->capent;
	struct iovec iov = { (void *)token, token_len };

	if (token_len > OSD__CAPKEY_TOKEN_MAX)
		return osd_sec_verify_cdb(c->capkey, OSD_SEC_CAPKEY, c->raw, c->raw_len, token,
					  token_len) == 0;
	if (!e->has_tok || e->tok_len != token_len ||
	    (token_len && memcmp(e->tok, token, token_len))) {
		e->has_tok = 0;
		if (osd_key_hmac(c->capkey, &iov, 1, e->tok_icv) < 0)
			return 0;
		if (token_len)
			memcpy(e->tok, token, token_len);
		e->tok_len = token_len;
		e->has_tok = 1;
	}
	return icv_field_ok(request_icv(c), osd_cdb_icv_len(c->ver), e->tok_icv);
}

static int check_signature(struct osd__cmd *c, const uint8_t *token, size_t token_len)
{
	uint8_t method = c->cdb.cap.security_method;
	int ok = method == OSD_SEC_CAPKEY
			 ? capkey_icv_ok(c, token, token_len)
			 : osd_sec_verify_cdb(c->capkey, method, c->raw, c->raw_len, token,
					      token_len) == 0;

	if (!ok)
		return osd__fail_field(c, OSD_ASC_INVALID_FIELD_IN_CDB, osd_cdb_icv_offset(c->ver));
	if (method >= OSD_SEC_CMDRSP)
		return check_continuation_icv(c);
	return 0;
}

/* Check 1, second half: the capability bytes are exactly its canonical encoding. */
static int cap_canonical(const struct osd__cmd *c)
{
	uint8_t enc[OSD_CAP_V2_LEN];
	int n = osd_capability_encode(c->ver, &c->cdb.cap, enc, sizeof(enc));

	return n > 0 && memcmp(enc, c->raw + OSD__FP_CAP, (size_t)n) == 0;
}

static int check_nonce(struct osd__cmd *c, const struct osd_obj_id *d)
{
	uint32_t rpol = OSD_APAGE_ROOT_BASE + OSD_APAGE_POLICY_SECURITY;
	uint64_t oldest = attr_num(c, 0, 0, rpol, OSD_ATTR_PS_OLDEST_NONCE, 6, DEFAULT_OLDEST);
	uint64_t newest = attr_num(c, 0, 0, rpol, OSD_ATTR_PS_NEWEST_NONCE, 6, DEFAULT_NEWEST);
	uint64_t depth = DEFAULT_DEPTH;

	if (d->partition)
		depth = attr_num(c, d->partition, 0,
				 OSD_APAGE_PARTITION_BASE + OSD_APAGE_POLICY_SECURITY,
				 OSD_ATTR_PS_NONCE_LIST_DEPTH, 2, DEFAULT_DEPTH);
	switch (osd__nonce_check(&c->tgt->nonces, d->partition, c->cdb.nonce, c->now, oldest,
				 newest, (size_t)depth)) {
	case OSD__NONCE_OK:
		return 0;
	case OSD__NONCE_REPLAY:
		return osd__fail(c, OSD_SK_ILLEGAL_REQUEST, OSD_ASC_NONCE_NOT_UNIQUE);
	default:
		return osd__fail(c, OSD_SK_ILLEGAL_REQUEST, OSD_ASC_NONCE_TIMESTAMP_OUT_OF_RANGE);
	}
}

static enum osd_obj_type actual_type(struct osd__cmd *c, const struct osd_obj_id *d, int *exists)
{
	enum osd_obj_type t = osd_obj_type_of(d);

	*exists = osd__object_type(c, d->partition, d->id, &t) == 0;
	return t;
}

/* Check 9: the descriptor names the described object. */
static int check_object(struct osd__cmd *c, const struct osd_obj_id *d, enum osd_obj_type t,
			int exists)
{
	const struct osd_capability *cap = &c->cdb.cap;
	int global = (cap->permissions & OSD_PERM_GLOBAL) != 0;
	uint8_t par_type = cap->allowed_partition ? OSD_OBJ_PARTITION : OSD_OBJ_ROOT;

	switch (cap->desc_type) {
	case OSD_CAP_DESC_PAR:
		if (cap->object_type != par_type)
			return cap_fail(c, CAP_OBJECT_TYPE);
		if (!cap->allowed_partition && global)
			return 0; /* root PAR + GLOBAL: every object of the OSD */
		if (cap->allowed_partition != d->partition)
			return cap_fail(c, CAP_DESC_TYPE);
		if (d->id && !global)
			return cap_fail(c, CAP_DESC_TYPE);
		return 0;
	case OSD_CAP_DESC_USER:
	case OSD_CAP_DESC_COL:
		if (!d->id || cap->allowed_partition != d->partition || cap->allowed_object != d->id)
			return cap_fail(c, CAP_DESC_TYPE);
		if (c->ver == OSD_V2 && cap->desc_type == OSD_CAP_DESC_USER &&
		    cap->object_type != OSD_OBJ_USER)
			return cap_fail(c, CAP_OBJECT_TYPE);
		if (cap->desc_type == OSD_CAP_DESC_COL &&
		    (c->ver == OSD_V1 || cap->object_type != OSD_OBJ_COLLECTION))
			return cap_fail(c, CAP_DESC_TYPE);
		if (exists && cap->object_type != t)
			return cap_fail(c, CAP_OBJECT_TYPE);
		return 0;
	default:
		return cap_fail(c, CAP_DESC_TYPE);
	}
}

/* Checks 10 and 11: created time and policy/access tag of the described object. */
static int check_incarnation(struct osd__cmd *c, const struct osd_obj_id *d, enum osd_obj_type t)
{
	const struct osd_capability *cap = &c->cdb.cap;

	if (cap->object_created &&
	    attr_num(c, d->partition, d->id, osd__page_base(t) + OSD_APAGE_TIMESTAMPS,
		     OSD_ATTR_TS_CREATED, 6, 0) != cap->object_created)
		return cap_fail(c, CAP_CREATED);
	if (cap->policy_access_tag &&
	    attr_num(c, d->partition, d->id, osd__page_base(t) + OSD_APAGE_POLICY_SECURITY,
		     OSD_ATTR_PS_POLICY_ACCESS_TAG, 4, 0) != cap->policy_access_tag)
		return cap_fail(c, c->ver == OSD_V1 ? CAP_TAG_V1 : CAP_TAG_V2);
	return 0;
}

static uint16_t required_permissions(const struct osd__cmd *c)
{
	const struct osd_cdb *cdb = &c->cdb;
	uint16_t req = osd_sec_required_permissions(cdb->action);

	switch (cdb->attr_mode) {
	case OSD_ATTR_MODE_LIST:
		if (cdb->attr.list.get_list_length)
			req |= OSD_PERM_GET_ATTR;
		if (cdb->attr.list.set_list_length)
			req |= OSD_PERM_SET_ATTR;
		break;
	case OSD_ATTR_MODE_PAGE:
		if (cdb->attr.page.get_page)
			req |= OSD_PERM_GET_ATTR;
		if (cdb->attr.page.set_page)
			req |= OSD_PERM_SET_ATTR;
		break;
	case OSD_ATTR_MODE_CDB:
		req |= OSD_PERM_SET_ATTR;
		break;
	default:
		break;
	}
	if ((cdb->action == OSD_ACT_LIST || cdb->action == OSD_ACT_LIST_COLLECTION) &&
	    (cdb->cmd_options & 0x40))
		req |= OSD_PERM_GET_ATTR;
	return req;
}

static int in_range(const struct osd_capability *cap, uint64_t start, uint64_t len)
{
	uint64_t end = cap->range_start + cap->range_length;

	if (end < cap->range_start)
		end = UINT64_MAX;
	return start >= cap->range_start && len <= end - start && start <= end;
}

/* Check 13 (v2): the byte range a data command touches. */
static int check_range(struct osd__cmd *c)
{
	const struct osd_capability *cap = &c->cdb.cap;
	int ranged;

	if (c->ver != OSD_V2 || !cap->range_length || (c->precheck && c->cdb.cont_length))
		return 0;
	switch (osd__cmd_desc_of(c->cdb.action)->range) {
	case OSD__RANGE_REFUSED:
		return cap_fail(c, CAP_RANGE_V2);
	case OSD__RANGE_FLUSH:
		ranged = c->cdb.flush_scope == FLUSH_SCOPE_RANGE;
		break;
	case OSD__RANGE_BYTES:
		ranged = 1;
		break;
	default:
		return 0;
	}
	if (!ranged)
		return 0;
	if (c->sg) {
		for (size_t i = 0; i < c->nsg; i++)
			if (!in_range(cap, c->sg[i].offset, c->sg[i].length))
				return cap_fail(c, CAP_RANGE_V2);
		return 0;
	}
	return in_range(cap, c->cdb.start, c->cdb.length) ? 0 : cap_fail(c, CAP_RANGE_V2);
}

/* Checks 7-14 (also under NOSEC). */
static int check_capability(struct osd__cmd *c, const struct osd_obj_id *d)
{
	const struct osd_capability *cap = &c->cdb.cap;
	uint16_t req = required_permissions(c);
	int rc, exists;
	enum osd_obj_type t;

	if (cap->expiration && cap->expiration < c->now)
		return cap_fail(c, CAP_EXPIRATION);
	if (c->ver == OSD_V2 && cap->boot_epoch && cap->boot_epoch != c->tgt->boot_epoch)
		return cap_fail(c, CAP_BOOT_EPOCH_V2);
	t = actual_type(c, d, &exists);
	if ((rc = check_object(c, d, t, exists)) || (rc = check_incarnation(c, d, t)))
		return rc;
	if ((cap->permissions & req) != req)
		return cap_fail(c, CAP_PERMISSIONS);
	if ((rc = check_range(c)))
		return rc;
	if (c->ver == OSD_V2 && cap->allowed_attr_access)
		return cap_fail(c, CAP_ATTR_ACCESS_V2);
	return 0;
}

/* Bytes of payload, set list and get list the CDB describes. */
static void data_out_counts(const struct osd__cmd *c, uint64_t *data, uint64_t *set, uint64_t *get)
{
	const struct osd_cdb *cdb = &c->cdb;

	*data = *set = *get = 0;
	if (osd__cmd_desc_of(cdb->action)->data == OSD__DATA_OUT)
		*data = cdb->length;
	if (cdb->attr_mode == OSD_ATTR_MODE_LIST) {
		*set = cdb->attr.list.set_list_length;
		*get = cdb->attr.list.get_list_length;
	} else if (cdb->attr_mode == OSD_ATTR_MODE_PAGE && cdb->attr.page.set_page) {
		*set = cdb->attr.page.set_length;
	}
}

/* Append a data-out slice to @p v (bounded by what data-out holds). */
static int add_slice(const struct osd__cmd *c, struct iovec *v, int *n, uint64_t off,
		     uint64_t len)
{
	size_t got;

	if (!len)
		return 0;
	if (off == OSD_OFFSET_NONE || off > c->x->out_len || len > c->x->out_len - off)
		return -1;
	*n += osd__iov_slice(c->x->out_iov, c->x->out_iovcnt, (size_t)off, (size_t)len, v + *n,
			     c->x->out_iovcnt, &got);
	return got == len ? 0 : -1;
}

/* ALLDATA: the data-out integrity block. */
static int check_data_out(struct osd__cmd *c)
{
	const struct osd_cdb *cdb = &c->cdb;
	size_t icv_len = osd_cdb_icv_len(c->ver), blen = DOUT_BLOCK_COUNTS + icv_len;
	uint64_t data, set, get;
	uint8_t *block = NULL, mac[OSD_HMAC_LEN];
	int max = 3 * (c->x->out_iovcnt > 0 ? c->x->out_iovcnt : 1) + 1, n = 1, ok = 0;
	struct iovec *v = calloc((size_t)max, sizeof(*v));

	data_out_counts(c, &data, &set, &get);
	if (v && cdb->data_out_icv_offset != OSD_OFFSET_NONE &&
	    osd__dout_copy(c, cdb->data_out_icv_offset, blen, &block) == 0 &&
	    osd__get_be64(block) == data && osd__get_be64(block + 8) == set &&
	    osd__get_be64(block + 16) == get) {
		uint64_t set_off = cdb->attr_mode == OSD_ATTR_MODE_LIST ? cdb->attr.list.set_list_offset
									: cdb->attr.page.set_offset;

		v[0].iov_base = block;
		v[0].iov_len = DOUT_BLOCK_COUNTS;
		ok = add_slice(c, v, &n, c->cont_len, data) == 0 &&
		     add_slice(c, v, &n, set_off, set) == 0 &&
		     add_slice(c, v, &n, cdb->attr.list.get_list_offset, get) == 0 &&
		     osd_sec_bound_icv(c->capkey, OSD_ICV_DATA_OUT, request_icv(c), v, n, mac) == 0 &&
		     icv_field_ok(block + DOUT_BLOCK_COUNTS, icv_len, mac);
	}
	free(block);
	free(v);
	if (!ok)
		return osd__fail(c, OSD_SK_ILLEGAL_REQUEST, OSD_ASC_INVALID_DATA_OUT_ICV);
	return 0;
}

/*
 * The one command a secured root answers without a credential: GET
 * ATTRIBUTES of the root whose get list names only the OSD SYSTEM ID and the
 * CLOCK (root information 0x3, 0x100). A client needs both before it can sign
 * anything: a capability key is HMAC(secret, capability || system id) and a
 * CMDRSP/ALLDATA nonce carries an OSD clock timestamp. Both are public
 * anyway (INQUIRY VPD 80h/B0h give the system id). No set list, page or CDB
 * mode: nothing else is readable and nothing changes.
 */
static int bootstrap_get(const struct osd__cmd *c)
{
	const uint32_t ri = OSD_APAGE_ROOT_BASE + OSD_APAGE_INFORMATION;
	const struct osd_cdb_attr_list *l = &c->cdb.attr.list;
	uint8_t list[BOOTSTRAP_LIST_MAX];
	struct osd_attr_reader r;
	struct osd_attr a;
	int rc, n = 0;

	if (c->cdb.action != OSD_ACT_GET_ATTRIBUTES || c->cdb.obj.partition || c->cdb.obj.id ||
	    c->cdb.attr_mode != OSD_ATTR_MODE_LIST || l->set_list_length ||
	    !l->get_list_length || l->get_list_length > sizeof(list) ||
	    l->get_list_offset == OSD_OFFSET_NONE || l->get_list_offset > c->x->out_len ||
	    l->get_list_length > c->x->out_len - l->get_list_offset)
		return 0;
	if (osd__iov_read(c->x->out_iov, c->x->out_iovcnt, (size_t)l->get_list_offset, list,
			  l->get_list_length) != l->get_list_length ||
	    osd_attr_reader_init(&r, c->ver, list, l->get_list_length) < 0 ||
	    r.type != OSD_LIST_GET)
		return 0;
	while ((rc = osd_attr_reader_next(&r, &a)) == 1) {
		if (a.page != ri || (a.number != OSD_ATTR_RI_SYSTEM_ID &&
				     a.number != OSD_ATTR_RI_CLOCK))
			return 0;
		n++;
	}
	return rc == 0 && n > 0;
}

int osd__sec_check(struct osd__cmd *c, const uint8_t *token, size_t token_len)
{
	const struct osd_capability *cap = &c->cdb.cap;
	struct osd_obj_id d = described(c);
	uint8_t required = bootstrap_get(c) ? OSD_SEC_NOSEC : required_method(c, &d);
	uint8_t format = c->raw[OSD__FP_CAP + CAP_FORMAT_BYTE] & 0x0F;
	int rc;

	c->method = OSD_SEC_NOSEC;
	/* 1. Format; "no capability" only where NOSEC is required. */
	if (format == 0 && required == OSD_SEC_NOSEC)
		return 0;
	if (format != (c->ver == OSD_V1 ? 1 : 2) || !cap_canonical(c))
		return cap_fail(c, CAP_FORMAT_BYTE);
	/* 2. Method. */
	if (cap->security_method > OSD_SEC_ALLDATA || cap->security_method < required)
		return cap_fail(c, CAP_METHOD_BYTE);
	c->method = cap->security_method;
	if (c->method != OSD_SEC_NOSEC) {
		/* 3. Algorithm, 4. key, 5. signature, 6. nonce. */
		if (cap->icv_algorithm != OSD_ICV_ALG_HMAC_SHA1)
			return cap_fail(c, CAP_KEY_VERSION_BYTE);
		if ((rc = make_capkey(c)))
			return rc;
		if ((rc = check_signature(c, token, token_len))) {
			/* An unverified request gets no response ICV. */
			osd__sec_release(c);
			return rc;
		}
		c->capent->verified = 1;
		if (c->method >= OSD_SEC_CMDRSP && !c->precheck && (rc = check_nonce(c, &d)))
			return rc;
	}
	if ((rc = check_capability(c, &d)))
		return rc;
	if (c->method == OSD_SEC_ALLDATA && !c->precheck)
		return check_data_out(c);
	return 0;
}

int osd__sec_response_icv(struct osd__cmd *c, uint8_t status, const uint8_t *sense,
			  size_t sense_len, uint8_t icv[OSD_HMAC_LEN])
{
	struct iovec v[2] = { { &status, 1 }, { (void *)sense, sense_len } };

	if (!c->capkey || c->method < OSD_SEC_CMDRSP)
		return -ENOKEY;
	return osd_sec_bound_icv(c->capkey, OSD_ICV_RESPONSE, request_icv(c), v,
				 sense_len ? 2 : 1, icv);
}

void osd__sec_datain_block(struct osd__cmd *c)
{
	struct osd_xfer *x = c->x;
	size_t icv_len = osd_cdb_icv_len(c->ver);
	uint64_t off = c->cdb.data_in_icv_offset;
	size_t data = c->data_len < x->in_len ? c->data_len : x->in_len;
	int max = 2 * (x->in_iovcnt > 0 ? x->in_iovcnt : 1) + 1, n = 1;
	struct iovec *v;
	uint8_t block[DIN_BLOCK_COUNTS + OSD_ICV_MAX_LEN] = { 0 }, mac[OSD_HMAC_LEN];

	if (off == OSD_OFFSET_NONE || off > x->in_len || icv_len + DIN_BLOCK_COUNTS > x->in_len - off)
		return;
	v = calloc((size_t)max, sizeof(*v));
	if (!v)
		return;
	osd__put_be64(block, data);
	osd__put_be64(block + 8, c->attr_len);
	v[0].iov_base = block;
	v[0].iov_len = DIN_BLOCK_COUNTS;
	n += osd__iov_slice(x->in_iov, x->in_iovcnt, 0, data, v + n, max - n, NULL);
	if (c->attr_len)
		n += osd__iov_slice(x->in_iov, x->in_iovcnt, (size_t)c->attr_off, c->attr_len,
				    v + n, max - n, NULL);
	if (osd_sec_bound_icv(c->capkey, OSD_ICV_DATA_IN, request_icv(c), v, n, mac) == 0) {
		memcpy(block + DIN_BLOCK_COUNTS, mac, OSD_HMAC_LEN);
		size_t end = c->attr_len ? (size_t)c->attr_off + c->attr_len : data;

		osd__resp_zero(x, end, (size_t)off);
		osd__resp_data(x, (size_t)off, block, DIN_BLOCK_COUNTS + icv_len);
	}
	free(v);
}
