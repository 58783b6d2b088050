/* Operational parameter negotiation (RFC 7143 sections 6.2 and 13). */
#include "iscsi/pdu.h"

#include <errno.h>
#include <stddef.h>
#include <string.h>

void osd__iscsi_params_default(struct osd__iscsi_params *p)
{
	memset(p, 0, sizeof(*p));
	p->max_recv_dsl_initiator = 8192;
	p->max_recv_dsl_target = 8192;
	p->first_burst = 65536;
	p->max_burst = 262144;
	p->immediate_data = 1;
	p->initial_r2t = 1;
	p->max_outstanding_r2t = 1;
	p->max_connections = 1;
	p->time2wait = 2;
	p->time2retain = 20;
	p->error_recovery_level = 0;
	p->data_pdu_in_order = 1;
	p->data_sequence_in_order = 1;
}

/* How a key's two values combine (RFC 7143 6.2.2). */
enum combine { C_MIN, C_MAX, C_AND, C_OR, C_DECLARE };

struct key_rule {
	const char *name;
	enum combine how;
	uint32_t lo, hi;     /* numeric range */
	size_t field;        /* offsetof into struct osd__iscsi_params */
};

#define NUM(n, h, l, u, f) { n, h, l, u, offsetof(struct osd__iscsi_params, f) }
#define BOOL(n, h, f) { n, h, 0, 1, offsetof(struct osd__iscsi_params, f) }

static const struct key_rule rules[] = {
	NUM("FirstBurstLength", C_MIN, 512, 0xFFFFFF, first_burst),
	NUM("MaxBurstLength", C_MIN, 512, 0xFFFFFF, max_burst),
	NUM("MaxOutstandingR2T", C_MIN, 1, 65535, max_outstanding_r2t),
	NUM("MaxConnections", C_MIN, 1, 65535, max_connections),
	NUM("DefaultTime2Wait", C_MAX, 0, 3600, time2wait),
	NUM("DefaultTime2Retain", C_MIN, 0, 3600, time2retain),
	NUM("ErrorRecoveryLevel", C_MIN, 0, 2, error_recovery_level),
	BOOL("ImmediateData", C_AND, immediate_data),
	BOOL("InitialR2T", C_OR, initial_r2t),
	BOOL("DataPDUInOrder", C_OR, data_pdu_in_order),
	BOOL("DataSequenceInOrder", C_OR, data_sequence_in_order),
};

static const struct key_rule *find_rule(const struct osd__iscsi_kv *kv)
{
	for (size_t i = 0; i < sizeof(rules) / sizeof(rules[0]); i++)
		if (osd__iscsi_kv_is(kv, rules[i].name))
			return &rules[i];
	return NULL;
}

static int value_is(const struct osd__iscsi_kv *kv, const char *v)
{
	return strlen(v) == kv->value_len && memcmp(kv->value, v, kv->value_len) == 0;
}

static int parse_bool(const struct osd__iscsi_kv *kv, int *out)
{
	if (value_is(kv, "Yes"))
		*out = 1;
	else if (value_is(kv, "No"))
		*out = 0;
	else
		return -EINVAL;
	return 0;
}

/* A rule's value field: booleans are int, numbers uint32_t. */
static uint32_t get_field(const struct osd__iscsi_params *p, const struct key_rule *r)
{
	const char *base = (const char *)p + r->field;
	if (r->how == C_AND || r->how == C_OR)
		return (uint32_t)*(const int *)(const void *)base;
	return *(const uint32_t *)(const void *)base;
}

static void set_field(struct osd__iscsi_params *p, const struct key_rule *r, uint32_t v)
{
	char *base = (char *)p + r->field;
	if (r->how == C_AND || r->how == C_OR)
		*(int *)(void *)base = (int)v;
	else
		*(uint32_t *)(void *)base = v;
}

static int parse_rule_value(const struct key_rule *r, const struct osd__iscsi_kv *kv,
			    uint32_t *out)
{
	if (r->how == C_AND || r->how == C_OR) {
		int b;
		if (parse_bool(kv, &b))
			return -EINVAL;
		*out = (uint32_t)b;
		return 0;
	}
	uint64_t v;
	if (osd__iscsi_parse_number(kv, r->hi, &v) || v < r->lo)
		return -EINVAL;
	*out = (uint32_t)v;
	return 0;
}

static uint32_t combine(enum combine how, uint32_t a, uint32_t b)
{
	switch (how) {
	case C_MIN: return a < b ? a : b;
	case C_MAX: return a > b ? a : b;
	case C_AND: return a && b;
	case C_OR: return a || b;
	default: return a;
	}
}

static int add_kv_value(struct osd__iscsi_text *t, const struct osd__iscsi_kv *kv,
			const char *value)
{
	char key[OSD_ISCSI_MAX_KEY + 1];
	memcpy(key, kv->key, kv->key_len);
	key[kv->key_len] = 0;
	return osd__iscsi_text_add(t, key, value);
}

static int add_rule_value(struct osd__iscsi_text *t, const struct key_rule *r, uint32_t v)
{
	if (r->how == C_AND || r->how == C_OR)
		return osd__iscsi_text_add(t, r->name, v ? "Yes" : "No");
	return osd__iscsi_text_add_num(t, r->name, v);
}

/* Pick from the offered list "CRC32C,None" the first value we accept. */
static int negotiate_digest(int *out, int we_allow_crc, const struct osd__iscsi_kv *kv)
{
	size_t i = 0;
	while (i < kv->value_len) {
		size_t j = i;
		while (j < kv->value_len && kv->value[j] != ',')
			j++;
		struct osd__iscsi_kv one = { kv->key, kv->key_len, kv->value + i, j - i };
		if (value_is(&one, "None")) {
			*out = 0;
			return 0;
		}
		if (value_is(&one, "CRC32C") && we_allow_crc) {
			*out = 1;
			return 0;
		}
		i = j + 1;
	}
	return -EINVAL;
}

/* Keys the caller handles itself (login and discovery keys). */
static int is_session_key(const struct osd__iscsi_kv *kv)
{
	static const char *const keys[] = {
		"TargetName", "InitiatorName", "InitiatorAlias", "TargetAlias", "AuthMethod",
		"CHAP_A", "CHAP_I", "CHAP_C", "CHAP_N", "CHAP_R", "SendTargets",
		"TargetAddress", "TargetPortalGroupTag",
	};
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if (osd__iscsi_kv_is(kv, keys[i]))
			return 1;
	return 0;
}

int osd__iscsi_negotiate_offer(struct osd__iscsi_params *p, const struct osd__iscsi_params *ours,
			       const struct osd__iscsi_kv *kv, struct osd__iscsi_text *answer)
{
	if (is_session_key(kv))
		return -ENOENT;
	const struct key_rule *r = find_rule(kv);
	if (r) {
		uint32_t v;
		if (parse_rule_value(r, kv, &v))
			return add_kv_value(answer, kv, "Reject");
		v = combine(r->how, v, get_field(ours, r));
		set_field(p, r, v);
		return add_rule_value(answer, r, v);
	}
	if (osd__iscsi_kv_is(kv, "HeaderDigest") || osd__iscsi_kv_is(kv, "DataDigest")) {
		int hdr = osd__iscsi_kv_is(kv, "HeaderDigest");
		int *field = hdr ? &p->header_digest : &p->data_digest;
		if (negotiate_digest(field, hdr ? ours->header_digest : ours->data_digest, kv))
			return add_kv_value(answer, kv, "Reject");
		return add_kv_value(answer, kv, *field ? "CRC32C" : "None");
	}
	if (osd__iscsi_kv_is(kv, "MaxRecvDataSegmentLength")) {
		uint64_t v;
		if (osd__iscsi_parse_number(kv, 0xFFFFFF, &v) || v < 512)
			return add_kv_value(answer, kv, "Reject");
		p->max_recv_dsl_initiator = (uint32_t)v; /* declarative: no answer */
		return 0;
	}
	if (osd__iscsi_kv_is(kv, "SessionType")) {
		if (value_is(kv, "Discovery"))
			p->discovery = 1;
		else if (value_is(kv, "Normal"))
			p->discovery = 0;
		else
			return add_kv_value(answer, kv, "Reject");
		return 0;
	}
	if (osd__iscsi_kv_is(kv, "IFMarker") || osd__iscsi_kv_is(kv, "OFMarker"))
		return add_kv_value(answer, kv, "No"); /* markers: not supported */
	if (osd__iscsi_kv_is(kv, "IFMarkInt") || osd__iscsi_kv_is(kv, "OFMarkInt"))
		return add_kv_value(answer, kv, "Irrelevant");
	return add_kv_value(answer, kv, "NotUnderstood");
}

int osd__iscsi_negotiate_answer(struct osd__iscsi_params *p, const struct osd__iscsi_kv *kv)
{
	if (is_session_key(kv))
		return -ENOENT;
	if (value_is(kv, "Irrelevant"))
		return 0;
	if (value_is(kv, "Reject") || value_is(kv, "NotUnderstood"))
		return -EPROTO;
	const struct key_rule *r = find_rule(kv);
	if (r) {
		uint32_t v, offered = get_field(p, r);
		if (parse_rule_value(r, kv, &v))
			return -EPROTO;
		/* The answer must be what combining could have produced. */
		if (combine(r->how, offered, v) != v)
			return -EPROTO;
		set_field(p, r, v);
		return 0;
	}
	if (osd__iscsi_kv_is(kv, "HeaderDigest") || osd__iscsi_kv_is(kv, "DataDigest")) {
		int *field = osd__iscsi_kv_is(kv, "HeaderDigest") ? &p->header_digest
								   : &p->data_digest;
		if (value_is(kv, "CRC32C"))
			*field = 1;
		else if (value_is(kv, "None"))
			*field = 0;
		else
			return -EPROTO;
		return 0;
	}
	if (osd__iscsi_kv_is(kv, "MaxRecvDataSegmentLength")) {
		uint64_t v;
		if (osd__iscsi_parse_number(kv, 0xFFFFFF, &v) || v < 512)
			return -EPROTO;
		p->max_recv_dsl_target = (uint32_t)v;
		return 0;
	}
	if (osd__iscsi_kv_is(kv, "IFMarker") || osd__iscsi_kv_is(kv, "OFMarker"))
		return value_is(kv, "No") ? 0 : -EPROTO;
	return -EPROTO;
}
