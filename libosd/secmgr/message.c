/*
 * The credential protocol's messages (docs/security-manager.md section 2):
 * a 12-byte header (magic "OSDS", protocol version, type, reserved, body
 * length) and a fixed body per type. Every field is checked: a decoder that
 * let reserved bits through would let two encodings mean one message.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <osd/secmgr.h>
#include "proto/byteorder.h"

#define MAGIC "OSDS"
#define REQUEST_BODY 50
#define GRANT_FIXED 48          /* id, system id, version, reserved, capability key */
#define REFUSE_FIXED 8          /* id, reason, text length, reserved */

static int bad(char *err, size_t errlen, int rc, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int bad(char *err, size_t errlen, int rc, const char *fmt, ...)
{
	va_list ap;

	if (err && errlen) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return rc;
}

static size_t cap_len(enum osd_version v)
{
	return v == OSD_V1 ? OSD_CAP_V1_LEN : v == OSD_V2 ? OSD_CAP_V2_LEN : 0;
}

static int printable(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s[i] < 0x20 || (unsigned char)s[i] > 0x7e)
			return 0;
	return 1;
}

/* Permission bits a capability of @p v can carry (docs/security.md section 1). */
static uint16_t perm_mask(enum osd_version v)
{
	return v == OSD_V1 ? OSD_PERM_ALL_V1 : OSD_PERM_ALL_V2;
}

static size_t body_len(const struct osd_secmsg *m)
{
	switch (m->type) {
	case OSD_SECMSG_REQUEST: return REQUEST_BODY;
	case OSD_SECMSG_GRANT: return cap_len(m->cred.version) ? GRANT_FIXED + cap_len(m->cred.version) : 0;
	case OSD_SECMSG_REFUSE: return REFUSE_FIXED + strnlen(m->text, sizeof(m->text));
	}
	return 0;
}

static int encode_request(const struct osd_secmsg *m, uint8_t *b)
{
	const struct osd_cred_request *r = &m->req;

	if (!cap_len(r->version) || (unsigned)r->method > OSD_SEC_ALLDATA ||
	    (r->permissions & ~perm_mask(r->version)))
		return -EINVAL;
	memcpy(b + 4, m->system_id, OSD_SYSTEM_ID_LEN);
	b[24] = (uint8_t)r->version;
	b[25] = r->is_collection ? 1 : 0;
	b[26] = (uint8_t)r->method;
	b[27] = 0;
	osd__put_be16(b + 28, r->permissions);
	osd__put_be64(b + 30, r->obj.partition);
	osd__put_be64(b + 38, r->obj.id);
	osd__put_be32(b + 46, m->lifetime_ms);
	return 0;
}

static int encode_grant(const struct osd_secmsg *m, uint8_t *b)
{
	size_t cl = cap_len(m->cred.version);
	int rc;

	memcpy(b + 4, m->system_id, OSD_SYSTEM_ID_LEN);
	b[24] = (uint8_t)m->cred.version;
	memset(b + 25, 0, 3);
	rc = osd_capability_encode(m->cred.version, &m->cred.cap, b + 28, cl);
	if (rc < 0)
		return rc;
	if (b[28] == 0)
		return -EINVAL; /* format 0: no capability */
	memcpy(b + 28 + cl, m->cred.cap_key, OSD_HMAC_LEN);
	return 0;
}

static int encode_refuse(const struct osd_secmsg *m, uint8_t *b)
{
	size_t n = strnlen(m->text, sizeof(m->text));

	if (n > OSD_SECMSG_REASON_MAX || !printable(m->text, n) || m->reason == 0)
		return -EINVAL;
	osd__put_be16(b + 4, m->reason);
	b[6] = (uint8_t)n;
	b[7] = 0;
	memcpy(b + 8, m->text, n);
	return 0;
}

int osd_secmsg_encode(const struct osd_secmsg *m, uint8_t *out, size_t outlen)
{
	size_t blen;
	int rc;

	if (!m || !out)
		return -EINVAL;
	blen = body_len(m);
	if (!blen)
		return -EINVAL;
	if (outlen < OSD_SECMSG_HDR_LEN + blen)
		return -ENOBUFS;
	memcpy(out, MAGIC, 4);
	out[4] = OSD_SECMSG_PROTOCOL;
	out[5] = (uint8_t)m->type;
	out[6] = out[7] = 0;
	osd__put_be32(out + 8, (uint32_t)blen);
	osd__put_be32(out + OSD_SECMSG_HDR_LEN, m->id);
	rc = m->type == OSD_SECMSG_REQUEST ? encode_request(m, out + OSD_SECMSG_HDR_LEN) :
	     m->type == OSD_SECMSG_GRANT ? encode_grant(m, out + OSD_SECMSG_HDR_LEN) :
	     encode_refuse(m, out + OSD_SECMSG_HDR_LEN);
	return rc < 0 ? rc : (int)(OSD_SECMSG_HDR_LEN + blen);
}

static int decode_request(const uint8_t *b, size_t n, struct osd_secmsg *m, char *err,
			  size_t errlen)
{
	struct osd_cred_request *r = &m->req;

	if (n != REQUEST_BODY)
		return bad(err, errlen, -EBADMSG, "REQUEST body is %zu bytes, not %d", n,
			   REQUEST_BODY);
	memcpy(m->system_id, b + 4, OSD_SYSTEM_ID_LEN);
	if (!cap_len((enum osd_version)b[24]))
		return bad(err, errlen, -EBADMSG, "REQUEST names OSD version %u (1 or 2)", b[24]);
	r->version = (enum osd_version)b[24];
	if (b[25] > 1 || b[27] != 0)
		return bad(err, errlen, -EBADMSG, "REQUEST flags 0x%02x/0x%02x: reserved bits set",
			   b[25], b[27]);
	r->is_collection = b[25];
	if (b[26] > OSD_SEC_ALLDATA)
		return bad(err, errlen, -EBADMSG, "REQUEST security method %u (0-3)", b[26]);
	r->method = (enum osd_sec_method)b[26];
	r->permissions = osd__get_be16(b + 28);
	if (r->permissions & ~perm_mask(r->version))
		return bad(err, errlen, -EBADMSG, "REQUEST permissions 0x%04x: bits OSD-%d lacks",
			   r->permissions, (int)r->version);
	r->obj.partition = osd__get_be64(b + 30);
	r->obj.id = osd__get_be64(b + 38);
	if (!r->obj.partition && r->obj.id)
		return bad(err, errlen, -EBADMSG, "REQUEST names object 0x%llx of partition 0",
			   (unsigned long long)r->obj.id);
	if (r->is_collection && !r->obj.id)
		return bad(err, errlen, -EBADMSG, "REQUEST names a collection without an id");
	m->lifetime_ms = osd__get_be32(b + 46);
	return 0;
}

static int decode_grant(const uint8_t *b, size_t n, struct osd_secmsg *m, char *err,
			size_t errlen)
{
	enum osd_version v;
	uint8_t again[OSD_CAP_V2_LEN];
	size_t cl;

	if (n < GRANT_FIXED)
		return bad(err, errlen, -EBADMSG, "GRANT body of %zu bytes is short", n);
	v = (enum osd_version)b[24];
	cl = cap_len(v);
	if (!cl)
		return bad(err, errlen, -EBADMSG, "GRANT names OSD version %u (1 or 2)", b[24]);
	if (n != GRANT_FIXED + cl)
		return bad(err, errlen, -EBADMSG, "GRANT body is %zu bytes, not %zu for OSD-%d",
			   n, GRANT_FIXED + cl, (int)v);
	if (b[25] | b[26] | b[27])
		return bad(err, errlen, -EBADMSG, "GRANT reserved bytes are not zero");
	memcpy(m->system_id, b + 4, OSD_SYSTEM_ID_LEN);
	m->cred.version = v;
	memcpy(m->cred.system_id, b + 4, OSD_SYSTEM_ID_LEN);
	if (osd_capability_decode(v, b + 28, cl, &m->cred.cap) < 0 || m->cred.cap.format == 0)
		return bad(err, errlen, -EBADMSG, "GRANT capability does not decode");
	/* canonical: the capability key covers these bytes (docs/security.md 5, check 1) */
	if (osd_capability_encode(v, &m->cred.cap, again, cl) != (int)cl ||
	    memcmp(again, b + 28, cl))
		return bad(err, errlen, -EBADMSG, "GRANT capability is not canonical "
			   "(reserved bits set)");
	memcpy(m->cred.cap_key, b + 28 + cl, OSD_HMAC_LEN);
	return 0;
}

static int decode_refuse(const uint8_t *b, size_t n, struct osd_secmsg *m, char *err,
			 size_t errlen)
{
	if (n < REFUSE_FIXED || n != REFUSE_FIXED + (size_t)b[6])
		return bad(err, errlen, -EBADMSG, "REFUSE body of %zu bytes does not hold its "
			   "text", n);
	m->reason = osd__get_be16(b + 4);
	if (m->reason < OSD_SECREF_DENIED || m->reason > OSD_SECREF_INTERNAL)
		return bad(err, errlen, -EBADMSG, "REFUSE reason %u is unknown", m->reason);
	if (b[6] > OSD_SECMSG_REASON_MAX || b[7] != 0 || !printable((const char *)b + 8, b[6]))
		return bad(err, errlen, -EBADMSG, "REFUSE text is too long, not printable "
			   "ASCII or followed by a reserved byte");
	memcpy(m->text, b + 8, b[6]);
	m->text[b[6]] = 0;
	return 0;
}

/* Body length limits per type, checked before the body is read (so a peer
 * cannot make the reader wait for, or allocate, more than a message). */
static int length_ok(uint8_t type, uint32_t n)
{
	switch (type) {
	case OSD_SECMSG_REQUEST: return n == REQUEST_BODY;
	case OSD_SECMSG_GRANT: return n == GRANT_FIXED + OSD_CAP_V1_LEN ||
				      n == GRANT_FIXED + OSD_CAP_V2_LEN;
	case OSD_SECMSG_REFUSE: return n >= REFUSE_FIXED && n <= REFUSE_FIXED + OSD_SECMSG_REASON_MAX;
	}
	return 0;
}

int osd_secmsg_decode(const uint8_t *in, size_t len, struct osd_secmsg *m, char *err,
		      size_t errlen)
{
	uint32_t n;
	int rc;

	if (!m || (!in && len))
		return -EINVAL;
	memset(m, 0, sizeof(*m));
	if (err && errlen)
		*err = 0;
	if (len == 0)
		return 0;
	if (memcmp(in, MAGIC, len < 4 ? len : 4))
		return bad(err, errlen, -EBADMSG, "not a credential protocol message (bad magic)");
	if (len >= 5 && in[4] != OSD_SECMSG_PROTOCOL)
		return bad(err, errlen, -EPROTONOSUPPORT, "protocol version %u (this side speaks "
			   "%d)", in[4], OSD_SECMSG_PROTOCOL);
	if (len >= 6 && (in[5] < OSD_SECMSG_REQUEST || in[5] > OSD_SECMSG_REFUSE))
		return bad(err, errlen, -EBADMSG, "unknown message type %u", in[5]);
	if (len >= 8 && (in[6] | in[7]))
		return bad(err, errlen, -EBADMSG, "reserved header bytes are not zero");
	if (len < OSD_SECMSG_HDR_LEN)
		return 0;
	n = osd__get_be32(in + 8);
	if (!length_ok(in[5], n))
		return bad(err, errlen, -EBADMSG, "body length %u does not fit message type %u",
			   n, in[5]);
	if (len < OSD_SECMSG_HDR_LEN + (size_t)n)
		return 0;
	m->type = (enum osd_secmsg_type)in[5];
	in += OSD_SECMSG_HDR_LEN;
	m->id = osd__get_be32(in);
	rc = m->type == OSD_SECMSG_REQUEST ? decode_request(in, n, m, err, errlen) :
	     m->type == OSD_SECMSG_GRANT ? decode_grant(in, n, m, err, errlen) :
	     decode_refuse(in, n, m, err, errlen);
	if (rc < 0) {
		memset(m, 0, sizeof(*m));
		return rc;
	}
	return (int)(OSD_SECMSG_HDR_LEN + n);
}
