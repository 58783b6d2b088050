/* Names from a filesystem are untrusted bytes: the tools' JSON string writer
 * (tc_json_string_n(), examples/common/report.c) must turn any of them into a
 * string literal that is valid UTF-8 and that decodes, with PEP 383's
 * surrogateescape (\udc80..\udcff = the byte 0x80..0xff), to exactly the
 * input. Checked here with a decoder of its own. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "toolcommon.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* One code point of well-formed UTF-8 at @p p (RFC 3629); its length, or 0. */
static size_t utf8_decode(const uint8_t *p, size_t n, uint32_t *cp)
{
	size_t len = p[0] < 0x80 ? 1 : p[0] >= 0xF0 ? 4 : p[0] >= 0xE0 ? 3 : 2;
	static const uint32_t min[5] = { 0, 0, 0x80, 0x800, 0x10000 };
	uint32_t v;

	if (len == 1) {
		*cp = p[0];
		return 1;
	}
	if (p[0] < 0xC0 || p[0] > 0xF4 || n < len)
		return 0;
	v = p[0] & (0x7F >> len);
	for (size_t i = 1; i < len; i++) {
		if ((p[i] & 0xC0) != 0x80)
			return 0;
		v = v << 6 | (p[i] & 0x3F);
	}
	if (v < min[len] || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF))
		return 0;
	*cp = v;
	return len;
}

static unsigned hex4(const char *s)
{
	char buf[5] = { s[0], s[1], s[2], s[3], 0 };

	return (unsigned)strtoul(buf, NULL, 16);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *out = NULL;
	size_t len = 0, i = 1, k = 0;
	uint8_t *back = malloc(size + 1);
	FILE *f = open_memstream(&out, &len);

	if (!f || !back)
		abort();
	tc_json_string_n(f, (const char *)data, size);
	fclose(f);
	if (len < 2 || out[0] != '"' || out[len - 1] != '"')
		abort();
	while (i < len - 1) {
		uint32_t cp;
		size_t n = utf8_decode((const uint8_t *)out + i, len - 1 - i, &cp);

		if (n == 0 || cp < 0x20 || cp == '"') /* not UTF-8, or unescaped */
			abort();
		if (cp != '\\') {
			memcpy(back + k, out + i, n);
			k += n;
			i += n;
			continue;
		}
		if (i + 1 >= len - 1)
			abort();
		switch (out[i + 1]) {
		case '"': back[k++] = '"'; i += 2; break;
		case '\\': back[k++] = '\\'; i += 2; break;
		case 'n': back[k++] = '\n'; i += 2; break;
		case 't': back[k++] = '\t'; i += 2; break;
		case 'r': back[k++] = '\r'; i += 2; break;
		case 'u':
			if (i + 6 > len - 1)
				abort();
			cp = hex4(out + i + 2);
			if (cp >= 0xDC80 && cp <= 0xDCFF)
				back[k++] = (uint8_t)(cp - 0xDC00); /* a byte that was not UTF-8 */
			else if (cp < 0x20 || cp == 0x7F)
				back[k++] = (uint8_t)cp;
			else
				abort(); /* nothing else is escaped */
			i += 6;
			break;
		default:
			abort();
		}
		if (k > size)
			abort();
	}
	if (k != size || memcmp(back, data, size) != 0)
		abort();
	free(back);
	free(out);
	return 0;
}
