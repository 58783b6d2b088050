/*
 * sync_client.c - the smallest complete libosd program.
 *
 * It opens (creating if needed) the embedded software target in a
 * directory, connects an initiator device to it through the in-process
 * loopback transport, and then, one synchronous command at a time:
 *
 *   FORMAT OSD -> CREATE PARTITION -> CREATE -> WRITE -> READ
 *   -> GET ATTRIBUTES (logical length) -> LIST
 *
 * Usage: sync_client DIR      (DIR is created; its contents are replaced)
 *
 * Build against an installed copy with
 *   cc sync_client.c $(pkg-config --cflags --libs libosdtarget libosd)
 * Exit status: 0 on success, 1 on any failure (the reason goes to stderr).
 */
/* POSIX and BSD names (poll, DT_*) also under a strict -std=c11. */
#define _DEFAULT_SOURCE

#include <osd/osd.h>
#include <osdtarget/target.h>

#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/uio.h>

/* User object information page: holds the logical length (0x82). */
#define USER_INFO_PAGE (OSD_APAGE_USER_BASE + OSD_APAGE_INFORMATION)

/*
 * Run a request built by one of the osd_req_*() constructors and free it.
 * Every command in this program goes through here, so the error handling
 * lives in one place: osd_req_error() gives a readable reason including the
 * decoded sense data.
 */
static int run(osd_req *req, const char *what)
{
	int rc = osd_req_execute(req);

	if (rc < 0)
		fprintf(stderr, "%s failed: %s\n", what, osd_req_error(req));
	osd_req_free(req);
	return rc;
}

/* osd_list_foreach() callback: print one object id. */
static int print_id(uint64_t id, void *payload)
{
	unsigned *count = payload;

	printf("  listed object 0x%" PRIx64 "\n", id);
	(*count)++;
	return 0;
}

/* Create a partition; the target picks its id (we ask for id 0). */
static int make_partition(osd_dev *dev, uint64_t *pid)
{
	struct osd_obj_id made;
	osd_req *req;
	int rc;

	if ((rc = osd_req_create_partition(&req, dev, 0)) < 0)
		return rc;
	if ((rc = osd_req_execute(req)) == 0)
		rc = osd_req_created_id(req, &made);
	else
		fprintf(stderr, "CREATE PARTITION failed: %s\n", osd_req_error(req));
	osd_req_free(req);
	if (rc == 0)
		*pid = made.partition;
	return rc;
}

/* Create one user object in @p pid; again the target picks the id. */
static int make_object(osd_dev *dev, uint64_t pid, struct osd_obj_id *obj)
{
	struct osd_obj_id want = { pid, 0 };
	osd_req *req;
	int rc;

	if ((rc = osd_req_create(&req, dev, &want, 1)) < 0)
		return rc;
	if ((rc = osd_req_execute(req)) == 0)
		rc = osd_req_created_id(req, obj);
	else
		fprintf(stderr, "CREATE failed: %s\n", osd_req_error(req));
	osd_req_free(req);
	return rc;
}

/* The object work: write a message, read it back, check the length, list. */
static int exercise(osd_dev *dev)
{
	static const char msg[] = "hello, object storage";
	char back[64];
	struct iovec out = { (void *)msg, sizeof(msg) };
	struct iovec in = { back, sizeof(back) };
	struct osd_obj_id obj;
	uint64_t pid = 0, len; /* pid is set when make_partition() succeeds */
	unsigned listed = 0;
	osd_req *req;
	int rc;

	/* FORMAT OSD erases the store: capacity 0 means "everything". */
	if ((rc = osd_req_format(&req, dev, 0)) < 0 || (rc = run(req, "FORMAT OSD")) < 0)
		return rc;
	printf("formatted the OSD\n");

	if ((rc = make_partition(dev, &pid)) < 0)
		return rc;
	printf("created partition 0x%" PRIx64 "\n", pid);

	if ((rc = make_object(dev, pid, &obj)) < 0)
		return rc;
	printf("created object 0x%" PRIx64 "/0x%" PRIx64 "\n", obj.partition, obj.id);

	/* Data buffers are borrowed by the request until it completes. */
	if ((rc = osd_req_write(&req, dev, &obj, 0, &out, 1)) < 0 ||
	    (rc = run(req, "WRITE")) < 0)
		return rc;
	printf("wrote %zu bytes\n", sizeof(msg));

	/* Reading more than was written is not an error: the request is
	 * "short" and osd_req_bytes_read() says how much is real data. */
	memset(back, 0, sizeof(back));
	if ((rc = osd_req_read(&req, dev, &obj, 0, &in, 1)) < 0)
		return rc;
	if ((rc = osd_req_execute(req)) < 0) {
		fprintf(stderr, "READ failed: %s\n", osd_req_error(req));
		osd_req_free(req);
		return rc;
	}
	len = osd_req_bytes_read(req);
	osd_req_free(req);
	if (len != sizeof(msg) || memcmp(back, msg, sizeof(msg)) != 0) {
		fprintf(stderr, "READ returned %" PRIu64 " bytes of the wrong data\n", len);
		return -1;
	}
	printf("read back %" PRIu64 " bytes: \"%s\"\n", len, back);

	/* A synchronous helper: one GET ATTRIBUTES of a single 8-byte value. */
	if ((rc = osd_get_attr_u64(dev, &obj, USER_INFO_PAGE, OSD_ATTR_UI_LOGICAL_LENGTH,
				   &len)) < 0) {
		fprintf(stderr, "GET ATTRIBUTES failed: %s\n", osd_dev_error(dev));
		return rc;
	}
	if (len != sizeof(msg)) {
		fprintf(stderr, "logical length is %" PRIu64 ", expected %zu\n", len,
			sizeof(msg));
		return -1;
	}
	printf("logical length attribute: %" PRIu64 "\n", len);

	/* LIST the partition's objects, following continuations for us. */
	struct osd_obj_id part = { pid, 0 };
	if ((rc = osd_list_foreach(dev, OSD_ACT_LIST, &part, print_id, &listed)) < 0) {
		fprintf(stderr, "LIST failed: %s\n", osd_dev_error(dev));
		return rc;
	}
	if (listed != 1) {
		fprintf(stderr, "LIST returned %u objects, expected 1\n", listed);
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct osd_dev_options opts = OSD_DEV_OPTIONS_INIT;
	struct osd_transport tp;
	osd_target *tgt;
	osd_dev *dev;
	int rc;

	if (argc != 2) {
		fprintf(stderr, "usage: %s DIR\n", argv[0]);
		return 2;
	}
	/* The software target stores everything under DIR (created if missing). */
	if ((rc = osd_target_open(&tgt, argv[1], NULL)) < 0) {
		fprintf(stderr, "cannot open target %s: %s\n", argv[1], strerror(-rc));
		return 1;
	}
	/* The loopback transport calls the target directly, in this process. */
	if ((rc = osd_target_loopback(tgt, &tp)) < 0) {
		fprintf(stderr, "loopback: %s\n", osd_target_error(tgt));
		osd_target_close(tgt);
		return 1;
	}
	/* On success the device owns the transport; on failure we still do. */
	opts.osd_version = OSD_VERSION_AUTO;
	if ((rc = osd_dev_open(&dev, &tp, &opts)) < 0) {
		fprintf(stderr, "osd_dev_open: %s\n", strerror(-rc));
		tp.ops->destroy(tp.impl);
		osd_target_close(tgt);
		return 1;
	}
	printf("opened %s, speaking OSD-%d\n", argv[1],
	       osd_dev_version(dev) == OSD_V1 ? 1 : 2);

	rc = exercise(dev);

	osd_dev_close(dev);      /* destroys the transport */
	osd_target_close(tgt);   /* the target outlives the transport */
	printf("%s\n", rc == 0 ? "sync_client: OK" : "sync_client: FAILED");
	return rc == 0 ? 0 : 1;
}
