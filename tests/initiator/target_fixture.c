#define _XOPEN_SOURCE 700
#include <check.h>
#include <errno.h>
#include <ftw.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <osd/iscsi.h>
#include "target_fixture.h"

static enum fixture_transport selected = FIXTURE_LOOPBACK;

static const char *const transport_names[] = {
	[FIXTURE_LOOPBACK] = "loopback",
	[FIXTURE_ISCSI] = "iscsi",
	[FIXTURE_ISCSI_DIGESTS] = "iscsi-digests",
};

int fixture_select_transport(const char *name)
{
	if (!name)
		name = getenv("OSD_TEST_TRANSPORT");
	if (!name || !*name)
		name = transport_names[FIXTURE_LOOPBACK];
	for (size_t i = 0; i < sizeof(transport_names) / sizeof(transport_names[0]); i++) {
		if (strcmp(name, transport_names[i]) == 0) {
			selected = (enum fixture_transport)i;
			return 0;
		}
	}
	return -EINVAL;
}

enum fixture_transport fixture_transport(void)
{
	return selected;
}

const char *fixture_transport_name(void)
{
	return transport_names[selected];
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

void fixture_rmtree(const char *dir)
{
	nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* Server complaints explain a failing iSCSI variant: show them. */
static void server_log(void *payload, int level, const char *msg)
{
	(void)payload;
	if (level <= OSD_TARGET_ISCSI_LOG_WARNING)
		fprintf(stderr, "osd_target_iscsi: %s\n", msg);
}

/* The in-process server for the fixture's target, started once. */
static void iscsi_server_up(struct tgt_fixture *f)
{
	struct osd_target_iscsi_options so = OSD_TARGET_ISCSI_OPTIONS_INIT;
	osd_target *luns[1] = { f->tgt };

	if (f->srv)
		return;
	so.address = "127.0.0.1";
	so.port = 0;
	so.allow_digests = 1;
	so.log = server_log;
	ck_assert_int_eq(osd_target_iscsi_create(&f->srv, luns, 1, &so), 0);
	ck_assert_msg(osd_target_iscsi_start(f->srv) == 0, "%s", osd_target_iscsi_error(f->srv));
}

static void iscsi_transport(struct tgt_fixture *f, struct osd_transport *tp)
{
	struct osd_iscsi_options io = OSD_ISCSI_OPTIONS_INIT;
	/* digests are demanded, not preferred: a refused CRC32C fails the login */
	enum osd_iscsi_digest d = selected == FIXTURE_ISCSI_DIGESTS ?
		OSD_ISCSI_DIGEST_CRC32C : OSD_ISCSI_DIGEST_NONE;
	char url[128], err[256] = "";
	int rc;

	iscsi_server_up(f);
	snprintf(url, sizeof(url), "iscsi://127.0.0.1:%d/%s/0", osd_target_iscsi_port(f->srv),
		 OSD_TARGET_ISCSI_DEFAULT_NAME);
	io.header_digest = d;
	io.data_digest = d;
	io.errbuf = err;
	io.errbuf_len = sizeof(err);
	rc = osd_iscsi_transport_new(tp, url, &io);
	ck_assert_msg(rc == 0, "%s: %d %s", url, rc, err);
}

osd_dev *fixture_dev(struct tgt_fixture *f, const struct osd_dev_options *opts)
{
	struct osd_transport tp;
	osd_dev *dev;
	int rc;

	if (selected == FIXTURE_LOOPBACK)
		ck_assert_int_eq(osd_target_loopback(f->tgt, &tp), 0);
	else
		iscsi_transport(f, &tp);
	rc = osd_dev_open(&dev, &tp, opts);
	if (rc)
		tp.ops->destroy(tp.impl);
	ck_assert_int_eq(rc, 0);
	/* guard against a variant silently running inline: iSCSI has a socket */
	if (selected == FIXTURE_LOOPBACK)
		ck_assert_int_eq(osd_dev_get_fd(dev), -1);
	else
		ck_assert_int_ge(osd_dev_get_fd(dev), 0);
	return dev;
}

static uint64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

int fixture_drain(osd_dev *dev, unsigned timeout_ms)
{
	uint64_t end = mono_ms() + timeout_ms;

	while (osd_dev_queue_length(dev)) {
		struct pollfd p = { osd_dev_get_fd(dev), 0, 0 };
		int rc;

		if (mono_ms() >= end)
			return -ETIMEDOUT;
		if (p.fd >= 0) {
			p.events = (short)osd_dev_which_events(dev);
			/* wakes on I/O; the bound only lets service drive timeouts */
			if (poll(&p, 1, 100) < 0 && errno != EINTR)
				return -errno;
		}
		rc = osd_dev_service(dev, p.revents);
		if (rc)
			return rc;
	}
	return 0;
}

void fixture_up(struct tgt_fixture *f, const struct osd_dev_options *dev_opts)
{
	const char *tmp = getenv("TMPDIR");
	struct osd_target_options to = OSD_TARGET_OPTIONS_INIT;

	memset(f, 0, sizeof(*f));
	snprintf(f->dir, sizeof(f->dir), "%s/osdinit.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	ck_assert_ptr_nonnull(mkdtemp(f->dir));
	ck_assert_int_eq(osd_target_open(&f->tgt, f->dir, &to), 0);
	if (dev_opts)
		f->dev = fixture_dev(f, dev_opts);
}

void fixture_down(struct tgt_fixture *f)
{
	/* device first (logs out), then the server (joins its threads), and
	 * only then the target they were using */
	osd_dev_close(f->dev);
	osd_target_iscsi_free(f->srv);
	osd_target_close(f->tgt);
	if (f->dir[0])
		fixture_rmtree(f->dir);
	memset(f, 0, sizeof(*f));
}
