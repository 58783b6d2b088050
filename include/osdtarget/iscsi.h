/**
 * @file osdtarget/iscsi.h
 * @brief An iSCSI (RFC 7143) server exporting software OSD targets as
 *        logical units over TCP.
 *
 * One server owns one listening socket and serves one iSCSI target name
 * whose LUN n is the n-th osd_target given at creation. Each TCP connection
 * gets a thread of its own; the connection thread executes its commands
 * with osd_target_execute(). Discovery sessions (SendTargets), CHAP one-way
 * authentication, immediate and unsolicited data, R2T, extended CDBs and
 * bidirectional commands are supported; error recovery level 0 only.
 * See docs/iscsi.md for what is implemented and the negotiated limits.
 *
 * @defgroup osd_target_iscsi iSCSI server for software OSD targets
 * @{
 */
#ifndef OSDTARGET_ISCSI_H
#define OSDTARGET_ISCSI_H

#include <osdtarget/target.h>

#ifdef __cplusplus
extern "C" {
#endif

/** An iSCSI server (opaque). */
typedef struct osd_target_iscsi osd_target_iscsi;

/** Log levels passed to osd_target_iscsi_options::log. */
enum osd_target_iscsi_log_level {
	OSD_TARGET_ISCSI_LOG_ERROR = 0,   /**< the server or a connection failed */
	OSD_TARGET_ISCSI_LOG_WARNING = 1, /**< a peer broke the protocol */
	OSD_TARGET_ISCSI_LOG_INFO = 2,    /**< logins, logouts, connections */
	OSD_TARGET_ISCSI_LOG_DEBUG = 3,   /**< every PDU */
};

/** Server options. Initialise with OSD_TARGET_ISCSI_OPTIONS_INIT. */
struct osd_target_iscsi_options {
	int version;              /**< OSD_TARGET_ISCSI_OPTIONS_VERSION */
	const char *address;      /**< numeric IPv4/IPv6 address to bind; NULL = "127.0.0.1" */
	int port;                 /**< TCP port; 0 = any free port (see osd_target_iscsi_port()) */
	const char *target_name;  /**< iSCSI target name; NULL = OSD_TARGET_ISCSI_DEFAULT_NAME */
	const char *target_alias; /**< TargetAlias sent at login; NULL = none */
	const char *chap_user;    /**< with chap_secret: require one-way CHAP (MD5) */
	const uint8_t *chap_secret; /**< CHAP secret (copied); NULL = no authentication */
	size_t chap_secret_len;   /**< bytes in chap_secret: at least 12 (RFC 7143 12.1.3) */
	int allow_digests;        /**< 1: accept HeaderDigest/DataDigest=CRC32C when offered */
	unsigned max_connections; /**< concurrent connections; 0 = 64 */
	/** Log sink, may be NULL; called from any server thread. */
	void (*log)(void *payload, int level, const char *msg);
	void *log_payload;        /**< passed to log */

	/* Version 2: resource bounds against hostile peers (docs/iscsi.md, "Limits"). */
	unsigned max_connections_per_address; /**< connections from one IP address; 0 = 16 */
	/** Slots of max_connections that connections still logging in cannot
	 *  take (kept for sessions in full feature phase); 0 = max_connections / 8. */
	unsigned reserved_connections;
	unsigned login_timeout_ms; /**< whole login phase, from accept; 0 = 10000 */
	unsigned idle_timeout_ms;  /**< silence after which a NOP-In ping is sent; 0 = 30000 */
	unsigned nop_timeout_ms;   /**< a ping unanswered this long closes; 0 = 10000 */
	unsigned dataout_timeout_ms; /**< each Data-Out burst must complete within; 0 = 15000 */
	unsigned max_pending_tasks; /**< commands waiting for Data-Out per connection; 0 = 32 */
	/** Bytes of data-out buffered beyond 1 MiB a connection, plus data-in
	 *  buffers over 4 MiB, for all connections; 0 = 256 MiB. */
	size_t dataout_budget;
	unsigned auth_fail_delay_ms; /**< first delay after a failed CHAP login; 0 = 250 */
	unsigned auth_fail_delay_max_ms; /**< the delay doubles up to this; 0 = 4000 */
	/** InitiatorNames allowed to log in; NULL (or none) = any. Copied. */
	const char *const *allowed_initiators;
	size_t nallowed_initiators; /**< entries in allowed_initiators */

	/* Version 3: concurrent execution (docs/iscsi.md, "Concurrent execution"). */
	/** Threads that execute commands, shared by all connections;
	 *  0 = four per online CPU, at least 8; at most 64. */
	unsigned workers;
	/** Called by a worker thread just before each SCSI command executes,
	 *  with its CDB; may block, which holds that command (and the commands
	 *  ordered after it) back while the connection goes on answering
	 *  NOP-Out, task management and logout. For tests and tracing; NULL =
	 *  none. */
	void (*on_execute)(void *payload, const uint8_t *cdb, size_t cdb_len);
	void *on_execute_payload; /**< passed to on_execute */
};

#define OSD_TARGET_ISCSI_OPTIONS_VERSION 3 /**< current options version (1 and 2 are still accepted) */
/** Default options: 127.0.0.1:3260, default name, no CHAP, digests allowed,
 *  the default bounds of docs/iscsi.md. */
#define OSD_TARGET_ISCSI_OPTIONS_INIT \
	{ OSD_TARGET_ISCSI_OPTIONS_VERSION, NULL, 3260, NULL, NULL, NULL, NULL, 0, 1, 0, NULL, \
	  NULL, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, NULL, 0, 0, NULL, NULL }

/** Target name used when osd_target_iscsi_options::target_name is NULL. */
#define OSD_TARGET_ISCSI_DEFAULT_NAME "iqn.2026-12.org.osd:target"

/**
 * Create a server for @p nluns targets (LUN i is luns[i]) and bind its
 * listening socket; no connection is accepted until osd_target_iscsi_run()
 * or osd_target_iscsi_start().
 * @param[out] out the server, freed with osd_target_iscsi_free()
 * @param luns the targets; borrowed, they must outlive the server
 * @param nluns 1 to 256
 * @param opts NULL for defaults
 * @return 0, -EINVAL (bad options or address, a CHAP secret shorter than
 *         12 bytes: the reason goes to the log callback), -EADDRINUSE,
 *         -ENOMEM or another -errno from socket/bind/listen. Callers built
 *         against versions 1 and 2 of the options keep working with the
 *         defaults of the fields added later.
 */
OSD_EXTERN int osd_target_iscsi_create(osd_target_iscsi **out, osd_target *const *luns,
				       size_t nluns, const struct osd_target_iscsi_options *opts);

/** The TCP port the server is bound to (useful after asking for port 0). */
OSD_EXTERN int osd_target_iscsi_port(osd_target_iscsi *srv);

/**
 * Accept and serve connections in the calling thread until
 * osd_target_iscsi_stop(). Returns 0 after a stop, or -errno if accepting
 * failed. Connection threads keep running until osd_target_iscsi_free().
 */
OSD_EXTERN int osd_target_iscsi_run(osd_target_iscsi *srv);

/** Run osd_target_iscsi_run() in a background thread. Returns 0 or -errno. */
OSD_EXTERN int osd_target_iscsi_start(osd_target_iscsi *srv);

/**
 * Ask the server to stop accepting. Async-signal-safe (it writes to a pipe),
 * so a SIGTERM handler may call it.
 */
OSD_EXTERN void osd_target_iscsi_stop(osd_target_iscsi *srv);

/**
 * Stop the server, close every connection (commands being executed finish
 * first), wait for all threads and free the server. The targets are not
 * closed. NULL is allowed. When osd_target_iscsi_run() was called by the
 * caller's own thread, it must have returned before this call.
 */
OSD_EXTERN void osd_target_iscsi_free(osd_target_iscsi *srv);

/** The last error message of this server (valid until the next call). */
OSD_EXTERN const char *osd_target_iscsi_error(osd_target_iscsi *srv);

#ifdef __cplusplus
}
#endif
/** @} */
#endif
