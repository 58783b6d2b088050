/* Capability codec: hand-built 80/104-byte images, init rules, errors. */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <osd/capability.h>

static void fill_all(struct osd_capability *c, uint8_t format)
{
	memset(c, 0, sizeof(*c));
	c->format = format;
	c->key_version = 0xA;
	c->icv_algorithm = OSD_ICV_ALG_HMAC_SHA1;
	c->security_method = OSD_SEC_CMDRSP;
	c->expiration = 0x010203040506ULL;
	for (int i = 0; i < 20; i++)
		c->audit[i] = (uint8_t)(0x30 + i);
	for (int i = 0; i < 12; i++)
		c->discriminator[i] = (uint8_t)(0x50 + i);
	c->object_created = 0x0A0B0C0D0E0FULL;
	c->object_type = OSD_OBJ_USER;
	c->permissions = OSD_PERM_READ | OSD_PERM_WRITE | OSD_PERM_APPEND;
	c->desc_type = OSD_CAP_DESC_USER;
	c->policy_access_tag = 0x11223344;
	c->allowed_partition = 0x10000;
	c->allowed_object = 0x10005;
}

/* Bytes 0-55, identical in both versions (osd-r10 §4.9.2.2, osd2r03 §4.11.2.2;
 * docs/protocol.md §6). */
static void expect_common(const uint8_t *b, uint8_t format)
{
	static const uint8_t head[10] = { 0, 0xA1, 0x02, 0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06 };

	ck_assert_uint_eq(b[0], format);
	ck_assert_int_eq(memcmp(b + 1, head + 1, 9), 0);
	for (int i = 0; i < 20; i++)
		ck_assert_uint_eq(b[10 + i], 0x30 + i);
	for (int i = 0; i < 12; i++)
		ck_assert_uint_eq(b[30 + i], 0x50 + i);
	ck_assert_uint_eq(b[42], 0x0A);
	ck_assert_uint_eq(b[47], 0x0F);
	ck_assert_uint_eq(b[48], 0x80);
	ck_assert_uint_eq(b[49], 0xC1);
	ck_assert_uint_eq(b[50], 0x00);
	ck_assert_uint_eq(b[55], 0x10);
}

START_TEST(test_v1_layout)
{
	static const uint8_t desc[24] = {
		0x11, 0x22, 0x33, 0x44,                         /* 56 policy/access tag */
		0, 0, 0, 0, 0, 0x01, 0, 0,                      /* 60 allowed partition */
		0, 0, 0, 0, 0, 0x01, 0, 0x05,                   /* 68 allowed object */
		0, 0, 0, 0 };
	struct osd_capability c, d;
	uint8_t b[OSD_CAP_V2_LEN];

	fill_all(&c, 1);
	c.range_length = 99; /* v2-only: not encoded */
	ck_assert_int_eq(osd_capability_encode(OSD_V1, &c, b, sizeof(b)), 80);
	expect_common(b, 1);
	ck_assert_int_eq(memcmp(b + 56, desc, sizeof(desc)), 0);
	ck_assert_int_eq(osd_capability_decode(OSD_V1, b, 80, &d), 0);
	c.range_length = 0;
	ck_assert_int_eq(memcmp(&c, &d, sizeof(c)), 0);
}
END_TEST

START_TEST(test_v2_layout)
{
	static const uint8_t desc[48] = {
		0, 0, 0, 0x07,                                  /* 56 allowed attributes access */
		0x11, 0x22, 0x33, 0x44,                         /* 60 policy/access tag */
		0xBE, 0xEF, 0, 0, 0, 0, 0, 0,                   /* 64 boot epoch, reserved */
		0, 0, 0, 0, 0, 0x01, 0, 0,                      /* 72 allowed partition */
		0, 0, 0, 0, 0, 0x01, 0, 0x05,                   /* 80 allowed object */
		0, 0, 0, 0, 0, 0, 0x10, 0,                      /* 88 range length */
		0, 0, 0, 0, 0, 0, 0x20, 0 };                    /* 96 range start */
	struct osd_capability c, d;
	uint8_t b[OSD_CAP_V2_LEN];

	fill_all(&c, 2);
	c.allowed_attr_access = 7;
	c.boot_epoch = 0xBEEF;
	c.range_length = 4096;
	c.range_start = 8192;
	ck_assert_int_eq(osd_capability_encode(OSD_V2, &c, b, sizeof(b)), 104);
	expect_common(b, 2);
	ck_assert_int_eq(memcmp(b + 56, desc, sizeof(desc)), 0);
	ck_assert_int_eq(osd_capability_decode(OSD_V2, b, 104, &d), 0);
	ck_assert_int_eq(memcmp(&c, &d, sizeof(c)), 0);
}
END_TEST

/* Any non-zero format is written as the version's own value. */
START_TEST(test_format_forced)
{
	struct osd_capability c;
	uint8_t b[OSD_CAP_V2_LEN];

	fill_all(&c, 1);
	ck_assert_int_eq(osd_capability_encode(OSD_V2, &c, b, sizeof(b)), 104);
	ck_assert_uint_eq(b[0], 2);
	fill_all(&c, 2);
	ck_assert_int_eq(osd_capability_encode(OSD_V1, &c, b, sizeof(b)), 80);
	ck_assert_uint_eq(b[0], 1);
	fill_all(&c, 0);
	ck_assert_int_eq(osd_capability_encode(OSD_V1, &c, b, sizeof(b)), 80);
	ck_assert_uint_eq(b[0], 0);
}
END_TEST

START_TEST(test_errors)
{
	struct osd_capability c, d;
	uint8_t b[OSD_CAP_V2_LEN];

	fill_all(&c, 2);
	ck_assert_int_eq(osd_capability_encode(OSD_V2, &c, b, 103), -ENOBUFS);
	ck_assert_int_eq(osd_capability_encode(OSD_V1, &c, b, 79), -ENOBUFS);
	c.key_version = 16;
	ck_assert_int_eq(osd_capability_encode(OSD_V2, &c, b, sizeof(b)), -EINVAL);
	fill_all(&c, 2);
	c.expiration = 1ULL << 48;
	ck_assert_int_eq(osd_capability_encode(OSD_V2, &c, b, sizeof(b)), -EINVAL);
	fill_all(&c, 2);
	ck_assert_int_eq(osd_capability_encode(OSD_V2, &c, b, sizeof(b)), 104);
	ck_assert_int_eq(osd_capability_decode(OSD_V2, b, 103, &d), -EBADMSG);
	ck_assert_int_eq(osd_capability_decode(OSD_V1, b, 80, &d), -EBADMSG); /* format 2 in v1 */
	b[0] = 1;
	ck_assert_int_eq(osd_capability_decode(OSD_V2, b, 104, &d), -EBADMSG); /* K's format 1 */
	b[0] = 0x0F;
	ck_assert_int_eq(osd_capability_decode(OSD_V2, b, 104, &d), -EBADMSG);
	b[0] = 0x02;
	ck_assert_int_eq(osd_capability_decode(OSD_V2, b, sizeof(b) + 0, &d), 0); /* exact */
	{
		uint8_t big[OSD_CAP_V2_LEN + 16];

		memcpy(big, b, sizeof(b));
		memset(big + sizeof(b), 0xEE, 16);
		ck_assert_int_eq(osd_capability_decode(OSD_V2, big, sizeof(big), &d), 0);
		ck_assert_uint_eq(d.range_start, 0);
	}
	b[0] = 0x00; /* no capability: accepted */
	ck_assert_int_eq(osd_capability_decode(OSD_V2, b, 104, &d), 0);
	ck_assert_uint_eq(d.format, 0);
}
END_TEST

START_TEST(test_init)
{
	struct osd_capability c;
	struct osd_obj_id root = { 0, 0 }, part = { 0x10000, 0 }, obj = { 0x10000, 0x10005 };

	osd_capability_init(&c, OSD_V1, &root, 0, OSD_PERM_ALL_V1, OSD_SEC_NOSEC);
	ck_assert_uint_eq(c.format, 1);
	ck_assert_uint_eq(c.object_type, OSD_OBJ_ROOT);
	ck_assert_uint_eq(c.desc_type, OSD_CAP_DESC_PAR);
	ck_assert_uint_eq(c.icv_algorithm, 0);
	ck_assert_uint_eq(c.permissions, 0xFFE0);
	osd_capability_init(&c, OSD_V2, &part, 0, OSD_PERM_CREATE, OSD_SEC_CAPKEY);
	ck_assert_uint_eq(c.format, 2);
	ck_assert_uint_eq(c.object_type, OSD_OBJ_PARTITION);
	ck_assert_uint_eq(c.desc_type, OSD_CAP_DESC_PAR);
	ck_assert_uint_eq(c.icv_algorithm, OSD_ICV_ALG_HMAC_SHA1);
	ck_assert_uint_eq(c.security_method, OSD_SEC_CAPKEY);
	ck_assert_uint_eq(c.allowed_partition, 0x10000);
	osd_capability_init(&c, OSD_V2, &obj, 0, OSD_PERM_READ, OSD_SEC_NOSEC);
	ck_assert_uint_eq(c.object_type, OSD_OBJ_USER);
	ck_assert_uint_eq(c.desc_type, OSD_CAP_DESC_USER);
	ck_assert_uint_eq(c.allowed_object, 0x10005);
	osd_capability_init(&c, OSD_V2, &obj, 1, OSD_PERM_READ, OSD_SEC_NOSEC);
	ck_assert_uint_eq(c.object_type, OSD_OBJ_COLLECTION);
	ck_assert_uint_eq(c.desc_type, OSD_CAP_DESC_COL);
	osd_capability_init(&c, OSD_V1, &obj, 1, OSD_PERM_READ, OSD_SEC_NOSEC);
	ck_assert_uint_eq(c.object_type, OSD_OBJ_COLLECTION);
	ck_assert_uint_eq(c.desc_type, OSD_CAP_DESC_USER); /* v1 U/C descriptor */
	/* is_collection is meaningless for the root and partitions */
	osd_capability_init(&c, OSD_V2, &part, 1, OSD_PERM_READ, OSD_SEC_NOSEC);
	ck_assert_uint_eq(c.object_type, OSD_OBJ_PARTITION);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("capability");
	TCase *tc = tcase_create("capability");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_v1_layout);
	tcase_add_test(tc, test_v2_layout);
	tcase_add_test(tc, test_format_forced);
	tcase_add_test(tc, test_errors);
	tcase_add_test(tc, test_init);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
