/**
 * @file osd/secmgr.h
 * @brief A network security manager as the credential source: the credential
 *        protocol's messages and a client that asks a manager (osd-secd) over
 *        TLS 1.3 for credentials, caches them and refreshes them in time.
 *
 * The protocol is docs/security-manager.md. A client holds no OSD key: it
 * presents its X.509 certificate, asks for a capability on one object (or a
 * partition-wide one) and receives the capability and its capability key.
 *
 * Thread-safety: an osd_secmgr is internally locked; the message codec is
 * reentrant.
 * @defgroup osd_secmgr Security manager client
 * @{
 */
#ifndef OSD_SECMGR_H
#define OSD_SECMGR_H

#include <osd/types.h>
#include <osd/security.h>
#include <osd/request.h>

#ifdef __cplusplus
extern "C" {
#endif

#define OSD_SECMSG_PROTOCOL 1     /**< credential protocol version this library speaks */
#define OSD_SECMSG_HDR_LEN 12     /**< bytes of a message header */
#define OSD_SECMSG_MAX_LEN 256    /**< largest encoded message (header included) */
#define OSD_SECMSG_REASON_MAX 160 /**< longest refusal text, bytes */
#define OSD_SECMGR_DEFAULT_PORT 3270 /**< TCP port of a manager URL without one */

/** Message types of the credential protocol. */
enum osd_secmsg_type {
	OSD_SECMSG_REQUEST = 1, /**< client: a credential, please */
	OSD_SECMSG_GRANT = 2,   /**< manager: the credential */
	OSD_SECMSG_REFUSE = 3   /**< manager: no, and why */
};

/** Why a manager refused (REFUSE reason code). */
enum osd_secmsg_reason {
	OSD_SECREF_DENIED = 1,         /**< the policy grants this client less */
	OSD_SECREF_UNKNOWN_SYSTEM = 2, /**< the manager holds no keys for that OSD */
	OSD_SECREF_BAD_REQUEST = 3,    /**< the request was malformed */
	OSD_SECREF_NO_KEY = 4,         /**< a key of the hierarchy is missing */
	OSD_SECREF_INTERNAL = 5        /**< the manager failed (try again later) */
};

/**
 * One decoded message. Which fields matter depends on @ref type; the others
 * are zero after osd_secmsg_decode().
 */
struct osd_secmsg {
	enum osd_secmsg_type type;              /**< message type */
	uint32_t id;                            /**< request id, echoed by the answer */
	uint8_t system_id[OSD_SYSTEM_ID_LEN];   /**< REQUEST, GRANT: the OSD */
	struct osd_cred_request req;            /**< REQUEST: version, obj, is_collection,
						     permissions, method (the rest is unused) */
	uint32_t lifetime_ms;                   /**< REQUEST: lifetime wanted, 0 = the policy's */
	struct osd_credential cred;             /**< GRANT: the credential (expiry in cred.cap) */
	uint16_t reason;                        /**< REFUSE: enum osd_secmsg_reason */
	char text[OSD_SECMSG_REASON_MAX + 1];   /**< REFUSE: printable ASCII, NUL-terminated */
};

/**
 * Encode a message.
 * @param m      the message
 * @param[out] out where the bytes go
 * @param outlen size of @p out (OSD_SECMSG_MAX_LEN always suffices)
 * @return bytes written, -EINVAL for a field out of range (unknown type,
 *         version or method, permissions with reserved bits, a refusal text
 *         that is too long or not printable), -ENOBUFS if @p out is short.
 */
OSD_EXTERN int osd_secmsg_encode(const struct osd_secmsg *m, uint8_t *out, size_t outlen);

/**
 * Decode one message from the start of @p in.
 * @param in     received bytes
 * @param len    bytes available
 * @param[out] m the message (zeroed first)
 * @param[out] err a description of what was wrong (may be NULL)
 * @param errlen size of @p err
 * @return bytes the message took; 0 if @p len holds only part of a message
 *         whose header is valid so far (read more); -EPROTONOSUPPORT for
 *         another protocol version; -EBADMSG for anything malformed (bad
 *         magic, unknown type, a length that does not fit the type, a
 *         reserved field not zero, a capability that is not canonical...).
 */
OSD_EXTERN int osd_secmsg_decode(const uint8_t *in, size_t len, struct osd_secmsg *m,
				 char *err, size_t errlen);

/** A connection to a security manager and its credential cache (opaque). */
typedef struct osd_secmgr osd_secmgr;

/** Options of osd_secmgr_open(). Initialise with OSD_SECMGR_OPTIONS_INIT. */
struct osd_secmgr_options {
	int version;            /**< OSD_SECMGR_OPTIONS_VERSION */
	const char *url;        /**< "osdsec://host[:port]" (IPv6 in brackets) */
	const char *cert_file;  /**< the client's certificate chain, PEM */
	const char *key_file;   /**< its private key, PEM (refused if others may read it) */
	const char *ca_file;    /**< CA certificates the manager's certificate must chain to */
	unsigned timeout_ms;    /**< connect and round-trip limit; 0 = none */
	unsigned lifetime_ms;   /**< lifetime asked for; 0 = what the policy gives */
	unsigned refresh_ms;    /**< refresh a cached credential this long before it
				     expires (at most half its lifetime) */
	unsigned cache_max;     /**< credentials cached at most */
};

#define OSD_SECMGR_OPTIONS_VERSION 1 /**< current struct osd_secmgr_options version */
/** Defaults: 10 s round trip, the policy's lifetime, refresh 60 s early, 4096 cached. */
#define OSD_SECMGR_OPTIONS_INIT \
	{ OSD_SECMGR_OPTIONS_VERSION, NULL, NULL, NULL, NULL, 10000, 0, 60000, 4096 }

/**
 * Load the certificates and key and connect to the manager (TLS 1.3, the
 * manager's certificate checked against @ref osd_secmgr_options::ca_file
 * and the URL's host).
 * @param[out] out the handle, freed with osd_secmgr_close(); NULL on failure
 * @param opts    the options (strings are copied)
 * @param[out] err a message on failure (may be NULL)
 * @param errlen  size of @p err
 * @return 0, -EINVAL for bad options or URL, -EPERM for a private key other
 *         users may read, -ENOENT for a missing file, -EPROTO for a TLS
 *         failure (the message says which), -ECONNREFUSED, -ETIMEDOUT,
 *         -ENOMEM.
 */
OSD_EXTERN int osd_secmgr_open(osd_secmgr **out, const struct osd_secmgr_options *opts,
			       char *err, size_t errlen);

/**
 * Detach from every device, stop the refresher and close the connection.
 * Devices attached must be closed first or detached with
 * osd_dev_set_cred_source(dev, NULL, NULL). NULL is allowed.
 */
OSD_EXTERN void osd_secmgr_close(osd_secmgr *m);

/** The last error message of this handle ("" if none; never NULL). */
OSD_EXTERN const char *osd_secmgr_error(osd_secmgr *m);

/**
 * One round trip: ask the manager for a credential, bypassing the cache.
 * @param m         the handle
 * @param system_id the OSD
 * @param want      version, obj, is_collection, permissions, method
 * @param lifetime_ms lifetime wanted (0: the policy's)
 * @param[out] out  the credential
 * @return 0; -EACCES when the manager refused (osd_secmgr_error() has its
 *         reason), -ENOKEY when it holds no keys for the OSD, -EPROTO for a
 *         malformed answer, or a connection error.
 */
OSD_EXTERN int osd_secmgr_request(osd_secmgr *m, const uint8_t system_id[OSD_SYSTEM_ID_LEN],
				  const struct osd_cred_request *want, unsigned lifetime_ms,
				  struct osd_credential *out);

/**
 * Make the manager @p dev's credential source: a credential the device
 * needs comes from the cache while it is valid, and a background thread asks
 * the manager again before it expires, so I/O waits on the manager only for
 * an object's first credential (or after a refusal). Reads the OSD system id
 * through @p dev (with no other credential source set, this is the GET of
 * the system id that a secured root answers without a credential). One
 * handle serves one device. With capability lifetimes shorter than the
 * device's @ref osd_dev_options::cred_refresh_ms the device asks the handle
 * before every command (answered from its cache); set that option below half
 * the lifetime to keep such asks off the I/O path.
 * @return 0, -EBUSY if the handle serves a device already, -ENODATA if the
 *         device does not know its system id, -ENOMEM.
 */
OSD_EXTERN int osd_secmgr_attach(osd_secmgr *m, osd_dev *dev);

/** Counters of a handle, for tests and benchmarks. */
struct osd_secmgr_stats {
	uint64_t round_trips;   /**< requests sent to the manager */
	uint64_t refusals;      /**< refusals received */
	uint64_t cache_hits;    /**< device asks answered from the cache */
	uint64_t refreshes;     /**< credentials renewed by the refresher */
};

/**
 * Read the counters.
 * @param m the handle
 * @param[out] st the counters
 */
OSD_EXTERN void osd_secmgr_get_stats(osd_secmgr *m, struct osd_secmgr_stats *st);

#ifdef __cplusplus
}
#endif
/** @} */
#endif
