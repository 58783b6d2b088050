/*
 * osd-conform's checks of what a target answers (examples/osd-conform/
 * answers.c): standard INQUIRY data, VPD page 00h, REPORT LUNS data and a
 * timestamps page in page format. The first byte picks the check (and for
 * INQUIRY the OSD version); the rest is the answer, in a buffer of exactly
 * its length. An accepted answer must have what the check promises, and the
 * reason must be a string within its buffer.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "answers.h"

#define TIMESTAMPS_PAGE 0x3u /* user object timestamps page */

static uint32_t be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char why[64];
	uint8_t *d;
	size_t n;
	int rc;

	if (size < 1)
		return 0;
	n = size - 1;
	d = malloc(n ? n : 1);
	if (!d)
		return 0;
	memcpy(d, data + 1, n);
	memset(why, 0x55, sizeof(why));
	switch (data[0] % 5) {
	case 0:
	case 1:
		rc = cf_check_inquiry(d, n, data[0] % 5 == 0 ? OSD_V1 : OSD_V2, why, sizeof(why));
		if (rc == 0 && !(n >= 36 && (d[0] & 0x1F) == 0x11 && (d[3] & 0x0F) == 2))
			abort(); /* accepted without what the check promises */
		break;
	case 2:
		rc = cf_check_vpd_pages(d, n, why, sizeof(why));
		if (rc == 0 && !(n >= 5 && d[1] == 0 && (size_t)(d[2] << 8 | d[3]) + 4 <= n))
			abort(); /* accepted without what the check promises */
		break;
	case 3:
		rc = cf_check_report_luns(d, n, why, sizeof(why));
		if (rc == 0 && !(n >= 16 && be32(d) >= 8 && be32(d) % 8 == 0))
			abort(); /* accepted without what the check promises */
		break;
	default:
		rc = cf_check_timestamps_page(d, n, TIMESTAMPS_PAGE, why, sizeof(why));
		if (rc == 0 && !(n >= 38 && be32(d) == TIMESTAMPS_PAGE && be32(d + 4) >= 30))
			abort(); /* accepted without what the check promises */
		break;
	}
	if (!memchr(why, '\0', sizeof(why)))
		abort();
	free(d);
	return 0;
}
