/* Read arbitrary bytes as an attribute list (first byte picks the version);
 * a complete, well-formed list is rewritten with the writer and must read
 * back as the same entries. The same bytes go through the strict check of
 * retrieved attributes (proto/answer.h) as an answer that filled its
 * allocation (first byte bit 1) or left room, with or without a bound on
 * LIST LENGTH (bit 2): it must stay inside the bytes and agree with the
 * reader. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <osd/attr.h>
#include "proto/answer.h"

#define MAX_ENTRIES 256

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int read_all(enum osd_version v, const void *buf, size_t len, struct osd_attr *e,
		    size_t *n, enum osd_list_type *type, int *truncated)
{
	struct osd_attr_reader r;
	int rc;

	*n = 0;
	if (osd_attr_reader_init(&r, v, buf, len) < 0)
		return -1;
	*type = r.type;
	while ((rc = osd_attr_reader_next(&r, &e[*n])) == 1) {
		if (e[*n].value && (const uint8_t *)e[*n].value + e[*n].length >
				   (const uint8_t *)buf + len)
			abort(); /* value outside the buffer */
		if (++*n == MAX_ENTRIES)
			return -1;
	}
	*truncated = osd_attr_reader_truncated(&r);
	return rc;
}

static int same(const struct osd_attr *a, const struct osd_attr *b, enum osd_list_type type)
{
	if (a->page != b->page || a->number != b->number)
		return 0;
	if (type == OSD_LIST_GET)
		return 1;
	if (a->length != b->length || (a->length && memcmp(a->value, b->value, a->length)))
		return 0;
	return type == OSD_LIST_SET || a->object_id == b->object_id;
}

/* An answer the strict check accepts reads to its end without error, and
 * is cut short only when it filled the allocation. */
static void check_answer(enum osd_version v, const uint8_t *data, size_t size)
{
	size_t len = size - 1, alloc = (data[0] & 2) ? len : len + 64;
	uint64_t bound = (data[0] & 4) ? OSD__NO_LIST_BOUND : 65568;
	struct osd_attr_reader r;
	struct osd_attr a;
	char why[256];
	int rc;

	if (osd__attr_answer_check(v, data + 1, len, alloc, bound, why, sizeof(why)) != 0)
		return;
	if (osd_attr_reader_init(&r, v, data + 1, len) < 0)
		abort();
	while ((rc = osd_attr_reader_next(&r, &a)) == 1)
		;
	if (rc != 0 || (osd_attr_reader_truncated(&r) && alloc != len))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct osd_attr first[MAX_ENTRIES], second[MAX_ENTRIES];
	static uint8_t out[1 << 20];
	enum osd_version v;
	enum osd_list_type type, type2;
	struct osd_attr_writer w;
	size_t n, n2;
	int trunc, trunc2;
	long len;

	if (size < 1)
		return 0;
	v = (data[0] & 1) ? OSD_V2 : OSD_V1;
	check_answer(v, data, size);
	if (read_all(v, data + 1, size - 1, first, &n, &type, &trunc) != 0 || trunc)
		return 0;
	if (osd_attr_writer_init(&w, v, type, out, sizeof(out)) != 0)
		abort();
	for (size_t i = 0; i < n; i++)
		if (osd_attr_writer_add(&w, &first[i]) != 0)
			abort();
	len = osd_attr_writer_finish(&w);
	if (len < 0)
		abort();
	if (read_all(v, out, (size_t)len, second, &n2, &type2, &trunc2) != 0 || trunc2)
		abort();
	if (n2 != n || type2 != type)
		abort();
	for (size_t i = 0; i < n; i++)
		if (!same(&first[i], &second[i], type))
			abort();
	return 0;
}
