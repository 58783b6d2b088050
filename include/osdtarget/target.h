/**
 * @file osdtarget/target.h
 * @brief The software OSD target: executes OSD-1 and OSD-2 commands on a
 *        durable store in a local directory.
 *
 * @defgroup osd_target Software OSD target
 * @{
 */
#ifndef OSDTARGET_TARGET_H
#define OSDTARGET_TARGET_H

#include <osd/types.h>
#include <osd/sys/transport.h>

#ifdef __cplusplus
extern "C" {
#endif

struct osd_dev;
struct osd_open_options;

/** A target serving one logical unit from one directory (opaque). */
typedef struct osd_target osd_target;

/** Open options. Initialise with OSD_TARGET_OPTIONS_INIT. */
struct osd_target_options {
	int version;          /**< OSD_TARGET_OPTIONS_VERSION */
	int create;           /**< create the store if the directory is empty/missing */
	uint64_t capacity;    /**< total capacity in bytes reported; 0 = the filesystem's */
	int sync_writes;      /**< 1: every command is durable when it completes (as FUA) */
	/**
	 * Version 2: open a store whose metadata is damaged anyway (what
	 * `osd-targetd --salvage` does): every intact record of the checkpoint
	 * and log is kept, before and after the damage, the damaged bytes are
	 * skipped (a bad checkpoint is rebuilt from checkpoint.prev and
	 * log.prev), data files no record names go to quarantine/, and a clean
	 * checkpoint and log are written. What it skipped goes to @ref log_event.
	 */
	int salvage;
	/**
	 * Version 2: told each event of the store with its severity
	 * (OSD_TARGET_LOG_*): why an open failed (for damage: the file, the byte
	 * offset and what salvage would keep), a torn log tail cut, data files
	 * quarantined, a store directory or file open to other users repaired to
	 * 0700/0600, the filesystem full and having room again, I/O errors.
	 * One line without a line end. Called from any thread, possibly with
	 * locks held: it must not call into the target. NULL: none.
	 */
	void (*log_event)(void *arg, int severity, const char *msg);
	void *log_event_arg;  /**< passed to @ref log_event */
	/**
	 * Version 3: behave like another target, one OSD_TARGET_QUIRK_* flag at
	 * a time. Emulation for testing initiators against what real targets do
	 * (docs/target.md, "Quirk emulation"); 0 for a standard target.
	 */
	unsigned quirks;
	/**
	 * Version 4: 1 = a store this open creates keeps no data checksums, so
	 * nothing catches damaged data (for measuring their cost only:
	 * `osd-bench --target --checksum-cost`). Recorded in the store; an
	 * existing store keeps the mode it was made with.
	 */
	int no_checksums;
	/**
	 * Version 5: 1 = verify every READ against the data checksums (what
	 * `osd-targetd --verify-reads` does). 0, the default: a block the store
	 * verified once, or whose checksum it computed from the bytes it wrote,
	 * is read without a check while its page stays in the host page cache;
	 * a page the kernel read back from disk is verified again
	 * (docs/target-store.md, "Read trust").
	 */
	int verify_reads;
	/**
	 * Version 6: objects the store keeps in memory once used, beyond those
	 * that must stay (objects holding data, changed ones until the next
	 * checkpoint); the others stay on disk in its indexed checkpoint with a
	 * 16-byte entry each in memory (docs/target-store.md, "Checkpoint
	 * index"). 0: the default, 65,536.
	 */
	size_t meta_cache;
	/**
	 * Version 7: 1 = this open reads every data file of the store against
	 * its objects' records (what `osd-targetd --scan-data` does): objects
	 * with data load, the capacity used is counted again from the files,
	 * and files no object names (what a crash can leave behind: space, never
	 * data) go to quarantine/, told to @ref log_event. Slow at millions of
	 * objects with data.
	 */
	int scan_data;
};

/** @name Quirks (osd_target_options.quirks): emulation for testing initiators */
/** @{ */
/** INQUIRY's only version descriptor is 0340h (OSD-1) while 200-byte OSD-1
 *  CDBs are refused: ILLEGAL REQUEST, INVALID COMMAND OPERATION CODE. */
#define OSD_TARGET_QUIRK_OSD1_DESCRIPTOR 0x01u
/** FLUSH PARTITION is not implemented (ILLEGAL REQUEST, 20h/00h). */
#define OSD_TARGET_QUIRK_NO_FLUSH_PARTITION 0x02u
/** FLUSH OSD is not implemented (ILLEGAL REQUEST, 20h/00h). */
#define OSD_TARGET_QUIRK_NO_FLUSH_OSD 0x04u
/** FLUSH COLLECTION is not implemented (ILLEGAL REQUEST, 20h/00h). */
#define OSD_TARGET_QUIRK_NO_FLUSH_COLLECTION 0x08u
/** The partition's NUMBER OF OBJECTS attribute is not provided: a get list
 *  naming it is refused (ILLEGAL REQUEST, INVALID FIELD IN PARAMETER LIST,
 *  with the attribute identification descriptor naming it); lists of all
 *  attributes leave it out. */
#define OSD_TARGET_QUIRK_NO_OBJECT_COUNT 0x10u
/** PUNCH is not implemented (ILLEGAL REQUEST, 20h/00h). */
#define OSD_TARGET_QUIRK_NO_PUNCH 0x20u
/** A non-standard PUNCH: the data after the range moves down over it and
 *  the logical length shrinks by the range (instead of deallocating it). */
#define OSD_TARGET_QUIRK_PUNCH_SHIFTS 0x40u
/** FLUSH (of one object) is not implemented (ILLEGAL REQUEST, 20h/00h). */
#define OSD_TARGET_QUIRK_NO_FLUSH_OBJECT 0x80u
/** Every quirk flag this version knows. */
#define OSD_TARGET_QUIRKS_ALL 0xFFu
/** @} */

/** @name Severities of osd_target_options.log_event (the syslog levels) */
/** @{ */
#define OSD_TARGET_LOG_ERR 3     /**< the store cannot open, or data may be lost */
#define OSD_TARGET_LOG_WARNING 4 /**< damage or modes repaired, damage skipped, filesystem full */
#define OSD_TARGET_LOG_NOTICE 5  /**< a condition cleared, salvage found nothing */
/** @} */

#define OSD_TARGET_OPTIONS_VERSION 7 /**< current options version (1: without salvage
					  and log_event; 2: without quirks;
					  3: without no_checksums; 4: without
					  verify_reads; 5: without meta_cache;
					  6: without scan_data) */
/** Default options: create if missing, FLUSH/FUA-level durability, no quirks,
 *  checksums. */
#define OSD_TARGET_OPTIONS_INIT { OSD_TARGET_OPTIONS_VERSION, 1, 0, 0, 0, NULL, NULL, 0, 0, 0, 0, 0 }

/**
 * Open (and with opts->create, create) the store in @p dir. Only one process
 * may open a store at a time (an fcntl lock); a second open gets -EBUSY.
 * @param[out] out the target, closed with osd_target_close()
 * @param dir the store's directory
 * @param opts NULL for defaults
 * @return 0, -EBUSY, -ENOENT (no store and create = 0), -EINVAL (an unknown
 *         quirk flag), -EUCLEAN (store
 *         damaged: opts->log_event is told the file, the offset and what
 *         opening with salvage would keep), or another -errno.
 */
OSD_EXTERN int osd_target_open(osd_target **out, const char *dir,
			       const struct osd_target_options *opts);

/** Flush everything and close. NULL is allowed. */
OSD_EXTERN void osd_target_close(osd_target *tgt);

/** The last error message of this target (per handle; valid until the next call). */
OSD_EXTERN const char *osd_target_error(osd_target *tgt);

/**
 * Execute one command synchronously: @p xfer's CDB and data-out are read,
 * data-in, status, sense and in_xferred are written; xfer->done is NOT
 * called. Thread-safe: many threads may execute at once.
 * @param tgt the target
 * @param xfer the command exchange
 * @param token security token of the channel the command came on (CAPKEY), may be NULL
 * @param token_len length of @p token
 * @return 0 when a status was produced (GOOD or CHECK CONDITION), or -errno
 *         if the target could not run at all.
 */
OSD_EXTERN int osd_target_execute(osd_target *tgt, struct osd_xfer *xfer,
				  const uint8_t *token, size_t token_len);

/**
 * Open the store in @p dir and a libosd device on it (through the loopback
 * transport) with a keyring as its security manager, as
 * osd_dev_open_keyed() does for a transport: the embedded-target half of
 * what osd_dev_open_url() does for an iSCSI URL, with the same key scheme
 * (osd/keyring.h). With @p topts->create the store is created if the
 * directory is missing or empty and, given a root key in @p opts, that key
 * is installed as the store's root key (as its owner would, out of band).
 *
 * Close the device first, then the target:
 * `osd_dev_close(dev); osd_target_close(tgt);`
 * @param[out] tgt_out the target, closed with osd_target_close()
 * @param[out] dev_out the device, closed with osd_dev_close()
 * @param dir the store's directory
 * @param topts store options, or NULL for OSD_TARGET_OPTIONS_INIT
 * @param opts device and key options, or NULL for OSD_OPEN_OPTIONS_INIT
 *        (its iSCSI fields are not used); opts->error receives the reason
 *        of a failure
 * @return 0; -ENOENT (no store and not @p topts->create), -EBUSY (another
 *         process has the store open), the store's error (osd_target_open()),
 *         or osd_dev_open_keyed()'s.
 */
OSD_EXTERN int osd_target_open_dev(osd_target **tgt_out, struct osd_dev **dev_out,
				   const char *dir, const struct osd_target_options *topts,
				   const struct osd_open_options *opts);

/**
 * libosdtarget's version as text, e.g. "0.1.0" (OSD_VERSION_STRING of
 * osd/version.h when it was built). Static storage.
 */
OSD_EXTERN const char *osd_target_version_string(void);

/** libosdtarget's version as one number (OSD_VERSION_NUMBER when it was built). */
OSD_EXTERN long osd_target_version_number(void);

/** The OSD SYSTEM ID (root information attribute 3). */
OSD_EXTERN void osd_target_system_id(osd_target *tgt, uint8_t id[OSD_SYSTEM_ID_LEN]);

/**
 * Administrative bootstrap of the root key (what SET MASTER KEY and SET KEY
 * would establish), stored durably with the store. Out-of-band: for the
 * target's owner, not reachable over a transport.
 */
OSD_EXTERN int osd_target_set_root_key(osd_target *tgt, const uint8_t key[20]);

/**
 * Whether the root is secured: with a root key installed, every command whose
 * capability describes the root (FORMAT OSD, CREATE PARTITION, LIST of
 * partitions, root GET/SET ATTRIBUTES...) needs at least CAPKEY, whatever the
 * root's default security method says; only a GET ATTRIBUTES of the OSD
 * SYSTEM ID and CLOCK is answered without a credential (docs/security.md 5).
 * @param tgt the target
 * @return 1 secured, 0 NOSEC root (no root key: anyone reaching the target
 *         may format it), -EINVAL for NULL.
 */
OSD_EXTERN int osd_target_root_secured(osd_target *tgt);

/**
 * An in-process loopback transport to @p tgt: submit() executes the command
 * in the calling thread and calls done() before returning.
 * @param tgt the target to execute commands on
 * @param[out] out filled with ops and impl; destroy it with out->ops->destroy(out->impl).
 *             The target must outlive the transport.
 */
OSD_EXTERN int osd_target_loopback(osd_target *tgt, struct osd_transport *out);

#ifdef __cplusplus
}
#endif
/** @} */
#endif
