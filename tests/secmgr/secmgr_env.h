/* A security manager test bed on 127.0.0.1: certificates made at run time
 * with the openssl tool, a store with a root key and partitions A and B
 * keyed by osdctl, osd-targetd serving it and osd-secd with a policy. */
#ifndef OSD_TEST_SECMGR_ENV_H
#define OSD_TEST_SECMGR_ENV_H

#include <sys/types.h>
#include <osd/osd.h>

#define PART_A 0x10000ULL
#define PART_B 0x10001ULL

struct secenv {
	char dir[128];
	pid_t targetd, secd;
	unsigned sport;
	char url[256];      /* the target's iSCSI URL */
	char mgr_url[64];   /* osdsec://127.0.0.1:PORT */
	uint8_t system_id[OSD_SYSTEM_ID_LEN];
	int loads;          /* "loaded" lines seen in the daemon's log */
};

/* Builds everything and starts both daemons; 0 or -1 (message printed). */
int secenv_start(struct secenv *e, const char *policy);
void secenv_stop(struct secenv *e);
/* Replaces the policy and has the daemon reload it (waits, bounded). */
int secenv_set_policy(struct secenv *e, const char *policy);
/* Lines of the daemon's log that contain @p needle. */
int secenv_log_count(const struct secenv *e, const char *needle);
/* Waits (bounded) until the log holds @p n lines with @p needle; 0 or -1. */
int secenv_wait_log(const struct secenv *e, const char *needle, int n);
/* A device on the target with no credential source. */
int secenv_open_dev(const struct secenv *e, osd_dev **dev);
/* A manager connection with the certificate of @p who (reader, writer,
 * admin, stranger). */
int secenv_open_mgr(const struct secenv *e, const char *who, osd_secmgr **m);
/* Path of file @p name in the test bed. */
const char *secenv_path(const struct secenv *e, const char *name);

#endif
