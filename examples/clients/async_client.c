/*
 * async_client.c - many libosd requests in flight, driven by an event loop.
 *
 * After the same setup as sync_client.c (software target in DIR, loopback
 * transport, osd_dev, FORMAT, partition, object), it submits NREQ WRITEs of
 * CHUNK bytes each with osd_req_submit() without waiting, then NREQ READs,
 * and drives completion from a poll() loop:
 *
 *   while (requests are outstanding) {
 *       fd = osd_dev_get_fd(dev);           -1 if the transport has none
 *       poll(fd, osd_dev_which_events(dev));
 *       osd_dev_service(dev, revents);      runs the completion callbacks
 *   }
 *
 * The loopback transport completes every request inline, inside
 * osd_req_submit(), so the loop below usually finds nothing to do. A network
 * transport (iSCSI) completes them later from osd_dev_service(); the same
 * code handles both because it never assumes which happens. The loop is
 * bounded by osd_dev_queue_length(), the number of requests in flight.
 *
 * Usage: async_client DIR
 * Exit status: 0 on success, 1 on any failure.
 */
/* POSIX and BSD names (poll, DT_*) also under a strict -std=c11. */
#define _DEFAULT_SOURCE

#include <osd/osd.h>
#include <osdtarget/target.h>

#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#define NREQ 32     /* requests in flight per phase */
#define CHUNK 4096  /* bytes per request */

/* Shared by every callback: what finished and whether anything failed. */
struct progress {
	unsigned done;    /* callbacks run */
	unsigned failed;  /* callbacks with a non-zero result */
};

/* One in-flight request's private state. */
struct slot {
	struct progress *prog;
	struct iovec iov;
	unsigned index;
};

/*
 * Completion callback: runs exactly once per successfully submitted request,
 * possibly inside osd_req_submit(). It owns the request from here on.
 */
static void on_done(osd_req *req, int result, void *private_data)
{
	struct slot *s = private_data;

	if (result < 0) {
		fprintf(stderr, "request %u failed: %s\n", s->index, osd_req_error(req));
		s->prog->failed++;
	}
	s->prog->done++;
	osd_req_free(req);
}

/*
 * Wait until no request is in flight. With a transport that has an fd
 * (iSCSI) poll() sleeps until its socket is ready. An fd-less transport
 * (the loopback) is driven by osd_dev_service(dev, 0); the loopback never
 * leaves anything in flight, so this loop does not spin in practice.
 */
static int drain(osd_dev *dev)
{
	while (osd_dev_queue_length(dev) > 0) {
		struct pollfd p = { osd_dev_get_fd(dev), 0, 0 };
		int rc;

		if (p.fd >= 0) {
			p.events = (short)osd_dev_which_events(dev);
			if (poll(&p, 1, 1000) < 0 && errno != EINTR)
				return -errno;
		}
		if ((rc = osd_dev_service(dev, p.fd >= 0 ? p.revents : 0)) < 0) {
			fprintf(stderr, "service: %s\n", osd_dev_error(dev));
			return rc;
		}
	}
	return 0;
}

/* Submit NREQ requests built by @p read ? READ : WRITE, then wait for all. */
static int phase(osd_dev *dev, const struct osd_obj_id *obj, uint8_t *buf, int read,
		 struct slot *slots)
{
	struct progress prog = { 0, 0 };
	unsigned submitted = 0;
	int rc = 0;

	for (unsigned i = 0; i < NREQ; i++) {
		struct slot *s = &slots[i];
		uint64_t off = (uint64_t)i * CHUNK;
		osd_req *req;

		s->prog = &prog;
		s->index = i;
		s->iov.iov_base = buf + off;
		s->iov.iov_len = CHUNK;
		rc = read ? osd_req_read(&req, dev, obj, off, &s->iov, 1)
			  : osd_req_write(&req, dev, obj, off, &s->iov, 1);
		if (rc < 0)
			break;
		/* On failure no callback will run: the request is still ours. */
		if ((rc = osd_req_submit(req, on_done, s)) < 0) {
			fprintf(stderr, "submit: %s\n", osd_req_error(req));
			osd_req_free(req);
			break;
		}
		submitted++;
	}
	printf("%s: submitted %u requests, %u already complete, %u in flight\n",
	       read ? "READ" : "WRITE", submitted, prog.done, osd_dev_queue_length(dev));
	/* Always drain, even after an error: the callbacks point into slots. */
	int drc = drain(dev);
	if (rc == 0)
		rc = drc;
	if (rc == 0 && (prog.done != submitted || prog.failed))
		rc = -EIO;
	printf("%s: %u completed, %u failed\n", read ? "READ" : "WRITE", prog.done,
	       prog.failed);
	return rc;
}

/* Run one synchronous command built by a constructor (setup steps). */
static int run(osd_req *req, struct osd_obj_id *made)
{
	int rc = osd_req_execute(req);

	if (rc == 0 && made)
		rc = osd_req_created_id(req, made);
	if (rc < 0)
		fprintf(stderr, "setup command failed: %s\n", osd_req_error(req));
	osd_req_free(req);
	return rc;
}

static int exercise(osd_dev *dev)
{
	static struct slot slots[NREQ];
	struct osd_obj_id part, obj;
	uint8_t *out, *in;
	osd_req *req;
	int rc;

	if ((rc = osd_req_format(&req, dev, 0)) < 0 || (rc = run(req, NULL)) < 0)
		return rc;
	if ((rc = osd_req_create_partition(&req, dev, 0)) < 0 || (rc = run(req, &part)) < 0)
		return rc;
	part.id = 0;
	if ((rc = osd_req_create(&req, dev, &part, 1)) < 0 || (rc = run(req, &obj)) < 0)
		return rc;
	printf("object 0x%" PRIx64 "/0x%" PRIx64 " ready\n", obj.partition, obj.id);

	out = malloc((size_t)NREQ * CHUNK);
	in = calloc(NREQ, CHUNK);
	if (!out || !in) {
		rc = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < (size_t)NREQ * CHUNK; i++)
		out[i] = (uint8_t)(i * 7 + i / CHUNK);

	if ((rc = phase(dev, &obj, out, 0, slots)) < 0 ||
	    (rc = phase(dev, &obj, in, 1, slots)) < 0)
		goto out;
	if (memcmp(in, out, (size_t)NREQ * CHUNK) != 0) {
		fprintf(stderr, "data read back differs from data written\n");
		rc = -EIO;
		goto out;
	}
	printf("verified %d bytes\n", NREQ * CHUNK);
out:
	free(out);
	free(in);
	return rc;
}

int main(int argc, char **argv)
{
	struct osd_transport tp;
	osd_target *tgt;
	osd_dev *dev;
	int rc;

	if (argc != 2) {
		fprintf(stderr, "usage: %s DIR\n", argv[0]);
		return 2;
	}
	if ((rc = osd_target_open(&tgt, argv[1], NULL)) < 0) {
		fprintf(stderr, "cannot open target %s: %s\n", argv[1], strerror(-rc));
		return 1;
	}
	if ((rc = osd_target_loopback(tgt, &tp)) < 0) {
		fprintf(stderr, "loopback: %s\n", osd_target_error(tgt));
		osd_target_close(tgt);
		return 1;
	}
	if ((rc = osd_dev_open(&dev, &tp, NULL)) < 0) {
		fprintf(stderr, "osd_dev_open: %s\n", strerror(-rc));
		tp.ops->destroy(tp.impl);
		osd_target_close(tgt);
		return 1;
	}
	rc = exercise(dev);
	osd_dev_close(dev);
	osd_target_close(tgt);
	printf("%s\n", rc == 0 ? "async_client: OK" : "async_client: FAILED");
	return rc == 0 ? 0 : 1;
}
