/*
 * The layout backend's on-object decoders (docs/layout.md) from arbitrary
 * bytes: the device table (superblock attribute 0x10000/5), a data map
 * attribute (0x10004/1) and a device identity (0x10004/2); and the data map
 * text osdfs_data_map_parse() reads (mkfs --layout, the osdfs.layout xattr).
 *
 * Whatever a decoder accepts must re-encode to the very same bytes (the
 * formats have no slack), and an accepted data map that resolves on some
 * device count must place every logical row on a valid component inside
 * the group, with component lengths that never exceed the rows written.
 * Accepted map text must format to text that parses to the same map.
 *
 * Input layout:
 *   byte 0   bits 0-1: 0 device table, 1 data map, 2 identity, 3 map text;
 *            bits 2-7: device count for the map (1 + value)
 *   rest     the attribute value
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "layout/layout_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fail(const char *what)
{
	fprintf(stderr, "fuzz_layout_table: %s\n", what);
	abort();
}

static void check_table(const uint8_t *in, size_t len)
{
	struct lay_table t;
	uint8_t *enc;
	char err[128];
	size_t elen;

	if (lay_table_decode(&t, in, len, err, sizeof(err)) != 0) {
		if (!memchr(err, 0, sizeof(err)) || err[0] == 0)
			fail("decode error without a reason");
		return;
	}
	elen = lay_table_len(&t);
	if (elen > len)
		fail("decoded table longer than its bytes");
	enc = malloc(elen);
	if (!enc)
		return;
	lay_table_encode(enc, &t);
	if (memcmp(enc, in, elen) != 0)
		fail("re-encoded table differs");
	free(enc);
}

static void check_map(const uint8_t *in, size_t len, unsigned ndev)
{
	struct osdfs_data_map m;
	struct lay_map lm;
	uint8_t enc[LAY_MAP_LEN];

	if (lay_map_decode(&m, in, len) != 0)
		return;
	lay_map_encode(enc, &m);
	if (memcmp(enc, in, 2) != 0 || memcmp(enc + 4, in + 4, 16) != 0 ||
	    memcmp(enc + 24, in + 24, 8) != 0)
		fail("re-encoded map differs");
	if (lay_map_resolve(&lm, &m, ndev) != 0)
		return;
	if (lm.nc > ndev || lm.Wd == 0 || lm.Wd + lm.P != lm.W)
		fail("resolved map does not fit");
	for (uint64_t R = 0; R < 64; R++) {
		struct lay_row r = lay_row_of(&lm, R);
		uint64_t seen = 0;

		if (r.g >= lm.G || lay_row_logical(&lm, r.g, r.row) != R)
			fail("row mapping is not a bijection");
		for (unsigned k = 0; k < lm.Wd; k++)
			seen |= 1ULL << lay_data_pos(&lm, r.row, k);
		for (unsigned p = 0; p < lm.P; p++)
			seen |= 1ULL << lay_parity_pos(&lm, r.row, p);
		if (seen != (lm.W == 64 ? ~0ULL : (1ULL << lm.W) - 1))
			fail("a row's positions do not cover the group");
	}
	for (unsigned c = 0; c < lm.nc; c++)
		if (lay_comp_len(&lm, c, 3 * lm.su + 1) > 4 * lm.su)
			fail("component longer than the data");
}

static void check_text(const uint8_t *in, size_t len)
{
	struct osdfs_data_map m, again;
	char text[256], out[256], err[128];
	int n;

	if (len >= sizeof(text))
		return;
	memcpy(text, in, len);
	text[len] = 0;
	if (osdfs_data_map_parse(&m, text, err, sizeof(err)) != 0) {
		if (!memchr(err, 0, sizeof(err)) || err[0] == 0)
			fail("parse error without a reason");
		return;
	}
	n = osdfs_data_map_format(&m, out, sizeof(out));
	if (n < 0 || (size_t)n >= sizeof(out))
		fail("accepted map does not format");
	if (osdfs_data_map_parse(&again, out, err, sizeof(err)) != 0)
		fail("formatted map text does not parse");
	if (again.stripe_unit != m.stripe_unit || again.num_comps != m.num_comps ||
	    again.group_width != m.group_width || again.group_depth != m.group_depth ||
	    again.mirror_cnt != m.mirror_cnt || again.raid != m.raid)
		fail("formatted map text parses to another map");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct lay_self s;
	uint8_t enc[LAY_SELF_LEN];

	if (size < 1)
		return 0;
	switch (data[0] & 3) {
	case 0:
		check_table(data + 1, size - 1);
		break;
	case 1:
		check_map(data + 1, size - 1, 1u + (data[0] >> 2));
		break;
	case 3:
		check_text(data + 1, size - 1);
		break;
	default:
		if (lay_self_decode(&s, data + 1, size - 1) == 0) {
			lay_self_encode(enc, &s);
			if (memcmp(enc, data + 1, 36) != 0)
				fail("re-encoded identity differs");
		}
		break;
	}
	return 0;
}
