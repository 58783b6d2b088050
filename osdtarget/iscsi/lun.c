/*
 * Commands the server answers for the target as a whole: REPORT LUNS (all
 * LUNs of the server, whichever LUN it is sent to) and any command sent to a
 * LUN that does not exist (SPC-4 4.6.22: INQUIRY answers peripheral
 * qualifier 011b, everything else LOGICAL UNIT NOT SUPPORTED).
 */
#include "iscsi/server.h"

#include "proto/byteorder.h"
#include "response.h"

#include <stdlib.h>
#include <string.h>

#define OP_INQUIRY 0x12
#define OP_REPORT_LUNS 0xA0
#define ASC_LUN_NOT_SUPPORTED 0x2500
#define INQ_LEN 36

static void report_luns(struct osd_target_iscsi *srv, struct osd_xfer *x)
{
	if (x->cdb_len < 12 || x->cdb[2] > 2) {
		osd__resp_error(x, OSD_SK_ILLEGAL_REQUEST, OSD_ASC_INVALID_FIELD_IN_CDB,
				x->cdb_len < 12 ? -1 : 2);
		return;
	}
	size_t alloc = osd__get_be32(x->cdb + 6);
	size_t len = 8 + 8 * srv->nluns;
	uint8_t *d = calloc(1, len);
	if (!d) {
		osd__resp_error(x, OSD_SK_HARDWARE_ERROR, OSD_ASC_SYSTEM_RESOURCE_FAILURE, -1);
		return;
	}
	osd__put_be32(d, (uint32_t)(8 * srv->nluns));
	for (size_t i = 0; i < srv->nluns; i++)
		osd__iscsi_lun_encode(d + 8 + 8 * i, (uint16_t)i);
	osd__resp_data(x, 0, d, len < alloc ? len : alloc);
	osd__resp_good(x);
	free(d);
}

static void inquiry_no_lun(struct osd_xfer *x)
{
	uint8_t d[INQ_LEN] = { 0 };
	if (x->cdb_len < 6 || (x->cdb[1] & 1)) {
		osd__resp_error(x, OSD_SK_ILLEGAL_REQUEST, ASC_LUN_NOT_SUPPORTED, -1);
		return;
	}
	d[0] = 0x7F; /* qualifier 011b: no logical unit here; type 1Fh */
	d[2] = 0x05;
	d[3] = 0x02;
	d[4] = INQ_LEN - 5;
	memcpy(d + 8, "OSD     ", 8);
	size_t alloc = osd__get_be16(x->cdb + 3);
	osd__resp_data(x, 0, d, INQ_LEN < alloc ? INQ_LEN : alloc);
	osd__resp_good(x);
}

void osd__tgt_iscsi_lun_execute(struct osd_target_iscsi *srv, struct osd_xfer *x)
{
	if (x->cdb_len && x->cdb[0] == OP_REPORT_LUNS)
		report_luns(srv, x);
	else if (x->cdb_len && x->cdb[0] == OP_INQUIRY)
		inquiry_no_lun(x);
	else
		osd__resp_error(x, OSD_SK_ILLEGAL_REQUEST, ASC_LUN_NOT_SUPPORTED, -1);
}
