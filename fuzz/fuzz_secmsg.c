/* Decode arbitrary bytes as a credential protocol message (what osd-secd
 * reads from any client that completed a TLS handshake, and a client from
 * the manager). A message that decodes must encode back to exactly its
 * bytes: the codec accepts one encoding per message. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <osd/secmgr.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct osd_secmsg m;
	uint8_t out[OSD_SECMSG_MAX_LEN];
	char err[160];
	int n = osd_secmsg_decode(data, size, &m, err, sizeof(err)), e;

	if (n < 0 && !err[0])
		abort(); /* every refusal says why */
	if (n <= 0)
		return 0;
	if ((size_t)n > size || n > OSD_SECMSG_MAX_LEN)
		abort();
	e = osd_secmsg_encode(&m, out, sizeof(out));
	if (e != n || memcmp(out, data, (size_t)n))
		abort();
	return 0;
}
