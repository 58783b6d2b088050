/*
 * The plain SCSI commands an OSD logical unit answers besides the OSD service
 * actions: TEST UNIT READY, INQUIRY (standard data and VPD pages 00h, 80h,
 * 83h, B0h, B1h), REPORT LUNS and REQUEST SENSE.
 */
#include <string.h>

#include "proto/byteorder.h"
#include "response.h"
#include "target_internal.h"

#define OP_TEST_UNIT_READY 0x00
#define OP_REQUEST_SENSE 0x03
#define OP_INQUIRY 0x12
#define OP_REPORT_LUNS 0xA0

#define PERIPHERAL_OSD 0x11
#define INQ_STD_LEN 96
#define INQ_SPC_VERSION 0x05   /* SPC-3 */
#define INQ_RESPONSE_FORMAT 0x02
#define VPD_SUPPORTED 0x00
#define VPD_SERIAL 0x80
#define VPD_DEVICE_ID 0x83
#define VPD_OSD_INFO 0xB0
#define VPD_SECURITY_TOKEN 0xB1
#define VPD_MAX 512

static const uint16_t version_descriptors[] = {
	0x0355, /* OSD T10/1355-D revision 10 */
	0x0356, /* OSD ANSI INCITS 400-2004 */
	0x0440, /* OSD-2 (no version claimed) */
	0x0448, /* OSD-2 ANSI INCITS 458-2011 */
};
/* OSD_TARGET_QUIRK_OSD1_DESCRIPTOR: what a target seen in the field claims. */
static const uint16_t quirk_osd1_descriptor = 0x0340; /* OSD (no version claimed) */

static size_t cdb_len_for(uint8_t op)
{
	return op == OP_REPORT_LUNS ? 12 : 6;
}

static void put_ascii(uint8_t *p, const char *s, size_t width)
{
	size_t n = strlen(s);

	memset(p, ' ', width);
	memcpy(p, s, n < width ? n : width);
}

static void reply(struct osd_xfer *x, const uint8_t *buf, size_t len, size_t alloc)
{
	osd__resp_data(x, 0, buf, len < alloc ? len : alloc);
	osd__resp_good(x);
}

static void inquiry_standard(const osd_target *tgt, struct osd_xfer *x, size_t alloc)
{
	uint8_t d[INQ_STD_LEN] = { 0 };

	d[0] = PERIPHERAL_OSD;
	d[2] = INQ_SPC_VERSION;
	d[3] = INQ_RESPONSE_FORMAT;
	d[4] = INQ_STD_LEN - 5;
	put_ascii(d + 8, OSD__VENDOR_ID, 8);
	put_ascii(d + 16, OSD__PRODUCT_ID, 16);
	put_ascii(d + 32, OSD__PRODUCT_REV, 4);
	if (tgt->quirks & OSD_TARGET_QUIRK_OSD1_DESCRIPTOR)
		osd__put_be16(d + 58, quirk_osd1_descriptor);
	else
		for (size_t i = 0; i < sizeof(version_descriptors) / sizeof(version_descriptors[0]);
		     i++)
			osd__put_be16(d + 58 + 2 * i, version_descriptors[i]);
	reply(x, d, sizeof(d), alloc);
}

/* Build VPD page @p page into @p d; returns its length or 0 if unsupported. */
static size_t vpd_page(osd_target *tgt, uint8_t page, const uint8_t *token, size_t token_len,
		       uint8_t *d)
{
	static const uint8_t supported[] = { VPD_SUPPORTED, VPD_SERIAL, VPD_DEVICE_ID,
					     VPD_OSD_INFO, VPD_SECURITY_TOKEN };
	char serial[OSD__SERIAL_LEN];
	size_t n = 0;

	d[0] = PERIPHERAL_OSD;
	d[1] = page;
	switch (page) {
	case VPD_SUPPORTED:
		memcpy(d + 4, supported, sizeof(supported));
		n = sizeof(supported);
		break;
	case VPD_SERIAL:
		osd__target_serial(tgt, serial);
		memcpy(d + 4, serial, OSD__SERIAL_LEN);
		n = OSD__SERIAL_LEN;
		break;
	case VPD_DEVICE_ID:
		/* One T10 vendor-id designator (ASCII, logical unit): vendor + serial. */
		d[4] = 0x02;
		d[5] = 0x01;
		d[7] = 8 + OSD__SERIAL_LEN;
		put_ascii(d + 8, OSD__VENDOR_ID, 8);
		osd__target_serial(tgt, serial);
		memcpy(d + 16, serial, OSD__SERIAL_LEN);
		n = 4 + 8 + OSD__SERIAL_LEN;
		break;
	case VPD_OSD_INFO:
		/* Our choice (docs/target.md): the 20-byte OSD system id. */
		memcpy(d + 4, tgt->system_id, OSD_SYSTEM_ID_LEN);
		n = OSD_SYSTEM_ID_LEN;
		break;
	case VPD_SECURITY_TOKEN:
		n = token && token_len <= VPD_MAX - 4 ? token_len : 0;
		if (n)
			memcpy(d + 4, token, n);
		break;
	default:
		return 0;
	}
	osd__put_be16(d + 2, (uint16_t)n);
	return n + 4;
}

static void inquiry(osd_target *tgt, struct osd_xfer *x, const uint8_t *token, size_t token_len)
{
	const uint8_t *cdb = x->cdb;
	size_t alloc = osd__get_be16(cdb + 3);
	uint8_t d[VPD_MAX] = { 0 };
	size_t n;

	if (cdb[1] & 0xFE) {
		osd__resp_error(x, OSD_SK_ILLEGAL_REQUEST, OSD_ASC_INVALID_FIELD_IN_CDB, 1);
		return;
	}
	if (!(cdb[1] & 1)) {
		if (cdb[2]) {
			osd__resp_error(x, OSD_SK_ILLEGAL_REQUEST, OSD_ASC_INVALID_FIELD_IN_CDB, 2);
			return;
		}
		inquiry_standard(tgt, x, alloc);
		return;
	}
	n = vpd_page(tgt, cdb[2], token, token_len, d);
	if (!n) {
		osd__resp_error(x, OSD_SK_ILLEGAL_REQUEST, OSD_ASC_INVALID_FIELD_IN_CDB, 2);
		return;
	}
	reply(x, d, n, alloc);
}

static void report_luns(struct osd_xfer *x)
{
	uint8_t d[16] = { 0 };

	if (x->cdb[2] > 2) { /* SELECT REPORT: 0, 1, 2 all list LUN 0 */
		osd__resp_error(x, OSD_SK_ILLEGAL_REQUEST, OSD_ASC_INVALID_FIELD_IN_CDB, 2);
		return;
	}
	osd__put_be32(d, 8);
	reply(x, d, sizeof(d), osd__get_be32(x->cdb + 6));
}

/* Errors are reported with CHECK CONDITION at once: there is never pending sense. */
static void request_sense(struct osd_xfer *x)
{
	uint8_t d[18] = { 0 };
	size_t n;

	if (x->cdb[1] & 1) {
		d[0] = 0x72; /* descriptor format, NO SENSE */
		n = 8;
	} else {
		d[0] = 0x70; /* fixed format, NO SENSE */
		d[7] = 10;
		n = 18;
	}
	reply(x, d, n, x->cdb[4]);
}

void osd__scsi_execute(osd_target *tgt, struct osd_xfer *x,
		       const uint8_t *token, size_t token_len)
{
	uint8_t op = x->cdb[0];

	if (op != OP_TEST_UNIT_READY && op != OP_INQUIRY && op != OP_REPORT_LUNS &&
	    op != OP_REQUEST_SENSE) {
		osd__resp_error(x, OSD_SK_ILLEGAL_REQUEST, OSD_ASC_INVALID_OPCODE, 0);
		return;
	}
	if (x->cdb_len < cdb_len_for(op)) {
		osd__resp_error(x, OSD_SK_ILLEGAL_REQUEST, OSD_ASC_INVALID_FIELD_IN_CDB, 0);
		return;
	}
	switch (op) {
	case OP_TEST_UNIT_READY:
		osd__resp_good(x);
		break;
	case OP_INQUIRY:
		inquiry(tgt, x, token, token_len);
		break;
	case OP_REPORT_LUNS:
		report_luns(x);
		break;
	default:
		request_sense(x);
		break;
	}
}
