/*
 * The layout's device health record (superblock attribute 0x10004/4,
 * docs/layout.md) from arbitrary bytes: every device carries a copy and the
 * newest is trusted at open, so a damaged or hostile one must be refused
 * with a reason, never crash. Whatever the decoder accepts must re-encode
 * to the very same bytes (the format has no slack), hold NUL-terminated
 * reasons and name only slots of its own device count.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "layout/layout_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fail(const char *what)
{
	fprintf(stderr, "fuzz_layout_health: %s\n", what);
	abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct lay_health h;
	char err[128];
	uint8_t *enc;

	if (lay_health_decode(&h, data, size, err, sizeof(err)) != 0) {
		if (!memchr(err, 0, sizeof(err)) || err[0] == 0)
			fail("decode error without a reason");
		return 0;
	}
	if (lay_health_len(&h) != size)
		fail("accepted length differs from the record's");
	for (unsigned i = 0; i < h.nev; i++) {
		if (!memchr(h.ev[i].reason, 0, sizeof(h.ev[i].reason)))
			fail("reason not terminated");
		if (h.ev[i].slot >= (int)h.ndev)
			fail("event names a slot past the devices");
		if (strcmp(osdfs_layout_event_name(h.ev[i].kind), "?") == 0)
			fail("accepted an unknown event kind");
	}
	enc = malloc(size);
	if (!enc)
		return 0;
	lay_health_encode(enc, &h);
	if (memcmp(enc, data, size) != 0)
		fail("re-encoded record differs");
	free(enc);
	return 0;
}
