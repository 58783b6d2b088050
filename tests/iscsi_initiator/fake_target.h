/* A scripted iSCSI target for tests: runs a script on a thread, speaking
 * through the libosd iSCSI codec, and records what the initiator sent. */
#ifndef TEST_ISCSI_FAKE_TARGET_H
#define TEST_ISCSI_FAKE_TARGET_H

#include <pthread.h>
#include <stdint.h>
#include "iscsi/pdu.h"

#define FT_BUF (1u << 20)
/* The security token ft_login() hands out (Security Token VPD page). */
#define FT_TOKEN "fake-target-token"

struct ft;
typedef void (*ft_script)(struct ft *ft);

struct ft {
	int lfd, fd;
	uint16_t port;
	pthread_t th;
	ft_script script;
	char fail[512];                 /* first failure, "" if none */
	int finished;                   /* atomic: the script ended */
	int progress;                   /* atomic: set by scripts at milestones */
	struct osd__iscsi_digests dg;   /* digests in use on fd */
	uint32_t statsn, expcmdsn, maxcmdsn;
	/* login configuration */
	int want_hd, want_dd;           /* digests the target selects */
	const char *first_burst;        /* FirstBurstLength answer */
	const char *initial_r2t;        /* InitialR2T answer */
	unsigned window;                /* MaxCmdSN - ExpCmdSN + 1 */
	const char *chap_user, *chap_secret;   /* expect CHAP with these */
	const char *chap_tuser, *chap_tsecret; /* mutual: answer with these */
	int chap_bad_mutual;            /* send a wrong mutual CHAP_R */
	const char *chap_id;            /* CHAP_I sent (NULL: "7") */
	int token_by_script;            /* ft_login() leaves the token INQUIRY to the script */
	/* records */
	uint8_t login1[4096];           /* first Login Request, whole PDU */
	size_t login1_len;
	uint8_t op_text[4096];          /* operational-stage request text */
	size_t op_text_len;
	uint8_t isid[6];
	int logins;                     /* atomic */
	int corrupt_next;               /* ft_send flips a header digest bit once */
	void *user;                     /* for the script */
	/* steps agreed between the test and the script (ft_step_set/wait) */
	pthread_mutex_t step_mu;
	pthread_cond_t step_cv;
	int step;
	/* last received PDU */
	uint8_t buf[FT_BUF];
	size_t len;
	struct osd__iscsi_pdu pdu;
};

void ft_start(struct ft *ft, ft_script script);
/* Waits for the script to end; returns the failure text ("" if none). */
const char *ft_join(struct ft *ft);
int ft_accept(struct ft *ft);
int ft_recv(struct ft *ft);
int ft_send(struct ft *ft, struct osd__iscsi_bhs *h, const uint8_t *ahs, size_t ahs_len,
	    const uint8_t *data, size_t dlen);
/* Sends @p n raw bytes (part of a PDU built with osd__iscsi_pdu_build()). */
int ft_send_raw(struct ft *ft, const uint8_t *p, size_t n);
/* Step @p n reached (either side). */
void ft_step_set(struct ft *ft, int n);
/* Waits (at most 10 s) until step @p n is reached; 0 or -1 (failure recorded). */
int ft_step_wait(struct ft *ft, int n);
/* Full login as configured, then (unless token_by_script) the answer to the
 * initiator's INQUIRY of the security token page; 0 or -1 (failure recorded). */
int ft_login(struct ft *ft);
/* Whether the last PDU is the INQUIRY of the security token page; if so,
 * answers it with FT_TOKEN (1), or -1 on failure, else 0. */
int ft_answer_token(struct ft *ft);
/* The security token page from byte @p from on, in one final Data-In with
 * status, to the command just received (a gap when @p from is not 0). */
int ft_send_token(struct ft *ft, uint32_t from);
/* Answers a Logout Request (the next PDU must be one). */
int ft_logout(struct ft *ft);
/* Fills the response fields (StatSN, ExpCmdSN, MaxCmdSN) of @p h. */
void ft_rsp_sn(struct ft *ft, struct osd__iscsi_bhs *h, int advance_statsn);
void ft_failf(struct ft *ft, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define FT_CHECK(ft, cond, ...) do {        \
		if (!(cond)) {              \
			ft_failf(ft, __VA_ARGS__); \
			return;             \
		}                           \
	} while (0)
#define FT_CHECK_RC(ft, cond, ...) do {     \
		if (!(cond)) {              \
			ft_failf(ft, __VA_ARGS__); \
			return -1;          \
		}                           \
	} while (0)

#endif
