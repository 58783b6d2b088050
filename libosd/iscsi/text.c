/* iSCSI text segments: NUL-terminated key=value pairs (RFC 7143 6.1). */
#include "iscsi/pdu.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int key_char_ok(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '.' || c == '-' || c == '+' || c == '@' || c == '_';
}

int osd__iscsi_text_next(struct osd__iscsi_kv *kv, const uint8_t *buf, size_t len, size_t *pos)
{
	size_t p = *pos;
	while (p < len && buf[p] == 0) /* padding or an empty pair */
		p++;
	if (p >= len) {
		*pos = p;
		return 0;
	}
	const uint8_t *end = memchr(buf + p, 0, len - p);
	if (!end)
		return -EBADMSG;
	const uint8_t *eq = memchr(buf + p, '=', (size_t)(end - (buf + p)));
	if (!eq)
		return -EBADMSG;
	size_t klen = (size_t)(eq - (buf + p));
	size_t vlen = (size_t)(end - eq - 1);
	if (klen == 0 || klen > OSD_ISCSI_MAX_KEY || vlen > OSD_ISCSI_MAX_VALUE)
		return -EBADMSG;
	for (size_t i = 0; i < klen; i++)
		if (!key_char_ok(buf[p + i]))
			return -EBADMSG;
	kv->key = (const char *)buf + p;
	kv->key_len = klen;
	kv->value = (const char *)eq + 1;
	kv->value_len = vlen;
	*pos = (size_t)(end - buf) + 1;
	return 1;
}

int osd__iscsi_kv_is(const struct osd__iscsi_kv *kv, const char *key)
{
	return strlen(key) == kv->key_len && memcmp(kv->key, key, kv->key_len) == 0;
}

static int reserve(struct osd__iscsi_text *t, size_t need)
{
	if (need > OSD_ISCSI_MAX_TEXT - t->len)
		return -EMSGSIZE;
	if (t->len + need > t->cap) {
		size_t cap = t->cap ? t->cap : 256;
		while (cap < t->len + need)
			cap *= 2;
		uint8_t *d = realloc(t->data, cap);
		if (!d)
			return -ENOMEM;
		t->data = d;
		t->cap = cap;
	}
	return 0;
}

int osd__iscsi_text_add_raw(struct osd__iscsi_text *t, const uint8_t *data, size_t len)
{
	int rc = reserve(t, len);
	if (rc)
		return rc;
	memcpy(t->data + t->len, data, len);
	t->len += len;
	return 0;
}

int osd__iscsi_text_add(struct osd__iscsi_text *t, const char *key, const char *value)
{
	size_t kl = strlen(key), vl = strlen(value);
	size_t need = kl + 1 + vl + 1;
	int rc = reserve(t, need);
	if (rc)
		return rc;
	uint8_t *w = t->data + t->len;
	memcpy(w, key, kl);
	w[kl] = '=';
	memcpy(w + kl + 1, value, vl);
	w[kl + 1 + vl] = 0;
	t->len += need;
	return 0;
}

int osd__iscsi_text_add_num(struct osd__iscsi_text *t, const char *key, uint64_t value)
{
	char v[24];
	snprintf(v, sizeof(v), "%" PRIu64, value);
	return osd__iscsi_text_add(t, key, v);
}

void osd__iscsi_text_free(struct osd__iscsi_text *t)
{
	free(t->data);
	memset(t, 0, sizeof(*t));
}

int osd__iscsi_parse_number(const struct osd__iscsi_kv *kv, uint64_t max, uint64_t *out)
{
	const char *s = kv->value;
	size_t n = kv->value_len;
	int base = 10;
	if (n > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		s += 2;
		n -= 2;
	}
	if (n == 0 || n > 20)
		return -EINVAL;
	uint64_t v = 0;
	for (size_t i = 0; i < n; i++) {
		int d = osd__iscsi_hexval(s[i]);
		if (d < 0 || d >= base)
			return -EINVAL;
		if (v > (UINT64_MAX - (uint64_t)d) / (uint64_t)base)
			return -EINVAL;
		v = v * (uint64_t)base + (uint64_t)d;
	}
	if (v > max)
		return -EINVAL;
	*out = v;
	return 0;
}
