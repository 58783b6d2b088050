/* Decode arbitrary bytes as sense data; descriptor sense that decodes must
 * re-encode to bytes that decode to the same fields, and describing it must
 * stay within the buffer it is given. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <osd/sense.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct osd_sense a, b;
	uint8_t out[OSD_SENSE_MAX_LEN + 16];
	char msg[48];
	int n, need;

	if (osd_sense_decode(data, size, &a) != 0)
		return 0;
	(void)osd_sense_errno(&a);
	need = osd_sense_describe(&a, msg, sizeof(msg));
	if (need < 0 || strlen(msg) != ((size_t)need < sizeof(msg) ? (size_t)need : sizeof(msg) - 1))
		abort();
	if (a.response_code != 0x72 && a.response_code != 0x73)
		return 0;
	n = osd_sense_encode(&a, out, sizeof(out));
	if (n < 8 || n > 8 + 255)
		abort();
	if (osd_sense_decode(out, (size_t)n, &b) != 0)
		abort();
	if (memcmp(&a, &b, sizeof(a)) != 0)
		abort();
	return 0;
}
