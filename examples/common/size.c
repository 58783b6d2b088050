/* Human-readable sizes: parsing "10G" and printing "1.5M" (binary units). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "toolcommon.h"

static const char units[] = "KMGTPE";

int tc_parse_u64(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (!s || !*s || *s == '-' || *s == '+' || *s == ' ')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno == ERANGE)
		return -ERANGE;
	if (end == s || *end)
		return -EINVAL;
	*out = v;
	return 0;
}

/* Multiplier of a unit suffix ("", "K", "KiB", "kB", "M", ...), or 0. */
static uint64_t suffix_scale(const char *s)
{
	const char *u;
	uint64_t scale = 1;

	if (*s == '\0' || strcmp(s, "B") == 0)
		return 1;
	u = strchr(units, s[0] == 'k' ? 'K' : s[0]);
	if (!u || s[0] == '\0')
		return 0;
	for (const char *p = units; p <= u; p++)
		scale <<= 10;
	s++;
	if (*s == 'i')
		s++;
	if (*s == 'B')
		s++;
	return *s ? 0 : scale;
}

int tc_parse_size(const char *s, uint64_t *out)
{
	char *end;
	uint64_t whole, scale, frac_num = 0, frac_den = 1;

	if (!s || *s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	whole = strtoull(s, &end, 10);
	if (errno == ERANGE)
		return -ERANGE;
	if (*end == '.') {
		for (end++; *end >= '0' && *end <= '9'; end++) {
			if (frac_den < 1000000000ULL) {
				frac_num = frac_num * 10 + (uint64_t)(*end - '0');
				frac_den *= 10;
			}
		}
	}
	scale = suffix_scale(end);
	if (scale == 0)
		return -EINVAL;
	if (whole > UINT64_MAX / scale)
		return -ERANGE;
	*out = whole * scale + (uint64_t)((double)frac_num / (double)frac_den * (double)scale);
	return 0;
}

void tc_format_size(uint64_t bytes, char *buf, size_t size)
{
	double v = (double)bytes;
	int u = -1;

	while (v >= 1024.0 && u < (int)sizeof(units) - 2) {
		v /= 1024.0;
		u++;
	}
	if (u < 0)
		snprintf(buf, size, "%" PRIu64, bytes);
	else if (v < 10.0)
		snprintf(buf, size, "%.1f%c", v, units[u]);
	else
		snprintf(buf, size, "%.0f%c", v, units[u]);
}
