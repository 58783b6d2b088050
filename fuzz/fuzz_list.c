/* Decode arbitrary bytes as LIST (v1/v2) or QUERY results (first byte picks);
 * what decodes must re-encode to a result with the same ids and header fields.
 * The strict check of answers (proto/answer.h) sees the same bytes as an
 * answer that filled its allocation (first byte / 3, bit 0) or left room. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <osd/list.h>
#include "proto/answer.h"

#define MAX_IDS 4096

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int decode(int mode, const uint8_t *buf, size_t len, struct osd_list_result *r)
{
	if (mode == 2)
		return osd_query_result_decode(buf, len, r);
	return osd_list_decode(mode ? OSD_V2 : OSD_V1, buf, len, r);
}

/* An answer the strict check accepts decodes, and one that left room in
 * its allocation carries every id ADDITIONAL LENGTH claims. */
static void check_answer(int mode, const uint8_t *buf, size_t len, int filled)
{
	size_t alloc = filled ? len : len + 64, hdr = mode == 2 ? 12 : OSD_LIST_HEADER_LEN;
	struct osd_list_result r;
	char why[256];
	int rc;

	if (osd__list_answer_check(mode ? OSD_V2 : OSD_V1, mode == 2, buf, len, alloc,
				   why, sizeof(why)) != 0)
		return;
	rc = decode(mode, buf, len, &r);
	if (rc == -ENOTSUP)
		return;
	if (rc != 0)
		abort();
	if (!filled && r.additional_length != UINT64_MAX &&
	    (uint64_t)r.num_ids * 8 + hdr - 8 != r.additional_length)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint64_t ids[MAX_IDS];
	static uint8_t out[24 + 8 * MAX_IDS];
	struct osd_list_result a, b;
	int mode, n;

	if (size < 1)
		return 0;
	mode = data[0] % 3;
	check_answer(mode, data + 1, size - 1, (data[0] / 3) & 1);
	if (decode(mode, data + 1, size - 1, &a) != 0)
		return 0;
	if (a.num_ids && (a.ids < data || a.num_ids > (size_t)(data + size - a.ids) / 8))
		abort(); /* ids outside the input */
	if (a.num_ids > MAX_IDS)
		return 0;
	for (size_t i = 0; i < a.num_ids; i++)
		ids[i] = osd_list_id(&a, i);
	if (mode == 2)
		n = osd_query_result_encode(ids, a.num_ids, a.num_ids, out, sizeof(out));
	else
		n = osd_list_encode(mode ? OSD_V2 : OSD_V1, a.format, a.root, a.continuation_id,
				    a.list_id, ids, a.num_ids, a.num_ids, out, sizeof(out));
	if (n < 0 || decode(mode, out, (size_t)n, &b) != 0)
		abort();
	if (b.num_ids != a.num_ids || b.format != a.format || b.root != a.root ||
	    b.continuation_id != a.continuation_id || b.list_id != a.list_id)
		abort();
	for (size_t i = 0; i < a.num_ids; i++)
		if (osd_list_id(&b, i) != ids[i])
			abort();
	return 0;
}
