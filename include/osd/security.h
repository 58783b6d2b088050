/**
 * @file osd/security.h
 * @brief OSD security: secret keys, capability keys, request/response and data
 *        integrity check values, nonces, the key hierarchy and a credential issuer.
 *
 * The only ICV algorithm is HMAC-SHA1 (20 bytes). In OSD-2's 32-byte ICV
 * fields the 20 bytes are left-justified and the rest is zero. Which bytes
 * each ICV covers, and how keys are derived, are choices this library made
 * where the drafts could not be checked; docs/security.md states them.
 *
 * Thread-safety: an osd_key is used by one thread at a time (it holds a
 * reusable HMAC context); osd_cred_issuer is internally locked.
 *
 * @defgroup osd_security Security
 * @{
 */
#ifndef OSD_SECURITY_H
#define OSD_SECURITY_H

#include <osd/types.h>
#include <osd/capability.h>

#ifdef __cplusplus
extern "C" {
#endif

struct iovec;

#define OSD_HMAC_LEN 20   /**< HMAC-SHA1 output and key length */

/** A secret key with a reusable HMAC-SHA1 context (opaque). */
typedef struct osd_key osd_key;

/**
 * Create a key from @p len bytes of secret material (copied).
 * @param[out] out the new key, freed with osd_key_free()
 * @return 0, -ENOMEM, -EINVAL for an empty key.
 */
OSD_EXTERN int osd_key_new(osd_key **out, const uint8_t *secret, size_t len);

/** Free a key (wipes the secret). NULL is allowed. */
OSD_EXTERN void osd_key_free(osd_key *key);

/**
 * HMAC-SHA1 of the concatenation of @p iovcnt buffers.
 * @param[out] mac 20 bytes
 * @return 0, -EIO if OpenSSL failed.
 */
OSD_EXTERN int osd_key_hmac(osd_key *key, const struct iovec *iov, int iovcnt,
			    uint8_t mac[OSD_HMAC_LEN]);

/**
 * The capability key (the credential secret the security manager hands out):
 * HMAC(secret, encoded capability || OSD system id).
 * @param secret the working key of the capability's key version (or the
 *               root key for a capability describing the root)
 * @param[out] cap_key 20 bytes
 */
OSD_EXTERN int osd_capability_key(osd_key *secret, enum osd_version version,
				  const struct osd_capability *cap,
				  const uint8_t system_id[OSD_SYSTEM_ID_LEN],
				  uint8_t cap_key[OSD_HMAC_LEN]);

/**
 * Derive a child key from its parent for SET KEY:
 * HMAC(parent, seed || key identifier || key-to-set byte || key version).
 * The OSD and the security manager both compute it; the key never travels.
 * @param[out] child 20 bytes
 */
OSD_EXTERN int osd_key_derive(osd_key *parent, const uint8_t seed[OSD_SEED_LEN],
			      const uint8_t key_id[OSD_KEY_ID_LEN], uint8_t key_to_set,
			      uint8_t key_version, uint8_t child[OSD_HMAC_LEN]);

/**
 * A credential: what a client needs to sign requests for one object.
 * Plain value; copy freely.
 */
struct osd_credential {
	enum osd_version version;             /**< CDB layout it is for */
	struct osd_capability cap;            /**< the capability to place in the CDB */
	uint8_t system_id[OSD_SYSTEM_ID_LEN]; /**< the OSD it is for */
	uint8_t cap_key[OSD_HMAC_LEN];        /**< capability key (secret) */
};

/**
 * Compute the request ICV of an encoded CDB in place and (for CMDRSP and
 * ALLDATA) a fresh nonce, per the capability's security method:
 * CAPKEY: ICV = HMAC(capability key, security token);
 * CMDRSP/ALLDATA: ICV = HMAC(capability key, CDB with the ICV field zeroed).
 * NOSEC leaves the security fields zero.
 * @param capkey a key made from cred->cap_key (callers cache one per credential)
 * @param token the channel's security token (may be NULL/0 for loopback)
 * @param now_ms OSD clock for the nonce timestamp
 * @return 0, -EINVAL for a CDB that is not 200/236 bytes.
 */
OSD_EXTERN int osd_sec_sign_cdb(osd_key *capkey, enum osd_sec_method method,
				uint8_t *cdb, size_t cdb_len,
				const uint8_t *token, size_t token_len, uint64_t now_ms);

/**
 * Verify the request ICV of an encoded CDB (target side) with the capability
 * key the OSD recomputed from its own secret.
 * @return 0 if it matches, -EACCES if not.
 */
OSD_EXTERN int osd_sec_verify_cdb(osd_key *capkey, enum osd_sec_method method,
				  const uint8_t *cdb, size_t cdb_len,
				  const uint8_t *token, size_t token_len);

/**
 * ICV over data segments (ALLDATA data-out/data-in integrity, response ICV):
 * HMAC(capability key, the segments in order).
 * @param[out] icv 20 bytes
 */
OSD_EXTERN int osd_sec_data_icv(osd_key *capkey, const struct iovec *iov, int iovcnt,
				uint8_t icv[OSD_HMAC_LEN]);

/**
 * Make a request nonce: 6-byte @p now_ms timestamp + 6 random bytes.
 * @return 0, -EIO if no randomness was available.
 */
OSD_EXTERN int osd_nonce_make(uint8_t nonce[OSD_NONCE_LEN], uint64_t now_ms);

/** The timestamp part of a nonce. */
OSD_EXTERN uint64_t osd_nonce_time(const uint8_t nonce[OSD_NONCE_LEN]);

/** Current wall clock in milliseconds since the epoch. */
OSD_EXTERN uint64_t osd_now_ms(void);

/** A security manager's key store and credential issuer (opaque). */
typedef struct osd_cred_issuer osd_cred_issuer;

/**
 * Create an issuer for the OSD identified by @p system_id.
 * @param[out] out freed with osd_cred_issuer_free()
 */
OSD_EXTERN int osd_cred_issuer_new(osd_cred_issuer **out,
				   const uint8_t system_id[OSD_SYSTEM_ID_LEN]);

/** Free an issuer (wipes its keys). NULL is allowed. */
OSD_EXTERN void osd_cred_issuer_free(osd_cred_issuer *iss);

/** Install the root key (20 bytes). */
OSD_EXTERN int osd_cred_issuer_set_root_key(osd_cred_issuer *iss, const uint8_t key[OSD_HMAC_LEN]);

/** Install working key @p version (0..15) of @p partition. */
OSD_EXTERN int osd_cred_issuer_set_working_key(osd_cred_issuer *iss, uint64_t partition,
					       uint8_t version, const uint8_t key[OSD_HMAC_LEN]);

/** Parameters of a credential request. Zero-initialise, then set. */
struct osd_cred_request {
	enum osd_version version;   /**< CDB layout */
	struct osd_obj_id obj;      /**< object the capability is for */
	int is_collection;          /**< obj.id names a collection */
	uint16_t permissions;       /**< OSD_PERM_* */
	enum osd_sec_method method; /**< security method */
	uint8_t key_version;        /**< working key to sign with */
	uint64_t expiration;        /**< ms timestamp, 0 = never */
	uint64_t object_created;    /**< ms, 0 = any incarnation */
	uint32_t policy_access_tag; /**< 0 = none */
};

/**
 * Issue a credential.
 * @param[out] out the credential
 * @return 0, -ENOKEY if the issuer has no key for the object's partition and
 *         key version (or no root key for a root capability).
 */
OSD_EXTERN int osd_cred_issue(osd_cred_issuer *iss, const struct osd_cred_request *req,
			      struct osd_credential *out);

#ifdef __cplusplus
}
#endif
/** @} */
#endif
