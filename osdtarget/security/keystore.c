/* Durable storage of the root, partition and working keys. */
#include "security/keystore.h"

#include <errno.h>
#include <string.h>
#include <openssl/crypto.h>
#include <osd/attributes.h>

#include "exec/exec.h"

#define KEY_ATTR_MAIN 1u      /* root key or partition key */
#define KEY_ATTR_WORKING 0x10u /* + version */

static void key_location(uint64_t pid, enum osd_key_to_set kind, uint8_t version,
			 uint32_t *page, uint32_t *num)
{
	*page = pid ? OSD__PRIV_PAGE_PARTITION : OSD__PRIV_PAGE_ROOT;
	*num = kind == OSD_KEY_WORKING ? KEY_ATTR_WORKING + (version & 0xF) : KEY_ATTR_MAIN;
}

static void key_id_location(uint64_t pid, enum osd_key_to_set kind, uint8_t version,
			    uint32_t *page, uint32_t *num)
{
	if (!pid) {
		*page = OSD_APAGE_ROOT_BASE + OSD_APAGE_POLICY_SECURITY;
		*num = OSD_ATTR_PS_ROOT_KEY_ID;
		return;
	}
	*page = OSD_APAGE_PARTITION_BASE + OSD_APAGE_POLICY_SECURITY;
	*num = kind == OSD_KEY_WORKING ? OSD_ATTR_PS_WORKING_KEY_ID(version & 0xF)
				       : OSD_ATTR_PS_PARTITION_KEY_ID;
}

int osd__key_load(struct osd_store *st, uint64_t pid, enum osd_key_to_set kind,
		  uint8_t version, uint8_t key[OSD_HMAC_LEN])
{
	uint32_t page, num;
	size_t len = 0;

	if ((kind == OSD_KEY_ROOT) != (pid == 0))
		return -ENOKEY;
	key_location(pid, kind, version, &page, &num);
	int rc = osd_store_attr_get(st, pid, 0, page, num, key, OSD_HMAC_LEN, &len);

	if (rc < 0 || len != OSD_HMAC_LEN)
		return -ENOKEY;
	return 0;
}

int osd__root_key_present(struct osd_store *st)
{
	uint8_t key[OSD_HMAC_LEN];
	int rc = osd__key_load(st, 0, OSD_KEY_ROOT, 0, key);

	OPENSSL_cleanse(key, sizeof(key));
	return rc == 0;
}

int osd__key_save(struct osd_store *st, uint64_t pid, enum osd_key_to_set kind,
		  uint8_t version, const uint8_t key[OSD_HMAC_LEN],
		  const uint8_t key_id[OSD_KEY_ID_LEN])
{
	uint32_t page, num;
	int rc;

	if ((kind == OSD_KEY_ROOT) != (pid == 0))
		return -EINVAL;
	key_location(pid, kind, version, &page, &num);
	rc = osd_store_attr_set(st, pid, 0, page, num, key, OSD_HMAC_LEN, OSD_STORE_FUA);
	if (rc < 0 || !key_id)
		return rc;
	key_id_location(pid, kind, version, &page, &num);
	return osd_store_attr_set(st, pid, 0, page, num, key_id, OSD_KEY_ID_LEN, OSD_STORE_FUA);
}
