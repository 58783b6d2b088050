/* Sense data: hand-built sense buffers -> decoded fields, errno and message;
 * target-side encoding; malformed sense. */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <osd/sense.h>

/* ILLEGAL REQUEST / INVALID FIELD IN CDB + 06h naming (0x10000, 0x10005),
 * no field pointer: what a target sends for any bad field of the command on
 * that object, so it does not say the object is missing. */
static const uint8_t bad_field_obj[] = {
	0x72, 0x05, 0x24, 0x00, 0x00, 0x00, 0x00, 0x20,
	0x06, 0x1E, 0, 0, 0, 0, 0, 0,
	0xB0, 0x10, 0x30, 0x30,                         /* not initiated */
	0x00, 0x00, 0x00, 0x00,                         /* completed */
	0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, /* partition */
	0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x05, /* object */
};

START_TEST(test_field_without_pointer)
{
	struct osd_sense s;
	char msg[160];
	const char *want = "ILLEGAL REQUEST: INVALID FIELD IN CDB: "
			   "object 0x10005 in partition 0x10000";

	ck_assert_int_eq(osd_sense_decode(bad_field_obj, sizeof(bad_field_obj), &s), 0);
	ck_assert_uint_eq(s.response_code, 0x72);
	ck_assert_uint_eq(s.key, OSD_SK_ILLEGAL_REQUEST);
	ck_assert_uint_eq(s.asc, OSD_ASC_INVALID_FIELD_IN_CDB);
	ck_assert(s.has_object);
	ck_assert(!s.has_field);
	ck_assert_uint_eq(s.not_initiated, OSD_CFUNC_VALIDATION | OSD_CFUNC_CMD_CAP_V |
			  OSD_CFUNC_COMMAND | OSD_CFUNC_IMP_ST_ATT | OSD_CFUNC_SA_CAP_V |
			  OSD_CFUNC_SET_ATT | OSD_CFUNC_GA_CAP_V | OSD_CFUNC_GET_ATT);
	ck_assert_uint_eq(s.completed, 0);
	ck_assert_uint_eq(s.object.partition, 0x10000);
	ck_assert_uint_eq(s.object.id, 0x10005);
	ck_assert_int_eq(osd_sense_errno(&s), -EINVAL);
	ck_assert_int_eq(osd_sense_errno_cmd(&s, OSD_ACT_READ), -EINVAL);
	ck_assert_int_eq(osd_sense_errno_cmd(&s, OSD_ACT_CREATE), -EINVAL);
	ck_assert_int_eq(osd_sense_describe(&s, msg, sizeof(msg)), (int)strlen(want));
	ck_assert_str_eq(msg, want);
	/* a short buffer is filled as far as it goes and the full length returned */
	ck_assert_int_eq(osd_sense_describe(&s, msg, 10), (int)strlen(want));
	ck_assert_str_eq(msg, "ILLEGAL R");
	ck_assert_int_eq(osd_sense_describe(&s, NULL, 0), (int)strlen(want));
}
END_TEST

/* 02h field pointer at the object id / partition id / capability / SBA. */
static void decode_with_field(uint16_t fp, struct osd_sense *s)
{
	uint8_t b[16] = { 0x72, 0x05, 0x24, 0x00, 0, 0, 0, 0x08,
			  0x02, 0x06, 0x00, 0x00, 0xC0, 0x00, 0x00, 0x00 };

	b[13] = (uint8_t)(fp >> 8);
	b[14] = (uint8_t)fp;
	ck_assert_int_eq(osd_sense_decode(b, sizeof(b), s), 0);
	ck_assert(s->has_field);
	ck_assert(s->field_in_cdb);
	ck_assert_uint_eq(s->field_pointer, fp);
}

START_TEST(test_field_pointer)
{
	struct osd_sense s;
	char msg[128];

	decode_with_field(24, &s);
	ck_assert_int_eq(osd_sense_errno(&s), -ENOENT);
	ck_assert_int_eq(osd_sense_errno_cmd(&s, OSD_ACT_CREATE), -EEXIST);
	ck_assert_int_eq(osd_sense_describe(&s, msg, sizeof(msg)), (int)strlen(msg));
	ck_assert_str_eq(msg, "ILLEGAL REQUEST: INVALID FIELD IN CDB: field at CDB byte 24");
	decode_with_field(16, &s);
	ck_assert_int_eq(osd_sense_errno(&s), -ENOENT);
	decode_with_field(129, &s); /* v2 permissions, 80 + 49 */
	ck_assert_int_eq(osd_sense_errno(&s), -EACCES);
	decode_with_field(184, &s); /* v2 request ICV */
	ck_assert_int_eq(osd_sense_errno(&s), -EACCES);
	decode_with_field(44, &s);  /* v1 starting byte address */
	ck_assert_int_eq(osd_sense_errno(&s), -EINVAL);
	decode_with_field(11, &s);
	ck_assert_int_eq(osd_sense_errno(&s), -EINVAL);
	decode_with_field(8, &s);   /* SERVICE ACTION: not implemented */
	ck_assert_int_eq(osd_sense_errno(&s), -EOPNOTSUPP);
	decode_with_field(9, &s);
	ck_assert_int_eq(osd_sense_errno(&s), -EOPNOTSUPP);
}
END_TEST

/* Missing objects, as the software target reports them: 02h at the object
 * id (or partition id) plus 06h. */
START_TEST(test_missing_object)
{
	static const uint8_t b[] = {
		0x72, 0x05, 0x24, 0x00, 0x00, 0x00, 0x00, 0x28,
		0x02, 0x06, 0x00, 0x00, 0xC0, 0x00, 0x18, 0x00, /* field: CDB byte 24 */
		0x06, 0x1E, 0, 0, 0, 0, 0, 0,
		0xB0, 0x10, 0x30, 0x30, 0x00, 0x00, 0x00, 0x00,
		0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00,
		0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x05,
	};
	struct osd_sense s;
	char msg[160];

	ck_assert_int_eq(osd_sense_decode(b, sizeof(b), &s), 0);
	ck_assert_int_eq(osd_sense_errno(&s), -ENOENT);
	ck_assert_int_eq(osd_sense_errno_cmd(&s, OSD_ACT_READ), -ENOENT);
	ck_assert_int_eq(osd_sense_errno_cmd(&s, OSD_ACT_CREATE), -EEXIST);
	osd_sense_describe(&s, msg, sizeof(msg));
	ck_assert_str_eq(msg, "ILLEGAL REQUEST: INVALID FIELD IN CDB: object 0x10005 in "
			      "partition 0x10000 does not exist, field at CDB byte 24");
}
END_TEST

static int errno_of(uint8_t key, uint16_t asc);

/* Unimplemented commands and service actions: 20h/00h (with or without a
 * field pointer at the service action, fixed or descriptor format) and the
 * bare 00h/00h some targets send. */
START_TEST(test_unsupported)
{
	static const uint8_t sa_ptr[] = {
		0x72, 0x05, 0x20, 0x00, 0x00, 0x00, 0x00, 0x08,
		0x02, 0x06, 0x00, 0x00, 0xC0, 0x00, 0x08, 0x00,
	};
	static const uint8_t bare[] = { 0x72, 0x05, 0x00, 0x00, 0, 0, 0, 0 };
	static const uint8_t fixed_bare[18] = { 0x70, 0x00, 0x05, 0, 0, 0, 0, 0x0A,
						0, 0, 0, 0, 0x00, 0x00, 0, 0, 0, 0 };
	/* GET ATTRIBUTES refused at partition information 0xC1 (NUMBER OF OBJECTS) */
	static const uint8_t attr[] = {
		0x72, 0x05, 0x26, 0x00, 0x00, 0x00, 0x00, 0x10,
		0x08, 0x0E, 0, 0, 0, 0, 0, 0,
		0x30, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0xC1,
	};
	struct osd_sense s;

	ck_assert_int_eq(osd_sense_decode(sa_ptr, sizeof(sa_ptr), &s), 0);
	ck_assert_int_eq(osd_sense_errno(&s), -EOPNOTSUPP);
	ck_assert_int_eq(osd_sense_decode(bare, sizeof(bare), &s), 0);
	ck_assert_int_eq(osd_sense_errno(&s), -EOPNOTSUPP);
	ck_assert_int_eq(osd_sense_decode(fixed_bare, sizeof(fixed_bare), &s), 0);
	ck_assert_int_eq(osd_sense_errno(&s), -EOPNOTSUPP);
	ck_assert_int_eq(osd_sense_decode(attr, sizeof(attr), &s), 0);
	ck_assert_uint_eq(s.num_attrs, 1);
	ck_assert_uint_eq(s.attrs[0].page, 0x30000001);
	ck_assert_uint_eq(s.attrs[0].number, 0xC1);
	/* an attribute the target does not provide, for GET ATTRIBUTES only */
	ck_assert_int_eq(osd_sense_errno_cmd(&s, OSD_ACT_GET_ATTRIBUTES), -EOPNOTSUPP);
	ck_assert_int_eq(osd_sense_errno_cmd(&s, OSD_ACT_SET_ATTRIBUTES), -EINVAL);
	ck_assert_int_eq(osd_sense_errno(&s), -EINVAL);
	/* no key other than ILLEGAL REQUEST makes 00h/00h unsupported */
	ck_assert_int_eq(errno_of(OSD_SK_HARDWARE_ERROR, 0), -EIO);
}
END_TEST

START_TEST(test_short_read)
{
	static const uint8_t b[] = {
		0x72, 0x01, 0x3B, 0x17, 0, 0, 0, 0x0C,
		0x01, 0x0A, 0, 0, 0, 0, 0, 0, 0, 0, 0x0E, 0x00,
	};
	struct osd_sense s;
	char msg[128];

	ck_assert_int_eq(osd_sense_decode(b, sizeof(b), &s), 0);
	ck_assert_uint_eq(s.key, OSD_SK_RECOVERED_ERROR);
	ck_assert_uint_eq(s.asc, OSD_ASC_READ_PAST_END_OF_OBJECT);
	ck_assert(s.has_csi);
	ck_assert_uint_eq(s.csi, 3584);
	ck_assert_int_eq(osd_sense_errno(&s), 0);
	osd_sense_describe(&s, msg, sizeof(msg));
	ck_assert_str_eq(msg, "RECOVERED ERROR: READ PAST END OF USER OBJECT "
			      "(command-specific information 3584)");
}
END_TEST

/* 00h, 07h, 08h and an unknown descriptor (skipped) in one buffer. */
START_TEST(test_all_descriptors)
{
	uint8_t b[8 + 12 + 22 + 24 + 4] = {
		0x73, 0x05, 0x26, 0x00, 0, 0, 0, 62,
		0x00, 0x0A, 0x80, 0x00, 0, 0, 0, 0, 0, 0, 0x12, 0x34,
		0x07, 0x14, /* 20-byte OSD-1 response ICV */
	};
	static const uint8_t attrs[] = {
		0x08, 0x16, 0, 0, 0, 0, 0, 0,
		0x00, 0x01, 0x00, 0x03, 0x00, 0x00, 0x00, 0x01,
		0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x82,
	};
	struct osd_sense s;
	char msg[160];

	for (int i = 0; i < 20; i++)
		b[22 + i] = (uint8_t)i;
	memcpy(b + 42, attrs, sizeof(attrs));
	b[66] = 0x80; /* vendor descriptor with 2 bytes: skipped */
	b[67] = 0x02;
	ck_assert_int_eq(osd_sense_decode(b, sizeof(b), &s), 0);
	ck_assert_uint_eq(s.response_code, 0x73);
	ck_assert(s.has_info);
	ck_assert_uint_eq(s.information, 0x1234);
	ck_assert(s.has_ricv);
	ck_assert_uint_eq(s.ricv_len, 20);
	ck_assert_uint_eq(s.ricv[19], 19);
	ck_assert_uint_eq(s.num_attrs, 2);
	ck_assert_uint_eq(s.attrs[0].page, 0x10003);
	ck_assert_uint_eq(s.attrs[1].number, 0x82);
	ck_assert_int_eq(osd_sense_errno(&s), -EINVAL);
	osd_sense_describe(&s, msg, sizeof(msg));
	ck_assert_str_eq(msg, "ILLEGAL REQUEST: INVALID FIELD IN PARAMETER LIST; "
			      "attributes 0x10003/0x1, 0x1/0x82");
}
END_TEST

START_TEST(test_fixed_format)
{
	static const uint8_t b[18] = { 0x70, 0x00, 0x05, 0, 0, 0, 0, 0x0A,
				       0, 0, 0, 0, 0x20, 0x00, 0, 0, 0, 0 };
	struct osd_sense s;

	ck_assert_int_eq(osd_sense_decode(b, sizeof(b), &s), 0);
	ck_assert_uint_eq(s.response_code, 0x70);
	ck_assert_uint_eq(s.key, OSD_SK_ILLEGAL_REQUEST);
	ck_assert_uint_eq(s.asc, OSD_ASC_INVALID_OPCODE);
	ck_assert_int_eq(osd_sense_errno(&s), -ENOTSUP);
	ck_assert_int_eq(osd_sense_decode(b, 13, &s), -EBADMSG);
}
END_TEST

static int errno_of(uint8_t key, uint16_t asc)
{
	uint8_t b[8] = { 0x72, key, (uint8_t)(asc >> 8), (uint8_t)asc, 0, 0, 0, 0 };
	struct osd_sense s;

	ck_assert_int_eq(osd_sense_decode(b, sizeof(b), &s), 0);
	return osd_sense_errno(&s);
}

START_TEST(test_errno_map)
{
	ck_assert_int_eq(errno_of(OSD_SK_NO_SENSE, 0), 0);
	ck_assert_int_eq(errno_of(OSD_SK_ILLEGAL_REQUEST, OSD_ASC_INVALID_FIELD_IN_CDB), -EINVAL);
	ck_assert_int_eq(errno_of(OSD_SK_ILLEGAL_REQUEST, OSD_ASC_PARTITION_OR_COLLECTION_NOT_EMPTY),
			 -ENOTEMPTY);
	ck_assert_int_eq(errno_of(OSD_SK_DATA_PROTECT, OSD_ASC_QUOTA_ERROR), -ENOSPC);
	ck_assert_int_eq(errno_of(OSD_SK_ILLEGAL_REQUEST, OSD_ASC_QUOTA_ERROR), -ENOSPC);
	ck_assert_int_eq(errno_of(OSD_SK_DATA_PROTECT, OSD_ASC_SPACE_ALLOC_FAILED), -ENOSPC);
	ck_assert_int_eq(errno_of(OSD_SK_ILLEGAL_REQUEST, OSD_ASC_NONCE_NOT_UNIQUE), -EACCES);
	ck_assert_int_eq(errno_of(OSD_SK_ILLEGAL_REQUEST, OSD_ASC_NONCE_TIMESTAMP_OUT_OF_RANGE),
			 -EACCES);
	ck_assert_int_eq(errno_of(OSD_SK_ILLEGAL_REQUEST, OSD_ASC_SECURITY_AUDIT_FROZEN), -EACCES);
	ck_assert_int_eq(errno_of(OSD_SK_ILLEGAL_REQUEST, OSD_ASC_SECURITY_WORKING_KEY_FROZEN),
			 -EACCES);
	ck_assert_int_eq(errno_of(OSD_SK_ILLEGAL_REQUEST, OSD_ASC_INVALID_DATA_OUT_ICV), -EACCES);
	ck_assert_int_eq(errno_of(OSD_SK_ILLEGAL_REQUEST, OSD_ASC_INVALID_OPCODE), -ENOTSUP);
	ck_assert_int_eq(errno_of(OSD_SK_ILLEGAL_REQUEST, OSD_ASC_PARAM_LIST_LENGTH_ERROR), -EINVAL);
	ck_assert_int_eq(errno_of(OSD_SK_UNIT_ATTENTION, OSD_ASC_POWER_ON_RESET), -EAGAIN);
	ck_assert_int_eq(errno_of(OSD_SK_NOT_READY, OSD_ASC_FORMAT_IN_PROGRESS), -EAGAIN);
	ck_assert_int_eq(errno_of(OSD_SK_HARDWARE_ERROR, OSD_ASC_SYSTEM_RESOURCE_FAILURE), -EIO);
	ck_assert_int_eq(errno_of(OSD_SK_MEDIUM_ERROR, 0x1100), -EIO);
	{
		uint8_t b[8] = { 0x72, OSD_SK_MEDIUM_ERROR, 0x0C, 0x00, 0, 0, 0, 0 };
		struct osd_sense s;
		char msg[64];

		ck_assert_int_eq(osd_sense_decode(b, sizeof(b), &s), 0);
		osd_sense_describe(&s, msg, sizeof(msg));
		ck_assert_str_eq(msg, "MEDIUM ERROR: ASC 0Ch ASCQ 00h");
	}
	{
		/* damaged stored data: 03h/11h/00h, information 00h = first bad
		 * byte (spc4r37 §4.5.2.2), 06h = the object (osd2r01 §4.14.2.1) */
		uint8_t b[8 + 12 + 32] = { 0x72, OSD_SK_MEDIUM_ERROR, 0x11, 0x00, 0, 0, 0, 44,
					   0x00, 0x0A, 0x80, 0, 0, 0, 0, 0, 0, 0, 0x1E, 0x00,
					   0x06, 0x1E };
		struct osd_sense s;
		char msg[160];

		b[8 + 12 + 21] = 0x01; /* partition 0x10000 */
		b[8 + 12 + 29] = 0x01; /* object 0x10003 */
		b[8 + 12 + 31] = 0x03;
		ck_assert_int_eq(osd_sense_decode(b, sizeof(b), &s), 0);
		ck_assert(s.has_info);
		ck_assert_uint_eq(s.information, 0x1E00);
		ck_assert_int_eq(osd_sense_errno(&s), -EIO);
		osd_sense_describe(&s, msg, sizeof(msg));
		ck_assert_str_eq(msg, "MEDIUM ERROR: UNRECOVERED READ ERROR: object 0x10003 in "
				      "partition 0x10000 at byte 7680");
	}
	ck_assert_int_eq(errno_of(OSD_SK_ABORTED_COMMAND, 0), -EIO);
}
END_TEST

START_TEST(test_asc_strings)
{
	static const uint16_t ascs[] = {
		OSD_ASC_NONE, OSD_ASC_INVALID_OPCODE, OSD_ASC_INVALID_FIELD_IN_CDB,
		OSD_ASC_SECURITY_AUDIT_FROZEN, OSD_ASC_SECURITY_WORKING_KEY_FROZEN,
		OSD_ASC_NONCE_NOT_UNIQUE, OSD_ASC_NONCE_TIMESTAMP_OUT_OF_RANGE,
		OSD_ASC_INVALID_FIELD_IN_PARAM_LIST, OSD_ASC_INVALID_DATA_OUT_ICV,
		OSD_ASC_PARAM_LIST_LENGTH_ERROR, OSD_ASC_PARTITION_OR_COLLECTION_NOT_EMPTY,
		OSD_ASC_READ_PAST_END_OF_OBJECT, OSD_ASC_QUOTA_ERROR,
		OSD_ASC_SYSTEM_RESOURCE_FAILURE, OSD_ASC_FORMAT_IN_PROGRESS, OSD_ASC_POWER_ON_RESET,
		OSD_ASC_SPACE_ALLOC_FAILED,
	};
	const char *unknown = osd_asc_string(0x7777);

	ck_assert_str_eq(unknown, "UNKNOWN ADDITIONAL SENSE CODE");
	for (size_t i = 0; i < sizeof(ascs) / sizeof(ascs[0]); i++)
		ck_assert_msg(osd_asc_string(ascs[i]) != unknown, "asc %04x", ascs[i]);
	ck_assert_str_eq(osd_asc_string(0x2406), "NONCE NOT UNIQUE");
	ck_assert_str_eq(osd_asc_string(0x2C0A), "PARTITION OR COLLECTION CONTAINS USER OBJECTS");
}
END_TEST

START_TEST(test_malformed)
{
	struct osd_sense s;
	uint8_t b[64];

	ck_assert_int_eq(osd_sense_decode(bad_field_obj, 0, &s), -EBADMSG);
	ck_assert_int_eq(osd_sense_decode(bad_field_obj, 7, &s), -EBADMSG);
	memcpy(b, bad_field_obj, sizeof(bad_field_obj));
	b[0] = 0x7E;
	ck_assert_int_eq(osd_sense_decode(b, sizeof(bad_field_obj), &s), -EBADMSG);
	/* truncated inside descriptor 06h */
	ck_assert_int_eq(osd_sense_decode(bad_field_obj, 30, &s), -EBADMSG);
	/* descriptor length past ADDITIONAL SENSE LENGTH */
	memcpy(b, bad_field_obj, sizeof(bad_field_obj));
	b[7] = 0x1F;
	ck_assert_int_eq(osd_sense_decode(b, sizeof(bad_field_obj), &s), -EBADMSG);
	/* a lone type byte at the end */
	memcpy(b, bad_field_obj, sizeof(bad_field_obj));
	b[7] = 0x21;
	b[40] = 0x00;
	ck_assert_int_eq(osd_sense_decode(b, 41, &s), -EBADMSG);
	/* descriptors too short for their type */
	memcpy(b, bad_field_obj, sizeof(bad_field_obj));
	b[9] = 0x1C;
	b[7] = 0x1E;
	ck_assert_int_eq(osd_sense_decode(b, 38, &s), -EBADMSG);
	{
		uint8_t info[8 + 8] = { 0x72, 5, 0x24, 0, 0, 0, 0, 8, 0x00, 0x06 };
		uint8_t attr[8 + 13] = { 0x72, 5, 0x26, 0, 0, 0, 0, 13, 0x08, 0x0B };
		uint8_t ricv[8 + 36] = { 0x72, 5, 0x24, 0, 0, 0, 0, 36, 0x07, 0x22 };

		ck_assert_int_eq(osd_sense_decode(info, sizeof(info), &s), -EBADMSG);
		ck_assert_int_eq(osd_sense_decode(attr, sizeof(attr), &s), -EBADMSG);
		ck_assert_int_eq(osd_sense_decode(ricv, sizeof(ricv), &s), -EBADMSG);
	}
	/* bytes after ADDITIONAL SENSE LENGTH (the rest of a 252-byte buffer) are ignored */
	memset(b, 0xEE, sizeof(b));
	memcpy(b, bad_field_obj, sizeof(bad_field_obj));
	ck_assert_int_eq(osd_sense_decode(b, sizeof(b), &s), 0);
	ck_assert_uint_eq(s.object.id, 0x10005);
	/* ADDITIONAL SENSE LENGTH longer than the buffer: read what is there */
	memcpy(b, bad_field_obj, sizeof(bad_field_obj));
	b[7] = 0xF0;
	ck_assert_int_eq(osd_sense_decode(b, sizeof(bad_field_obj), &s), 0);
	ck_assert(s.has_object);
}
END_TEST

START_TEST(test_encode)
{
	static const uint8_t want[] = {
		0x72, 0x05, 0x24, 0x00, 0, 0, 0, 0x40,
		0x00, 0x0A, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0x07,
		0x01, 0x0A, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x09,
		0x02, 0x06, 0, 0, 0xCB, 0x00, 0x18, 0,
		0x06, 0x1E, 0, 0, 0, 0, 0, 0, 0x80, 0, 0, 0, 0, 0, 0, 0,
		0, 0, 0, 0, 0, 0x01, 0, 0, 0, 0, 0, 0, 0, 0x01, 0, 0x05,
	};
	struct osd_sense s, d;
	uint8_t b[OSD_SENSE_MAX_LEN];

	memset(&s, 0, sizeof(s));
	s.response_code = 0x72;
	s.key = OSD_SK_ILLEGAL_REQUEST;
	s.asc = OSD_ASC_INVALID_FIELD_IN_CDB;
	s.has_info = 1;
	s.information = 7;
	s.has_csi = 1;
	s.csi = 9;
	s.has_field = 1;
	s.field_in_cdb = 1;
	s.bpv = 1;
	s.bit_pointer = 3;
	s.field_pointer = 24;
	s.has_object = 1;
	s.not_initiated = OSD_CFUNC_VALIDATION;
	s.object.partition = 0x10000;
	s.object.id = 0x10005;
	ck_assert_int_eq(osd_sense_encode(&s, b, sizeof(want) - 1), -ENOBUFS);
	ck_assert_int_eq(osd_sense_encode(&s, b, sizeof(b)), (int)sizeof(want));
	ck_assert_int_eq(memcmp(b, want, sizeof(want)), 0);
	ck_assert_int_eq(osd_sense_decode(b, sizeof(want), &d), 0);
	ck_assert_int_eq(memcmp(&s, &d, sizeof(s)), 0);

	/* 07h and 08h round trip, deferred response code kept */
	memset(&s, 0, sizeof(s));
	s.response_code = 0x73;
	s.key = OSD_SK_ILLEGAL_REQUEST;
	s.asc = OSD_ASC_INVALID_FIELD_IN_PARAM_LIST;
	s.has_ricv = 1;
	s.ricv_len = 32;
	memset(s.ricv, 0x5A, 32);
	s.num_attrs = OSD_SENSE_MAX_ATTRS;
	for (unsigned i = 0; i < OSD_SENSE_MAX_ATTRS; i++) {
		s.attrs[i].page = 0x10003;
		s.attrs[i].number = i + 1;
	}
	ck_assert_int_eq(osd_sense_encode(&s, b, sizeof(b)), 8 + 34 + 8 + 128);
	ck_assert_uint_eq(b[0], 0x73);
	ck_assert_uint_eq(b[8], 0x07);
	ck_assert_uint_eq(b[9], 0x20);
	ck_assert_uint_eq(b[42], 0x08);
	ck_assert_uint_eq(b[43], 0x86);
	ck_assert_int_eq(osd_sense_decode(b, sizeof(b), &d), 0);
	ck_assert_int_eq(memcmp(&s, &d, sizeof(s)), 0);
	s.ricv_len = 33;
	ck_assert_int_eq(osd_sense_encode(&s, b, sizeof(b)), -EINVAL);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("sense");
	TCase *tc = tcase_create("sense");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_field_without_pointer);
	tcase_add_test(tc, test_missing_object);
	tcase_add_test(tc, test_unsupported);
	tcase_add_test(tc, test_field_pointer);
	tcase_add_test(tc, test_short_read);
	tcase_add_test(tc, test_all_descriptors);
	tcase_add_test(tc, test_fixed_format);
	tcase_add_test(tc, test_errno_map);
	tcase_add_test(tc, test_asc_strings);
	tcase_add_test(tc, test_malformed);
	tcase_add_test(tc, test_encode);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
