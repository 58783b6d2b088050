/*
 * Keys derived from other keys: capability keys (a credential's secret) and
 * SET KEY children. docs/security.md section 2 fixes both formulas.
 */
#include <errno.h>
#include <sys/uio.h>

#include <openssl/crypto.h>

#include <osd/cdb.h>
#include <osd/security.h>

int osd_capability_key(osd_key *secret, enum osd_version version,
		       const struct osd_capability *cap,
		       const uint8_t system_id[OSD_SYSTEM_ID_LEN],
		       uint8_t cap_key[OSD_HMAC_LEN])
{
	uint8_t enc[OSD_CAP_V2_LEN];
	struct iovec iov[2];
	int n, rc;

	if (secret == NULL || cap == NULL || system_id == NULL || cap_key == NULL)
		return -EINVAL;
	if (version != OSD_V1 && version != OSD_V2)
		return -EINVAL;
	/* Exactly the bytes the CDB carries, so both sides hash the same image. */
	n = osd_capability_encode(version, cap, enc, sizeof(enc));
	if (n < 0)
		return n;
	iov[0].iov_base = enc;
	iov[0].iov_len = (size_t)n;
	iov[1].iov_base = (void *)system_id;
	iov[1].iov_len = OSD_SYSTEM_ID_LEN;
	rc = osd_key_hmac(secret, iov, 2, cap_key);
	OPENSSL_cleanse(enc, sizeof(enc));
	return rc;
}

int osd_key_derive(osd_key *parent, const uint8_t seed[OSD_SEED_LEN],
		   const uint8_t key_id[OSD_KEY_ID_LEN], uint8_t key_to_set,
		   uint8_t key_version, uint8_t child[OSD_HMAC_LEN])
{
	uint8_t tail[2] = { key_to_set, key_version };
	struct iovec iov[3];

	if (parent == NULL || seed == NULL || key_id == NULL || child == NULL)
		return -EINVAL;
	/* KEY TO SET is 1..3 (0 is reserved), KEY VERSION a 4-bit one. */
	if (key_to_set < OSD_KEY_ROOT || key_to_set > OSD_KEY_WORKING || key_version > 15)
		return -EINVAL;
	/* Only working keys have versions; see docs/security.md 2.1. */
	if (key_to_set != OSD_KEY_WORKING && key_version != 0)
		return -EINVAL;
	iov[0].iov_base = (void *)seed;
	iov[0].iov_len = OSD_SEED_LEN;
	iov[1].iov_base = (void *)key_id;
	iov[1].iov_len = OSD_KEY_ID_LEN;
	iov[2].iov_base = tail;
	iov[2].iov_len = sizeof(tail);
	return osd_key_hmac(parent, iov, 3, child);
}
