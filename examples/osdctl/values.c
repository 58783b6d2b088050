/* osdctl: parsing numbers and attribute values from the command line. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "osdctl.h"

/* Decimal, or hexadecimal with a 0x prefix; the whole string must parse. */
int ctl_parse_u64(const char *s, uint64_t *v)
{
	int base = 10;
	char *end;

	if (!s || !*s || *s == '-' || *s == '+')
		return -EINVAL;
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		s += 2;
		if (!*s)
			return -EINVAL;
	}
	errno = 0;
	*v = strtoull(s, &end, base);
	if (errno || *end)
		return -EINVAL;
	return 0;
}

/*
 * An attribute value: with @p text the bytes of the string; "0x..." an even
 * number of hex digits as raw bytes; otherwise a decimal number stored
 * big-endian in @p size bytes (1, 2, 4 or 8; default 8).
 */
int ctl_parse_value(const char *s, int text, unsigned size, uint8_t *buf, size_t cap,
		    size_t *len)
{
	size_t n;
	uint64_t v;

	if (text) {
		n = strlen(s);
		if (n > cap)
			return -E2BIG;
		memcpy(buf, s, n);
		*len = n;
		return 0;
	}
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		const char *h = s + 2;

		n = strlen(h);
		if (n == 0 || n % 2)
			return -EINVAL;
		if (n / 2 > cap)
			return -E2BIG;
		if (tc_parse_hex(h, n / 2, buf))
			return -EINVAL;
		*len = n / 2;
		return 0;
	}
	if (size == 0)
		size = 8;
	if ((size != 1 && size != 2 && size != 4 && size != 8) || size > cap)
		return -EINVAL;
	if (ctl_parse_u64(s, &v))
		return -EINVAL;
	if (size < 8 && v >> (8 * size))
		return -ERANGE;
	for (unsigned i = 0; i < size; i++)
		buf[i] = (uint8_t)(v >> (8 * (size - 1 - i)));
	*len = size;
	return 0;
}

int ctl_read_all(FILE *f, uint8_t **buf, size_t *len)
{
	size_t cap = 65536, n = 0;
	uint8_t *b = malloc(cap);

	if (!b)
		return -ENOMEM;
	for (;;) {
		size_t got;

		if (n == cap) {
			uint8_t *nb = realloc(b, cap * 2);

			if (!nb) {
				free(b);
				return -ENOMEM;
			}
			b = nb;
			cap *= 2;
		}
		got = fread(b + n, 1, cap - n, f);
		n += got;
		if (got == 0) {
			if (ferror(f)) {
				free(b);
				return -EIO;
			}
			break;
		}
	}
	*buf = b;
	*len = n;
	return 0;
}
