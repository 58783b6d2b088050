/*
 * osd-secd: a security manager for OSDs (docs/security-manager.md). It holds
 * the root keys of its OSDs, reads a policy, and answers credential requests
 * from clients that authenticate with X.509 certificates over TLS 1.3.
 */
#ifndef OSD_SECD_H
#define OSD_SECD_H

#include <pthread.h>
#include <stdint.h>
#include <osd/osd.h>

#define PROG "osd-secd"

/* ---- log.c: every grant and refusal, with a severity ---- */
enum secd_sev { SECD_ERR = 3, SECD_WARNING = 4, SECD_NOTICE = 5, SECD_INFO = 6 };
void secd_log_syslog(int on);
void secd_log(enum secd_sev sev, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ---- keystore.c: root keys per OSD system id ---- */
struct secd_partition {
	uint64_t id;
	uint8_t version;         /* the working key capabilities are signed with */
	int rotated;             /* working key installed by rotation (kept in the state file) */
	int on_osd;              /* keys and method installed on the OSD by this daemon */
	uint64_t tried_ms;       /* last attempt to install them (osd_now_ms()) */
	uint8_t wkey[OSD_HMAC_LEN];
};
struct secd_system {
	uint8_t id[OSD_SYSTEM_ID_LEN];
	uint8_t root_key[OSD_HMAC_LEN];
	char target[256];        /* iSCSI URL of the OSD, for SET KEY ("" = none) */
	osd_cred_issuer *iss;
	pthread_mutex_t lock;    /* part[] */
	struct secd_partition *part; /* partitions whose keys iss holds */
	size_t npart, cap;
};
struct secd_keystore {
	struct secd_system *sys;
	size_t n;
};
/* Loads the key store at @p path (refused unless owned by us and 0600) and
 * the working keys rotation installed, from @p path".working" if present. */
int secd_keystore_load(struct secd_keystore *ks, const char *path, char *err, size_t errlen);
/* Rewrites @p path".working" (0600, atomically) from the rotated keys. */
int secd_keystore_save_working(struct secd_keystore *ks, const char *path);
void secd_keystore_free(struct secd_keystore *ks);
struct secd_system *secd_keystore_find(struct secd_keystore *ks,
				       const uint8_t id[OSD_SYSTEM_ID_LEN]);
/* Makes sure @p s's issuer holds the keys of @p partition (0: the root);
 * *version is the working key version to sign with. */
int secd_system_key_partition(struct secd_system *s, uint64_t partition, uint8_t *version);
/* Installs working key @p version of @p partition after a SET KEY. */
int secd_system_set_working(struct secd_system *s, uint64_t partition, uint8_t version,
			    const uint8_t key[OSD_HMAC_LEN]);

/* Whether the daemon keyed @p partition on the OSD / records that it did. */
int secd_system_on_osd(struct secd_system *s, uint64_t partition);
/* Whether to try keying @p partition now: not keyed, and the last attempt
 * (recorded here) was long enough ago that an unreachable OSD does not cost
 * every request a connection attempt. */
int secd_system_install_due(struct secd_system *s, uint64_t partition);
/* Lets the next request try again at once (the OSD answered, e.g. the
 * partition did not exist yet). */
void secd_system_install_retry(struct secd_system *s, uint64_t partition);
void secd_system_set_on_osd(struct secd_system *s, uint64_t partition);

/* ---- osdkeys.c: SET KEY on the OSDs ---- */
/* Keys @p partition on the OSD once (no-op without a target URL). */
int secd_install_partition(struct secd_system *s, uint64_t partition);
/* Rotates the working key of every partition of @p s that the daemon keyed;
 * returns how many failed. */
int secd_rotate_system(struct secd_system *s);

/* ---- policy.c: who gets what ---- */
struct secd_grant {
	char identity[128];
	int any_system;
	uint8_t system_id[OSD_SYSTEM_ID_LEN];
	uint64_t partition;
	int whole_partition;     /* no object given: the partition and all in it */
	uint64_t object;
	uint16_t perms;
	enum osd_sec_method method;
	unsigned lifetime_ms;
	unsigned line;
};
struct secd_policy {
	struct secd_grant *g;
	size_t n;
};
int secd_policy_load(struct secd_policy *p, const char *path, char *err, size_t errlen);
void secd_policy_free(struct secd_policy *p);
/* The grant that covers the whole request, or NULL. */
const struct secd_grant *secd_policy_match(const struct secd_policy *p, const char *identity,
					   const uint8_t system_id[OSD_SYSTEM_ID_LEN],
					   const struct osd_cred_request *want);
/* "read,write,..." for logs. */
void secd_perms_name(uint16_t perms, char *out, size_t outlen);

/* ---- the configuration a request is answered under (swapped on SIGHUP) ---- */
struct secd_config {
	struct secd_keystore ks;
	struct secd_policy policy;
	unsigned refs;
};

/* ---- server.c: TLS and the protocol ---- */
struct secd_server;
struct secd_server_opts {
	const char *listen;      /* host:port */
	const char *cert, *key, *ca;
	const char *port_file;
	unsigned max_clients;
	unsigned idle_ms;
};
int secd_server_start(struct secd_server **out, const struct secd_server_opts *o);
/* What the accept loop does besides accepting (flags set by signals). */
struct secd_events {
	volatile int *stop, *reload, *rotate;
	void (*do_reload)(void);
	void (*do_rotate)(void);
	int (*timeout_ms)(void); /* until the next timed event, -1 for none */
};
/* Serves until *stop. */
int secd_server_run(struct secd_server *s, const struct secd_events *ev);
void secd_server_free(struct secd_server *s);

/* main.c: the current configuration, referenced while a request uses it */
struct secd_config *secd_config_get(void);
void secd_config_put(struct secd_config *c);

/* request.c: answers one decoded request */
void secd_answer(const char *identity, const struct osd_secmsg *q, struct osd_secmsg *a);

#endif
