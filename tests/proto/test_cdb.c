/* CDB codec: known-answer vectors for both versions, round trips, and every
 * class of malformed CDB the decoder must refuse. */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <osd/cdb.h>
#include <osd/offset.h>
#include "test_cdb_vectors.h"

#define P_ID 0x10000ULL
#define O_ID 0x10005ULL
#define C_ID 0x10010ULL

/* ---- struct builders ---------------------------------------------------- */

static void start(struct osd_cdb *c, enum osd_action a, uint64_t p, uint64_t o)
{
	osd_cdb_init(c, c->version, a);
	c->obj.partition = p;
	c->obj.id = o;
}

static void cap(struct osd_cdb *c, uint8_t type, uint16_t perms)
{
	c->cap.format = (uint8_t)c->version;
	c->cap.object_type = type;
	c->cap.permissions = perms;
	c->cap.allowed_partition = c->obj.partition;
	c->cap.allowed_object = c->obj.id;
	if (type == OSD_OBJ_ROOT || type == OSD_OBJ_PARTITION)
		c->cap.desc_type = OSD_CAP_DESC_PAR;
	else if (type == OSD_OBJ_COLLECTION && c->version == OSD_V2)
		c->cap.desc_type = OSD_CAP_DESC_COL;
	else
		c->cap.desc_type = OSD_CAP_DESC_USER;
}

static void f_format(struct osd_cdb *c)
{
	start(c, OSD_ACT_FORMAT_OSD, 0, 0);
	c->length = 1ULL << 30;
	cap(c, OSD_OBJ_ROOT, OSD_PERM_DEV_MGMT);
}

static void f_create_part(struct osd_cdb *c)
{
	start(c, OSD_ACT_CREATE_PARTITION, P_ID, 0);
	cap(c, OSD_OBJ_PARTITION, OSD_PERM_CREATE);
}

static void f_remove_part(struct osd_cdb *c)
{
	start(c, OSD_ACT_REMOVE_PARTITION, P_ID, 0);
	cap(c, OSD_OBJ_PARTITION, OSD_PERM_REMOVE);
}

static void f_remove_part_scope(struct osd_cdb *c)
{
	f_remove_part(c);
	c->cmd_options = 1;
}

static void f_create(struct osd_cdb *c)
{
	start(c, OSD_ACT_CREATE, P_ID, 0);
	c->num_objects = 5;
	c->timestamps_control = OSD_TIMESTAMPS_BYPASS;
	cap(c, OSD_OBJ_PARTITION, OSD_PERM_CREATE);
}

static void f_remove(struct osd_cdb *c)
{
	start(c, OSD_ACT_REMOVE, P_ID, O_ID);
	cap(c, OSD_OBJ_USER, OSD_PERM_REMOVE);
}

static void f_read(struct osd_cdb *c)
{
	start(c, OSD_ACT_READ, P_ID, O_ID);
	c->options = OSD_OPT_DPO;
	c->length = 65536;
	c->start = 4096;
	cap(c, OSD_OBJ_USER, OSD_PERM_READ);
}

static void f_read_iso(struct osd_cdb *c)
{
	f_read(c);
	c->options = OSD_OPT_DPO | 2; /* strict isolation */
}

static void f_read_secure(struct osd_cdb *c)
{
	f_read(c);
	c->options = 0;
	c->cap.key_version = 3;
	c->cap.icv_algorithm = OSD_ICV_ALG_HMAC_SHA1;
	c->cap.security_method = c->version == OSD_V1 ? OSD_SEC_CAPKEY : OSD_SEC_CMDRSP;
	for (int i = 0; i < OSD_ICV_MAX_LEN; i++)
		c->req_icv[i] = (uint8_t)(c->version == OSD_V1 && i >= OSD_ICV_V1_LEN ? 0 : 0xA0 + i);
	for (int i = 0; i < OSD_NONCE_LEN; i++)
		c->nonce[i] = (uint8_t)(0xC0 + i);
	if (c->version == OSD_V1)
		c->data_in_icv_offset = 4096;
	else
		c->data_out_icv_offset = 4096;
}

static void f_write(struct osd_cdb *c)
{
	start(c, OSD_ACT_WRITE, P_ID, O_ID);
	c->options = OSD_OPT_FUA;
	c->length = 512;
	c->attr.list.set_list_length = c->version == OSD_V1 ? 24 : 32;
	c->attr.list.set_list_offset = 512;
	cap(c, OSD_OBJ_USER, OSD_PERM_WRITE | OSD_PERM_SET_ATTR);
}

static void f_append(struct osd_cdb *c)
{
	start(c, OSD_ACT_APPEND, P_ID, O_ID);
	c->length = 100;
	cap(c, OSD_OBJ_USER, OSD_PERM_APPEND);
}

static void f_flush(struct osd_cdb *c)
{
	start(c, OSD_ACT_FLUSH, P_ID, O_ID);
	c->flush_scope = 1;
	cap(c, OSD_OBJ_USER, OSD_PERM_OBJ_MGMT);
}

static void f_flush_range(struct osd_cdb *c)
{
	f_flush(c);
	c->flush_scope = 2;
	c->length = 4096;
	c->start = 8192;
}

static void f_flush_osd(struct osd_cdb *c)
{
	start(c, OSD_ACT_FLUSH_OSD, 0, 0);
	c->flush_scope = 2;
	cap(c, OSD_OBJ_ROOT, OSD_PERM_OBJ_MGMT);
}

static void f_flush_part(struct osd_cdb *c)
{
	start(c, OSD_ACT_FLUSH_PARTITION, P_ID, 0);
	c->flush_scope = 1;
	cap(c, OSD_OBJ_PARTITION, OSD_PERM_OBJ_MGMT);
}

static void f_flush_coll(struct osd_cdb *c)
{
	start(c, OSD_ACT_FLUSH_COLLECTION, P_ID, C_ID);
	cap(c, OSD_OBJ_COLLECTION, OSD_PERM_OBJ_MGMT);
}

static void f_getattr_list(struct osd_cdb *c)
{
	start(c, OSD_ACT_GET_ATTRIBUTES, P_ID, O_ID);
	c->attr.list.get_list_length = c->version == OSD_V1 ? 12 : 16;
	c->attr.list.get_list_offset = 0;
	c->attr.list.get_alloc = 256;
	c->attr.list.retrieved_offset = 0;
	cap(c, OSD_OBJ_USER, OSD_PERM_GET_ATTR);
}

static void f_getattr_page(struct osd_cdb *c)
{
	start(c, OSD_ACT_GET_ATTRIBUTES, P_ID, O_ID);
	c->attr_mode = OSD_ATTR_MODE_PAGE;
	memset(&c->attr, 0, sizeof(c->attr));
	c->attr.page.get_page = 1;
	c->attr.page.get_alloc = 128;
	c->attr.page.retrieved_offset = 0;
	c->attr.page.set_offset = OSD_OFFSET_NONE;
	cap(c, OSD_OBJ_USER, OSD_PERM_GET_ATTR);
}

static void f_setattr_page(struct osd_cdb *c)
{
	start(c, OSD_ACT_SET_ATTRIBUTES, P_ID, O_ID);
	c->attr_mode = OSD_ATTR_MODE_PAGE;
	memset(&c->attr, 0, sizeof(c->attr));
	c->attr.page.retrieved_offset = OSD_OFFSET_NONE;
	c->attr.page.set_page = 0x10003;
	c->attr.page.set_number = 1;
	c->attr.page.set_length = 8;
	c->attr.page.set_offset = 256;
	cap(c, OSD_OBJ_USER, OSD_PERM_SET_ATTR);
}

static void f_setattr_cdb(struct osd_cdb *c)
{
	static const uint8_t len4096[8] = { 0, 0, 0, 0, 0, 0, 0x10, 0 };

	start(c, OSD_ACT_SET_ATTRIBUTES, P_ID, O_ID);
	c->attr_mode = OSD_ATTR_MODE_CDB;
	memset(&c->attr, 0, sizeof(c->attr));
	c->attr.one.page = 1;
	c->attr.one.number = 0x82;
	c->attr.one.length = 8;
	memcpy(c->attr.one.value, len4096, 8);
	cap(c, OSD_OBJ_USER, OSD_PERM_SET_ATTR);
}

static void f_create_write(struct osd_cdb *c)
{
	start(c, OSD_ACT_CREATE_AND_WRITE, P_ID, O_ID);
	c->length = 4096;
	cap(c, OSD_OBJ_USER, OSD_PERM_CREATE | OSD_PERM_WRITE);
}

static void f_create_coll(struct osd_cdb *c)
{
	start(c, OSD_ACT_CREATE_COLLECTION, P_ID, C_ID);
	cap(c, OSD_OBJ_PARTITION, OSD_PERM_CREATE);
	c->cap.allowed_object = 0;
}

static void f_remove_coll(struct osd_cdb *c)
{
	start(c, OSD_ACT_REMOVE_COLLECTION, P_ID, C_ID);
	c->cmd_options = 0x01; /* FCR */
	cap(c, OSD_OBJ_COLLECTION, OSD_PERM_REMOVE);
}

static void f_list(struct osd_cdb *c)
{
	start(c, OSD_ACT_LIST, P_ID, 0);
	c->length = 1024;
	c->start = 0x10000;
	c->list_id = 7;
	cap(c, OSD_OBJ_PARTITION, OSD_PERM_READ);
}

static void f_list_coll(struct osd_cdb *c)
{
	start(c, OSD_ACT_LIST_COLLECTION, P_ID, C_ID);
	c->length = 512;
	cap(c, OSD_OBJ_COLLECTION, OSD_PERM_READ);
}

static void f_set_key(struct osd_cdb *c)
{
	static const uint8_t id[7] = { KEYID7 }, seed[20] = { SEED20 };

	start(c, OSD_ACT_SET_KEY, P_ID, 0);
	c->cmd_options = OSD_KEY_WORKING;
	c->key_version = 5;
	memcpy(c->key_id, id, sizeof(id));
	memcpy(c->seed, seed, sizeof(seed));
	cap(c, OSD_OBJ_PARTITION, OSD_PERM_POL_SEC);
}

static void f_set_master_key(struct osd_cdb *c)
{
	static const uint8_t id[7] = { KEYID7 };

	start(c, OSD_ACT_SET_MASTER_KEY, 0, 0);
	c->cmd_options = 1;
	memcpy(c->key_id, id, sizeof(id));
	c->param_list_length = 64;
	c->alloc_length = 128;
	cap(c, OSD_OBJ_ROOT, OSD_PERM_POL_SEC);
}

static void f_perform_scsi(struct osd_cdb *c)
{
	start(c, OSD_ACT_PERFORM_SCSI_COMMAND, 0, 0);
}

static void f_perform_tmf(struct osd_cdb *c)
{
	start(c, OSD_ACT_PERFORM_TASK_MGMT, 0, 0);
}

static void f_punch(struct osd_cdb *c)
{
	start(c, OSD_ACT_PUNCH, P_ID, O_ID);
	c->length = 4096;
	c->start = 8192;
	cap(c, OSD_OBJ_USER, OSD_PERM_WRITE);
}

static void f_clear(struct osd_cdb *c)
{
	f_punch(c);
	c->action = OSD_ACT_CLEAR;
}

static void f_query(struct osd_cdb *c)
{
	start(c, OSD_ACT_QUERY, P_ID, C_ID);
	c->cmd_options = 0x80; /* IMMED_TR */
	c->start = 0x10011;    /* MATCHES COLLECTION_OBJECT_ID */
	c->cont_length = 48;
	cap(c, OSD_OBJ_COLLECTION, OSD_PERM_QUERY);
}

static void f_read_map(struct osd_cdb *c)
{
	start(c, OSD_ACT_READ_MAP, P_ID, O_ID);
	c->length = 4096;
	c->map_type = 2;
	cap(c, OSD_OBJ_USER, OSD_PERM_READ);
}

static void f_copy(struct osd_cdb *c)
{
	start(c, OSD_ACT_COPY_USER_OBJECTS, P_ID, O_ID);
	c->duplication_method = 0x81;
	c->cont_length = 64;
	cap(c, OSD_OBJ_PARTITION, OSD_PERM_CREATE);
	c->cap.allowed_object = 0;
}

static void f_tracking(struct osd_cdb *c)
{
	start(c, OSD_ACT_CREATE_USER_TRACKING_COLLECTION, P_ID, C_ID);
	c->start = 0x10011;
	cap(c, OSD_OBJ_PARTITION, OSD_PERM_CREATE);
	c->cap.allowed_object = 0;
}

static void f_get_member_attrs(struct osd_cdb *c)
{
	f_getattr_list(c);
	c->action = OSD_ACT_GET_MEMBER_ATTRIBUTES;
	c->obj.id = C_ID;
	cap(c, OSD_OBJ_COLLECTION, OSD_PERM_M_OBJECT | OSD_PERM_GET_ATTR);
}

static void f_write_sg(struct osd_cdb *c)
{
	f_write(c);
	c->cont_length = 64;
	c->attr.list.set_list_length = 0;
	c->attr.list.set_list_offset = OSD_OFFSET_NONE;
	c->cap.permissions = OSD_PERM_WRITE;
}

/* ---- vectors ------------------------------------------------------------ */

struct kat {
	const char *name;
	enum osd_version v;
	void (*fill)(struct osd_cdb *c);
	struct patch p[24];
};

/* Every CDB: opcode, ADDITIONAL CDB LENGTH, ICV offsets unused. */
static const struct patch base_v1[] = { P(0, 0x7F), P(7, 0xC0), P(192, FF4, FF4) };
static const struct patch base_v2[] = { P(0, 0x7F), P(7, 0xE4), P(228, FF4, FF4) };

static const struct kat kats[] = {
	/* ---------------- OSD-1: 200 bytes, LEN 36, SBA 44, LID 32 ---------------- */
	{ "v1 FORMAT OSD", OSD_V1, f_format, { P(8, 0x88, 0x01), P(11, 0x30),
	  P(36, 0, 0, 0, 0, 0x40, 0, 0, 0), NOLISTS, CAP1_ROOT(0x00, 0x80) } },
	{ "v1 CREATE PARTITION", OSD_V1, f_create_part, { P(8, 0x88, 0x0B), P(11, 0x30),
	  P(16, PID), NOLISTS, CAP1_PART(0x08, 0x00) } },
	{ "v1 REMOVE PARTITION", OSD_V1, f_remove_part, { P(8, 0x88, 0x0C), P(11, 0x30),
	  P(16, PID), NOLISTS, CAP1_PART(0x04, 0x00) } },
	{ "v1 CREATE", OSD_V1, f_create, { P(8, 0x88, 0x02), P(11, 0x30), P(12, 0x7F),
	  P(16, PID), P(36, 0x00, 0x05), NOLISTS, CAP1_PART(0x08, 0x00) } },
	{ "v1 REMOVE", OSD_V1, f_remove, { P(8, 0x88, 0x0A), P(11, 0x30), P(16, PID),
	  P(24, OID), NOLISTS, CAP1_USER(0x04, 0x00) } },
	{ "v1 READ", OSD_V1, f_read, { P(8, 0x88, 0x05), P(10, 0x10), P(11, 0x30),
	  P(16, PID), P(24, OID), P(36, 0, 0, 0, 0, 0, 0x01, 0, 0),
	  P(44, 0, 0, 0, 0, 0, 0, 0x10, 0), NOLISTS, CAP1_USER(0x80, 0x00) } },
	{ "v1 READ CAPKEY", OSD_V1, f_read_secure, { P(8, 0x88, 0x05), P(11, 0x30),
	  P(16, PID), P(24, OID), P(36, 0, 0, 0, 0, 0, 0x01, 0, 0),
	  P(44, 0, 0, 0, 0, 0, 0, 0x10, 0), NOLISTS, CAP1_USER(0x80, 0x00),
	  P(81, 0x31, 0x01), P(160, 0xA0, 0xA1, 0xA2, 0xA3, 0xA4, 0xA5, 0xA6, 0xA7, 0xA8, 0xA9,
	  0xAA, 0xAB, 0xAC, 0xAD, 0xAE, 0xAF, 0xB0, 0xB1, 0xB2, 0xB3),
	  P(180, 0xC0, 0xC1, 0xC2, 0xC3, 0xC4, 0xC5, 0xC6, 0xC7, 0xC8, 0xC9, 0xCA, 0xCB),
	  P(192, 0x00, 0x00, 0x00, 0x10) } },
	{ "v1 WRITE", OSD_V1, f_write, { P(8, 0x88, 0x06), P(10, 0x08), P(11, 0x30),
	  P(16, PID), P(24, OID), P(36, 0, 0, 0, 0, 0, 0, 0x02, 0x00),
	  P(56, FF4), P(64, FF4), P(68, 0, 0, 0, 24), P(72, 0, 0, 0, 0x02),
	  CAP1_USER(0x50, 0x00) } },
	{ "v1 APPEND", OSD_V1, f_append, { P(8, 0x88, 0x07), P(11, 0x30), P(16, PID),
	  P(24, OID), P(36, 0, 0, 0, 0, 0, 0, 0, 100), NOLISTS, CAP1_USER(0x01, 0x00) } },
	{ "v1 FLUSH", OSD_V1, f_flush, { P(8, 0x88, 0x08), P(10, 0x01), P(11, 0x30),
	  P(16, PID), P(24, OID), NOLISTS, CAP1_USER(0x02, 0x00) } },
	{ "v1 FLUSH OSD", OSD_V1, f_flush_osd, { P(8, 0x88, 0x1C), P(10, 0x02), P(11, 0x30),
	  NOLISTS, CAP1_ROOT(0x02, 0x00) } },
	{ "v1 FLUSH PARTITION", OSD_V1, f_flush_part, { P(8, 0x88, 0x1B), P(10, 0x01),
	  P(11, 0x30), P(16, PID), NOLISTS, CAP1_PART(0x02, 0x00) } },
	{ "v1 FLUSH COLLECTION", OSD_V1, f_flush_coll, { P(8, 0x88, 0x1A), P(11, 0x30),
	  P(16, PID), P(24, CID), NOLISTS, CAP1_COLL(0x02, 0x00) } },
	{ "v1 GET ATTRIBUTES list", OSD_V1, f_getattr_list, { P(8, 0x88, 0x0E), P(11, 0x30),
	  P(16, PID), P(24, OID), P(52, 0, 0, 0, 12, 0, 0, 0, 0, 0, 0, 0x01, 0x00, 0, 0, 0, 0),
	  P(72, FF4), CAP1_USER(0x20, 0x00) } },
	{ "v1 GET ATTRIBUTES page", OSD_V1, f_getattr_page, { P(8, 0x88, 0x0E), P(11, 0x20),
	  P(16, PID), P(24, OID), P(52, 0, 0, 0, 1, 0, 0, 0, 0x80, 0, 0, 0, 0), P(76, FF4),
	  CAP1_USER(0x20, 0x00) } },
	{ "v1 SET ATTRIBUTES page", OSD_V1, f_setattr_page, { P(8, 0x88, 0x0F), P(11, 0x20),
	  P(16, PID), P(24, OID), P(60, FF4), P(64, 0, 0x01, 0, 0x03, 0, 0, 0, 1, 0, 0, 0, 8),
	  P(76, 0, 0, 0, 0x01), CAP1_USER(0x10, 0x00) } },
	{ "v1 CREATE AND WRITE", OSD_V1, f_create_write, { P(8, 0x88, 0x12), P(11, 0x30),
	  P(16, PID), P(24, OID), P(36, 0, 0, 0, 0, 0, 0, 0x10, 0), NOLISTS,
	  CAP1_USER(0x48, 0x00) } },
	{ "v1 CREATE COLLECTION", OSD_V1, f_create_coll, { P(8, 0x88, 0x15), P(11, 0x30),
	  P(16, PID), P(24, CID), NOLISTS, CAP1_PART(0x08, 0x00) } },
	{ "v1 REMOVE COLLECTION", OSD_V1, f_remove_coll, { P(8, 0x88, 0x16), P(11, 0x31),
	  P(16, PID), P(24, CID), NOLISTS, CAP1_COLL(0x04, 0x00) } },
	{ "v1 LIST", OSD_V1, f_list, { P(8, 0x88, 0x03), P(11, 0x30), P(16, PID),
	  P(32, 0, 0, 0, 7), P(36, 0, 0, 0, 0, 0, 0, 0x04, 0), P(44, PID), NOLISTS,
	  CAP1_PART(0x80, 0x00) } },
	{ "v1 LIST COLLECTION", OSD_V1, f_list_coll, { P(8, 0x88, 0x17), P(11, 0x30),
	  P(16, PID), P(24, CID), P(36, 0, 0, 0, 0, 0, 0, 0x02, 0), NOLISTS,
	  CAP1_COLL(0x80, 0x00) } },
	{ "v1 SET KEY", OSD_V1, f_set_key, { P(8, 0x88, 0x18), P(11, 0x33), P(16, PID),
	  P(24, 0x05, KEYID7), P(32, SEED20), NOLISTS, CAP1_PART(0x00, 0x20) } },
	{ "v1 SET MASTER KEY", OSD_V1, f_set_master_key, { P(8, 0x88, 0x19), P(11, 0x31),
	  P(25, KEYID7), P(32, 0, 0, 0, 0x40, 0, 0, 0, 0x80), NOLISTS, CAP1_ROOT(0x00, 0x20) } },
	{ "v1 PERFORM SCSI COMMAND", OSD_V1, f_perform_scsi, { P(8, 0x8F, 0x7E), P(11, 0x30),
	  NOLISTS } },
	{ "v1 PERFORM TASK MANAGEMENT", OSD_V1, f_perform_tmf, { P(8, 0x8F, 0x7F), P(11, 0x30),
	  NOLISTS } },

	/* ------ OSD-2: 236 bytes, LEN 32, SBA 40, LID/CCL 48, 104-byte capability ------ */
	{ "v2 FORMAT OSD", OSD_V2, f_format, { P(8, 0x88, 0x81), P(11, 0x30),
	  P(32, 0, 0, 0, 0, 0x40, 0, 0, 0), NOLISTS, CAP2_ROOT(0x00, 0x80) } },
	{ "v2 CREATE PARTITION", OSD_V2, f_create_part, { P(8, 0x88, 0x8B), P(11, 0x30),
	  P(16, PID), NOLISTS, CAP2_PART(0x08, 0x00) } },
	{ "v2 REMOVE PARTITION scope", OSD_V2, f_remove_part_scope, { P(8, 0x88, 0x8C),
	  P(11, 0x31), P(16, PID), NOLISTS, CAP2_PART(0x04, 0x00) } },
	{ "v2 CREATE", OSD_V2, f_create, { P(8, 0x88, 0x82), P(11, 0x30), P(12, 0x7F),
	  P(16, PID), P(32, 0x00, 0x05), NOLISTS, CAP2_PART(0x08, 0x00) } },
	{ "v2 REMOVE", OSD_V2, f_remove, { P(8, 0x88, 0x8A), P(11, 0x30), P(16, PID),
	  P(24, OID), NOLISTS, CAP2_USER(0x04, 0x00) } },
	{ "v2 READ isolation", OSD_V2, f_read_iso, { P(8, 0x88, 0x85), P(10, 0x12), P(11, 0x30),
	  P(16, PID), P(24, OID), P(32, 0, 0, 0, 0, 0, 0x01, 0, 0),
	  P(40, 0, 0, 0, 0, 0, 0, 0x10, 0), NOLISTS, CAP2_USER(0x80, 0x00) } },
	{ "v2 READ CMDRSP", OSD_V2, f_read_secure, { P(8, 0x88, 0x85), P(11, 0x30),
	  P(16, PID), P(24, OID), P(32, 0, 0, 0, 0, 0, 0x01, 0, 0),
	  P(40, 0, 0, 0, 0, 0, 0, 0x10, 0), NOLISTS, CAP2_USER(0x80, 0x00),
	  P(81, 0x31, 0x02), P(184, 0xA0, 0xA1, 0xA2, 0xA3, 0xA4, 0xA5, 0xA6, 0xA7, 0xA8, 0xA9,
	  0xAA, 0xAB, 0xAC, 0xAD, 0xAE, 0xAF, 0xB0, 0xB1, 0xB2, 0xB3, 0xB4, 0xB5, 0xB6, 0xB7,
	  0xB8, 0xB9, 0xBA, 0xBB, 0xBC, 0xBD, 0xBE, 0xBF),
	  P(216, 0xC0, 0xC1, 0xC2, 0xC3, 0xC4, 0xC5, 0xC6, 0xC7, 0xC8, 0xC9, 0xCA, 0xCB),
	  P(232, 0xB0, 0x00, 0x02, 0x00) } },
	{ "v2 WRITE", OSD_V2, f_write, { P(8, 0x88, 0x86), P(10, 0x08), P(11, 0x30),
	  P(16, PID), P(24, OID), P(32, 0, 0, 0, 0, 0, 0, 0x02, 0x00),
	  P(56, FF4), P(64, FF4), P(68, 0, 0, 0, 32), P(72, 0xB0, 0, 0, 0x40),
	  CAP2_USER(0x50, 0x00) } },
	{ "v2 WRITE scatter/gather", OSD_V2, f_write_sg, { P(8, 0x88, 0x86), P(10, 0x08),
	  P(11, 0x30), P(16, PID), P(24, OID), P(32, 0, 0, 0, 0, 0, 0, 0x02, 0x00),
	  P(48, 0, 0, 0, 64), NOLISTS, CAP2_USER(0x40, 0x00) } },
	{ "v2 APPEND", OSD_V2, f_append, { P(8, 0x88, 0x87), P(11, 0x30), P(16, PID),
	  P(24, OID), P(32, 0, 0, 0, 0, 0, 0, 0, 100), NOLISTS, CAP2_USER(0x01, 0x00) } },
	{ "v2 FLUSH range", OSD_V2, f_flush_range, { P(8, 0x88, 0x88), P(10, 0x02), P(11, 0x30),
	  P(16, PID), P(24, OID), P(32, 0, 0, 0, 0, 0, 0, 0x10, 0),
	  P(40, 0, 0, 0, 0, 0, 0, 0x20, 0), NOLISTS, CAP2_USER(0x02, 0x00) } },
	{ "v2 FLUSH PARTITION", OSD_V2, f_flush_part, { P(8, 0x88, 0x9B), P(10, 0x01),
	  P(11, 0x30), P(16, PID), NOLISTS, CAP2_PART(0x02, 0x00) } },
	{ "v2 FLUSH COLLECTION", OSD_V2, f_flush_coll, { P(8, 0x88, 0x9A), P(11, 0x30),
	  P(16, PID), P(24, CID), NOLISTS, CAP2_COLL(0x02, 0x00) } },
	{ "v2 GET ATTRIBUTES list", OSD_V2, f_getattr_list, { P(8, 0x88, 0x8E), P(11, 0x30),
	  P(16, PID), P(24, OID), P(52, 0, 0, 0, 16, 0, 0, 0, 0, 0, 0, 0x01, 0x00, 0, 0, 0, 0),
	  P(72, FF4), CAP2_USER(0x20, 0x00) } },
	{ "v2 GET ATTRIBUTES page", OSD_V2, f_getattr_page, { P(8, 0x88, 0x8E), P(11, 0x20),
	  P(16, PID), P(24, OID), P(52, 0, 0, 0, 1, 0, 0, 0, 0x80, 0, 0, 0, 0), P(76, FF4),
	  CAP2_USER(0x20, 0x00) } },
	{ "v2 SET ATTRIBUTES CDB mode", OSD_V2, f_setattr_cdb, { P(8, 0x88, 0x8F), P(11, 0x10),
	  P(16, PID), P(24, OID), P(52, 0, 0, 0, 1, 0, 0, 0, 0x82), P(60, 0, 8),
	  P(62, 0, 0, 0, 0, 0, 0, 0x10, 0), CAP2_USER(0x10, 0x00) } },
	{ "v2 SET ATTRIBUTES page", OSD_V2, f_setattr_page, { P(8, 0x88, 0x8F), P(11, 0x20),
	  P(16, PID), P(24, OID), P(60, FF4), P(64, 0, 0x01, 0, 0x03, 0, 0, 0, 1, 0, 0, 0, 8),
	  P(76, 0xB0, 0, 0, 0x20), CAP2_USER(0x10, 0x00) } },
	{ "v2 CREATE AND WRITE", OSD_V2, f_create_write, { P(8, 0x88, 0x92), P(11, 0x30),
	  P(16, PID), P(24, OID), P(32, 0, 0, 0, 0, 0, 0, 0x10, 0), NOLISTS,
	  CAP2_USER(0x48, 0x00) } },
	{ "v2 REMOVE COLLECTION", OSD_V2, f_remove_coll, { P(8, 0x88, 0x96), P(11, 0x31),
	  P(16, PID), P(24, CID), NOLISTS, CAP2_COLL(0x04, 0x00) } },
	{ "v2 LIST", OSD_V2, f_list, { P(8, 0x88, 0x83), P(11, 0x30), P(16, PID),
	  P(32, 0, 0, 0, 0, 0, 0, 0x04, 0), P(40, PID), P(48, 0, 0, 0, 7), NOLISTS,
	  CAP2_PART(0x80, 0x00) } },
	{ "v2 LIST COLLECTION", OSD_V2, f_list_coll, { P(8, 0x88, 0x97), P(11, 0x30),
	  P(16, PID), P(24, CID), P(32, 0, 0, 0, 0, 0, 0, 0x02, 0), NOLISTS,
	  CAP2_COLL(0x80, 0x00) } },
	{ "v2 SET KEY", OSD_V2, f_set_key, { P(8, 0x88, 0x98), P(11, 0x33), P(16, PID),
	  P(24, 0x05, KEYID7), P(32, SEED20), NOLISTS, CAP2_PART(0x00, 0x20) } },
	{ "v2 SET MASTER KEY", OSD_V2, f_set_master_key, { P(8, 0x88, 0x99), P(11, 0x31),
	  P(25, KEYID7), P(32, 0, 0, 0, 0x40, 0, 0, 0, 0x80), NOLISTS, CAP2_ROOT(0x00, 0x20) } },
	{ "v2 PUNCH", OSD_V2, f_punch, { P(8, 0x88, 0x84), P(11, 0x30), P(16, PID), P(24, OID),
	  P(32, 0, 0, 0, 0, 0, 0, 0x10, 0), P(40, 0, 0, 0, 0, 0, 0, 0x20, 0), NOLISTS,
	  CAP2_USER(0x40, 0x00) } },
	{ "v2 CLEAR", OSD_V2, f_clear, { P(8, 0x88, 0x89), P(11, 0x30), P(16, PID), P(24, OID),
	  P(32, 0, 0, 0, 0, 0, 0, 0x10, 0), P(40, 0, 0, 0, 0, 0, 0, 0x20, 0), NOLISTS,
	  CAP2_USER(0x40, 0x00) } },
	{ "v2 QUERY", OSD_V2, f_query, { P(8, 0x88, 0xA0), P(11, 0xB0), P(16, PID), P(24, CID),
	  P(40, 0, 0, 0, 0, 0, 0x01, 0x00, 0x11), P(48, 0, 0, 0, 48), NOLISTS,
	  CAP2_COLL(0x00, 0x08) } },
	{ "v2 READ MAP", OSD_V2, f_read_map, { P(8, 0x88, 0xB1), P(11, 0x30), P(16, PID),
	  P(24, OID), P(32, 0, 0, 0, 0, 0, 0, 0x10, 0), P(48, 0x00, 0x02), NOLISTS,
	  CAP2_USER(0x80, 0x00) } },
	{ "v2 COPY USER OBJECTS", OSD_V2, f_copy, { P(8, 0x88, 0x93), P(11, 0x30), P(14, 0x81),
	  P(16, PID), P(24, OID), P(48, 0, 0, 0, 64), NOLISTS, CAP2_PART(0x08, 0x00) } },
	{ "v2 CREATE USER TRACKING COLLECTION", OSD_V2, f_tracking, { P(8, 0x88, 0x94),
	  P(11, 0x30), P(16, PID), P(24, CID), P(40, 0, 0, 0, 0, 0, 0x01, 0x00, 0x11), NOLISTS,
	  CAP2_PART(0x08, 0x00) } },
	{ "v2 GET MEMBER ATTRIBUTES", OSD_V2, f_get_member_attrs, { P(8, 0x88, 0xA2),
	  P(11, 0x30), P(16, PID), P(24, CID),
	  P(52, 0, 0, 0, 16, 0, 0, 0, 0, 0, 0, 0x01, 0x00, 0, 0, 0, 0), P(72, FF4),
	  CAP2_COLL(0x20, 0x10) } },
	{ "v2 PERFORM TASK MANAGEMENT", OSD_V2, f_perform_tmf, { P(8, 0x8F, 0x7D), P(11, 0x30),
	  NOLISTS } },
};

#define NUM_KATS (sizeof(kats) / sizeof(kats[0]))

static void apply(uint8_t *buf, const struct patch *p, size_t n)
{
	for (size_t i = 0; i < n && p[i].n; i++)
		memcpy(buf + p[i].off, p[i].b, p[i].n);
}

static size_t expected_bytes(const struct kat *k, uint8_t *buf)
{
	size_t len = k->v == OSD_V1 ? 200 : 236;

	memset(buf, 0, OSD_CDB_MAX_LEN);
	if (k->v == OSD_V1)
		apply(buf, base_v1, 3);
	else
		apply(buf, base_v2, 3);
	apply(buf, k->p, sizeof(k->p) / sizeof(k->p[0]));
	return len;
}

static void build(const struct kat *k, struct osd_cdb *c)
{
	memset(c, 0, sizeof(*c));
	c->version = k->v;
	k->fill(c);
}

START_TEST(test_kat_encode)
{
	const struct kat *k = &kats[_i];
	uint8_t want[OSD_CDB_MAX_LEN], got[OSD_CDB_MAX_LEN];
	struct osd_cdb c;
	size_t len = expected_bytes(k, want);
	int rc;

	build(k, &c);
	rc = osd_cdb_encode(&c, got, sizeof(got));
	ck_assert_msg(rc == (int)len, "%s: encode returned %d", k->name, rc);
	for (size_t i = 0; i < len; i++)
		ck_assert_msg(got[i] == want[i], "%s: byte %zu is %02x, expected %02x",
			      k->name, i, got[i], want[i]);
}
END_TEST

START_TEST(test_kat_decode)
{
	const struct kat *k = &kats[_i];
	uint8_t want[OSD_CDB_MAX_LEN];
	struct osd_cdb c, d;
	uint16_t field = 0xFFFF;
	size_t len = expected_bytes(k, want);
	int rc;

	build(k, &c);
	rc = osd_cdb_decode(want, len, &d, &field);
	ck_assert_msg(rc == 0, "%s: decode returned %d at byte %u", k->name, rc, field);
	ck_assert_int_eq(d.version, k->v);
	ck_assert_int_eq(d.action, c.action);
	ck_assert_uint_eq(d.obj.partition, c.obj.partition);
	ck_assert_uint_eq(d.obj.id, c.obj.id);
	ck_assert_uint_eq(d.length, c.length);
	ck_assert_uint_eq(d.start, c.start);
	ck_assert_int_eq(memcmp(&d.cap, &c.cap, sizeof(c.cap)), 0);
	ck_assert_msg(memcmp(&d, &c, sizeof(c)) == 0, "%s: decoded fields differ", k->name);
}
END_TEST

/* Both versions get at least 15 distinct commands. */
START_TEST(test_kat_coverage)
{
	enum osd_action seen[2][64];
	size_t n[2] = { 0, 0 };

	for (size_t i = 0; i < NUM_KATS; i++) {
		struct osd_cdb c;
		int v = kats[i].v == OSD_V1 ? 0 : 1, dup = 0;

		build(&kats[i], &c);
		for (size_t j = 0; j < n[v]; j++)
			dup |= seen[v][j] == c.action;
		if (!dup)
			seen[v][n[v]++] = c.action;
	}
	ck_assert_uint_ge(n[0], 15);
	ck_assert_uint_ge(n[1], 15);
}
END_TEST

/* ---- round trips over every action ------------------------------------- */

static const enum osd_action all_actions[] = {
	OSD_ACT_OBJECT_STRUCTURE_CHECK, OSD_ACT_FORMAT_OSD, OSD_ACT_CREATE, OSD_ACT_LIST,
	OSD_ACT_PUNCH, OSD_ACT_READ, OSD_ACT_WRITE, OSD_ACT_APPEND, OSD_ACT_FLUSH,
	OSD_ACT_CLEAR, OSD_ACT_REMOVE, OSD_ACT_CREATE_PARTITION, OSD_ACT_REMOVE_PARTITION,
	OSD_ACT_GET_ATTRIBUTES, OSD_ACT_SET_ATTRIBUTES, OSD_ACT_CREATE_AND_WRITE,
	OSD_ACT_COPY_USER_OBJECTS, OSD_ACT_CREATE_USER_TRACKING_COLLECTION,
	OSD_ACT_CREATE_COLLECTION, OSD_ACT_REMOVE_COLLECTION, OSD_ACT_LIST_COLLECTION,
	OSD_ACT_SET_KEY, OSD_ACT_SET_MASTER_KEY, OSD_ACT_FLUSH_COLLECTION,
	OSD_ACT_FLUSH_PARTITION, OSD_ACT_FLUSH_OSD, OSD_ACT_QUERY,
	OSD_ACT_REMOVE_MEMBER_OBJECTS, OSD_ACT_GET_MEMBER_ATTRIBUTES,
	OSD_ACT_SET_MEMBER_ATTRIBUTES, OSD_ACT_CREATE_CLONE, OSD_ACT_CREATE_SNAPSHOT,
	OSD_ACT_DETACH_CLONE, OSD_ACT_REFRESH_SNAPSHOT_OR_CLONE,
	OSD_ACT_RESTORE_PARTITION_FROM_SNAPSHOT, OSD_ACT_READ_MAP,
	OSD_ACT_READ_MAPS_AND_COMPARE, OSD_ACT_PERFORM_SCSI_COMMAND, OSD_ACT_PERFORM_TASK_MGMT,
};

#define NUM_ACTIONS (sizeof(all_actions) / sizeof(all_actions[0]))

START_TEST(test_every_action_round_trip)
{
	for (int v = OSD_V1; v <= OSD_V2; v++) {
		for (size_t i = 0; i < NUM_ACTIONS; i++) {
			struct osd_cdb c, d;
			uint8_t buf[OSD_CDB_MAX_LEN];
			int in_version = osd_action_code((enum osd_version)v, all_actions[i]) >= 0;
			int rc;

			osd_cdb_init(&c, (enum osd_version)v, all_actions[i]);
			c.obj.partition = P_ID;
			if (all_actions[i] == OSD_ACT_SET_KEY)
				c.cmd_options = OSD_KEY_PARTITION;
			rc = osd_cdb_encode(&c, buf, sizeof(buf));
			if (!in_version) {
				ck_assert_int_eq(rc, -ENOTSUP);
				continue;
			}
			ck_assert_int_eq(rc, v == OSD_V1 ? 200 : 236);
			ck_assert_int_eq(osd_cdb_decode(buf, (size_t)rc, &d, NULL), 0);
			ck_assert_msg(memcmp(&c, &d, sizeof(c)) == 0, "v%d %s", v,
				      osd_action_name(all_actions[i]));
		}
	}
}
END_TEST

/* The code lookup is a table: every 16-bit code must map exactly as the
 * rule v2 = action, v1 = action & ~0x80 (PERFORM: action + 2) says. */
START_TEST(test_action_from_every_code)
{
	unsigned hits = 0;

	for (unsigned code = 0; code <= 0xFFFF; code++) {
		enum osd_action want_a = 0, got_a = 0;
		enum osd_version want_v = 0, got_v = 0;
		int want = -EBADMSG;

		for (size_t i = 0; i < NUM_ACTIONS && want < 0; i++) {
			int c1 = osd_action_code(OSD_V1, all_actions[i]);

			if ((unsigned)all_actions[i] == code) {
				want = 0;
				want_a = all_actions[i];
				want_v = OSD_V2;
			} else if (c1 >= 0 && (unsigned)c1 == code) {
				want = 0;
				want_a = all_actions[i];
				want_v = OSD_V1;
			}
		}
		ck_assert_int_eq(osd_action_from_code((uint16_t)code, &got_a, &got_v), want);
		if (want == 0) {
			ck_assert_msg(got_a == want_a && got_v == want_v, "code 0x%04x", code);
			hits++;
		}
	}
	/* 39 v2 actions, 23 of them in OSD-1. */
	ck_assert_uint_eq(hits, 39 + 23);
}
END_TEST

START_TEST(test_action_code_vectors)
{
	enum osd_action a;
	enum osd_version v;

	ck_assert_int_eq(osd_action_from_code(0x880E, &a, &v), 0);
	ck_assert_int_eq(a, OSD_ACT_GET_ATTRIBUTES);
	ck_assert_int_eq(v, OSD_V1);
	ck_assert_int_eq(osd_action_from_code(0x88B2, &a, &v), 0);
	ck_assert_int_eq(a, OSD_ACT_READ_MAPS_AND_COMPARE);
	ck_assert_int_eq(v, OSD_V2);
	ck_assert_int_eq(osd_action_from_code(0x8F7E, &a, &v), 0);
	ck_assert_int_eq(a, OSD_ACT_PERFORM_SCSI_COMMAND);
	ck_assert_int_eq(v, OSD_V1);
	ck_assert_int_eq(osd_action_from_code(0x8F7D, &a, &v), 0);
	ck_assert_int_eq(a, OSD_ACT_PERFORM_TASK_MGMT);
	ck_assert_int_eq(v, OSD_V2);
	/* OBJECT STRUCTURE CHECK is v2 only; 0x888D and 0x88B3 are unassigned. */
	ck_assert_int_eq(osd_action_from_code(0x8800, &a, &v), -EBADMSG);
	ck_assert_int_eq(osd_action_from_code(0x888D, &a, &v), -EBADMSG);
	ck_assert_int_eq(osd_action_from_code(0x88B3, &a, &v), -EBADMSG);
	ck_assert_int_eq(osd_action_from_code(0x8F7B, &a, &v), -EBADMSG);
	ck_assert_int_eq(osd_action_from_code(0x8F80, &a, &v), -EBADMSG);
	ck_assert_int_eq(osd_action_code(OSD_V2, (enum osd_action)0x888D), -ENOTSUP);
	ck_assert_int_eq(osd_action_code(OSD_V2, (enum osd_action)0x8F7E), -ENOTSUP);
	ck_assert_str_eq(osd_action_name((enum osd_action)0x888D), "UNKNOWN");
	ck_assert_str_eq(osd_action_name(OSD_ACT_PERFORM_TASK_MGMT),
			 "PERFORM TASK MANAGEMENT FUNCTION");
}
END_TEST

START_TEST(test_attr_mode_none_is_empty_list_mode)
{
	struct osd_cdb c, d;
	uint8_t buf[OSD_CDB_MAX_LEN];

	osd_cdb_init(&c, OSD_V2, OSD_ACT_REMOVE);
	c.attr_mode = OSD_ATTR_MODE_NONE;
	ck_assert_int_eq(osd_cdb_encode(&c, buf, sizeof(buf)), 236);
	ck_assert_uint_eq(buf[11], 0x30);
	ck_assert_uint_eq(buf[56], 0xFF);
	ck_assert_int_eq(osd_cdb_decode(buf, 236, &d, NULL), 0);
	ck_assert_int_eq(d.attr_mode, OSD_ATTR_MODE_LIST);
	ck_assert_uint_eq(d.attr.list.get_list_offset, OSD_OFFSET_NONE);
}
END_TEST

START_TEST(test_helpers)
{
	ck_assert_uint_eq(osd_cdb_cap_offset(OSD_V1), 80);
	ck_assert_uint_eq(osd_cdb_cap_offset(OSD_V2), 80);
	ck_assert_uint_eq(osd_cdb_icv_offset(OSD_V1), 160);
	ck_assert_uint_eq(osd_cdb_icv_offset(OSD_V2), 184);
	ck_assert_uint_eq(osd_cdb_icv_len(OSD_V1), 20);
	ck_assert_uint_eq(osd_cdb_icv_len(OSD_V2), 32);
}
END_TEST

/* ---- encoder errors ----------------------------------------------------- */

START_TEST(test_encode_errors)
{
	struct osd_cdb c;
	uint8_t buf[OSD_CDB_MAX_LEN];

	osd_cdb_init(&c, OSD_V1, OSD_ACT_READ);
	ck_assert_int_eq(osd_cdb_encode(&c, buf, 199), -ENOBUFS);
	osd_cdb_init(&c, OSD_V2, OSD_ACT_READ);
	ck_assert_int_eq(osd_cdb_encode(&c, buf, 235), -ENOBUFS);
	/* v2-only action in v1 */
	osd_cdb_init(&c, OSD_V1, OSD_ACT_PUNCH);
	ck_assert_int_eq(osd_cdb_encode(&c, buf, sizeof(buf)), -ENOTSUP);
	/* CDB mode and continuation do not exist in v1 */
	osd_cdb_init(&c, OSD_V1, OSD_ACT_SET_ATTRIBUTES);
	c.attr_mode = OSD_ATTR_MODE_CDB;
	ck_assert_int_eq(osd_cdb_encode(&c, buf, sizeof(buf)), -ENOTSUP);
	osd_cdb_init(&c, OSD_V1, OSD_ACT_READ);
	c.cont_length = 48;
	ck_assert_int_eq(osd_cdb_encode(&c, buf, sizeof(buf)), -ENOTSUP);
	/* v2 LIST has no continuation slot (48 is the LIST IDENTIFIER) */
	osd_cdb_init(&c, OSD_V2, OSD_ACT_LIST);
	c.cont_length = 48;
	ck_assert_int_eq(osd_cdb_encode(&c, buf, sizeof(buf)), -EINVAL);
	/* offsets that are not exactly encodable */
	osd_cdb_init(&c, OSD_V1, OSD_ACT_GET_ATTRIBUTES);
	c.attr.list.retrieved_offset = 100;
	ck_assert_int_eq(osd_cdb_encode(&c, buf, sizeof(buf)), -EINVAL);
	osd_cdb_init(&c, OSD_V2, OSD_ACT_GET_ATTRIBUTES);
	c.attr.list.retrieved_offset = 100;
	ck_assert_int_eq(osd_cdb_encode(&c, buf, sizeof(buf)), -EINVAL);
	c.attr.list.retrieved_offset = 104;
	ck_assert_int_eq(osd_cdb_encode(&c, buf, sizeof(buf)), 236);
	osd_cdb_init(&c, OSD_V2, OSD_ACT_READ);
	c.data_out_icv_offset = 9;
	ck_assert_int_eq(osd_cdb_encode(&c, buf, sizeof(buf)), -EINVAL);
	/* CDB-mode value too long, flush scope out of range, isolation in v1 */
	osd_cdb_init(&c, OSD_V2, OSD_ACT_SET_ATTRIBUTES);
	c.attr_mode = OSD_ATTR_MODE_CDB;
	c.attr.one.length = 19;
	ck_assert_int_eq(osd_cdb_encode(&c, buf, sizeof(buf)), -EINVAL);
	osd_cdb_init(&c, OSD_V1, OSD_ACT_FLUSH);
	c.flush_scope = 2;
	ck_assert_int_eq(osd_cdb_encode(&c, buf, sizeof(buf)), -EINVAL);
	osd_cdb_init(&c, OSD_V1, OSD_ACT_READ);
	c.options = 0x02;
	ck_assert_int_eq(osd_cdb_encode(&c, buf, sizeof(buf)), -EINVAL);
	osd_cdb_init(&c, OSD_V2, OSD_ACT_READ);
	c.timestamps_control = 0x10;
	ck_assert_int_eq(osd_cdb_encode(&c, buf, sizeof(buf)), -EINVAL);
	osd_cdb_init(&c, OSD_V2, OSD_ACT_READ);
	c.cmd_options = 0x30; /* CDBFMT bits belong to attr_mode */
	ck_assert_int_eq(osd_cdb_encode(&c, buf, sizeof(buf)), -EINVAL);
	osd_cdb_init(&c, OSD_V2, OSD_ACT_SET_KEY); /* KEY TO SET 00b */
	ck_assert_int_eq(osd_cdb_encode(&c, buf, sizeof(buf)), -EINVAL);
	osd_cdb_init(&c, OSD_V2, OSD_ACT_READ);
	c.cap.key_version = 16;
	ck_assert_int_eq(osd_cdb_encode(&c, buf, sizeof(buf)), -EINVAL);
	osd_cdb_init(&c, (enum osd_version)3, OSD_ACT_READ);
	ck_assert_int_eq(osd_cdb_encode(&c, buf, sizeof(buf)), -EINVAL);
}
END_TEST

/* ---- decoder errors ----------------------------------------------------- */

static size_t good_cdb(enum osd_version v, enum osd_action a, uint8_t *buf)
{
	struct osd_cdb c;

	osd_cdb_init(&c, v, a);
	c.obj.partition = P_ID;
	c.obj.id = O_ID;
	if (a == OSD_ACT_SET_KEY)
		c.cmd_options = OSD_KEY_ROOT;
	ck_assert_int_eq(osd_cdb_encode(&c, buf, OSD_CDB_MAX_LEN), v == OSD_V1 ? 200 : 236);
	return v == OSD_V1 ? 200 : 236;
}

static void expect_bad(const uint8_t *buf, size_t len, int err, uint16_t field)
{
	struct osd_cdb d;
	uint16_t got = 0xFFFF;

	ck_assert_int_eq(osd_cdb_decode(buf, len, &d, &got), err);
	ck_assert_uint_eq(got, field);
}

START_TEST(test_decode_header_errors)
{
	uint8_t buf[OSD_CDB_MAX_LEN + 8];
	size_t len;

	memset(buf, 0, sizeof(buf));
	expect_bad(buf, 0, -EBADMSG, 0);
	len = good_cdb(OSD_V2, OSD_ACT_READ, buf);
	buf[0] = 0x88; /* not the variable-length opcode */
	expect_bad(buf, len, -EBADMSG, 0);
	len = good_cdb(OSD_V2, OSD_ACT_READ, buf);
	expect_bad(buf, 5, -EBADMSG, 7);            /* truncated */
	expect_bad(buf, len - 1, -EBADMSG, 7);      /* truncated */
	expect_bad(buf, len + 4, -EBADMSG, 7);      /* oversized */
	expect_bad(buf, 200, -EBADMSG, 7);          /* 228 in a 200-byte buffer */
	buf[7] = 0xC0;                              /* v1 length byte in 236 bytes */
	expect_bad(buf, len, -EBADMSG, 7);
	len = good_cdb(OSD_V1, OSD_ACT_READ, buf);
	buf[7] = 228;                               /* K's v1 bug */
	expect_bad(buf, len, -EBADMSG, 7);
	len = good_cdb(OSD_V1, OSD_ACT_READ, buf);
	buf[1] = 0x04;                              /* CONTROL: NACA */
	expect_bad(buf, len, -EBADMSG, 1);
	len = good_cdb(OSD_V1, OSD_ACT_READ, buf);
	buf[4] = 1; /* reserved */
	expect_bad(buf, len, -EBADMSG, 4);
}
END_TEST

START_TEST(test_decode_action_errors)
{
	uint8_t buf[OSD_CDB_MAX_LEN];
	size_t len;

	/* a v2-only action (PUNCH 8884h) in a v1 CDB */
	len = good_cdb(OSD_V1, OSD_ACT_READ, buf);
	buf[8] = 0x88;
	buf[9] = 0x84;
	expect_bad(buf, len, -EBADMSG, 8);
	/* a v1 code in a v2 CDB */
	len = good_cdb(OSD_V2, OSD_ACT_READ, buf);
	buf[9] = 0x05;
	expect_bad(buf, len, -EBADMSG, 8);
	/* a code in the OSD range nobody defines (O's CAS 888Dh): unsupported */
	buf[9] = 0x8D;
	expect_bad(buf, len, -ENOTSUP, 8);
	/* the v1 twin of a v2-only code: unknown in v1 */
	len = good_cdb(OSD_V1, OSD_ACT_READ, buf);
	buf[9] = 0x04;
	expect_bad(buf, len, -ENOTSUP, 8);
	/* outside the OSD range altogether */
	buf[8] = 0x00;
	buf[9] = 0x01;
	expect_bad(buf, len, -EBADMSG, 8);
}
END_TEST

START_TEST(test_decode_field_errors)
{
	uint8_t buf[OSD_CDB_MAX_LEN];
	size_t len;

	len = good_cdb(OSD_V2, OSD_ACT_READ, buf);
	buf[11] = 0x00; /* CDBFMT 00b is reserved */
	expect_bad(buf, len, -EBADMSG, 11);
	len = good_cdb(OSD_V1, OSD_ACT_SET_ATTRIBUTES, buf);
	buf[11] = 0x10; /* CDB mode is OSD-2 only */
	expect_bad(buf, len, -EBADMSG, 11);
	len = good_cdb(OSD_V1, OSD_ACT_READ, buf);
	buf[10] = 0x02; /* isolation bits are reserved in v1 */
	expect_bad(buf, len, -EBADMSG, 10);
	len = good_cdb(OSD_V2, OSD_ACT_READ, buf);
	buf[10] = 0x03; /* isolation 3 is reserved */
	expect_bad(buf, len, -EBADMSG, 10);
	len = good_cdb(OSD_V2, OSD_ACT_FLUSH, buf);
	buf[10] = 0x03; /* flush scope 3 */
	expect_bad(buf, len, -EBADMSG, 10);
	len = good_cdb(OSD_V1, OSD_ACT_FLUSH, buf);
	buf[11] = 0x31; /* K's flush scope in byte 11 */
	expect_bad(buf, len, -EBADMSG, 11);
	len = good_cdb(OSD_V2, OSD_ACT_READ, buf);
	buf[12] = 0x01; /* timestamps control */
	expect_bad(buf, len, -EBADMSG, 12);
	len = good_cdb(OSD_V2, OSD_ACT_READ, buf);
	buf[14] = 0x81; /* duplication method on a READ */
	expect_bad(buf, len, -EBADMSG, 14);
	len = good_cdb(OSD_V2, OSD_ACT_GET_ATTRIBUTES, buf);
	buf[64] = 0x80; /* retrieved offset exponent -8: not allowed in v2 */
	buf[65] = buf[66] = buf[67] = 0;
	expect_bad(buf, len, -EBADMSG, 64);
	len = good_cdb(OSD_V2, OSD_ACT_READ, buf);
	buf[228] = 0x90; /* data-in ICV offset exponent -7 */
	expect_bad(buf, len, -EBADMSG, 228);
	len = good_cdb(OSD_V2, OSD_ACT_SET_ATTRIBUTES, buf);
	buf[11] = 0x10;
	buf[60] = 0;
	buf[61] = 19; /* CDB-mode length > 18 */
	expect_bad(buf, len, -EBADMSG, 60);
	len = good_cdb(OSD_V2, OSD_ACT_READ, buf);
	buf[80] = 0x01; /* OSD-1 capability format in an OSD-2 CDB */
	expect_bad(buf, len, -EBADMSG, 80);
	len = good_cdb(OSD_V1, OSD_ACT_READ, buf);
	buf[80] = 0x02;
	expect_bad(buf, len, -EBADMSG, 80);
	len = good_cdb(OSD_V2, OSD_ACT_SET_KEY, buf);
	buf[11] = 0x30; /* KEY TO SET 00b */
	expect_bad(buf, len, -EBADMSG, 11);
}
END_TEST

static Suite *cdb_suite(void)
{
	Suite *s = suite_create("cdb");
	TCase *tc = tcase_create("vectors");

	tcase_add_loop_test(tc, test_kat_encode, 0, (int)NUM_KATS);
	tcase_add_loop_test(tc, test_kat_decode, 0, (int)NUM_KATS);
	tcase_add_test(tc, test_kat_coverage);
	suite_add_tcase(s, tc);
	tc = tcase_create("round_trip");
	tcase_add_test(tc, test_every_action_round_trip);
	tcase_add_test(tc, test_action_from_every_code);
	tcase_add_test(tc, test_action_code_vectors);
	tcase_add_test(tc, test_attr_mode_none_is_empty_list_mode);
	tcase_add_test(tc, test_helpers);
	suite_add_tcase(s, tc);
	tc = tcase_create("errors");
	tcase_add_test(tc, test_encode_errors);
	tcase_add_test(tc, test_decode_header_errors);
	tcase_add_test(tc, test_decode_action_errors);
	tcase_add_test(tc, test_decode_field_errors);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(cdb_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
