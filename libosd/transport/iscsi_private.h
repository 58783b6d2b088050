/* Internal state of the iSCSI initiator transport. */
#ifndef OSD_TRANSPORT_ISCSI_PRIVATE_H
#define OSD_TRANSPORT_ISCSI_PRIVATE_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>
#include <osd/iscsi.h>
#include "iscsi/pdu.h"


/* One PDU queued for sending. buf holds the head (BHS, AHS, header digest),
 * the tail (padding, data digest) and, for a copied segment, the data. A
 * borrowed segment points into the owning task's buffers until it is sent
 * or the task completes (osd__iscsi_sendq_release()). iov[] is what is
 * still to go out; sent entries shrink to zero. */
struct osd__iscsi_task;
struct osd__iscsi_opdu {
	struct osd__iscsi_opdu *next;
	const struct osd__iscsi_task *task; /* lender of iov[1], or NULL */
	size_t mem;                         /* counted in sendq_mem */
	size_t nop_answer;                  /* counted in nop_answer_bytes */
	struct iovec iov[3];                /* head, data, tail */
	uint8_t *own;                       /* data segment we hold, freed with the PDU */
	uint8_t buf[];
};

/* Bounds against a hostile or broken target (docs/iscsi-initiator.md,
 * "Bounds against a hostile target"). */
/* One service call reads at most this many PDUs or bytes from the socket,
 * then handles what is already buffered and returns, so that timers run. */
#define OSD_ISCSI_SERVICE_MAX_PDUS 256
#define OSD_ISCSI_SERVICE_MAX_BYTES (4u << 20)
/* More unsolicited PDUs (NOP-In other than the answer to our keepalive,
 * Async Message, Reject) than this within one window drop the connection
 * with -EPROTO. */
#define OSD_ISCSI_UNSOLICITED_MAX 128
#define OSD_ISCSI_UNSOLICITED_WINDOW_MS 1000
/* NOP-Out answers to pings queued and not yet sent: one that would take
 * them over this many bytes is dropped (and counted). */
#define OSD_ISCSI_NOP_ANSWER_MAX (256u << 10)
/* Memory the send queue holds (heads, copied segments): a copied PDU that
 * would take it over this, or an R2T arriving while it is over, fails
 * with -ENOBUFS and the connection drops. */
#define OSD_ISCSI_SENDQ_MAX (16u << 20)
/* Login Responses of one login (48 bytes each plus their text): beyond
 * this the login fails with -EPROTO. */
#define OSD_ISCSI_LOGIN_BUDGET 65536
/* Protocol errors (a PDU that breaks RFC 7143 for the task or state it
 * arrives in: Data-In outside the buffer, an R2T outside the data-out or
 * for a READ, a PDU over MaxRecvDataSegmentLength, an Async Message
 * dropping the connection...): a command whose connection dropped for one
 * is resent at most this many times, then fails with -EPROTO. One that
 * makes no sense for its task at all (an R2T for a READ, Data-In for a
 * command without data-in) fails its task at once. */
#define OSD_ISCSI_PROTO_RESENDS 2
/* Logins after protocol errors: more than OSD_ISCSI_PROTO_LOGIN_MAX within
 * OSD_ISCSI_PROTO_LOGIN_WINDOW_MS and each further one waits first, from
 * _BACKOFF_MIN_MS doubling up to _BACKOFF_MAX_MS (and never past
 * failover_ms). */
#define OSD_ISCSI_PROTO_LOGIN_MAX 5
#define OSD_ISCSI_PROTO_LOGIN_WINDOW_MS 10000
#define OSD_ISCSI_PROTO_BACKOFF_MIN_MS 100
#define OSD_ISCSI_PROTO_BACKOFF_MAX_MS 2000
/* Logins after a refused connection (a target restarting): each waits first,
 * from _WAIT_MS doubling up to _WAIT_MAX_MS (never past failover_ms); with
 * the default 3 attempts the last comes 750 ms after the first. */
#define OSD_ISCSI_REFUSED_WAIT_MS 250
#define OSD_ISCSI_REFUSED_WAIT_MAX_MS 2000

/* A status whose StatSN is further than this from ExpStatSN, either way,
 * is a protocol error (RFC 7143 §4.2.2.2: statuses lost, or a target that
 * lost count); within it a later StatSN is taken, an earlier ignored. */
#define OSD_ISCSI_STATSN_SLACK 1024

/* AsyncEvent codes (RFC 7143 §11.9.1). */
enum {
	OSD_ISCSI_ASYNC_SCSI = 0,        /* SCSI asynchronous event, sense in the segment */
	OSD_ISCSI_ASYNC_LOGOUT = 1,      /* target requests a logout */
	OSD_ISCSI_ASYNC_DROP_CONN = 2,   /* target will drop this connection */
	OSD_ISCSI_ASYNC_DROP_SESS = 3,   /* ... all connections of the session */
	OSD_ISCSI_ASYNC_NEGOTIATE = 4,   /* target requests parameter negotiation */
};

/* The longest Time2Wait of an Async Message announcing a drop that the
 * login after it honours (the target may ask up to 3600 s, §13.15). */
#define OSD_ISCSI_TIME2WAIT_MAX_MS 2000

/* Longest security token kept (its length is the target's choice). */
#define OSD_ISCSI_TOKEN_MAX 64

/* Values settled by the operational negotiation, as the data path uses them. */
struct osd__iscsi_conn_params {
	struct osd__iscsi_digests dg;     /* CRC32C digests in use */
	uint32_t max_send_dsl;            /* the target's MaxRecvDataSegmentLength */
	uint32_t max_recv_dsl;            /* ours */
	uint32_t first_burst, max_burst, max_outstanding_r2t;
	int immediate_data, initial_r2t;
};

enum osd__iscsi_task_state { TASK_PENDING, TASK_SENT, TASK_DONE };

/* What a command in flight when the connection drops may do (iscsi_command.c). */
enum {
	OSD_ISCSI_RESEND_NEVER = OSD_XFER_RESEND_NEVER,          /* fails with -EIO */
	OSD_ISCSI_RESEND_ALWAYS = OSD_XFER_RESEND_ALWAYS,        /* only reads: sent again */
	OSD_ISCSI_RESEND_REPEATABLE = OSD_XFER_RESEND_REPEATABLE /* sent again unless a
								  * NEVER command followed it */
};

/* One command: the submitter's xfer plus our progress on it. A task whose
 * submitter gave up (op_cancel) while the target holds the command has no
 * xfer: it stays listed, with its ITT and CmdSN, only so that what the
 * target still sends for it is recognised and dropped; it ends with the
 * command's status, the answer to its ABORT TASK, or the connection, and is
 * never sent again. */
struct osd__iscsi_task {
	struct osd__iscsi_task *next;
	struct osd_xfer *xfer;            /* NULL once cancelled */
	uint32_t abort_itt;               /* cancelled: ITT of our ABORT TASK, or RSVD */
	enum osd__iscsi_task_state state;
	uint32_t itt, cmdsn;
	size_t in_got;                    /* Data-In bytes received */
	uint32_t data_sn;                 /* next Data-Out DataSN (per sequence) */
	int err;                          /* completion error */
	int aborted;                      /* a TMF ended it */
	int idempotent;                   /* OSD_ISCSI_RESEND_*: after a reconnect */
	unsigned proto_errs;              /* connections dropped under it for protocol errors */
	uint32_t in_pdus;                 /* Data-In PDUs received (DataSN expected next) */
	uint32_t r2ts;                    /* R2Ts received (R2TSN expected next) */
};

/* Receive framing: one PDU is collected in buf (with what was read ahead
 * of it behind), then parsed into pdu. A Data-In segment goes straight into
 * its task's in_iov instead (direct): buf then holds only the head, and
 * pdu.data is NULL with pdu.data_len set. The segment of a cancelled task
 * (no xfer) is read into sink and dropped. */
struct osd__iscsi_rx {
	uint8_t *buf;
	size_t cap, have, need;
	size_t consumed;                  /* bytes of the last PDU, dropped on the next read */
	int have_bhs;
	struct osd__iscsi_bhs bhs;        /* decoded once have_bhs */
	struct osd__iscsi_task *direct;   /* task receiving the segment, or NULL */
	size_t d_done;                    /* segment bytes placed */
	uint8_t tail[OSD_ISCSI_PDU_TAIL_MAX];
	size_t tail_len, tail_have;
	struct osd__iscsi_pdu pdu;
	uint8_t sink[4096];               /* late Data-In of a cancelled task */
	int no_read;                      /* reads return "nothing" (service budget spent) */
	size_t bytes_read;                /* from the socket, for the service budget */
};

struct osd__iscsi_sess {
	pthread_mutex_t lock;
	struct osd_iscsi_url url;
	struct osd_iscsi_options opts;    /* strings below are our copies */
	char *initiator_name, *chap_user, *chap_secret, *chap_tuser, *chap_tsecret;
	int discovery;                    /* SessionType=Discovery */
	int fd;
	int dead;                         /* reconnecting failed: no more commands */
	int logout_requested;             /* Async Message: drain, then log in again */
	uint8_t isid[6];
	uint16_t tsih, cid;
	uint8_t token[OSD_ISCSI_TOKEN_MAX]; /* Security Token VPD page of this session */
	size_t token_len;
	uint32_t cmdsn, expcmdsn, maxcmdsn, expstatsn, next_itt;
	uint32_t login_itt;               /* ITT of the login in progress */
	struct osd__iscsi_conn_params p;
	struct osd__iscsi_task *tasks;    /* submitted, not completed (all states) */
	struct osd__iscsi_task *done_list;/* completed, callbacks not yet run */
	struct osd__iscsi_task *done_tail;
	unsigned inflight;                /* tasks in TASK_SENT */
	struct osd__iscsi_opdu *sendq, *sendq_tail;
	size_t sendq_mem;                 /* memory the queue holds (OSD_ISCSI_SENDQ_MAX) */
	size_t nop_answer_bytes;          /* of NOP-Out answers queued (OSD_ISCSI_NOP_ANSWER_MAX) */
	uint64_t nop_answers_dropped;     /* answers not queued for that limit */
	uint64_t unsol_start_ms;          /* window of unsolicited PDUs */
	unsigned unsol_count, unsol_nop;
	uint64_t time2wait_until;         /* no login before (Async drop's Time2Wait), 0: none */
	uint64_t async_events;            /* Async Messages received */
	uint64_t async_ignored;           /* of them with a reserved or vendor event */
	uint64_t async_bad;               /* SCSI async events with a sense past the segment */
	uint8_t async_sense[252];         /* sense of the last SCSI async event */
	size_t async_sense_len;
	size_t login_rsp_bytes;           /* Login Responses of this login (OSD_ISCSI_LOGIN_BUDGET) */
	/* the connection drops for a protocol error (osd__iscsi_proto_error) */
	int proto_fault, proto_fatal;
	uint32_t proto_itt;               /* the command it is about, or RSVD: all in flight */
	uint64_t proto_logins[OSD_ISCSI_PROTO_LOGIN_MAX]; /* when the last ones started */
	unsigned proto_login_next;
	unsigned proto_backoff_ms;        /* last wait before such a login, 0 = none */
	uint64_t proto_logins_total;      /* logins after protocol errors, ever */
	struct osd__iscsi_rx rx;
	uint64_t last_rx_ms, nop_sent_ms;
	uint32_t nop_itt;                 /* our outstanding keepalive, or RSVD */
	/* task management in progress (one at a time) */
	uint32_t tmf_itt;
	int tmf_done, tmf_response;
	char err[256];
};

/* iscsi_url.c */
#define OSD_ISCSI_DEFAULT_NAME_PREFIX "iqn.2026-01.org.libosd:initiator."
#define OSD_ISCSI_DEFAULT_NAME_LEN (sizeof(OSD_ISCSI_DEFAULT_NAME_PREFIX) + 12)
void osd__iscsi_default_name(char out[OSD_ISCSI_DEFAULT_NAME_LEN]);
int osd__iscsi_name_valid(const char *name, size_t len);
int osd__iscsi_parse_hostport(const char *s, size_t len, char *host, size_t hostsz,
			      uint16_t *port, char *errbuf, size_t errlen);

/* iscsi_conn.c: socket, PDU framing and digests */
uint64_t osd__iscsi_now_ms(void);
int osd__iscsi_connect(struct osd__iscsi_sess *s, uint64_t deadline);
void osd__iscsi_disconnect(struct osd__iscsi_sess *s);
int osd__iscsi_send(struct osd__iscsi_sess *s, struct osd__iscsi_bhs *h, const uint8_t *ahs,
		    size_t ahs_len, const uint8_t *data, size_t dlen);
/* As osd__iscsi_send(), without copying the data: it is borrowed from task
 * @p t, or, when @p owned is not NULL, taken over (data points into it). */
int osd__iscsi_send_borrowed(struct osd__iscsi_sess *s, struct osd__iscsi_bhs *h,
			     const uint8_t *ahs, size_t ahs_len, const uint8_t *data, size_t dlen,
			     const struct osd__iscsi_task *t, uint8_t *owned);
/* Task @p t completes: queued PDUs stop borrowing its buffers. */
void osd__iscsi_sendq_release(struct osd__iscsi_sess *s, const struct osd__iscsi_task *t);
int osd__iscsi_flush(struct osd__iscsi_sess *s);
/* Queues a NOP-Out answering a ping unless queued answers would go over
 * OSD_ISCSI_NOP_ANSWER_MAX; 1 = dropped (counted), 0 = queued, or -errno. */
int osd__iscsi_send_nop_answer(struct osd__iscsi_sess *s, struct osd__iscsi_bhs *h,
			       const uint8_t *data, size_t dlen);
int osd__iscsi_recv(struct osd__iscsi_sess *s);
void osd__iscsi_rx_reset(struct osd__iscsi_sess *s);
void osd__iscsi_rx_clear(struct osd__iscsi_sess *s);
/* Task @p t completes: stop placing a Data-In segment into its buffers. */
void osd__iscsi_rx_forget(struct osd__iscsi_sess *s, const struct osd__iscsi_task *t);
int osd__iscsi_wait_pdu(struct osd__iscsi_sess *s, uint64_t deadline);
void osd__iscsi_set_error(struct osd__iscsi_sess *s, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* iscsi_login.c */
int osd__iscsi_login(struct osd__iscsi_sess *s, uint64_t deadline);
int osd__iscsi_text_exchange(struct osd__iscsi_sess *s, const char *text, char **reply,
			     size_t *reply_len, uint64_t deadline);
int osd__iscsi_logout(struct osd__iscsi_sess *s, uint64_t deadline);

/* iscsi_session.c: a NOP-Out (a ping answer, bounded like every queued
 * answer, when @p ttt is not the reserved tag); a failure is in the error. */
void osd__iscsi_send_nop_out(struct osd__iscsi_sess *s, uint32_t itt, uint32_t ttt,
			     const uint8_t *lun, const uint8_t *data, size_t dlen);

/* iscsi_token.c: read the session's security token (INQUIRY VPD B1h) right
 * after login; a target without the page leaves it empty. */
int osd__iscsi_read_token(struct osd__iscsi_sess *s, uint64_t deadline);

/* iscsi_command.c: SCSI Command, Data-Out, Data-In placement */
int osd__iscsi_cmd_idempotent(const struct osd_xfer *xfer);
int osd__iscsi_cmd_send(struct osd__iscsi_sess *s, struct osd__iscsi_task *t);
int osd__iscsi_data_out(struct osd__iscsi_sess *s, struct osd__iscsi_task *t, uint32_t ttt,
			size_t off, size_t len);
int osd__iscsi_data_in(struct osd__iscsi_sess *s, struct osd__iscsi_task *t,
		       const struct osd__iscsi_pdu *p);
int osd__iscsi_scsi_rsp(struct osd__iscsi_sess *s, struct osd__iscsi_task *t,
			const struct osd__iscsi_pdu *p);
/* Whether @p sn is the next DataSN/R2TSN/ExpDataSN of @p t, @p own being
 * the count of its own kind so far (RFC 7143 §11.7.4, §11.8.5, §11.4.8:
 * Data-In and R2T numbered apart, or as one sequence). */
int osd__iscsi_task_sn_ok(const struct osd__iscsi_task *t, uint32_t sn, uint32_t own);

/* iscsi_session.c: session state, dispatch, reconnect, transport ops */
extern const struct osd_transport_ops osd__iscsi_ops;
int osd__iscsi_sess_new(struct osd__iscsi_sess **out, const struct osd_iscsi_url *url,
			const struct osd_iscsi_options *opts, int discovery);
void osd__iscsi_sess_free(struct osd__iscsi_sess *s);
uint32_t osd__iscsi_new_itt(struct osd__iscsi_sess *s);
struct osd__iscsi_task *osd__iscsi_find_task(struct osd__iscsi_sess *s, uint32_t itt);
void osd__iscsi_complete(struct osd__iscsi_sess *s, struct osd__iscsi_task *t, int err);
void osd__iscsi_run_completions(struct osd__iscsi_sess *s);
void osd__iscsi_conn_lost(struct osd__iscsi_sess *s, int err);
/* The connection is about to drop for a protocol error concerning command
 * @p itt (RSVD: every command in flight); @p fatal fails it at once. */
void osd__iscsi_proto_error(struct osd__iscsi_sess *s, uint32_t itt, int fatal);
int osd__iscsi_service_locked(struct osd__iscsi_sess *s, int revents);

#endif
