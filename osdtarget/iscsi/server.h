/*
 * Internals of the iSCSI server (include/osdtarget/iscsi.h): the server,
 * its connections and the tasks waiting for Data-Out.
 */
#ifndef OSDTARGET_ISCSI_SERVER_H
#define OSDTARGET_ISCSI_SERVER_H

#include <osdtarget/iscsi.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>

#include "iscsi/pdu.h"

#define ISCSI_CMD_WINDOW 32             /* CmdSN window we grant */
#define ISCSI_MAX_RECV_DSL 262144       /* MaxRecvDataSegmentLength we declare */
#define ISCSI_LOGIN_DSL 8192            /* segment limit during login (RFC default) */
#define ISCSI_MAX_XFER (64u << 20)      /* largest data-out or data-in per command */
#define ISCSI_RX_AHEAD 16384          /* bytes read ahead of the current PDU */
#define ISCSI_KEEP_IN (4u << 20)       /* data-in buffer kept between commands */
#define ISCSI_CONN_ALLOWANCE (1u << 20) /* data-out a connection may buffer outside the budget */
#define ISCSI_NAME_MAX 224              /* iSCSI names are at most 223 bytes */
#define ISCSI_HOST_MAX 46               /* INET6_ADDRSTRLEN */
#define ISCSI_CHAP_NAME_MAX 256
#define ISCSI_CHAP_SECRET_MIN 12        /* RFC 7143 12.1.3 */
#define ISCSI_AUTH_HOSTS 64             /* addresses whose CHAP failures are remembered */
#define ISCSI_AUTH_FORGET_MS 600000     /* a failure record this old is dropped */
#define ISCSI_REFUSALS_PER_S 20         /* refusals logged per second, then summarised */
/* Defaults of the version 2 options (docs/iscsi.md, "Limits"). */
#define ISCSI_DEF_MAX_CONN 64
#define ISCSI_DEF_PER_ADDR 16
#define ISCSI_DEF_LOGIN_MS 10000
#define ISCSI_DEF_IDLE_MS 30000
#define ISCSI_DEF_NOP_MS 10000
#define ISCSI_DEF_DATAOUT_MS 15000
#define ISCSI_DEF_PENDING ISCSI_CMD_WINDOW  /* a compliant initiator never meets it */
#define ISCSI_DEF_BUDGET (256u << 20)
#define ISCSI_DEF_AUTH_DELAY_MS 250
#define ISCSI_DEF_AUTH_DELAY_MAX_MS 4000
#define ISCSI_MAX_ACTIVE (2 * ISCSI_CMD_WINDOW) /* commands held per connection, immediate ones too */
#define ISCSI_TMF_WAITS 8               /* task management answers waiting for running commands */
#define ISCSI_MAX_WORKERS 64
#define ISCSI_RESCUE_MS 5               /* a queued task waits this long for a busy worker */

/* CHAP failures from one address, to slow down guessing. */
struct iscsi_auth_rec {
	char host[ISCSI_HOST_MAX];
	unsigned fails;             /* consecutive failed verifications */
	uint64_t next_ms;           /* the next verification may not start before */
	uint64_t last_ms;           /* last failure */
};
#define ISCSI_TOKEN_LEN 24              /* ISID, TSIH and 16 random bytes */
#define ISCSI_UA_LUNS 256               /* LUNs with a unit attention flag per session */
#define ISCSI_SEEN_MAX 2048             /* initiator ports remembered (nexus.c) */

/* An initiator port seen since the process started (nexus.c). */
struct iscsi_seen_port {
	char *name;                     /* InitiatorName */
	uint8_t isid[6];
};

struct osd_target_iscsi {
	osd_target **luns;
	size_t nluns;
	int listen_fd;
	int stop_pipe[2];
	int port;
	char *target_name;
	char *target_alias;
	char *chap_user;
	uint8_t *chap_secret;
	size_t chap_secret_len;
	int allow_digests;
	unsigned max_connections;
	unsigned max_per_addr;
	unsigned reserved;              /* slots connections in login cannot take */
	unsigned login_ms, idle_ms, nop_ms, dataout_ms;
	unsigned max_pending;
	size_t budget;
	unsigned auth_delay_ms, auth_delay_max_ms;
	char **allowed;                 /* InitiatorNames allowed, NULL = any */
	size_t nallowed;
	void (*log)(void *payload, int level, const char *msg);
	void *log_payload;
	struct osd__iscsi_params ours;  /* the limits we negotiate with */

	atomic_size_t budget_used;      /* data-out bytes held by all tasks */
	pthread_mutex_t lock;           /* guards conns, nconns, error, auth, refusals, seen */
	struct iscsi_seen_port *seen;   /* ring of ISCSI_SEEN_MAX initiator ports (nexus.c) */
	unsigned nseen, seen_next;      /* held, and the slot the next one takes */
	struct iscsi_auth_rec auth[ISCSI_AUTH_HOSTS];
	uint64_t refuse_sec;            /* second the refusal count is for */
	unsigned refuse_logged, refuse_dropped;
	pthread_cond_t conn_done;       /* a connection thread finished (with lock) */
	struct iscsi_conn *conns;
	unsigned nconns;
	atomic_uint next_tsih;
	pthread_t run_thread;
	int run_thread_started;
	char error[256];

	/* Worker pool shared by all connections (sched.c): commands whose data
	 * is in and that conflict with no earlier command of their connection
	 * queue here in the order they became runnable. */
	void (*on_execute)(void *payload, const uint8_t *cdb, size_t cdb_len);
	void *on_execute_payload;
	pthread_mutex_t pool_mu;
	pthread_cond_t pool_cv;
	struct iscsi_task *ready_head, *ready_tail;
	unsigned nqueued;               /* tasks in the queue */
	unsigned nidle;                 /* workers waiting for one */
	unsigned nwaking;               /* of them, signalled and not yet up */
	unsigned nawake;                /* workers up and not in a blocking command */
	unsigned max_awake;             /* wake no more than this many: the CPUs */
	pthread_t *workers;
	unsigned nworkers;
	int pool_stop;
};

/* Where a command acts, for ordering the commands of one connection
 * (sched.c): two commands conflict when their scopes overlap and one of
 * them modifies. */
enum iscsi_scope_kind {
	SCOPE_NONE,      /* touches no object (INQUIRY, REPORT LUNS, ...) */
	SCOPE_OBJECT,    /* one object (partition, object) */
	SCOPE_PARTITION, /* a partition and everything in it */
	SCOPE_ALL,       /* barrier: the whole LUN (ORDERED, FORMAT, SET KEY, ...) */
};

/* States of a task from its SCSI Command PDU to its answer. */
enum iscsi_task_state {
	TS_DATA,  /* collecting Data-Out (in c->tasks too) */
	TS_WAIT,  /* data in, an earlier command it conflicts with is not done */
	TS_READY, /* in the pool's queue */
	TS_RUN,   /* a worker executes it */
	TS_DONE,  /* executed, its answer is being sent */
};

/* A SCSI command collecting its Data-Out. */
struct iscsi_task {
	struct iscsi_task *next;
	uint32_t itt;
	uint8_t lun[8];
	uint8_t cdb[OSD_ISCSI_MAX_CDB];
	size_t cdb_len;
	uint8_t *out;               /* data-out buffer, out_len bytes */
	size_t out_len;
	size_t received;            /* bytes of data-out in place */
	size_t in_len;              /* data-in expected (read or bidi read length) */
	int bidi;
	int unsolicited;            /* unsolicited Data-Out sequence still open */
	size_t unsolicited_end;     /* where it must stop */
	uint32_t ttt;               /* of the outstanding R2T, RSVD if none */
	size_t r2t_end;             /* end offset of the outstanding R2T */
	uint32_t r2t_sn;            /* next R2TSN */
	uint32_t data_sn;           /* expected DataSN within the current sequence */
	size_t cap;                 /* bytes allocated in out */
	size_t shared;              /* of them, taken from the server's budget */
	uint64_t deadline_ms;       /* the current burst must be in by then */

	/* Ordering (sched.c), all under conn->mu */
	struct iscsi_conn *conn;
	struct iscsi_task *onext;   /* c->order: every task not yet answered, in CmdSN order */
	struct iscsi_task *qnext;   /* the pool's ready queue */
	enum iscsi_task_state state;
	int holds_slot;             /* counted in conn->nwindow until executed */
	int aborted;                /* dropped by task management while queued: not executed */
	int lun_index;              /* decoded LUN, -1 if none */
	enum iscsi_scope_kind scope;
	int modifies;               /* changes what it addresses */
	int ranged;                 /* a READ or WRITE without attribute lists: [start, end) */
	int may_block;              /* may wait on the disk for long (FLUSH, FUA, ...) */
	uint64_t pid, oid, start, end;
};

/* A task management answer held until the commands it covers, already in
 * a worker's hands, have been answered (RFC 7143 4.2.3.3: no response of
 * an affected task follows the TMF response). */
struct iscsi_tmf_wait {
	int used;
	uint32_t itt;               /* of the TMF request */
	uint32_t ref_itt;           /* ABORT TASK: the task; else RSVD */
	int lun_index;              /* the other functions: the LUN */
	uint8_t lun[8];
	uint8_t response;
};

struct iscsi_conn {
	struct iscsi_conn *next;
	struct osd_target_iscsi *srv;
	int fd;
	pthread_t thread;
	atomic_int finished;
	atomic_int superseded;      /* a new login reinstated our session: stop */
	atomic_int in_session;      /* a normal session in full feature phase */
	atomic_int evicted;         /* closed to make room for a new connection */
	atomic_int logging_in;      /* still in the login phase */
	char peer[64];
	char host[ISCSI_HOST_MAX];  /* peer address without the port */
	uint64_t accepted_ms;

	/* Deadlines (monotonic ms) */
	uint64_t deadline_ms;       /* the bytes being read must be in by then */
	uint64_t last_rx_ms;        /* last whole PDU in full feature phase */
	uint32_t ping_ttt;          /* TTT of our unanswered NOP-In, RSVD if none */
	uint64_t ping_deadline_ms;
	char chap_user[ISCSI_CHAP_NAME_MAX]; /* authenticated as, "" without CHAP */

	/* Negotiated state */
	struct osd__iscsi_params params;
	struct osd__iscsi_digests dg;
	char initiator_name[ISCSI_NAME_MAX];
	uint8_t isid[6];
	uint16_t tsih;
	uint16_t cid;
	uint8_t token[ISCSI_TOKEN_LEN]; /* security token of a normal session */
	/* POWER ON unit attention not yet reported to this I_T nexus, one bit
	 * per LUN (SAM-5 5.14, 6.3.1): set at login, cleared when reported. */
	uint8_t ua_pending[ISCSI_UA_LUNS / 8];
	uint8_t ua_ascq;            /* of 29h: 00h POWER ON, RESET.. or 07h I_T NEXUS LOSS (nexus.c) */
	int discovery;
	uint32_t max_recv;          /* our receive limit for data segments now */

	/* Sequence numbers: stat_sn under send_mu, exp_cmd_sn under mu */
	uint32_t stat_sn;
	uint32_t exp_cmd_sn;
	uint32_t next_ttt;

	/* Concurrent execution (sched.c). Lock order: send_mu, then mu, then
	 * the server's pool_mu. */
	pthread_mutex_t send_mu;    /* one PDU at a time on the socket; StatSN */
	pthread_mutex_t mu;         /* order, counts, own, in_own, tmf waits */
	pthread_cond_t settled;     /* a task left c->order */
	struct iscsi_task *order;   /* every task not yet answered, in CmdSN order */
	unsigned nactive;           /* tasks in order */
	unsigned nwindow;           /* non-immediate commands not yet executed */
	int cmd_slot;               /* the command being read holds a window slot */
	unsigned nbusy;             /* READY, RUN or DONE: a worker holds them */
	unsigned nwait;             /* TS_WAIT tasks */
	unsigned nready;            /* TS_READY tasks no worker has taken yet */
	size_t in_own;              /* data-in bytes held outside the budget */
	int closing;                /* the connection ends: queued tasks are not run */
	struct iscsi_tmf_wait tmf_waits[ISCSI_TMF_WAITS];

	struct iscsi_task *tasks;
	unsigned ntasks;            /* tasks waiting for Data-Out */
	size_t own;                 /* bytes their buffers hold outside the budget */
	int logged_out;

	/* Buffers */
	uint8_t *rx;                /* the PDU being handled, then bytes read ahead */
	size_t rx_cap;
	size_t rx_have;             /* bytes in rx */
	size_t rx_used;             /* bytes of the current PDU (dropped on the next receive) */
};

/* server.c */
void osd__tgt_iscsi_log(struct osd_target_iscsi *srv, int level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* A refused connection, login or command: logged as a warning, at most
 * ISCSI_REFUSALS_PER_S a second (the rest are counted and summarised). */
void osd__tgt_iscsi_refused(struct osd_target_iscsi *srv, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
uint64_t osd__tgt_iscsi_now_ms(void);
/* Take @p n bytes of the data-out budget; 0 or -ENOBUFS. */
int osd__tgt_iscsi_budget_take(struct osd_target_iscsi *srv, size_t n);
void osd__tgt_iscsi_budget_put(struct osd_target_iscsi *srv, size_t n);
/* CHAP throttling per source address: wait for this address's turn (at
 * most until the login deadline: -ETIMEDOUT), then record the outcome. */
int osd__tgt_iscsi_auth_wait(struct iscsi_conn *c);
void osd__tgt_iscsi_auth_result(struct iscsi_conn *c, int ok);
/* Whether @p name may log in (the access list). */
int osd__tgt_iscsi_initiator_allowed(struct osd_target_iscsi *srv, const char *name);

/* Whether the initiator port @p name + @p isid logged in before since the
 * process started; records it (nexus.c: 29h/07h rather than 29h/00h). */
int osd__tgt_iscsi_port_seen(struct osd_target_iscsi *srv, const char *name,
			     const uint8_t isid[6]);
void osd__tgt_iscsi_ports_free(struct osd_target_iscsi *srv);
/* Session reinstatement (RFC 7143 6.3.5): connections of the session that
 * @p c (logging in with TSIH 0) replaces stop, and the commands they run
 * finish, before @p c reaches full feature phase; then @p c counts as the
 * session's connection. Returns -EPERM (nothing is replaced) when @p c
 * may not replace the session: with CHAP it authenticated as another user,
 * without CHAP it comes from another address. */
int osd__tgt_iscsi_reinstate(struct iscsi_conn *c);
/* The thread of @p c is done with it (wakes osd__tgt_iscsi_reinstate()). */
void osd__tgt_iscsi_conn_finished(struct iscsi_conn *c);

/* conn.c: whole-PDU I/O on a connection. */
void *osd__tgt_iscsi_conn_main(void *arg);
int osd__tgt_iscsi_conn_recv(struct iscsi_conn *c, struct osd__iscsi_pdu *pdu);
int osd__tgt_iscsi_conn_send(struct iscsi_conn *c, struct osd__iscsi_bhs *h,
			     const uint8_t *data, size_t data_len);
int osd__tgt_iscsi_conn_reject(struct iscsi_conn *c, uint8_t reason, const uint8_t *bhs);
/* How a reply's StatSN is filled by osd__tgt_iscsi_conn_reply(). */
enum { SN_KEEP, SN_ADVANCE, SN_ZERO };
/* Stamp @p h (StatSN per @p sn, ExpCmdSN, MaxCmdSN) and send it, as one
 * step under send_mu: StatSN goes out in order whichever thread answers. */
int osd__tgt_iscsi_conn_reply(struct iscsi_conn *c, struct osd__iscsi_bhs *h, int sn,
			      const uint8_t *data, size_t data_len);
/* MaxCmdSN (RFC 7143 4.2.2.1): the window shrinks by the commands the
 * connection holds, so at most ISCSI_CMD_WINDOW wait or run. With mu. */
uint32_t osd__tgt_iscsi_max_cmd_sn(const struct iscsi_conn *c);

/* login.c: the login phase. Returns 0 in full feature phase, else -errno. */
int osd__tgt_iscsi_login(struct iscsi_conn *c);

/* ffp.c: full feature phase PDU dispatch. Returns 0, 1 after logout, or -errno. */
int osd__tgt_iscsi_ffp_pdu(struct iscsi_conn *c, const struct osd__iscsi_pdu *pdu);

/* task.c: SCSI commands and their data. */
int osd__tgt_iscsi_scsi_cmd(struct iscsi_conn *c, const struct osd__iscsi_pdu *pdu);
int osd__tgt_iscsi_data_out(struct iscsi_conn *c, const struct osd__iscsi_pdu *pdu);
/* Where the segment of Data-Out @p h may be received in place (its task's
 * buffer at the expected offset), or NULL to take the normal path. */
uint8_t *osd__tgt_iscsi_data_out_dest(struct iscsi_conn *c, const struct osd__iscsi_bhs *h);
/* A PDU whose data digest was wrong: Reject it, end a Data-Out's task. */
int osd__tgt_iscsi_data_digest_error(struct iscsi_conn *c, const struct osd__iscsi_pdu *pdu);
/* Drop pending tasks on @p lun (NULL = all); returns how many. */
unsigned osd__tgt_iscsi_tasks_drop(struct iscsi_conn *c, const uint8_t *lun);
/* Drop the pending task @p itt; returns 1 if there was one. */
int osd__tgt_iscsi_task_abort(struct iscsi_conn *c, uint32_t itt);
/* End the tasks whose Data-Out is overdue at @p now; *next gets the
 * earliest deadline left (0 if none). 0 or -errno (connection failed). */
int osd__tgt_iscsi_tasks_expire(struct iscsi_conn *c, uint64_t now, uint64_t *next);

/* sched.c: ordering and the worker pool. */
int osd__tgt_iscsi_pool_start(struct osd_target_iscsi *srv, unsigned workers);
void osd__tgt_iscsi_pool_stop(struct osd_target_iscsi *srv);
/* Sets t's scope from its CDB and task attribute (SAM-5 8.6). */
void osd__tgt_iscsi_task_classify(struct osd_target_iscsi *srv, struct iscsi_task *t,
				  unsigned attr);
/* A new task enters c->order (TS_DATA); -EBUSY when the connection holds
 * ISCSI_MAX_ACTIVE already. */
int osd__tgt_iscsi_task_enter(struct iscsi_conn *c, struct iscsi_task *t);
/* Its data is in: it runs once no earlier task conflicts with it. */
void osd__tgt_iscsi_task_ready(struct iscsi_conn *c, struct iscsi_task *t);
/* Whether a task of @p c tagged @p itt is in c->order and not yet answered
 * (waiting for data, queued or running). */
int osd__tgt_iscsi_itt_unanswered(struct iscsi_conn *c, uint32_t itt);
/* A task answered without execution leaves c->order and is freed. */
void osd__tgt_iscsi_task_leave(struct iscsi_conn *c, struct iscsi_task *t);
/* Drop queued tasks on @p lun (NULL = all) or the one @p itt (RSVD = any):
 * those waiting are freed unanswered, those a worker holds run on. Returns
 * whether any matching task is still in a worker's hands. */
int osd__tgt_iscsi_sched_drop(struct iscsi_conn *c, const uint8_t *lun, uint32_t itt);
/* Answer TMF @p h once the tasks it covers are answered (or now). */
int osd__tgt_iscsi_tmf_defer(struct iscsi_conn *c, const struct osd__iscsi_bhs *req,
			     struct osd__iscsi_bhs *h);
/* Wait until no task of @p c is in a worker's hands. */
void osd__tgt_iscsi_sched_quiesce(struct iscsi_conn *c);
/* A worker enters (@p on) or leaves a command that may block: while it
 * blocks, another worker may be woken in its place. */
void osd__tgt_iscsi_pool_blocking(struct osd_target_iscsi *srv, int on);
/* Whether tasks of @p c wait in the queue (the connection thread then
 * calls osd__tgt_iscsi_pool_kick() after ISCSI_RESCUE_MS). */
int osd__tgt_iscsi_conn_queued(struct iscsi_conn *c);
/* Wake a worker for queued tasks, whatever max_awake says: the workers
 * up may be stuck in commands that were not expected to block. */
void osd__tgt_iscsi_pool_kick(struct osd_target_iscsi *srv);
/* The command being read was answered without becoming a task: its
 * window slot is free again. */
void osd__tgt_iscsi_window_release(struct iscsi_conn *c);
/* A worker executed @p t: later tasks may run, its window slot is free. */
void osd__tgt_iscsi_task_executed(struct iscsi_conn *c, struct iscsi_task *t);
/* task.c: execute a task in a worker and answer it. */
void osd__tgt_iscsi_task_run(struct iscsi_conn *c, struct iscsi_task *t);
void osd__tgt_iscsi_task_free(struct iscsi_conn *c, struct iscsi_task *t);

/* lun.c: commands answered for the whole target rather than one LUN. */
void osd__tgt_iscsi_lun_execute(struct osd_target_iscsi *srv, struct osd_xfer *x);

#endif
