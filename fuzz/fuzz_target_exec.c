/*
 * Execute arbitrary commands on the software OSD target (osd_target_execute).
 *
 * One target is opened per process, in a temporary directory removed at exit.
 * The store is put back into one known state (FORMAT OSD, then a partition
 * with four user objects, data, an attribute and a collection) before any
 * input that follows a successful command, and at least every FZ_RESET_EVERY
 * inputs, so an input's effect does not depend on the inputs before it and a
 * crash reproduces from its single input.
 *
 * Input layout (docs/fuzzing.md):
 *   byte 0          selector: bit 0 OSD-2 (236-byte CDB) else OSD-1 (200),
 *                   bit 1 patch the opcode (byte 0 = 0x7F) and the
 *                   ADDITIONAL CDB LENGTH (byte 7) so the CDB passes the
 *                   first checks, bits 2-3 data-in allocation
 *                   (4096, 512, 40 or none), bit 4 present no channel token
 *   next 200/236    the CDB (shorter if the input ends first)
 *   rest            data-out
 * The target must always answer with GOOD or CHECK CONDITION carrying
 * decodable sense and never transfer more data-in than was offered.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <osd/attributes.h>
#include <osd/cdb.h>
#include <osd/sense.h>
#include <osdtarget/target.h>

#include "fuzz_scratch.h"

#define FZ_PART 0x10000ULL
#define FZ_OBJ 0x10000ULL
#define FZ_NOBJ 4
#define FZ_COLL 0x10010ULL
#define FZ_APP_PAGE 0x10003u
/* Small capacity: no input can make the store grow past it. */
#define FZ_CAPACITY (8ULL << 20)
#define FZ_IN_MAX 4096
/* Object-count quota of FZ_PART: inputs run one command each and only
 * FZ_PART survives the reset, so no input creates more than this. */
#define FZ_MAX_OBJECTS 64
/* Refused commands change nothing, so the baseline is restored after every
 * command that succeeded and, against partial changes on error paths, at
 * least every FZ_RESET_EVERY inputs. */
#define FZ_RESET_EVERY 16

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const uint8_t fz_token[] = "fuzz-channel-token";
static char fz_dir[256];
static osd_target *fz_tgt;
static int fz_dirty = 1;        /* the last input may have changed the store */
static unsigned fz_since_reset; /* inputs since the last baseline */

static void fz_cleanup(void)
{
	osd_target_close(fz_tgt);
	fz_tgt = NULL;
	if (fz_dir[0])
		fz_rm_tree(fz_dir);
}

/* A NOSEC capability allowing everything in every partition. */
static void fz_cap_all(struct osd_cdb *c)
{
	osd_capability_init(&c->cap, c->version, &c->obj, 0,
			    c->version == OSD_V1 ? OSD_PERM_ALL_V1 : OSD_PERM_ALL_V2, OSD_SEC_NOSEC);
	c->cap.desc_type = OSD_CAP_DESC_PAR;
	c->cap.object_type = OSD_OBJ_ROOT;
	c->cap.allowed_partition = 0;
	c->cap.allowed_object = 0;
	c->cap.permissions |= OSD_PERM_GLOBAL;
}

/* Execute an encoded CDB; returns the SCSI status or -1 if the target could not run. */
static int fz_exec(const uint8_t *cdb, size_t cdb_len, const uint8_t *out, size_t out_len,
		   size_t in_len, int with_token)
{
	/* Exactly in_len bytes, so ASan sees any write past the allocation. */
	uint8_t *in = malloc(in_len ? in_len : 1);
	struct iovec oi = { (void *)out, out_len }, ii = { in, in_len };
	struct osd_xfer x;
	struct osd_sense s;
	int rc;

	if (!in)
		abort();

	memset(&x, 0, sizeof(x));
	x.cdb = cdb;
	x.cdb_len = cdb_len;
	x.out_iov = out_len ? &oi : NULL;
	x.out_iovcnt = out_len ? 1 : 0;
	x.out_len = out_len;
	x.in_iov = in_len ? &ii : NULL;
	x.in_iovcnt = in_len ? 1 : 0;
	x.in_len = in_len;
	rc = osd_target_execute(fz_tgt, &x, with_token ? fz_token : NULL,
				with_token ? sizeof(fz_token) : 0);
	free(in);
	if (rc != 0)
		return -1;
	if (x.in_xferred > in_len || x.sense_len > sizeof(x.sense))
		abort();
	if (x.status == OSD_STATUS_CHECK_CONDITION) {
		if (osd_sense_decode(x.sense, x.sense_len, &s) != 0)
			abort();
	} else if (x.status != OSD_STATUS_GOOD) {
		abort();
	}
	return x.status;
}

/* Build and run one OSD-2 command of the baseline; it must succeed. */
static void fz_setup_cmd(enum osd_action a, uint64_t pid, uint64_t oid, uint64_t length,
			 const uint8_t *out, size_t out_len)
{
	struct osd_cdb c;
	uint8_t b[OSD_CDB_MAX_LEN];
	int n;

	osd_cdb_init(&c, OSD_V2, a);
	c.obj.partition = pid;
	c.obj.id = oid;
	c.length = length;
	fz_cap_all(&c);
	n = osd_cdb_encode(&c, b, sizeof(b));
	if (n < 0 || fz_exec(b, (size_t)n, out, out_len, 0, 1) != OSD_STATUS_GOOD) {
		fprintf(stderr, "fuzz_target_exec: baseline command %04x failed: %s\n", a,
			osd_target_error(fz_tgt));
		abort();
	}
}

/* Set one attribute in CDB mode (OSD-2). */
static void fz_setup_attr(uint64_t pid, uint64_t oid, uint32_t page, uint32_t num,
			  const void *val, uint16_t len)
{
	struct osd_cdb c;
	uint8_t b[OSD_CDB_MAX_LEN];
	int n;

	osd_cdb_init(&c, OSD_V2, OSD_ACT_SET_ATTRIBUTES);
	c.obj.partition = pid;
	c.obj.id = oid;
	c.attr_mode = OSD_ATTR_MODE_CDB;
	c.attr.one.page = page;
	c.attr.one.number = num;
	c.attr.one.length = len;
	memcpy(c.attr.one.value, val, len);
	fz_cap_all(&c);
	n = osd_cdb_encode(&c, b, sizeof(b));
	if (n < 0 || fz_exec(b, (size_t)n, NULL, 0, 0, 1) != OSD_STATUS_GOOD) {
		fprintf(stderr, "fuzz_target_exec: baseline SET ATTRIBUTES failed: %s\n",
			osd_target_error(fz_tgt));
		abort();
	}
}

/*
 * The state every input starts from: an empty store of FZ_CAPACITY, then
 * partition FZ_PART (object-count quota FZ_MAX_OBJECTS) with user objects
 * FZ_OBJ..FZ_OBJ+3 (the first holds "original" and an application
 * attribute) and the empty collection FZ_COLL.
 */
static void fz_baseline(void)
{
	static const uint8_t data[] = "original";
	/* The target's own object-count quota caps what one CREATE may add. */
	static const uint8_t max_objects[8] = { 0, 0, 0, 0, 0, 0, 0, FZ_MAX_OBJECTS };

	fz_setup_cmd(OSD_ACT_FORMAT_OSD, 0, 0, FZ_CAPACITY, NULL, 0);
	fz_setup_cmd(OSD_ACT_CREATE_PARTITION, FZ_PART, 0, 0, NULL, 0);
	for (uint64_t i = 0; i < FZ_NOBJ; i++)
		fz_setup_cmd(OSD_ACT_CREATE, FZ_PART, FZ_OBJ + i, 0, NULL, 0);
	fz_setup_cmd(OSD_ACT_WRITE, FZ_PART, FZ_OBJ, 8, data, 8);
	fz_setup_attr(FZ_PART, FZ_OBJ, FZ_APP_PAGE, 1, "value", 5);
	fz_setup_attr(FZ_PART, 0, OSD_APAGE_PARTITION_BASE + OSD_APAGE_QUOTAS,
		      OSD_ATTR_Q_PARTITION_OBJECT_COUNT, max_objects, sizeof(max_objects));
	fz_setup_cmd(OSD_ACT_CREATE_COLLECTION, FZ_PART, FZ_COLL, 0, NULL, 0);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct osd_target_options o = OSD_TARGET_OPTIONS_INIT;
	const char *tmp = getenv("TMPDIR");
	int rc;

	(void)argc;
	(void)argv;
	/* FORMAT runs before every input and fsyncs: prefer tmpfs unless TMPDIR says otherwise. */
	if (!tmp || !*tmp)
		tmp = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
	snprintf(fz_dir, sizeof(fz_dir), "%s/osdfz-target-XXXXXX", tmp);
	if (!mkdtemp(fz_dir)) {
		perror("fuzz_target_exec: mkdtemp");
		abort();
	}
	atexit(fz_cleanup);
	o.capacity = FZ_CAPACITY;
	rc = osd_target_open(&fz_tgt, fz_dir, &o);
	if (rc) {
		fprintf(stderr, "fuzz_target_exec: open %s: %d %s\n", fz_dir, rc,
			osd_target_error(fz_tgt));
		abort();
	}
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const size_t in_lens[4] = { FZ_IN_MAX, 512, 40, 0 };
	uint8_t cdb[OSD_CDB_V2_LEN];
	size_t want, cdb_len;
	uint8_t sel;
	int status;

	if (size < 1)
		return 0;
	sel = data[0];
	data++;
	size--;
	want = (sel & 1) ? OSD_CDB_V2_LEN : OSD_CDB_V1_LEN;
	cdb_len = size < want ? size : want;
	memcpy(cdb, data, cdb_len);
	if ((sel & 2) && cdb_len > 7) {
		cdb[0] = 0x7F;
		cdb[7] = (uint8_t)(cdb_len - 8);
	}
	if (fz_dirty || ++fz_since_reset >= FZ_RESET_EVERY) {
		fz_baseline();
		fz_since_reset = 0;
	}
	status = fz_exec(cdb, cdb_len, data + cdb_len, size - cdb_len, in_lens[(sel >> 2) & 3],
			 !(sel & 0x10));
	if (status < 0)
		abort();
	fz_dirty = status == OSD_STATUS_GOOD;
	return 0;
}
