/* A real software target in a temporary directory, shared by the
 * integration tests, reached through the loopback transport or through
 * iSCSI (an in-process osd_target_iscsi server on 127.0.0.1, port chosen by
 * the kernel, and libosd's iSCSI transport to it, digests off or on). The
 * target stays in this process either way, so tests may still call it
 * directly (root key, system id) between commands. */
#ifndef TEST_TARGET_FIXTURE_H
#define TEST_TARGET_FIXTURE_H

#include <osd/osd.h>
#include <osdtarget/iscsi.h>
#include <osdtarget/target.h>

/* How fixture_dev() reaches the target. */
enum fixture_transport {
	FIXTURE_LOOPBACK = 0,      /* osd_target_loopback(): commands run inline */
	FIXTURE_ISCSI = 1,         /* iSCSI over TCP, HeaderDigest=DataDigest=None */
	FIXTURE_ISCSI_DIGESTS = 2  /* iSCSI over TCP, HeaderDigest=DataDigest=CRC32C */
};

struct tgt_fixture {
	char dir[256];
	osd_target *tgt;
	osd_target_iscsi *srv;     /* the iSCSI server (iSCSI transports only, made lazily) */
	osd_dev *dev;
};

/* Choose the transport by name: "loopback", "iscsi" or "iscsi-digests";
 * NULL takes $OSD_TEST_TRANSPORT, loopback when that is unset or empty.
 * Returns 0, or -EINVAL for an unknown name (the selection is unchanged). */
int fixture_select_transport(const char *name);
/* The transport in use and its name. */
enum fixture_transport fixture_transport(void);
const char *fixture_transport_name(void);

/* Make a fresh store and open a device on it (no device when @p dev_opts is NULL). */
void fixture_up(struct tgt_fixture *f, const struct osd_dev_options *dev_opts);
/* Open a device on the fixture's target through the selected transport. */
osd_dev *fixture_dev(struct tgt_fixture *f, const struct osd_dev_options *opts);
/* Wait (bounded by @p timeout_ms) until @p dev has no request in flight,
 * driving its transport: poll() on its fd when it has one, else service
 * alone (inline transports). Returns 0, -ETIMEDOUT or the service error. */
int fixture_drain(osd_dev *dev, unsigned timeout_ms);
/* Close everything and remove the directory. */
void fixture_down(struct tgt_fixture *f);
/* rm -r of a test directory. */
void fixture_rmtree(const char *dir);

#endif
