/**
 * @file osd/iscsi.h
 * @brief libosd's iSCSI initiator transport (RFC 7143) for OSD devices.
 *
 * OSD commands need what common iSCSI initiators lack: CDBs longer than 16
 * bytes (carried in an Extended CDB AHS) and bidirectional transfers. This
 * transport logs in to one target portal, then carries many commands on one
 * session. It plugs into osd_dev_open() as a struct osd_transport:
 *
 * @code
 * struct osd_iscsi_options o = OSD_ISCSI_OPTIONS_INIT;
 * struct osd_transport tp;
 * osd_dev *dev;
 * int rc = osd_iscsi_transport_new(&tp, "iscsi://127.0.0.1:3260/iqn.2026-01.org.example:osd/0", &o);
 * if (rc == 0 && osd_dev_open(&dev, &tp, NULL) != 0)
 *         tp.ops->destroy(tp.impl);
 * @endcode
 *
 * URL form: `iscsi://host[:port]/target-iqn/lun`; host is a name, a dotted
 * IPv4 address or a bracketed IPv6 address; the port defaults to 3260; the
 * LUN is a decimal number below 16384 (flat addressing for 256 and up).
 *
 * The transport is event driven: osd_dev_get_fd(), osd_dev_which_events()
 * and osd_dev_service() expose its socket, and completions run inside
 * service. Submission is thread-safe. A dropped connection is re-established
 * (new login) on the next service call; commands that only read are resent,
 * the others fail with -EIO (see docs/iscsi-initiator.md).
 *
 * @defgroup osd_iscsi iSCSI initiator transport
 * @{
 */
#ifndef OSD_ISCSI_H
#define OSD_ISCSI_H

#include <osd/types.h>
#include <osd/sys/transport.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Digest preference for one of HeaderDigest / DataDigest. */
enum osd_iscsi_digest {
	OSD_ISCSI_DIGEST_NONE = 0,         /**< offer None only */
	OSD_ISCSI_DIGEST_CRC32C = 1,       /**< offer CRC32C only (login fails if refused) */
	OSD_ISCSI_DIGEST_PREFER_CRC32C = 2, /**< offer CRC32C,None */
	OSD_ISCSI_DIGEST_PREFER_NONE = 3   /**< offer None,CRC32C */
};

/** Options of osd_iscsi_transport_new(). Initialise with OSD_ISCSI_OPTIONS_INIT. */
struct osd_iscsi_options {
	int version;                      /**< OSD_ISCSI_OPTIONS_VERSION */
	const char *initiator_name;       /**< iSCSI name; NULL = "iqn.2026-01.org.libosd:initiator." and 12 hex digits of a hash of this host's machine id (unique per host) */
	enum osd_iscsi_digest header_digest; /**< HeaderDigest offer */
	enum osd_iscsi_digest data_digest;   /**< DataDigest offer */
	const char *chap_user;            /**< CHAP name we answer with; NULL = no CHAP */
	const char *chap_secret;          /**< its secret (12 to 255 bytes recommended) */
	const char *chap_target_user;     /**< mutual CHAP: the name the target must give; NULL = one-way */
	const char *chap_target_secret;   /**< mutual CHAP: the target's secret */
	unsigned connect_timeout_ms;      /**< TCP connect plus login limit; 0 = none */
	unsigned nop_interval_ms;         /**< idle time before a NOP-Out keepalive; 0 = never */
	unsigned nop_timeout_ms;          /**< a keepalive unanswered this long drops the connection */
	unsigned max_inflight;            /**< commands on the wire at once (also bounded by MaxCmdSN) */
	unsigned max_recv_data_segment;   /**< MaxRecvDataSegmentLength we declare (512..16777215) */
	unsigned reconnect_attempts;      /**< logins tried after a drop before failing commands */
	char *errbuf;                     /**< if not NULL, why osd_iscsi_transport_new() failed */
	size_t errbuf_len;                /**< size of @ref errbuf */
	/** Version 2: the longest a target may stay silent while commands wait
	 *  on it. With commands in flight, a NOP-Out probe goes out after a
	 *  third of it without a PDU from the target, an unanswered probe drops
	 *  the connection after another third, and the logins after that drop
	 *  (within @ref reconnect_attempts) end failover_ms after the target's
	 *  last PDU, with at least a sixth of it for them. So a target that
	 *  falls silent fails the commands waiting on it with -EIO within
	 *  failover_ms of its last PDU (or of their submission, after a longer
	 *  idle spell), plus the time between two service() calls (250 ms in
	 *  osd_req_execute()); resendable ones complete instead when a login
	 *  works. 0 = no bound: the keepalive above, then up to
	 *  reconnect_attempts logins of connect_timeout_ms each (55 s with the
	 *  other defaults). Default 10 s. A target must answer the probe
	 *  while it runs a long command (osd-targetd does: its connections
	 *  execute commands in worker threads); one that answers only after
	 *  the command it runs cuts off any command longer than two thirds of
	 *  failover_ms, and wants a larger value (or 0). */
	unsigned failover_ms;
};

#define OSD_ISCSI_OPTIONS_VERSION 2 /**< current struct osd_iscsi_options version (1 is
				       accepted: no failover_ms, which is then 10 s) */
/** Defaults: digests preferred off, no CHAP, 10 s connect/login, keepalive
 *  after 15 s idle with 10 s to answer, 64 commands in flight, 256 KiB data
 *  segments, 3 reconnect attempts, failover within 10 s. */
#define OSD_ISCSI_OPTIONS_INIT \
	{ OSD_ISCSI_OPTIONS_VERSION, NULL, OSD_ISCSI_DIGEST_PREFER_NONE, \
	  OSD_ISCSI_DIGEST_PREFER_NONE, NULL, NULL, NULL, NULL, 10000, 15000, 10000, 64, \
	  262144, 3, NULL, 0, 10000 }

#define OSD_ISCSI_NAME_MAX 223      /**< longest iSCSI name (RFC 7143 section 4.2.7.1) */

/** A parsed `iscsi://` URL. */
struct osd_iscsi_url {
	char host[256];                        /**< host name or address, without brackets */
	uint16_t port;                         /**< TCP port */
	char target[OSD_ISCSI_NAME_MAX + 1];   /**< target iSCSI name */
	uint32_t lun;                          /**< logical unit number */
};

/**
 * Parse `iscsi://host[:port]/target/lun` strictly: no user info, query or
 * fragment, no empty parts, port 1-65535, target a valid iSCSI name (iqn.,
 * eui. or naa. form, at most 223 bytes, no spaces or slashes), LUN decimal
 * below 16384.
 * @param[out] out the parsed URL (untouched on failure)
 * @param url  the text
 * @param errbuf if not NULL, receives a message naming what is wrong
 * @param errlen size of @p errbuf
 * @return 0 or -EINVAL.
 */
OSD_EXTERN int osd_iscsi_url_parse(struct osd_iscsi_url *out, const char *url,
				   char *errbuf, size_t errlen);

/**
 * Connect to the portal in @p url, log in (security stage with CHAP when
 * configured, then operational negotiation) and return a transport for
 * osd_dev_open(). Blocks for at most opts->connect_timeout_ms.
 *
 * Ownership: on success @p out holds the transport, released through its
 * destroy operation (osd_dev_close() does it for a device that took it),
 * which logs out.
 * @param[out] out the transport
 * @param url  `iscsi://host[:port]/target/lun`
 * @param opts NULL for defaults
 * @return 0, -EINVAL (bad URL or options), -ENOMEM, -ECONNREFUSED or another
 *         connect errno, -ETIMEDOUT, -EACCES (authentication failed),
 *         -ENOENT (no such target), -EPROTO (target broke the protocol or
 *         refused the negotiation).
 */
OSD_EXTERN int osd_iscsi_transport_new(struct osd_transport *out, const char *url,
				       const struct osd_iscsi_options *opts);

/** One target reported by SendTargets discovery. */
struct osd_iscsi_target_info {
	char name[OSD_ISCSI_NAME_MAX + 1]; /**< target iSCSI name */
	char address[288];                 /**< first TargetAddress ("host:port,tpgt"), "" if none */
};

/**
 * SendTargets discovery: log in to the portal with a Discovery session and
 * list the targets it offers.
 * @param[out] out array of targets, freed with free(); NULL when none
 * @param[out] count number of entries
 * @param portal `host[:port]` or an `iscsi://host[:port]` URL (a path is ignored)
 * @param opts NULL for defaults (initiator name, CHAP, timeouts are used)
 * @return 0 or a negative errno as for osd_iscsi_transport_new().
 */
OSD_EXTERN int osd_iscsi_discover(struct osd_iscsi_target_info **out, size_t *count,
				  const char *portal, const struct osd_iscsi_options *opts);

/**
 * Task management functions (RFC 7143 §11.5.1, TMF request byte 1 bits
 * 6-0): the one definition, used by the PDU codec, the initiator and the
 * target. osd_iscsi_task_mgmt() sends ABORT TASK and LOGICAL UNIT RESET.
 */
enum osd_iscsi_tmf {
	OSD_ISCSI_TASK_ABORT = 1,             /**< ABORT TASK: abort one command */
	OSD_ISCSI_TASK_ABORT_SET = 2,         /**< ABORT TASK SET */
	OSD_ISCSI_TASK_CLEAR_ACA = 3,         /**< CLEAR ACA */
	OSD_ISCSI_TASK_CLEAR_SET = 4,         /**< CLEAR TASK SET */
	OSD_ISCSI_TASK_LUN_RESET = 5,         /**< LOGICAL UNIT RESET */
	OSD_ISCSI_TASK_TARGET_WARM_RESET = 6, /**< TARGET WARM RESET */
	OSD_ISCSI_TASK_TARGET_COLD_RESET = 7, /**< TARGET COLD RESET */
	OSD_ISCSI_TASK_REASSIGN = 8           /**< TASK REASSIGN */
};

/**
 * Send a task management request and wait for its answer (drives the
 * transport). An aborted command completes with -ECANCELED; a LUN reset
 * completes every command in flight with -ECANCELED.
 * @param tp   a transport made by osd_iscsi_transport_new()
 * @param fn   the function
 * @param xfer for ABORT TASK, the command to abort (submitted on @p tp); NULL otherwise
 * @param timeout_ms how long to wait; 0 = none
 * @return 0 when the function completed, -ENOENT when the target no longer
 *         knows the task, -EPERM when it refused, -ETIMEDOUT, -EINVAL, -EIO.
 */
OSD_EXTERN int osd_iscsi_task_mgmt(struct osd_transport *tp, enum osd_iscsi_tmf fn,
				   struct osd_xfer *xfer, unsigned timeout_ms);

/**
 * Why the transport last dropped its connection or failed a command, as
 * text: a protocol error names the PDU, field and task ("R2T for a READ
 * (task 0x3)", "NOP-In flood: 129 in 4 ms"), a Reject its reason. Commands
 * fail with a bare errno (-EPROTO, -EIO, -ENOBUFS...); this says which
 * rule the target broke. The text stays until the next error replaces it.
 * @param tp  a transport made by osd_iscsi_transport_new()
 * @param buf receives the text, NUL-terminated, truncated to @p len
 * @param len size of @p buf
 * @return the length of the whole text (0: no error so far), or -EINVAL
 *         when @p tp is not an iSCSI transport or @p buf is NULL.
 */
OSD_EXTERN int osd_iscsi_transport_error(struct osd_transport *tp, char *buf, size_t len);

/**
 * Whether a command's return value is one that osd_iscsi_transport_error()
 * explains: -EPROTO, -EIO, -ENOTCONN, -ENOBUFS or -ENODEV. Not -ETIMEDOUT:
 * that is the request's own timeout, and the last transport error may be
 * an older one the session recovered from.
 * @param rc a value returned by a libosd call
 * @return 1 if it is, else 0
 */
OSD_EXTERN int osd_iscsi_error_is_transport(int rc);

#ifdef __cplusplus
}
#endif
/** @} */
#endif
