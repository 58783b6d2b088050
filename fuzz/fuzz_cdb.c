/* Decode arbitrary bytes as a CDB; whatever decodes must re-encode to a CDB
 * that decodes to the same fields. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <osd/cdb.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct osd_cdb a, b;
	uint8_t out[OSD_CDB_MAX_LEN];
	uint16_t field;
	int n;

	if (osd_cdb_decode(data, size, &a, &field) != 0)
		return 0;
	n = osd_cdb_encode(&a, out, sizeof(out));
	if (n != (int)size)
		abort();
	if (osd_cdb_decode(out, (size_t)n, &b, &field) != 0)
		abort();
	if (memcmp(&a, &b, sizeof(a)) != 0)
		abort();
	return 0;
}
