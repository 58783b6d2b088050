/*
 * A minimal blocking iSCSI initiator for the tests, built on the codec in
 * libosd/iscsi/pdu.h: login (with CHAP), SCSI commands with immediate data,
 * unsolicited Data-Out and R2T, Data-In and SCSI Response, raw PDUs.
 */
#ifndef TESTS_ISCSI_CLIENT_H
#define TESTS_ISCSI_CLIENT_H

#include <stddef.h>
#include <stdint.h>

#include "iscsi/pdu.h"

struct tc {
	int fd;
	uint32_t itt;
	uint32_t cmd_sn;
	uint32_t exp_stat_sn;
	uint32_t exp_cmd_sn;
	uint32_t max_cmd_sn;
	uint16_t tsih;
	struct osd__iscsi_digests dg;
	struct osd__iscsi_params params; /* after login: what was negotiated */
	uint8_t *rx;
	size_t rx_cap;
	/* 0: tc_command() sends a command again (once) when it meets the
	 * POWER ON unit attention of a new session (29h/xx); 1: it is returned. */
	int see_ua;
};

/* What to offer at login. Zero values take the defaults below. */
struct tc_login {
	const char *initiator;    /* default "iqn.2026-12.org.osd:test-client" */
	const char *target;       /* NULL with discovery */
	int discovery;
	int digests;              /* offer CRC32C header and data digests */
	const char *chap_user;    /* CHAP when set */
	const char *chap_secret;
	const char *auth_method;  /* AuthMethod value override ("None") */
	uint32_t max_recv_dsl;    /* ours; default 4096 */
	uint32_t first_burst;     /* default 8192 */
	uint32_t max_burst;       /* default 16384 */
	int initial_r2t;          /* default No (-1 = Yes) */
	uint8_t version_min;      /* Version-min in the first request */
	uint16_t tsih;            /* TSIH in the first request */
	const uint8_t *isid;      /* 6 bytes; default: made from the socket */
	const char *source;       /* local IPv4 address to connect from (127.x.y.z) */
};

int tc_connect(struct tc *c, int port);
/* tc_connect() from the local address @p source (NULL: any). */
int tc_connect_from(struct tc *c, int port, const char *source);
void tc_close(struct tc *c);

/* Send a PDU (header digest/data digest per c->dg). CmdSN/ExpStatSN are the
 * caller's. */
int tc_send(struct tc *c, struct osd__iscsi_bhs *h, const uint8_t *ahs, size_t ahs_len,
	    const uint8_t *data, size_t data_len);
int tc_send_raw(struct tc *c, const uint8_t *buf, size_t len);
/* Receive one PDU (into c->rx). Returns 0, -ECONNRESET on EOF, -ETIMEDOUT
 * after 10 s, or a codec error. Tracks StatSN/ExpCmdSN. */
int tc_recv(struct tc *c, struct osd__iscsi_pdu *pdu);

/* Full login. Returns the final login status (class << 8 | detail, 0 on
 * success in full feature phase) or -errno. */
int tc_login(struct tc *c, int port, const struct tc_login *opt);

/* A SCSI command and its outcome. */
struct tc_cmd {
	int lun;
	const uint8_t *cdb;
	size_t cdb_len;
	const uint8_t *out;
	size_t out_len;
	uint8_t *in;
	size_t in_len;
	/* results */
	uint8_t response;
	uint8_t status;
	uint8_t rsp_flags;          /* flags of the PDU that carried status */
	uint32_t residual;
	uint32_t bidi_residual;
	uint8_t sense[260];
	size_t sense_len;
	size_t in_got;              /* highest data-in byte received */
	int datain_pdus;
	int r2ts;
	int status_in_datain;       /* the S bit carried the status */
};

/* Run @p cmd to completion. Returns 0 or -errno (protocol trouble). */
int tc_command(struct tc *c, struct tc_cmd *cmd);
/* Send @p cmd's SCSI Command PDU (and its unsolicited data) with task
 * attribute @p attr (OSD_ISCSI_ATTR_*) and return; *itt gets its ITT. The
 * caller collects the answer with tc_recv(). 0 or -errno. */
int tc_start(struct tc *c, struct tc_cmd *cmd, uint8_t attr, uint32_t *itt);
/* TEST UNIT READY to @p lun, taking the unit attention of a new session
 * there (for tests that then send raw SCSI Command PDUs); 0 or -errno. */
int tc_clear_ua(struct tc *c, int lun);
/* The sense key and ASC/ASCQ (key << 16 | asc << 8 | ascq) of @p cmd's
 * sense data, fixed or descriptor format; 0 without sense. */
uint32_t tc_sense_code(const struct tc_cmd *cmd);

/* Logout (close session); returns the logout response code or -errno. */
int tc_logout(struct tc *c);

/* Fill a NOP-Out (non-immediate unless @p immediate) with the next ITT. */
void tc_nop_out(struct tc *c, struct osd__iscsi_bhs *h, int immediate);

#endif
