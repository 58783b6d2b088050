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
 * reusable HMAC context); osd_cred_issuer and osd_nonce_cache are internally
 * locked; everything else is reentrant.
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
 * @param[out] out the new key, freed with osd_key_free(); NULL on failure
 * @param secret   the secret bytes
 * @param len      number of secret bytes (20 for every OSD key)
 * @return 0, -ENOMEM, -EINVAL for an empty key.
 */
OSD_EXTERN int osd_key_new(osd_key **out, const uint8_t *secret, size_t len);

/**
 * Free a key (wipes the secret).
 * @param key the key; NULL is allowed
 */
OSD_EXTERN void osd_key_free(osd_key *key);

/**
 * HMAC-SHA1 of the concatenation of @p iovcnt buffers.
 * @param key    the key (used by one thread at a time)
 * @param iov    the buffers, in order
 * @param iovcnt number of buffers (0 for an empty message)
 * @param[out] mac 20 bytes
 * @return 0, -EINVAL for bad arguments, -EIO if OpenSSL failed.
 */
OSD_EXTERN int osd_key_hmac(osd_key *key, const struct iovec *iov, int iovcnt,
			    uint8_t mac[OSD_HMAC_LEN]);

/**
 * The capability key (the credential secret the security manager hands out):
 * HMAC(secret, encoded capability || OSD system id).
 * @param secret the working key of the capability's key version (or the
 *               root key for a capability describing the root; see
 *               docs/security.md 2.2 for SET KEY)
 * @param version   the CDB layout the capability is encoded in
 * @param cap       the capability
 * @param system_id the OSD SYSTEM ID (root information attribute 3)
 * @param[out] cap_key 20 bytes
 * @return 0, -EINVAL for bad arguments or a capability that cannot be
 *         encoded, -EIO if OpenSSL failed.
 */
OSD_EXTERN int osd_capability_key(osd_key *secret, enum osd_version version,
				  const struct osd_capability *cap,
				  const uint8_t system_id[OSD_SYSTEM_ID_LEN],
				  uint8_t cap_key[OSD_HMAC_LEN]);

/**
 * Derive a child key from its parent for SET KEY:
 * HMAC(parent, seed || key identifier || key-to-set byte || key version).
 * The OSD and the security manager both compute it; the key never travels.
 * @param parent      the key one level up (root key for a partition key,
 *                    partition key for a working key)
 * @param seed        SET KEY CDB bytes 32-51
 * @param key_id      SET KEY CDB bytes 25-31
 * @param key_to_set  enum osd_key_to_set (1 root, 2 partition, 3 working)
 * @param key_version 0..15 for a working key, 0 otherwise
 * @param[out] child 20 bytes
 * @return 0, -EINVAL for bad arguments, -EIO if OpenSSL failed.
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
 * NOSEC leaves the security fields zero. Only the ICV and nonce fields are
 * written, and nothing is written on failure.
 * @param capkey a key made from cred->cap_key (callers cache one per
 *               credential); may be NULL for NOSEC
 * @param method the security method; must equal the one in the CDB's capability
 * @param cdb     the encoded CDB, capability included
 * @param cdb_len 200 (OSD-1) or 236 (OSD-2)
 * @param token the channel's security token (may be NULL/0 for loopback)
 * @param token_len bytes in @p token
 * @param now_ms OSD clock for the nonce timestamp
 * @return 0, -EINVAL for a CDB that is not 200/236 bytes or other bad
 *         arguments (including a method the capability does not state),
 *         -EIO if OpenSSL failed.
 */
OSD_EXTERN int osd_sec_sign_cdb(osd_key *capkey, enum osd_sec_method method,
				uint8_t *cdb, size_t cdb_len,
				const uint8_t *token, size_t token_len, uint64_t now_ms);

/**
 * Verify the request ICV of an encoded CDB (target side) with the capability
 * key the OSD recomputed from its own secret. Nonce freshness is the caller's
 * business (docs/security.md section 4).
 * @param capkey  the recomputed capability key; may be NULL for NOSEC
 * @param method  the security method the capability states
 * @param cdb     the CDB as received
 * @param cdb_len 200 or 236
 * @param token   the channel's security token (CAPKEY only; may be NULL/0)
 * @param token_len bytes in @p token
 * @return 0 if it matches (always for NOSEC), -EACCES if not or if the CDB's
 *         capability states another method, -EINVAL for bad arguments,
 *         -EIO if OpenSSL failed.
 */
OSD_EXTERN int osd_sec_verify_cdb(osd_key *capkey, enum osd_sec_method method,
				  const uint8_t *cdb, size_t cdb_len,
				  const uint8_t *token, size_t token_len);

/**
 * Plain ICV over data segments: HMAC(capability key, the segments in order).
 * The ALLDATA data-out/data-in ICVs, the response ICV and the continuation
 * ICV are computed with osd_sec_bound_icv(), which also binds them to the
 * request (docs/security.md section 3).
 * @param capkey the capability key
 * @param iov    the segments, in order
 * @param iovcnt number of segments
 * @param[out] icv 20 bytes
 * @return 0, -EINVAL for bad arguments, -EIO if OpenSSL failed.
 */
OSD_EXTERN int osd_sec_data_icv(osd_key *capkey, const struct iovec *iov, int iovcnt,
				uint8_t icv[OSD_HMAC_LEN]);

/**
 * What an ICV computed by osd_sec_bound_icv() protects. The value is the
 * first byte hashed, so ICVs of different kinds never stand in for each other.
 */
enum osd_icv_kind {
	OSD_ICV_DATA_OUT = 1,     /**< ALLDATA data-out integrity block */
	OSD_ICV_DATA_IN = 2,      /**< ALLDATA data-in integrity block */
	OSD_ICV_RESPONSE = 3,     /**< response ICV (current-command attr 1, sense 07h) */
	OSD_ICV_CONTINUATION = 4  /**< CDB continuation segment ICV (v2) */
};

/**
 * An ICV bound to one request:
 * HMAC(capability key, kind byte || @p req_icv || the segments in order).
 * docs/security.md lists the segments for each kind.
 * @param capkey the capability key
 * @param kind   what the ICV protects
 * @param req_icv the first 20 bytes of the request's REQUEST INTEGRITY CHECK VALUE field
 * @param iov    the segments, in order
 * @param iovcnt number of segments
 * @param[out] icv 20 bytes
 * @return 0, -EINVAL for an unknown @p kind or a negative @p iovcnt, -EIO if OpenSSL failed.
 */
OSD_EXTERN int osd_sec_bound_icv(osd_key *capkey, enum osd_icv_kind kind,
				 const uint8_t req_icv[OSD_HMAC_LEN],
				 const struct iovec *iov, int iovcnt,
				 uint8_t icv[OSD_HMAC_LEN]);

/** The counts of an ALLDATA integrity information block (osd2r03 §4.12.4.5; docs/protocol.md §5.3). */
struct osd_sec_integrity {
	uint64_t data_bytes;     /**< DATA BYTES */
	uint64_t attr_bytes;     /**< data-out: SET ATTRIBUTES BYTES; data-in: RETRIEVED ATTRIBUTES BYTES */
	uint64_t get_list_bytes; /**< data-out: GET ATTRIBUTES BYTES; always 0 for data-in */
};

/**
 * Length of an ALLDATA integrity information block.
 * @param version the CDB version (sets the ICV field size, 20 or 32)
 * @param kind    OSD_ICV_DATA_OUT or OSD_ICV_DATA_IN
 * @return 44/56 bytes for data-out, 36/48 for data-in (v1/v2); 0 for a bad
 *         version or kind.
 */
OSD_EXTERN size_t osd_sec_integrity_len(enum osd_version version, enum osd_icv_kind kind);

/**
 * Write an ALLDATA integrity information block: the counts, then
 * osd_sec_bound_icv(kind, req_icv, counts || the covered segments),
 * left-justified in the ICV field (docs/security.md 3.4).
 * @param capkey  the capability key
 * @param version the CDB version
 * @param kind    OSD_ICV_DATA_OUT or OSD_ICV_DATA_IN
 * @param req_icv the first 20 bytes of the request ICV field
 * @param counts  the byte counts to record
 * @param iov     the covered bytes in order (data-out: payload, set list, get
 *                list; data-in: data, retrieved attributes), pads excluded;
 *                their total must equal the sum of @p counts
 * @param iovcnt  number of segments
 * @param[out] block     where the block is written
 * @param      block_len size of @p block
 * @return bytes written, -EINVAL for bad arguments or counts that do not
 *         match @p iov, -ENOBUFS if @p block is too small, -EIO if OpenSSL failed.
 */
OSD_EXTERN int osd_sec_integrity_encode(osd_key *capkey, enum osd_version version,
					enum osd_icv_kind kind,
					const uint8_t req_icv[OSD_HMAC_LEN],
					const struct osd_sec_integrity *counts,
					const struct iovec *iov, int iovcnt,
					uint8_t *block, size_t block_len);

/**
 * Read the counts of an integrity information block (to find the covered
 * bytes before osd_sec_integrity_verify()).
 * @param version the CDB version
 * @param kind    OSD_ICV_DATA_OUT or OSD_ICV_DATA_IN
 * @param block   the block as received
 * @param len     bytes available at @p block
 * @param[out] counts the decoded counts
 * @return 0, -EINVAL for a bad version or kind, -EBADMSG if @p len is short.
 */
OSD_EXTERN int osd_sec_integrity_decode(enum osd_version version, enum osd_icv_kind kind,
					const uint8_t *block, size_t len,
					struct osd_sec_integrity *counts);

/**
 * Check an integrity information block against the bytes it covers.
 * @param capkey  the capability key
 * @param version the CDB version
 * @param kind    OSD_ICV_DATA_OUT or OSD_ICV_DATA_IN
 * @param req_icv the first 20 bytes of the request ICV field
 * @param block   the block as received
 * @param len     bytes available at @p block
 * @param iov     the covered bytes, located with the decoded counts
 * @param iovcnt  number of segments
 * @return 0, -EBADMSG for a short block or segments whose total differs from
 *         the counts, -EACCES if the ICV does not match (or its v2 tail is not
 *         zero), -EINVAL for bad arguments, -EIO if OpenSSL failed.
 */
OSD_EXTERN int osd_sec_integrity_verify(osd_key *capkey, enum osd_version version,
					enum osd_icv_kind kind,
					const uint8_t req_icv[OSD_HMAC_LEN],
					const uint8_t *block, size_t len,
					const struct iovec *iov, int iovcnt);

/**
 * The response ICV (CMDRSP, ALLDATA): osd_sec_bound_icv(OSD_ICV_RESPONSE,
 * req_icv, status || sense with the ICV bytes of descriptor 07h zeroed).
 * Returned in current-command attribute 1 and sense descriptor 07h.
 * @param capkey    the capability key
 * @param req_icv   the first 20 bytes of the request ICV field
 * @param status    SCSI status (00h GOOD, 02h CHECK CONDITION)
 * @param sense     the sense bytes returned (may be NULL/0 with GOOD)
 * @param sense_len bytes of sense, at most OSD_SENSE_MAX_LEN
 * @param[out] icv 20 bytes
 * @return 0, -EINVAL for bad arguments, -EIO if OpenSSL failed.
 */
OSD_EXTERN int osd_sec_response_icv(osd_key *capkey, const uint8_t req_icv[OSD_HMAC_LEN],
				    uint8_t status, const uint8_t *sense, size_t sense_len,
				    uint8_t icv[OSD_HMAC_LEN]);

/**
 * Check a response ICV received in current-command attribute 1 or sense
 * descriptor 07h (initiator side).
 * @param capkey    the capability key
 * @param req_icv   the first 20 bytes of the request ICV field sent
 * @param status    SCSI status received
 * @param sense     the sense bytes received (may be NULL/0)
 * @param sense_len bytes of sense
 * @param ricv      the response ICV as received
 * @param ricv_len  20 (v1) or 32 (v2)
 * @return 0, -EACCES if it does not match (or a v2 tail is not zero),
 *         -EINVAL for bad arguments, -EIO if OpenSSL failed.
 */
OSD_EXTERN int osd_sec_response_verify(osd_key *capkey, const uint8_t req_icv[OSD_HMAC_LEN],
				       uint8_t status, const uint8_t *sense, size_t sense_len,
				       const uint8_t *ricv, size_t ricv_len);

/**
 * Permissions a capability must hold (all of them) for @p action itself,
 * without piggy-backed attribute lists: a get list or page additionally needs
 * OSD_PERM_GET_ATTR, a set list, page or CDB-mode value OSD_PERM_SET_ATTR.
 * docs/security.md has the table and which object the capability must describe.
 * @return the OSD_PERM_* mask; 0xFFFF (includes reserved bits, so no valid
 *         capability satisfies it) for an unknown action.
 */
OSD_EXTERN uint16_t osd_sec_required_permissions(enum osd_action action);

/**
 * Make a request nonce: 6-byte @p now_ms timestamp + 6 random bytes.
 * Safe to call from several threads and after fork().
 * @param[out] nonce 12 bytes
 * @param now_ms the OSD clock (low 48 bits are used)
 * @return 0, -EINVAL for a NULL @p nonce, -EIO if no randomness was available.
 */
OSD_EXTERN int osd_nonce_make(uint8_t nonce[OSD_NONCE_LEN], uint64_t now_ms);

/**
 * The timestamp part of a nonce.
 * @param nonce 12 bytes
 * @return milliseconds (48 bits)
 */
OSD_EXTERN uint64_t osd_nonce_time(const uint8_t nonce[OSD_NONCE_LEN]);

/**
 * Current wall clock (CLOCK_REALTIME).
 * @return milliseconds since 1970-01-01 UTC
 */
OSD_EXTERN uint64_t osd_now_ms(void);

/**
 * A target's replay cache for request nonces (opaque; internally locked).
 * It implements the freshness window and the bounded, never-weakening
 * replay memory of docs/security.md section 4.
 */
typedef struct osd_nonce_cache osd_nonce_cache;

/**
 * Create a replay cache.
 * @param[out] out  freed with osd_nonce_cache_free(); NULL on failure
 * @param depth     most nonces remembered (request nonce list depth), >= 1
 * @param floor_ms  nonces stamped at or before this time are refused (the
 *                  target's start time, so nonces from before a restart
 *                  cannot be replayed)
 * @return 0, -EINVAL, -ENOMEM.
 */
OSD_EXTERN int osd_nonce_cache_new(osd_nonce_cache **out, size_t depth, uint64_t floor_ms);

/**
 * Free a replay cache.
 * @param cache the cache; NULL is allowed
 */
OSD_EXTERN void osd_nonce_cache_free(osd_nonce_cache *cache);

/**
 * Accept a request nonce once. Call it only after the request ICV verified.
 * A nonce with timestamp t is fresh if floor < t and
 * now_ms - oldest_ms <= t <= now_ms + newest_ms. Whenever an entry leaves the
 * cache (it aged out of the window, or the cache was full), the floor rises to
 * its timestamp, so forgetting a nonce never makes it acceptable again.
 * @param cache     the cache
 * @param nonce     the REQUEST NONCE
 * @param now_ms    the OSD clock
 * @param oldest_ms oldest valid nonce limit (root 0x90000005/2), ms before now
 * @param newest_ms newest valid nonce limit (root 0x90000005/3), ms after now
 * @return 0 accepted (and remembered); -ERANGE timestamp out of range
 *         (NONCE TIMESTAMP OUT OF RANGE, 24h/07h); -EEXIST seen before (NONCE
 *         NOT UNIQUE, 24h/06h); -EINVAL for bad arguments.
 */
OSD_EXTERN int osd_nonce_cache_check(osd_nonce_cache *cache, const uint8_t nonce[OSD_NONCE_LEN],
				     uint64_t now_ms, uint64_t oldest_ms, uint64_t newest_ms);

/**
 * The cache's horizon: the newest timestamp it remembers, or its floor when
 * that is newer (or the cache is empty). A cache created with this as its
 * floor refuses every nonce this one would refuse as a replay; the target
 * uses it when it drops or replaces a partition's cache.
 * @param cache the cache (not NULL)
 */
OSD_EXTERN uint64_t osd_nonce_cache_horizon(osd_nonce_cache *cache);

/** A security manager's key store and credential issuer (opaque). */
typedef struct osd_cred_issuer osd_cred_issuer;

/**
 * Create an issuer for the OSD identified by @p system_id. It starts with no
 * keys.
 * @param[out] out freed with osd_cred_issuer_free()
 * @param system_id the OSD SYSTEM ID (copied)
 * @return 0, -EINVAL, -ENOMEM.
 */
OSD_EXTERN int osd_cred_issuer_new(osd_cred_issuer **out,
				   const uint8_t system_id[OSD_SYSTEM_ID_LEN]);

/**
 * Free an issuer (wipes its keys).
 * @param iss the issuer; NULL is allowed
 */
OSD_EXTERN void osd_cred_issuer_free(osd_cred_issuer *iss);

/**
 * Install (or replace) the root key.
 * @param iss the issuer
 * @param key 20 bytes (copied)
 * @return 0, -EINVAL, -ENOMEM.
 */
OSD_EXTERN int osd_cred_issuer_set_root_key(osd_cred_issuer *iss, const uint8_t key[OSD_HMAC_LEN]);

/**
 * Install (or replace) working key @p version (0..15) of @p partition.
 * @param iss       the issuer
 * @param partition PARTITION_ID, not 0 (the root has no working keys)
 * @param version   key version 0..15
 * @param key       20 bytes (copied)
 * @return 0, -EINVAL, -ENOMEM.
 */
OSD_EXTERN int osd_cred_issuer_set_working_key(osd_cred_issuer *iss, uint64_t partition,
					       uint8_t version, const uint8_t key[OSD_HMAC_LEN]);

/**
 * Install (or replace) the partition key of @p partition: the secret that
 * signs SET KEY credentials for that partition's working keys.
 * @param iss       the issuer
 * @param partition PARTITION_ID, not 0
 * @param key       20 bytes (copied)
 * @return 0, -EINVAL, -ENOMEM.
 */
OSD_EXTERN int osd_cred_issuer_set_partition_key(osd_cred_issuer *iss, uint64_t partition,
						 const uint8_t key[OSD_HMAC_LEN]);

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
 * Issue a credential. The capability is osd_capability_init() of the request
 * plus its key version, times and tag, ICV algorithm HMAC-SHA1 and a random
 * discriminator. A NOSEC credential needs no key and has a zero cap_key.
 * @param iss the issuer
 * @param req what to grant
 * @param[out] out the credential; untouched on failure
 * @return 0, -ENOKEY if the issuer has no key for the object's partition and
 *         key version (or no root key for a root capability), -EINVAL for a
 *         malformed request (root with an object id, v2-only permissions in
 *         v1, key version > 15, times beyond 48 bits...), -EIO if OpenSSL failed.
 */
OSD_EXTERN int osd_cred_issue(osd_cred_issuer *iss, const struct osd_cred_request *req,
			      struct osd_credential *out);

/**
 * Issue a credential for a SET KEY command. Its capability key is made with
 * the parent of the key being set (docs/security.md 2.2): the root key for a
 * partition key, the partition key for a working key. @p req must address a
 * partition (P,0); its permissions should include OSD_PERM_POL_SEC.
 * @param iss        the issuer
 * @param req        what to grant
 * @param key_to_set enum osd_key_to_set: 2 (partition) or 3 (working)
 * @param[out] out the credential; untouched on failure
 * @return 0, -ENOKEY if the parent key is not installed, -ENOTSUP for the
 *         root key (its parent, the master key, is not supported), -EINVAL
 *         for a malformed request, -EIO if OpenSSL failed.
 */
OSD_EXTERN int osd_cred_issue_set_key(osd_cred_issuer *iss, const struct osd_cred_request *req,
				      uint8_t key_to_set, struct osd_credential *out);

#ifdef __cplusplus
}
#endif
/** @} */
#endif
