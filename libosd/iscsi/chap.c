/* CHAP with MD5 (RFC 1994) and the binary value encodings of RFC 7143 6.1. */
#include "iscsi/pdu.h"

#include <errno.h>
#include <openssl/evp.h>
#include <string.h>

int osd__iscsi_chap_response(uint8_t out[OSD_ISCSI_CHAP_DIGEST_LEN], uint8_t id,
			     const uint8_t *secret, size_t secret_len,
			     const uint8_t *challenge, size_t challenge_len)
{
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	unsigned int n = 0;
	int ok = ctx && EVP_DigestInit_ex(ctx, EVP_md5(), NULL) &&
		 EVP_DigestUpdate(ctx, &id, 1) &&
		 EVP_DigestUpdate(ctx, secret, secret_len) &&
		 EVP_DigestUpdate(ctx, challenge, challenge_len) &&
		 EVP_DigestFinal_ex(ctx, out, &n) && n == OSD_ISCSI_CHAP_DIGEST_LEN;
	EVP_MD_CTX_free(ctx);
	return ok ? 0 : -EIO;
}

static int b64_value(char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '+')
		return 62;
	if (c == '/')
		return 63;
	return -1;
}

static long hex_decode(uint8_t *out, size_t cap, const char *s, size_t n)
{
	/* An odd digit count has an implied leading zero. */
	size_t bytes = (n + 1) / 2;
	if (n == 0 || bytes > cap)
		return -EINVAL;
	size_t i = 0, o = 0;
	if (n & 1) {
		int v = osd__iscsi_hexval(s[0]);
		if (v < 0)
			return -EINVAL;
		out[o++] = (uint8_t)v;
		i = 1;
	}
	for (; i < n; i += 2) {
		int hi = osd__iscsi_hexval(s[i]), lo = osd__iscsi_hexval(s[i + 1]);
		if (hi < 0 || lo < 0)
			return -EINVAL;
		out[o++] = (uint8_t)(hi << 4 | lo);
	}
	return (long)o;
}

static long b64_decode(uint8_t *out, size_t cap, const char *s, size_t n)
{
	while (n && s[n - 1] == '=')
		n--;
	if (n == 0 || n % 4 == 1)
		return -EINVAL;
	size_t o = 0;
	uint32_t acc = 0;
	int bits = 0;
	for (size_t i = 0; i < n; i++) {
		int v = b64_value(s[i]);
		if (v < 0)
			return -EINVAL;
		acc = (acc << 6 | (uint32_t)v) & 0xFFFFFF;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			if (o >= cap)
				return -EINVAL;
			out[o++] = (uint8_t)(acc >> bits);
		}
	}
	return (long)o;
}

long osd__iscsi_binary_decode(uint8_t *out, size_t cap, const char *value, size_t value_len)
{
	if (value_len < 3 || value[0] != '0')
		return -EINVAL;
	if (value[1] == 'x' || value[1] == 'X')
		return hex_decode(out, cap, value + 2, value_len - 2);
	if (value[1] == 'b' || value[1] == 'B')
		return b64_decode(out, cap, value + 2, value_len - 2);
	return -EINVAL;
}

void osd__iscsi_binary_encode(char *out, const uint8_t *in, size_t len)
{
	static const char digits[] = "0123456789abcdef";
	*out++ = '0';
	*out++ = 'x';
	for (size_t i = 0; i < len; i++) {
		*out++ = digits[in[i] >> 4];
		*out++ = digits[in[i] & 15];
	}
	*out = 0;
}
