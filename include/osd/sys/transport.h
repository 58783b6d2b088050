/**
 * @file osd/sys/transport.h
 * @brief The transport interface: how libosd hands a SCSI command to a device.
 *
 * A transport carries one command exchange (CDB, data-out, data-in, status,
 * sense) to an OSD. libosd ships an iSCSI transport; the software target
 * (osdtarget) provides an in-process loopback transport; applications may
 * write their own.
 *
 * @defgroup osd_transport Transport interface
 * @{
 */
#ifndef OSD_SYS_TRANSPORT_H
#define OSD_SYS_TRANSPORT_H

#include <osd/types.h>
#include <stddef.h>
#include <string.h>
#include <sys/uio.h>

#ifdef __cplusplus
extern "C" {
#endif

#define OSD_STATUS_GOOD 0x00            /**< SCSI GOOD */
#define OSD_STATUS_CHECK_CONDITION 0x02 /**< SCSI CHECK CONDITION: sense is valid */
#define OSD_STATUS_BUSY 0x08            /**< SCSI BUSY */

/** Bytes of sense data struct osd_xfer holds (SPC-4 sense data: at most 252; docs/protocol.md §11.1). */
#define OSD_XFER_SENSE_MAX 252

/**
 * Whether a transport may send a command again after the connection broke
 * with the command sent but not answered (RFC 7143 error recovery: the target
 * may or may not have run it). Set by the submitter, which knows the command;
 * transports never parse the CDB for it.
 */
enum osd_xfer_resend {
	OSD_XFER_RESEND_NEVER = 0,     /**< a second run differs or fails: fail it (the default) */
	OSD_XFER_RESEND_ALWAYS = 1,    /**< only reads (or flushes): send it again */
	OSD_XFER_RESEND_REPEATABLE = 2 /**< writes fixed bytes at a fixed place: send it again
					    unless a NEVER command to the device followed it */
};

/**
 * One command exchange. The submitter owns it and everything it points to
 * until @ref done has been called, or until a successful
 * @ref osd_transport_ops.cancel.
 *
 * Extension rule: the struct only grows at its end, and @ref size says how
 * much of it the submitter knows. Submitters start from osd_xfer_init().
 * A transport reads a member added after @ref in_xferred only when
 * OSD_XFER_HAS() says the submitter's struct has it, and otherwise uses that
 * member's documented default; a size of 0 (a zeroed struct from a submitter
 * that predates the field) means "up to @ref in_xferred"; a non-zero size
 * below that is refused with -EINVAL (OSD_XFER_SIZE_OK()). Members are never
 * removed, reordered or resized; a larger array is a new member.
 */
struct osd_xfer {
	/** sizeof(struct osd_xfer) as the submitter was compiled (osd_xfer_init()) */
	size_t size;
	/* Filled by the submitter */
	const uint8_t *cdb;           /**< 200 or 236 bytes (or a shorter SCSI CDB) */
	size_t cdb_len;               /**< CDB length */
	const struct iovec *out_iov;  /**< data-out buffers, NULL if none */
	int out_iovcnt;               /**< number of data-out buffers */
	size_t out_len;               /**< total data-out bytes */
	const struct iovec *in_iov;   /**< data-in buffers, NULL if none */
	int in_iovcnt;                /**< number of data-in buffers */
	size_t in_len;                /**< total data-in bytes expected (allocation) */
	/** Completion: @p err is 0 when the device answered (see status) or a
	 *  negative errno when the transport failed (nothing is known). May run
	 *  on any thread, and inside submit() itself. */
	void (*done)(struct osd_xfer *xfer, int err);
	void *priv;                   /**< for the submitter */
	/* Filled by the transport before done() */
	uint8_t status;               /**< SCSI status */
	uint8_t sense_len;            /**< bytes valid in sense */
	uint8_t sense[OSD_XFER_SENSE_MAX]; /**< sense data (CHECK CONDITION) */
	size_t in_xferred;            /**< data-in bytes actually transferred */
	/* Extensions: read only where OSD_XFER_HAS() */
	/** enum osd_xfer_resend, by the submitter; default OSD_XFER_RESEND_NEVER */
	uint8_t resend;
};

/** The size of struct osd_xfer through @ref osd_xfer::in_xferred, the first layout. */
#define OSD_XFER_BASE_SIZE (offsetof(struct osd_xfer, in_xferred) + sizeof(size_t))

/** Whether a transport can take @p x: its size is 0 or covers the first
 *  layout (a transport refuses others with -EINVAL). */
#define OSD_XFER_SIZE_OK(x) ((x)->size == 0 || (x)->size >= OSD_XFER_BASE_SIZE)

/** Whether the submitter's struct osd_xfer @p x has member @p m (see the
 *  extension rule at struct osd_xfer). */
#define OSD_XFER_HAS(x, m) \
	((x)->size >= offsetof(struct osd_xfer, m) + sizeof((x)->m))

/** Zero @p x and record the size this header declares. */
static inline void osd_xfer_init(struct osd_xfer *x)
{
	memset(x, 0, sizeof(*x));
	x->size = sizeof(*x);
}

/**
 * The resend class of an OSD service action, for submitters that build
 * their own CDBs (requests built by libosd carry it already).
 * @return an enum osd_xfer_resend value; OSD_XFER_RESEND_NEVER for an
 *         unknown action.
 */
OSD_EXTERN enum osd_xfer_resend osd_action_resend(enum osd_action action);

/** Transport operations. Set @ref version to OSD_TRANSPORT_VERSION. */
struct osd_transport_ops {
	int version;                  /**< OSD_TRANSPORT_VERSION */
	/** Queue @p xfer. Returns 0 (done() will be or was called) or a negative
	 *  errno (done() is never called). Thread-safe. */
	int (*submit)(void *impl, struct osd_xfer *xfer);
	/** Optional: the fd to poll for an event loop, or -1. */
	int (*get_fd)(void *impl);
	/** Optional: poll events wanted on that fd (POLLIN/POLLOUT). */
	int (*which_events)(void *impl);
	/** Optional: make progress after poll() reported @p revents
	 *  (or with 0 to drive timeouts). Completions run from here. */
	int (*service)(void *impl, int revents);
	/** Optional: the channel's security token (CAPKEY). Returns its length. */
	size_t (*security_token)(void *impl, uint8_t *buf, size_t len);
	/** Release the transport. */
	void (*destroy)(void *impl);
	/** Optional, from version 2 on: the submitter gives up on @p xfer (its
	 *  wait timed out, or it freed the request in flight). Returns 0 when
	 *  done() has run (before cancel returns: with -ECANCELED, or with the
	 *  answer that had already arrived); from then on the transport never
	 *  reads the data-out buffers, never writes the data-in buffers, never
	 *  sends the command again and never touches @p xfer. Data-out still
	 *  queued for the wire is copied first, and data-in that arrives late
	 *  is read and dropped. A command the target holds may still run there:
	 *  the transport asks it to abort. Returns -ENOENT when the transport
	 *  does not hold @p xfer any more (its done() is running on another
	 *  thread). Thread-safe; may be called from a completion. A transport
	 *  that wraps another one by copying its ops and putting its own impl
	 *  in must forward (or clear) this member like the others. */
	int (*cancel)(void *impl, struct osd_xfer *xfer);
};

/** Current struct osd_transport_ops version. Version 1 transports (no
 *  @ref osd_transport_ops.cancel member) are still accepted. */
#define OSD_TRANSPORT_VERSION 2

/** A transport: operations plus their private state. */
struct osd_transport {
	const struct osd_transport_ops *ops; /**< operations */
	void *impl;                          /**< implementation state */
};

#ifdef __cplusplus
}
#endif
/** @} */
#endif
