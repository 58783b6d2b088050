/*
 * Secret keys of the target (docs/security.md section 2), kept durably in the
 * store as attributes of private pages that GET/SET ATTRIBUTES never reach:
 * root key on (0,0) page OSD__PRIV_PAGE_ROOT attribute 1; a partition's key on
 * (P,0) page OSD__PRIV_PAGE_PARTITION attribute 1 and its working key v at
 * attribute 0x10 + v. Key identifiers are published in the standard
 * policy/security pages.
 */
#ifndef OSDTARGET_SECURITY_KEYSTORE_H
#define OSDTARGET_SECURITY_KEYSTORE_H

#include <stdint.h>
#include <osd/cdb.h>
#include <osd/security.h>

#include "store/store.h"

/* Load a key; @p kind is enum osd_key_to_set. @return 0 or -ENOKEY. */
int osd__key_load(struct osd_store *st, uint64_t pid, enum osd_key_to_set kind,
		  uint8_t version, uint8_t key[OSD_HMAC_LEN]);

/* Whether a root key is installed: the root is then never NOSEC (docs/security.md 5). */
int osd__root_key_present(struct osd_store *st);

/* Store a key durably and publish @p key_id (may be NULL: no identifier). */
int osd__key_save(struct osd_store *st, uint64_t pid, enum osd_key_to_set kind,
		  uint8_t version, const uint8_t key[OSD_HMAC_LEN],
		  const uint8_t key_id[OSD_KEY_ID_LEN]);

#endif
