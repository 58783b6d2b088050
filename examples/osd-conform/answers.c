/* See answers.h. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "answers.h"

#define INQ_MIN 36          /* standard INQUIRY data up to the product revision */
#define INQ_VD_FIRST 58     /* version descriptors: bytes 58-73 (SPC-4) */
#define INQ_VD_END 74
#define PAGE_HDR 8          /* ATTRIBUTES PAGE, PAGE LENGTH */
#define TIMESTAMPS_LEN 30   /* five 6-byte timestamps */

static uint16_t be16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static uint32_t be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static int fail(char *why, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail(char *why, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, len, fmt, ap);
	va_end(ap);
	return -1;
}

/* The OSD version a version descriptor names (SPC-4 version descriptor
 * table: 0340h-035Fh OSD-1, 0440h-045Fh OSD-2), or 0. */
static int descriptor_version(uint16_t v)
{
	if (v >= 0x0340 && v <= 0x035F)
		return OSD_V1;
	if (v >= 0x0440 && v <= 0x045F)
		return OSD_V2;
	return 0;
}

int cf_check_inquiry(const uint8_t *d, size_t n, enum osd_version ver, char *why, size_t len)
{
	int any = 0, mine = 0;

	if (n < INQ_MIN)
		return fail(why, len, "standard data of %zu bytes, at least 36 expected", n);
	if ((d[0] & 0x1F) != 0x11 || (d[0] >> 5) != 0)
		return fail(why, len, "peripheral qualifier %u type %02Xh, expected 0 and 11h "
			    "(object-based storage)", d[0] >> 5, d[0] & 0x1F);
	if ((d[3] & 0x0F) != 2)
		return fail(why, len, "RESPONSE DATA FORMAT %u, expected 2", d[3] & 0x0F);
	if (d[4] < INQ_MIN - 5)
		return fail(why, len, "ADDITIONAL LENGTH %u, at least 31 expected", d[4]);
	for (size_t off = INQ_VD_FIRST; off + 2 <= INQ_VD_END && off + 2 <= n &&
	     off + 2 <= (size_t)d[4] + 5; off += 2) {
		int v = descriptor_version(be16(d + off));

		any |= v != 0;
		mine |= v == (int)ver;
	}
	if (any && !mine)
		return fail(why, len, "the version descriptors name OSD but not OSD-%d, the version "
			    "this run speaks", ver);
	snprintf(why, len, "type 11h%s", mine ? ", version descriptor present" :
		 ", no OSD version descriptor");
	return 0;
}

int cf_check_vpd_pages(const uint8_t *d, size_t n, char *why, size_t len)
{
	size_t pages;

	if (n < 4 || (d[0] & 0x1F) != 0x11 || d[1] != 0x00)
		return fail(why, len, "VPD page 00h header: type %02Xh page %02Xh (%zu bytes)",
			    n ? d[0] & 0x1F : 0, n > 1 ? d[1] : 0, n);
	pages = be16(d + 2);
	if (pages + 4 > n)
		return fail(why, len, "PAGE LENGTH %zu beyond the %zu bytes sent", pages, n);
	for (size_t i = 0; i < pages; i++)
		if (d[4 + i] == 0x00)
			return snprintf(why, len, "%zu pages listed", pages), 0;
	return fail(why, len, "page 00h does not list itself");
}

int cf_check_report_luns(const uint8_t *d, size_t n, char *why, size_t len)
{
	uint32_t list;

	if (n < 16)
		return fail(why, len, "%zu bytes: a header and at least one LUN expected", n);
	list = be32(d);
	if (list < 8 || list % 8)
		return fail(why, len, "LUN LIST LENGTH %u: a multiple of 8, at least one LUN "
			    "expected", list);
	snprintf(why, len, "%u LUNs", list / 8);
	return 0;
}

int cf_check_timestamps_page(const uint8_t *pg, size_t n, uint32_t page, char *why,
			     size_t len)
{
	uint32_t plen;

	if (n < PAGE_HDR)
		return fail(why, len, "a page of %zu bytes, no page header", n);
	if (be32(pg) != page)
		return fail(why, len, "page %08Xh returned for %08Xh", be32(pg), page);
	plen = be32(pg + 4);
	if (plen < TIMESTAMPS_LEN || n < PAGE_HDR + TIMESTAMPS_LEN)
		return fail(why, len, "timestamps page of %u bytes (%zu sent), at least 30 "
			    "expected", plen, n);
	if (!memcmp(pg + PAGE_HDR, "\0\0\0\0\0\0", 6))
		return fail(why, len, "CREATED TIME is zero");
	snprintf(why, len, "timestamps page in page format");
	return 0;
}
