/*
 * The layout's dirty-region log (superblock attribute 0x10004/5,
 * docs/layout.md) from arbitrary bytes: every live device carries a copy and
 * the newest is trusted at open to say what a returned device lacks, so a
 * damaged or hostile one must be refused with a reason, never crash.
 * Whatever the decoder accepts must hold strictly ascending keys, no more
 * than OSDFS_LAYOUT_DIRTY_MAX, and re-encode to the very same bytes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "layout/layout_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fail(const char *what)
{
	fprintf(stderr, "fuzz_layout_dirty: %s\n", what);
	abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct lay_dirty d = { 0 };
	char err[128] = "";
	uint8_t *enc;

	if (lay_dirty_decode(&d, data, size, err, sizeof(err)) != 0) {
		if (d.k)
			fail("refused log left keys allocated");
		return 0;
	}
	if (lay_dirty_len(d.n) != size || d.n > OSDFS_LAYOUT_DIRTY_MAX)
		fail("accepted length differs from the log's");
	if (d.overflow && d.n)
		fail("an overflowed log with keys");
	for (size_t i = 1; i < d.n; i++)
		if (d.k[i - 1].oid > d.k[i].oid ||
		    (d.k[i - 1].oid == d.k[i].oid && d.k[i - 1].region >= d.k[i].region))
			fail("keys not strictly ascending");
	enc = malloc(size);
	if (enc) {
		lay_dirty_encode(enc, &d);
		if (memcmp(enc, data, size) != 0)
			fail("re-encoded log differs");
		free(enc);
	}
	free(d.k);
	return 0;
}
