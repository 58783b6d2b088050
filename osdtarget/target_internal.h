/*
 * The osd_target handle and what its parts share (internal).
 */
#ifndef OSDTARGET_TARGET_INTERNAL_H
#define OSDTARGET_TARGET_INTERNAL_H

#include <pthread.h>
#include <stdint.h>
#include <osdtarget/target.h>

#include "store/store.h"
#include "security/capkey_cache.h"
#include "security/nonce_cache.h"

/* Identity strings (INQUIRY, root information page). Space padded on the wire. */
#define OSD__VENDOR_ID "OSDSUITE"         /* 8 */
#define OSD__PRODUCT_ID "SOFTWARE OSD"     /* 16 */
#define OSD__PRODUCT_MODEL "osdtarget software object store" /* 32 */
#define OSD__PRODUCT_REV "0001"           /* 4 */
#define OSD__MAX_CONT_LEN 4096u           /* root info 0xA: longest CDB continuation */
#define OSD__SERIAL_LEN 40                /* hex of the system id */

/* Remembered LIST identifiers (for LSTCHG). */
#define OSD__LIST_IDS 64

struct osd__list_state {
	uint32_t id;
	uint64_t partition;
	uint64_t collection;
	uint64_t generation;
};

struct osd_target {
	struct osd_store *st;
	int sync_writes;
	unsigned quirks;             /* OSD_TARGET_QUIRK_*: emulating another target */
	/* Mutating commands take it exclusively, the others shared. */
	pthread_rwlock_t cmd_lock;
	struct osd__nonce_cache nonces;
	/* Capability keys already made; invalidated whenever a key changes. */
	struct osd__capkey_cache capkeys;
	uint8_t system_id[OSD_SYSTEM_ID_LEN];
	uint64_t start_ms;
	uint16_t boot_epoch;
	/* Namespace generation (bumped by create/remove) and LIST identifiers. */
	pthread_mutex_t list_lock;
	uint64_t generation;
	uint32_t next_list_id;
	struct osd__list_state lists[OSD__LIST_IDS];
	/* Per-handle error message. */
	pthread_mutex_t err_lock;
	char err[256];
};

/* Record a message for osd_target_error(); returns @p rc. */
int osd__target_seterr(osd_target *tgt, int rc, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Plain SCSI commands (opcode != 7Fh). Always produces a status. */
void osd__scsi_execute(osd_target *tgt, struct osd_xfer *x,
		       const uint8_t *token, size_t token_len);

/* The unit serial number (ASCII, OSD__SERIAL_LEN bytes, no NUL). */
void osd__target_serial(const osd_target *tgt, char out[OSD__SERIAL_LEN]);

#endif
