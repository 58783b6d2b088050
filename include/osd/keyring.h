/**
 * @file osd/keyring.h
 * @brief Opening an OSD by URL with a root key: the key scheme the tools use.
 *
 * A keyring is a security manager that holds an OSD's root key and derives
 * every partition key and working key from it, so that any program holding
 * the root key computes the same keys as the one that set them: the
 * partition key of partition P is derived from the root key (osd2r05
 * 4.11.7) with the SET KEY seed "osdctl-key" | 2 | 0 | P (KEY TO SET 2; P
 * big-endian; zero padded to OSD_SEED_LEN bytes), working key V of P from
 * that partition key with the seed "osdctl-key" | 3 | V | P; the key
 * identifier is the KEY TO SET byte, the low 48 bits of P, the last byte
 * xor V. osdctl, osdfs and osdfs-mount key
 * partitions this way (docs/security.md), so an application using a keyring
 * with the same root key file reads what they wrote.
 *
 * osd_dev_open_url() connects to an iSCSI URL and opens a device whose
 * credentials come from such a keyring; osd_dev_open_keyed() does the same
 * on any transport (libosdtarget's osd_target_open_dev() uses it for a
 * store in a local directory; libosdfs's osdfs_open_path() mounts a
 * filesystem on either).
 *
 * @code
 * struct osd_open_options o = OSD_OPEN_OPTIONS_INIT;
 * char err[256];
 * osd_dev *dev;
 * o.security = OSD_SEC_CAPKEY;
 * o.key_file = "/etc/osd/root.key";
 * o.error = err;
 * o.error_size = sizeof(err);
 * if (osd_dev_open_url(&dev, "iscsi://osd1/iqn.2026-01.org.example:osd/0", &o) < 0)
 *         fprintf(stderr, "%s\n", err);
 * @endcode
 *
 * @defgroup osd_keyring Keyring and opening by URL
 * @{
 */
#ifndef OSD_KEYRING_H
#define OSD_KEYRING_H

#include <osd/types.h>
#include <osd/security.h>
#include <osd/request.h>
#include <osd/iscsi.h>
#include <osd/secmgr.h>

#ifdef __cplusplus
extern "C" {
#endif

/** A security manager holding a root key (opaque; not thread-safe on its own:
 *  the device it serves calls it under its own lock). */
typedef struct osd_keyring osd_keyring;

/** osd_keyring_root_state(): the OSD's root has a root key, so every root
 *  command needs a credential signed with it (docs/security.md 5). */
#define OSD_KEYRING_ROOT_SECURED 0x1u
/** osd_keyring_root_state(): the root is secured with another key than ours. */
#define OSD_KEYRING_ROOT_KEY_REFUSED 0x2u
/** osd_keyring_root_state(): a command on the root failed for want of the
 *  root key (none given, or the root refused it): -ENOKEY. */
#define OSD_KEYRING_ROOT_REFUSED 0x4u

/**
 * Create a keyring for the OSD with system id @p system_id.
 * @param[out] out the keyring, freed with osd_keyring_free()
 * @param system_id the OSD SYSTEM ID (root information attribute 3)
 * @param root_key the root key (copied), or NULL: only NOSEC credentials
 * @param method the security method of the credentials it issues, of the
 *        SET KEY commands it sends and of the partitions it secures
 * @return 0, -EINVAL or -ENOMEM.
 */
OSD_EXTERN int osd_keyring_new(osd_keyring **out, const uint8_t system_id[OSD_SYSTEM_ID_LEN],
			       const uint8_t *root_key, enum osd_sec_method method);

/** Free a keyring, wiping its keys. NULL is allowed. */
OSD_EXTERN void osd_keyring_free(osd_keyring *kr);

/**
 * Read a root key file: 20 raw bytes, or 40 hex digits (a trailing newline
 * is allowed; a file of exactly 20 bytes is the key as it is, whatever its
 * last byte). Like ssh, a file that other users may read or write is
 * refused.
 * @param path the file
 * @param[out] key the key
 * @param error receives the reason on failure (may be NULL)
 * @param error_size size of @p error
 * @return 0; -EINVAL (bad content), -EPERM (group or other permission bits
 *         set), or the -errno of opening or reading it.
 */
OSD_EXTERN int osd_keyring_read_key_file(const char *path, uint8_t key[OSD_HMAC_LEN],
					 char *error, size_t error_size);

/**
 * The keyring as a credential source (osd_cred_source_fn; @p keyring is the
 * osd_keyring). Root commands are signed with the method the root needs
 * (see osd_keyring_probe_root()); partition and object commands with the
 * requested method and the partition's derived working key 0.
 * @return 0, -ENOKEY (a method other than NOSEC, or a secured root, without
 *         the root key), or osd_cred_issue()'s error.
 */
OSD_EXTERN int osd_keyring_credential(const struct osd_cred_request *want,
				      struct osd_credential *out, void *keyring);

/**
 * Learn how the OSD's root must be signed once @p dev is open with this
 * keyring as its credential source: whether the root has a root key, ours
 * or another, and its default security method (at least CAPKEY).
 * @return 0 (a probe that fails for another reason than a refusal leaves the
 *         root taken as unsecured; the commands will tell).
 */
OSD_EXTERN int osd_keyring_probe_root(osd_keyring *kr, osd_dev *dev);

/** OSD_KEYRING_ROOT_* bits learned so far. */
OSD_EXTERN unsigned osd_keyring_root_state(const osd_keyring *kr);

/** Whether the keyring holds a root key. */
OSD_EXTERN int osd_keyring_has_root_key(const osd_keyring *kr);

/** The security method given to osd_keyring_new(). */
OSD_EXTERN enum osd_sec_method osd_keyring_method(const osd_keyring *kr);

/**
 * Set the partition key and working key @p version of @p partition with SET
 * KEY (osd2r05 6.24), both derived from the root key, and keep them for the
 * credentials of @p partition.
 * @return 0, -ENOKEY without a root key, or the command's error.
 */
OSD_EXTERN int osd_keyring_set_partition_keys(osd_keyring *kr, osd_dev *dev,
					      uint64_t partition, uint8_t version);

/**
 * Key @p partition (working key 0) unless the method is NOSEC, then set its
 * default security method (policy/security page, attribute 1) to the
 * keyring's method: the target enforces that attribute, so clients with a
 * weaker method are refused.
 * @return 0 or the commands' error.
 */
OSD_EXTERN int osd_keyring_secure_partition(osd_keyring *kr, osd_dev *dev, uint64_t partition);

/**
 * Create @p partition unless it exists, then osd_keyring_secure_partition():
 * what mkfs does before a filesystem's format.
 * @return 0 or the commands' error.
 */
OSD_EXTERN int osd_keyring_setup_partition(osd_keyring *kr, osd_dev *dev, uint64_t partition);

/**
 * The partition key of @p partition and its working key @p version as this
 * key scheme derives them from @p root_key (osd2r05 4.11.7; the seeds are in
 * the file description): what osd_keyring_set_partition_keys() installs,
 * for a security manager that holds the root key without a keyring of its
 * own device (osd-secd).
 * @param root_key the OSD's root key
 * @param partition the partition (not 0)
 * @param version the working key's version (0 to 15)
 * @param[out] pkey the partition key
 * @param[out] wkey working key @p version of @p partition
 * @return 0, -EINVAL (a NULL pointer, partition 0 or a version above 15) or
 *         -ENOMEM.
 */
OSD_EXTERN int osd_keyring_derive_keys(const uint8_t root_key[OSD_HMAC_LEN], uint64_t partition,
				       uint8_t version, uint8_t pkey[OSD_HMAC_LEN],
				       uint8_t wkey[OSD_HMAC_LEN]);

/** The credential issuer inside the keyring (borrowed). */
OSD_EXTERN osd_cred_issuer *osd_keyring_issuer(osd_keyring *kr);

/** Version of struct osd_open_options. */
#define OSD_OPEN_OPTIONS_VERSION 1

/** Options of osd_dev_open_url() and osd_dev_open_keyed(); initialise with
 *  OSD_OPEN_OPTIONS_INIT. */
struct osd_open_options {
	unsigned int version;                /**< OSD_OPEN_OPTIONS_VERSION */
	enum osd_version_select osd_version; /**< OSD version to speak (auto by default) */
	enum osd_sec_method security;        /**< security method of every command */
	const char *key_file;                /**< root key file (osd_keyring_read_key_file()),
						  or NULL */
	const uint8_t *root_key;             /**< the root key itself (OSD_HMAC_LEN bytes),
						  used when @ref key_file is NULL */
	const struct osd_iscsi_options *iscsi; /**< iSCSI options of a URL (NULL: defaults);
						    its errbuf is not used */
	const char *chap_secret_file;        /**< with iscsi->chap_user: the CHAP secret is the
						  first line of this file (12 to 255 bytes,
						  private permissions as a key file) */
	char *error;                         /**< if not NULL, receives why an open failed */
	size_t error_size;                   /**< size of @ref error */
	osd_secmgr *secmgr;                  /**< a security manager (osd/secmgr.h) as the
						  credential source instead of a keyring: the
						  open attaches it (osd_secmgr_attach()); no
						  root key or key file then. Borrowed: close
						  the device before the manager */
};

/** Defaults: auto-detected OSD version, NOSEC, no key, default iSCSI options. */
#define OSD_OPEN_OPTIONS_INIT \
	{ OSD_OPEN_OPTIONS_VERSION, OSD_VERSION_AUTO, OSD_SEC_NOSEC, NULL, NULL, NULL, NULL, \
	  NULL, 0, NULL }

/**
 * Open a device on @p tp with a keyring as its security manager: reads the
 * OSD's system id, makes a keyring with the root key of the options, opens
 * the device with it as credential source and probes the root
 * (osd_keyring_probe_root()). The device owns the keyring
 * (osd_dev_keyring()) and frees it when closed. With
 * osd_open_options::secmgr the device has no keyring: its credentials come
 * from that security manager. As after osd_dev_open(), osd_dev_error() holds
 * what version detection found out (an INQUIRY that claims a version the
 * target refuses), or "".
 *
 * Ownership of @p tp: as osd_dev_open(): taken on success, the caller's on
 * failure.
 * @param[out] out the device, closed with osd_dev_close()
 * @param tp the transport
 * @param opts options, or NULL for the defaults
 * @return 0; -EINVAL (bad options, a method other than NOSEC without a
 *         key or security manager, a security manager with a key), a key
 *         file's error (osd_keyring_read_key_file()), osd_secmgr_attach()'s,
 *         or the device's.
 */
OSD_EXTERN int osd_dev_open_keyed(osd_dev **out, struct osd_transport *tp,
				  const struct osd_open_options *opts);

/**
 * Connect to the iSCSI target @p url (iscsi://host[:port]/iqn/lun,
 * osd_iscsi_url_parse()) and open a device on it as osd_dev_open_keyed()
 * does. The store behind a URL belongs to its daemon: the target must know
 * the root key already.
 * @param[out] out the device, closed with osd_dev_close()
 * @param url the target's URL
 * @param opts options, or NULL for the defaults
 * @return 0; -EINVAL (bad URL or options), -EACCES (login refused),
 *         a CHAP secret or key file's error, or the transport's or
 *         device's error.
 */
OSD_EXTERN int osd_dev_open_url(osd_dev **out, const char *url,
				const struct osd_open_options *opts);

/** The keyring of a device opened with osd_dev_open_keyed() or
 *  osd_dev_open_url() (owned by the device), else NULL. */
OSD_EXTERN osd_keyring *osd_dev_keyring(osd_dev *dev);

#ifdef __cplusplus
}
#endif
/** @} */
#endif
