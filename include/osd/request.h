/**
 * @file osd/request.h
 * @brief The initiator: devices (osd_dev), requests (osd_req), credentials,
 *        synchronous and asynchronous execution.
 *
 * A request is built by one constructor per service action, optionally
 * extended with piggy-backed attribute gets/sets and options, then executed
 * synchronously (osd_req_execute()) or submitted (osd_req_submit()). The
 * request computes the CDB, the data-out layout (payload, set list, get list,
 * integrity information) and the data-in layout (data, retrieved attributes,
 * integrity information) for the device's OSD version.
 *
 * Ownership (libgit2 rules): a `**out` result belongs to the caller and is
 * freed with the matching free function; pointers returned by accessors are
 * borrowed and live as long as the object they came from. Data buffers passed
 * as iovecs are borrowed: they must stay valid until the request completed.
 * Everything else a request needs (iovec arrays, attribute values, lists) is
 * copied into the request's arena, freed with the request.
 *
 * Threads: an osd_dev may be shared by several threads; building, submitting
 * and executing requests is internally locked. One osd_req is used by one
 * thread at a time. Completion callbacks run on the thread that drives the
 * transport: inside osd_req_submit() for an inline transport such as the
 * loopback, or inside osd_dev_service() for an event-driven one. Do not call
 * osd_req_execute() or other synchronous helpers from a callback.
 *
 * @defgroup osd_request Initiator requests
 * @{
 */
#ifndef OSD_REQUEST_H
#define OSD_REQUEST_H

#include <osd/types.h>
#include <osd/attr.h>
#include <osd/cdb.h>
#include <osd/list.h>
#include <osd/sense.h>
#include <osd/security.h>
#include <osd/sys/transport.h>
#include <sys/uio.h>

#ifdef __cplusplus
extern "C" {
#endif

/** A connection to one OSD logical unit (opaque). */
typedef struct osd_dev osd_dev;

/** One command being built, in flight or completed (opaque). */
typedef struct osd_req osd_req;

/** OSD version selection for osd_dev_open(). */
enum osd_version_select {
	OSD_VERSION_AUTO = 0, /**< INQUIRY version descriptors, then a GET ATTRIBUTES probe */
	OSD_VERSION_1 = OSD_V1, /**< force OSD-1 */
	OSD_VERSION_2 = OSD_V2  /**< force OSD-2 */
};

/** Capability lifetime the credential cache asks its source for (10 min). */
#define OSD_CRED_LIFETIME_MS 600000u

/**
 * Credential source: called when the device needs a credential it does not
 * have cached (first use of an object, more permissions needed, or the cached
 * one expires within the refresh margin). Runs on the thread building the
 * request, never inside a completion. It may block (e.g. ask a remote
 * security manager).
 * @param want    what is needed: version, object, permissions, method, and
 *                as expiration the OSD clock plus OSD_CRED_LIFETIME_MS: the
 *                lifetime the device suggests (a source may shorten it; 0
 *                means a capability that never expires, which a captured
 *                request could then be replayed under for as long as the key
 *                lives). The device asks again @ref osd_dev_options::cred_refresh_ms
 *                before a cached credential expires.
 * @param[out] out the credential to use and cache
 * @param payload the pointer given with the source
 * @return 0, or a negative errno that fails the request being built
 */
typedef int (*osd_cred_source_fn)(const struct osd_cred_request *want,
				  struct osd_credential *out, void *payload);

/** Options of osd_dev_open(). Initialise with OSD_DEV_OPTIONS_INIT. */
struct osd_dev_options {
	int version;                     /**< OSD_DEV_OPTIONS_VERSION */
	enum osd_version_select osd_version; /**< which OSD version to speak */
	enum osd_sec_method security;    /**< method asked of the credential source */
	unsigned timeout_ms;             /**< synchronous wait limit per command; 0 = none.
					      At the limit the request is given up (see
					      osd_req_execute()) */
	unsigned format_timeout_ms;      /**< same for FORMAT OSD; 0 = none */
	unsigned cred_refresh_ms;        /**< refresh a credential this long before it expires */
	unsigned cred_cache_max;         /**< credentials kept at most (the least recently
					      used is evicted to add another); 0 = no limit */
	osd_cred_source_fn cred_source;  /**< NULL: only NOSEC or credentials added by hand */
	void *cred_payload;              /**< passed to @ref cred_source */
	char *error;                     /**< version 2: if not NULL, receives why an open
					      failed (osd_dev_error() needs a device) */
	size_t error_size;               /**< version 2: size of @ref error */
};

/** Current struct osd_dev_options version (1: without error and error_size;
 *  still accepted). */
#define OSD_DEV_OPTIONS_VERSION 2
/** Defaults: auto-detect, NOSEC, 30 s per command, 5 min for FORMAT, refresh 60 s
 *  early, at most 65536 cached credentials. */
#define OSD_DEV_OPTIONS_INIT \
	{ OSD_DEV_OPTIONS_VERSION, OSD_VERSION_AUTO, OSD_SEC_NOSEC, 30000, 300000, 60000, \
	  65536, NULL, NULL, NULL, 0 }

/**
 * Open a device on a transport. With OSD_VERSION_AUTO a SCSI INQUIRY is sent,
 * then a GET ATTRIBUTES of the root information page in the version its
 * descriptors claim (OSD-2 when they do not tell); a target that refuses that
 * CDB's format (an invalid operation code, an invalid field among CDB bytes
 * 0-15, or no way to carry it) is asked in the other version, and that one is
 * spoken. When that overrides what INQUIRY claimed, osd_dev_error() says so
 * right after the open (otherwise it is ""). The probe also learns the OSD
 * system id and clock when the target answers.
 *
 * Ownership: on success the device takes @p tp (the structure is copied) and
 * destroys it in osd_dev_close(); on failure the caller keeps it.
 * @param[out] out the device, closed with osd_dev_close()
 * @param tp   the transport
 * @param opts NULL for defaults
 * @return 0, -EINVAL for bad options, -ENOMEM, -ENODEV if neither version
 *         answered, or the transport's error.
 */
OSD_EXTERN int osd_dev_open(osd_dev **out, struct osd_transport *tp,
			    const struct osd_dev_options *opts);

/**
 * Close a device: waits for requests still in flight (driving the transport
 * if it has an fd), then destroys the transport. Requests given up on (timed
 * out, or freed in flight) are not in flight any more: close does not wait
 * for them, and what the device still sends for them reaches no caller
 * buffer. NULL is allowed.
 */
OSD_EXTERN void osd_dev_close(osd_dev *dev);

/**
 * The last error message of this device (per handle, never NULL; "" if none).
 * Thread-safe: the message is copied, under the device's lock, into a
 * buffer of the calling thread, and the pointer stays valid until that
 * thread's next osd_dev_error() call (on any device). With several threads
 * the last failure may be another thread's call: prefer osd_req_error() for
 * a request's own message, or osd_dev_error_copy() for a copy you keep.
 */
OSD_EXTERN const char *osd_dev_error(osd_dev *dev);

/**
 * Copy the last error message of this device into @p buf, like snprintf():
 * at most @p len - 1 bytes and a NUL (nothing when @p len is 0).
 * Thread-safe.
 * @return the length of the whole message (a value >= @p len means it was
 *         cut short).
 */
OSD_EXTERN size_t osd_dev_error_copy(osd_dev *dev, char *buf, size_t len);

/** The OSD version the device speaks. */
OSD_EXTERN enum osd_version osd_dev_version(osd_dev *dev);

/**
 * How many times the device said it was reset in a way that may have
 * emptied its volatile cache: unit attentions 29h/00h (POWER ON, RESET, OR
 * BUS DEVICE RESET OCCURRED), 01h (POWER ON OCCURRED), 02h (SCSI BUS RESET
 * OCCURRED), 03h (BUS DEVICE RESET FUNCTION OCCURRED) and 04h (DEVICE
 * INTERNAL RESET) received once the target has answered a command of the
 * device (not the one every new I_T nexus reports to the first command of
 * the first session, before anything was written); 29h/07h (I_T NEXUS
 * LOSS OCCURRED: a reconnect to a target that kept running) and the
 * transceiver changes 29h/05h-06h are not counted (spc4r37 §4.5.6,
 * Annex D). Such a command is still sent again (docs/initiator.md), so no
 * command fails: a caller that keeps redundancy compares this count to
 * learn that what the device acknowledged since its last flush (SYNCHRONIZE
 * CACHE or OSD FLUSH) may be gone. Thread-safe.
 * @param dev the device
 * @return the count since osd_dev_open(); 0 for NULL.
 */
OSD_EXTERN uint64_t osd_dev_reset_count(osd_dev *dev);

/**
 * The OSD system id learned while probing, or read from the root
 * information page on first use.
 * @param dev the device
 * @param[out] id 20 bytes
 * @return 0, -ENODATA if it is not known.
 */
OSD_EXTERN int osd_dev_system_id(osd_dev *dev, uint8_t id[OSD_SYSTEM_ID_LEN]);

/** The transport's fd for an event loop, or -1 (inline transports). */
OSD_EXTERN int osd_dev_get_fd(osd_dev *dev);

/** The poll events the transport wants on that fd (0 if none). */
OSD_EXTERN int osd_dev_which_events(osd_dev *dev);

/**
 * Let the transport make progress after poll() reported @p revents (or with
 * 0 to drive timeouts). Completion callbacks run from here.
 * @return 0 or the transport's negative errno.
 */
OSD_EXTERN int osd_dev_service(osd_dev *dev, int revents);

/** Number of requests submitted and not yet completed. */
OSD_EXTERN unsigned osd_dev_queue_length(osd_dev *dev);

/**
 * The transport the device runs on (owned by the device, valid until
 * osd_dev_close()), for commands libosd does not build: plain SCSI such as
 * INQUIRY, or a conformance test's own CDBs. Submit on it only while the
 * device has no request in flight, from one thread.
 */
OSD_EXTERN const struct osd_transport *osd_dev_transport(osd_dev *dev);

/** @name Credentials */
/** @{ */

/**
 * Set (or with NULL clear) the credential source. Credentials cached so far
 * are kept.
 */
OSD_EXTERN void osd_dev_set_cred_source(osd_dev *dev, osd_cred_source_fn fn, void *payload);

/**
 * Add a credential to the cache for the object its capability describes
 * (a partition-wide one when the descriptor type is PAR). The credential is
 * copied. It replaces any cached credential for the same object.
 * @return 0, -EINVAL if @p cred is for another OSD version, -ENOMEM.
 */
OSD_EXTERN int osd_dev_add_credential(osd_dev *dev, const struct osd_credential *cred);

/**
 * Set (NULL clears) the credential used when neither the cache nor the source
 * has one for an object. Copied.
 */
OSD_EXTERN int osd_dev_set_default_credential(osd_dev *dev, const struct osd_credential *cred);

/** Drop the cached credential of @p obj (NULL: drop all). */
OSD_EXTERN void osd_dev_forget_credentials(osd_dev *dev, const struct osd_obj_id *obj);

/** Number of credentials in the cache. */
OSD_EXTERN unsigned osd_dev_credential_count(osd_dev *dev);

/** @} */

/** @name Building requests
 * Every constructor returns 0 and a new request in @p out (freed with
 * osd_req_free()), -EINVAL for bad arguments, -ENOTSUP when the device's OSD
 * version lacks the command, or -ENOMEM. Data iovecs are borrowed until the
 * request completes; the iovec array itself is copied. */
/** @{ */

/** FLUSH scopes (byte 10 bits 1-0). */
enum osd_flush_scope {
	OSD_FLUSH_DATA_AND_ATTRS = 0, /**< FLUSH: data and attributes; others: the list of members */
	OSD_FLUSH_ATTRS = 1,          /**< attributes only */
	OSD_FLUSH_RANGE = 2           /**< FLUSH (v2): the range given; others: everything */
};

/** Where a LIST continues: zero-initialise for the first command. */
struct osd_list_cursor {
	uint64_t next_id; /**< INITIAL OBJECT_ID (the previous CONTINUATION OBJECT_ID) */
	uint32_t list_id; /**< LIST IDENTIFIER returned by the previous command */
};

/**
 * FORMAT OSD: erase everything.
 * @param[out] out the request
 * @param dev the device
 * @param capacity formatted capacity in bytes, 0 = all
 */
OSD_EXTERN int osd_req_format(osd_req **out, osd_dev *dev, uint64_t capacity);

/**
 * OBJECT STRUCTURE CHECK (OSD-2 only): the target verifies the stored data
 * of a user object, of every user object of a partition, or of every
 * object, against its checksums (scrub). Damage ends the command with
 * MEDIUM ERROR, UNRECOVERED READ ERROR (-EIO): osd_req_sense() names the
 * damaged object (descriptor 06h) and its first bad byte (information),
 * and osd_req_error() says both. Needs a capability for the root object
 * with DEV_MGMT permission (docs/protocol-choices.md).
 * @param[out] out the request
 * @param dev the device (OSD-2; -ENOTSUP for OSD-1)
 * @param obj (P, O) a user object, (P, 0) a partition, (0, 0) or NULL all
 * @return 0, -EINVAL (an object id without a partition), -ENOTSUP, -ENOMEM
 */
OSD_EXTERN int osd_req_object_structure_check(osd_req **out, osd_dev *dev,
					      const struct osd_obj_id *obj);

/**
 * CREATE PARTITION; the id is read with osd_req_created_id().
 * @param[out] out the request
 * @param dev the device
 * @param partition requested id (>= OSD_FIRST_ID) or 0 for "target picks"
 */
OSD_EXTERN int osd_req_create_partition(osd_req **out, osd_dev *dev, uint64_t partition);

/** REMOVE PARTITION of an empty partition. */
OSD_EXTERN int osd_req_remove_partition(osd_req **out, osd_dev *dev, uint64_t partition);

/**
 * CREATE @p count user objects (0 counts as 1) in obj->partition. obj->id is
 * the requested id, or 0 for "target picks" (required when @p count > 1).
 * The assigned id is read with osd_req_created_id().
 */
OSD_EXTERN int osd_req_create(osd_req **out, osd_dev *dev, const struct osd_obj_id *obj,
			      unsigned count);

/** CREATE AND WRITE: create @p obj (id 0 = target picks) and write the data at @p offset. */
OSD_EXTERN int osd_req_create_and_write(osd_req **out, osd_dev *dev,
					const struct osd_obj_id *obj, uint64_t offset,
					const struct iovec *iov, int iovcnt);

/** WRITE the concatenated buffers at @p offset. */
OSD_EXTERN int osd_req_write(osd_req **out, osd_dev *dev, const struct osd_obj_id *obj,
			     uint64_t offset, const struct iovec *iov, int iovcnt);

/**
 * READ into the buffers from @p offset. Reading past the logical length is a
 * success with osd_req_is_short() set; the buffers' bytes from
 * osd_req_bytes_read() on are zeroed by libosd, whatever the target sent.
 */
OSD_EXTERN int osd_req_read(osd_req **out, osd_dev *dev, const struct osd_obj_id *obj,
			    uint64_t offset, const struct iovec *iov, int iovcnt);

/** APPEND the buffers at the object's end; see osd_req_append_offset(). */
OSD_EXTERN int osd_req_append(osd_req **out, osd_dev *dev, const struct osd_obj_id *obj,
			      const struct iovec *iov, int iovcnt);

/** CLEAR (v2): the range reads back as zeros. */
OSD_EXTERN int osd_req_clear(osd_req **out, osd_dev *dev, const struct osd_obj_id *obj,
			     uint64_t offset, uint64_t length);

/** PUNCH (v2): deallocate the range. */
OSD_EXTERN int osd_req_punch(osd_req **out, osd_dev *dev, const struct osd_obj_id *obj,
			     uint64_t offset, uint64_t length);

/** REMOVE a user object. */
OSD_EXTERN int osd_req_remove(osd_req **out, osd_dev *dev, const struct osd_obj_id *obj);

/**
 * FLUSH a user object to stable storage. @p offset and @p length are used
 * with OSD_FLUSH_RANGE only (v2).
 */
OSD_EXTERN int osd_req_flush(osd_req **out, osd_dev *dev, const struct osd_obj_id *obj,
			     enum osd_flush_scope scope, uint64_t offset, uint64_t length);

/** FLUSH COLLECTION (@p obj is the collection). */
OSD_EXTERN int osd_req_flush_collection(osd_req **out, osd_dev *dev,
					const struct osd_obj_id *obj, enum osd_flush_scope scope);

/** FLUSH PARTITION. */
OSD_EXTERN int osd_req_flush_partition(osd_req **out, osd_dev *dev, uint64_t partition,
				       enum osd_flush_scope scope);

/** FLUSH OSD. */
OSD_EXTERN int osd_req_flush_osd(osd_req **out, osd_dev *dev, enum osd_flush_scope scope);

/**
 * LIST the partitions (@p partition 0) or the user objects and collections of
 * a partition.
 * @param[out] out the request
 * @param dev the device
 * @param partition the partition, or 0 to list partitions
 * @param from where to start (NULL = the beginning)
 * @param alloc_len data-in bytes for the answer (>= 24); 0 = 64 KiB
 */
OSD_EXTERN int osd_req_list(osd_req **out, osd_dev *dev, uint64_t partition,
			    const struct osd_list_cursor *from, uint32_t alloc_len);

/**
 * LIST COLLECTION: the members of collection @p obj, or with obj->id 0 the
 * collections of the partition. Parameters as osd_req_list().
 */
OSD_EXTERN int osd_req_list_collection(osd_req **out, osd_dev *dev,
				       const struct osd_obj_id *obj,
				       const struct osd_list_cursor *from, uint32_t alloc_len);

/** CREATE COLLECTION (obj->id 0 = target picks; see osd_req_created_id()). */
OSD_EXTERN int osd_req_create_collection(osd_req **out, osd_dev *dev,
					 const struct osd_obj_id *obj);

/** Flags of osd_req_remove_collection(). */
#define OSD_REMOVE_COLLECTION_FORCE 0x1u /**< FCR: drop memberships of a non-empty collection */

/**
 * REMOVE COLLECTION.
 * @param[out] out the request
 * @param dev the device
 * @param obj the collection
 * @param flags OSD_REMOVE_COLLECTION_* bits
 */
OSD_EXTERN int osd_req_remove_collection(osd_req **out, osd_dev *dev,
					 const struct osd_obj_id *obj, unsigned flags);

/** GET ATTRIBUTES of any object; add what to get with osd_req_add_get_attr()/osd_req_get_page(). */
OSD_EXTERN int osd_req_get_attributes(osd_req **out, osd_dev *dev, const struct osd_obj_id *obj);

/** SET ATTRIBUTES of any object; add values with osd_req_add_set_attr(). */
OSD_EXTERN int osd_req_set_attributes(osd_req **out, osd_dev *dev, const struct osd_obj_id *obj);

/** GET MEMBER ATTRIBUTES (v2) of the members of collection @p obj. */
OSD_EXTERN int osd_req_get_member_attributes(osd_req **out, osd_dev *dev,
					     const struct osd_obj_id *obj);

/** SET MEMBER ATTRIBUTES (v2): the set list is applied to every member of @p obj. */
OSD_EXTERN int osd_req_set_member_attributes(osd_req **out, osd_dev *dev,
					     const struct osd_obj_id *obj);

/** REMOVE MEMBER OBJECTS (v2): remove every user object in collection @p obj. */
OSD_EXTERN int osd_req_remove_member_objects(osd_req **out, osd_dev *dev,
					     const struct osd_obj_id *obj);

/** One QUERY criterion: attribute (page, number) within [min, max]; a NULL/0 bound is open. */
struct osd_query_criterion {
	uint32_t page;       /**< ATTRIBUTES PAGE */
	uint32_t number;     /**< ATTRIBUTE NUMBER */
	const void *min;     /**< minimum value (copied), NULL = unbounded */
	uint16_t min_len;    /**< its length */
	const void *max;     /**< maximum value (copied), NULL = unbounded */
	uint16_t max_len;    /**< its length */
};

/** QUERY match types. */
enum osd_query_match {
	OSD_QUERY_ANY = 0, /**< an object matching any criterion */
	OSD_QUERY_ALL = 1  /**< an object matching every criterion */
};

/**
 * QUERY (v2): the user objects of collection @p obj whose attributes match.
 * Results via osd_req_query_result().
 * @param[out] out the request
 * @param dev the device
 * @param obj the collection searched
 * @param match any or all criteria
 * @param criteria the criteria (copied)
 * @param num_criteria their number
 * @param alloc_len data-in bytes for the ids; 0 = 64 KiB
 */
OSD_EXTERN int osd_req_query(osd_req **out, osd_dev *dev, const struct osd_obj_id *obj,
			     enum osd_query_match match,
			     const struct osd_query_criterion *criteria, unsigned num_criteria,
			     uint32_t alloc_len);

/** SET KEY parameters. The new key is derived by both ends (osd_key_derive()). */
struct osd_set_key_params {
	enum osd_key_to_set key_to_set;    /**< root, partition or working key */
	uint64_t partition;                /**< partition (0 for the root key) */
	uint8_t key_version;               /**< working key version 0..15 */
	uint8_t key_id[OSD_KEY_ID_LEN];    /**< new key identifier */
	uint8_t seed[OSD_SEED_LEN];        /**< derivation seed */
};

/** SET KEY. */
OSD_EXTERN int osd_req_set_key(osd_req **out, osd_dev *dev, const struct osd_set_key_params *p);

/** SET MASTER KEY parameters (Diffie-Hellman exchange step). */
struct osd_set_master_key_params {
	uint8_t dh_step;                   /**< DH_STEP (byte 11 bits 1-0) */
	uint8_t key_id[OSD_KEY_ID_LEN];    /**< key identifier */
	const void *params;                /**< parameter data (copied), may be NULL */
	uint32_t params_len;               /**< its length */
	uint32_t alloc_len;                /**< data-in bytes for the target's answer */
};

/** SET MASTER KEY; the target's answer is read with osd_req_data_in(). */
OSD_EXTERN int osd_req_set_master_key(osd_req **out, osd_dev *dev,
				      const struct osd_set_master_key_params *p);

/** @} */

/** @name Piggy-backed attributes and options */
/** @{ */

/**
 * Ask for attribute (@p page, @p number) to be returned with the command
 * (list mode). OSD_ATTR_ALL works for either field.
 * @return 0, -EINVAL after osd_req_get_page() or once submitted, -ENOMEM.
 */
OSD_EXTERN int osd_req_add_get_attr(osd_req *req, uint32_t page, uint32_t number);

/**
 * Set attribute (@p page, @p number) to the @p len bytes at @p value (copied)
 * with the command; @p len 0 deletes the attribute.
 * @return 0, -EINVAL (value too long, or a second value in page mode), -ENOMEM.
 */
OSD_EXTERN int osd_req_add_set_attr(osd_req *req, uint32_t page, uint32_t number,
				    const void *value, uint16_t len);

/** osd_req_add_set_attr() of an 8-byte big-endian value. */
OSD_EXTERN int osd_req_add_set_attr_u64(osd_req *req, uint32_t page, uint32_t number,
					uint64_t value);

/**
 * Switch to page mode and retrieve one whole page (in page format) of
 * @p alloc_len bytes at most. Excludes osd_req_add_get_attr() and allows at
 * most one osd_req_add_set_attr(). Read the page with osd_req_page().
 */
OSD_EXTERN int osd_req_get_page(osd_req *req, uint32_t page, uint32_t alloc_len);

/**
 * Data-in bytes reserved for retrieved attributes (list mode). By default
 * each requested attribute gets room for a 256-byte value, "all" requests
 * 64 KiB. A list cut short by the allocation sets osd_req_attrs_truncated().
 */
OSD_EXTERN int osd_req_set_get_alloc(osd_req *req, uint32_t bytes);

/** @name Request option flags (osd_req_set_flags()) */
/** @{ */
#define OSD_REQ_FUA 0x1u               /**< force unit access: durable on completion */
#define OSD_REQ_DPO 0x2u               /**< disable page out: do not cache */
#define OSD_REQ_BYPASS_TIMESTAMPS 0x4u /**< TIMESTAMPS CONTROL 7Fh: leave timestamps alone */
/** @} */

/** Set OSD_REQ_* option flags (replaces earlier flags). @return 0, -EINVAL for unknown bits. */
OSD_EXTERN int osd_req_set_flags(osd_req *req, unsigned flags);

/**
 * Use @p cred (copied) for this request instead of the device's cache.
 * @return 0, -EINVAL if the credential is for another OSD version.
 */
OSD_EXTERN int osd_req_set_credential(osd_req *req, const struct osd_credential *cred);

/** @} */

/** @name Execution */
/** @{ */

/**
 * Completion callback of osd_req_submit().
 * @param req          the request (the callback may free it)
 * @param result       same as osd_req_result()
 * @param private_data the pointer given to osd_req_submit()
 */
typedef void (*osd_req_cb)(osd_req *req, int result, void *private_data);

/**
 * Send the request and wait for it (driving the transport's event loop if it
 * has one), within the device's timeout.
 *
 * **Giving up (timeout, osd_req_free() in flight).** A request that has
 * returned to its caller never touches the caller's memory again: once
 * osd_req_execute() has returned -ETIMEDOUT, or osd_req_free() has returned
 * for a request in flight, the transport neither reads its data-out buffers
 * nor writes its data-in buffers, and never sends the command again (not
 * after a reconnect either); the caller may free or reuse them at once.
 * The transport takes the exchange back (struct osd_transport_ops cancel):
 * data-out still queued for the wire is copied first, data-in that arrives
 * late is read and dropped, and a command the device already holds is
 * aborted (iSCSI ABORT TASK). The device may still have run it: a WRITE
 * given up on may or may not have happened. This holds for libosd's iSCSI
 * transport and the loopback (which completes every request inside submit,
 * so nothing is ever left to give up); with a transport that has no cancel
 * (an older struct osd_transport_ops) the request instead stays in flight
 * and the buffers stay borrowed until it completes.
 * @return the result (osd_req_result()); -ETIMEDOUT: no answer within the
 *         device's timeout_ms, the request is complete with that result
 *         (or, on a transport without cancel, still in flight:
 *         osd_req_free() detaches it); -EBUSY if the request was already sent.
 */
OSD_EXTERN int osd_req_execute(osd_req *req);

/**
 * Send the request; @p cb runs when it completes, possibly before this
 * function returns (inline transports). Many requests may be in flight.
 * @param req          the request
 * @param cb           completion callback (required)
 * @param private_data passed to @p cb
 * @return 0 if queued (@p cb will run exactly once), else a negative errno
 *         and @p cb never runs (-EINVAL without a callback, -EBUSY if already
 *         sent, a credential error, or the transport's refusal).
 */
OSD_EXTERN int osd_req_submit(osd_req *req, osd_req_cb cb, void *private_data);

/**
 * Free a request. Freeing one still in flight gives it up: its callback does
 * not run, the transport lets go of its buffers before this returns and
 * never sends it again (see "Giving up" at osd_req_execute()). On a transport
 * without cancel it is detached instead, and released when the transport
 * completes it. NULL is allowed.
 */
OSD_EXTERN void osd_req_free(osd_req *req);

/** @} */

/** @name Results (valid after completion) */
/** @{ */

/**
 * 0 for GOOD (and for RECOVERED ERROR, e.g. a short READ), a negative errno
 * from osd_sense_errno() for CHECK CONDITION, -EBUSY for BUSY, -EIO for any
 * other status, -EBADMSG for an answer that fails its integrity check or
 * cannot be decoded, the transport's error, or -EINPROGRESS before completion.
 */
OSD_EXTERN int osd_req_result(const osd_req *req);

/** The decoded sense data, or NULL if there was none. Borrowed. */
OSD_EXTERN const struct osd_sense *osd_req_sense(const osd_req *req);

/**
 * A readable description of the outcome, e.g. "READ of 0x10000/0x10003:
 * ILLEGAL REQUEST: ...". "" on success. Borrowed, valid until the request is freed.
 */
OSD_EXTERN const char *osd_req_error(const osd_req *req);

/** The command this request carries. */
OSD_EXTERN enum osd_action osd_req_action(const osd_req *req);

/**
 * Data bytes the command delivered: for READ the bytes read (less than asked
 * when short), for LIST/QUERY/SET MASTER KEY the bytes of the answer.
 */
OSD_EXTERN uint64_t osd_req_bytes_read(const osd_req *req);

/** Whether a READ ended early at the end of the object (RECOVERED ERROR 3Bh/17h). */
OSD_EXTERN int osd_req_is_short(const osd_req *req);

/**
 * Next retrieved attribute (list mode). The value points into the request.
 * Current-command attributes the request asked for on its own (created ids,
 * append offset, response ICV) are skipped unless the caller asked for them.
 * @param req the completed request
 * @param[out] attr the attribute; length 0 and value NULL = not defined
 * @return 1 for an attribute, 0 at the end, -EBADMSG for a malformed list,
 *         -ENODATA if no attributes were retrieved.
 */
OSD_EXTERN int osd_req_next_attr(osd_req *req, struct osd_attr *attr);

/** Restart osd_req_next_attr() at the first retrieved attribute. */
OSD_EXTERN void osd_req_rewind_attrs(osd_req *req);

/**
 * Find retrieved attribute (@p page, @p number).
 * @param req the completed request
 * @param page ATTRIBUTES PAGE
 * @param number ATTRIBUTE NUMBER
 * @param[out] attr the attribute (value borrowed from the request); may be NULL
 * @return 0, -ENOENT if it was not returned or is undefined, -EBADMSG.
 */
OSD_EXTERN int osd_req_find_attr(osd_req *req, uint32_t page, uint32_t number,
				 struct osd_attr *attr);

/** Whether the retrieved list was cut short by the allocation (see osd_req_set_get_alloc()). */
OSD_EXTERN int osd_req_attrs_truncated(osd_req *req);

/**
 * The page retrieved in page mode (osd_req_get_page()).
 * @param req the completed request
 * @param[out] buf borrowed page bytes (page number, page length, values)
 * @param[out] len their length (bounded by what was transferred)
 * @return 0, -ENODATA if no page was asked for or returned.
 */
OSD_EXTERN int osd_req_page(const osd_req *req, const uint8_t **buf, size_t *len);

/**
 * The object a CREATE, CREATE AND WRITE, CREATE COLLECTION or CREATE
 * PARTITION acted on (current-command attributes 3 and 4; for several
 * objects the id the target reported).
 * @return 0, -ENODATA if the target did not report it.
 */
OSD_EXTERN int osd_req_created_id(osd_req *req, struct osd_obj_id *obj);

/** The byte offset an APPEND wrote at (current-command attribute 5). @return 0 or -ENODATA. */
OSD_EXTERN int osd_req_append_offset(osd_req *req, uint64_t *offset);

/**
 * Decode the answer of a LIST or LIST COLLECTION.
 * @param req the completed request
 * @param[out] res ids borrowed from the request
 * @param[out] next where to continue (may be NULL); next->next_id 0 = complete
 * @return 0, -EINVAL for another command, -EBADMSG.
 */
OSD_EXTERN int osd_req_list_result(const osd_req *req, struct osd_list_result *res,
				   struct osd_list_cursor *next);

/** Decode the answer of a QUERY. @return 0, -EINVAL for another command, -EBADMSG. */
OSD_EXTERN int osd_req_query_result(const osd_req *req, struct osd_list_result *res);

/**
 * Raw data-in bytes of the command (e.g. the SET MASTER KEY answer), not
 * including retrieved attributes. Borrowed; NULL/0 when the caller supplied
 * the buffers (READ).
 */
OSD_EXTERN int osd_req_data_in(const osd_req *req, const uint8_t **buf, size_t *len);

/** @} */

/** @name Synchronous helpers */
/** @{ */

/**
 * Called for each id by osd_list_foreach().
 * @return 0 to continue, non-zero to stop (returned by osd_list_foreach())
 */
typedef int (*osd_list_cb)(uint64_t id, void *payload);

/**
 * LIST (with @p action OSD_ACT_LIST, @p obj the root or a partition) or LIST
 * COLLECTION (OSD_ACT_LIST_COLLECTION) every id, following continuations.
 * @return 0, the callback's non-zero value, or the failing command's error
 *         (message in osd_dev_error()).
 */
OSD_EXTERN int osd_list_foreach(osd_dev *dev, enum osd_action action,
				const struct osd_obj_id *obj, osd_list_cb cb, void *payload);

/**
 * Read one attribute into @p buf.
 * @param dev the device
 * @param obj the object
 * @param page ATTRIBUTES PAGE
 * @param number ATTRIBUTE NUMBER
 * @param[out] buf     receives min(len, value length) bytes
 * @param len the size of @p buf
 * @param[out] got     the value length (may be NULL)
 * @return 0, -ENOENT if the attribute is not defined, or the command's error.
 */
OSD_EXTERN int osd_get_attr(osd_dev *dev, const struct osd_obj_id *obj, uint32_t page,
			    uint32_t number, void *buf, size_t len, size_t *got);

/**
 * Read a 1, 2, 4, 6 or 8-byte big-endian attribute as a number.
 * @return 0, -ENOENT if undefined, -EBADMSG for another length, or the command's error.
 */
OSD_EXTERN int osd_get_attr_u64(osd_dev *dev, const struct osd_obj_id *obj, uint32_t page,
				uint32_t number, uint64_t *value);

/** Set one attribute (length 0 deletes it). @return 0 or the command's error. */
OSD_EXTERN int osd_set_attr(osd_dev *dev, const struct osd_obj_id *obj, uint32_t page,
			    uint32_t number, const void *value, uint16_t len);

/** Set one attribute to an 8-byte big-endian number. */
OSD_EXTERN int osd_set_attr_u64(osd_dev *dev, const struct osd_obj_id *obj, uint32_t page,
				uint32_t number, uint64_t value);

/** @} */

#ifdef __cplusplus
}
#endif
/** @} */
#endif
