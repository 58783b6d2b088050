/* The credential protocol's messages: known-good bytes, round trips and
 * every kind of malformed input (docs/security-manager.md section 2). */
#include <check.h>
#include <errno.h>
#include <string.h>
#include <osd/secmgr.h>

static const uint8_t request_bytes[] = {
	'O', 'S', 'D', 'S', 0x01, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x32,
	0x01, 0x02, 0x03, 0x04,
	0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11,
	0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11,
	0x02, 0x00, 0x01, 0x00, 0xA0, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x03,
	0x00, 0x00, 0x13, 0x88,
};

static const uint8_t refuse_bytes[] = {
	'O', 'S', 'D', 'S', 0x01, 0x03, 0x00, 0x00, 0x00, 0x00, 0x00, 0x0A,
	0x00, 0x00, 0x00, 0x07, 0x00, 0x01, 0x02, 0x00, 'n', 'o',
};

static struct osd_secmsg request_msg(void)
{
	struct osd_secmsg m;

	memset(&m, 0, sizeof(m));
	m.type = OSD_SECMSG_REQUEST;
	m.id = 0x01020304;
	memset(m.system_id, 0x11, sizeof(m.system_id));
	m.req.version = OSD_V2;
	m.req.method = OSD_SEC_CAPKEY;
	m.req.permissions = OSD_PERM_READ | OSD_PERM_GET_ATTR;
	m.req.obj.partition = 0x10000;
	m.req.obj.id = 0x10003;
	m.lifetime_ms = 5000;
	return m;
}

static struct osd_secmsg grant_msg(enum osd_version v)
{
	struct osd_secmsg m;
	struct osd_obj_id o = { 0x10000, 0x10003 };

	memset(&m, 0, sizeof(m));
	m.type = OSD_SECMSG_GRANT;
	m.id = 9;
	memset(m.system_id, 0x22, sizeof(m.system_id));
	m.cred.version = v;
	memcpy(m.cred.system_id, m.system_id, sizeof(m.system_id));
	osd_capability_init(&m.cred.cap, v, &o, 0, OSD_PERM_READ, OSD_SEC_CMDRSP);
	m.cred.cap.icv_algorithm = OSD_ICV_ALG_HMAC_SHA1;
	m.cred.cap.key_version = 3;
	m.cred.cap.expiration = 0x123456789AULL;
	memset(m.cred.cap.discriminator, 0x5A, sizeof(m.cred.cap.discriminator));
	memset(m.cred.cap_key, 0xC3, sizeof(m.cred.cap_key));
	return m;
}

START_TEST(request_known_bytes)
{
	struct osd_secmsg m = request_msg(), d;
	uint8_t buf[OSD_SECMSG_MAX_LEN];
	char err[200];

	ck_assert_int_eq(osd_secmsg_encode(&m, buf, sizeof(buf)), (int)sizeof(request_bytes));
	ck_assert_mem_eq(buf, request_bytes, sizeof(request_bytes));
	ck_assert_int_eq(osd_secmsg_decode(request_bytes, sizeof(request_bytes), &d, err,
					   sizeof(err)), (int)sizeof(request_bytes));
	ck_assert_int_eq(d.type, OSD_SECMSG_REQUEST);
	ck_assert_uint_eq(d.id, 0x01020304);
	ck_assert_mem_eq(d.system_id, m.system_id, OSD_SYSTEM_ID_LEN);
	ck_assert_int_eq(d.req.version, OSD_V2);
	ck_assert_int_eq(d.req.method, OSD_SEC_CAPKEY);
	ck_assert_uint_eq(d.req.permissions, OSD_PERM_READ | OSD_PERM_GET_ATTR);
	ck_assert_uint_eq(d.req.obj.partition, 0x10000);
	ck_assert_uint_eq(d.req.obj.id, 0x10003);
	ck_assert_int_eq(d.req.is_collection, 0);
	ck_assert_uint_eq(d.lifetime_ms, 5000);
}
END_TEST

START_TEST(refuse_known_bytes)
{
	struct osd_secmsg m, d;
	uint8_t buf[OSD_SECMSG_MAX_LEN];

	memset(&m, 0, sizeof(m));
	m.type = OSD_SECMSG_REFUSE;
	m.id = 7;
	m.reason = OSD_SECREF_DENIED;
	strcpy(m.text, "no");
	ck_assert_int_eq(osd_secmsg_encode(&m, buf, sizeof(buf)), (int)sizeof(refuse_bytes));
	ck_assert_mem_eq(buf, refuse_bytes, sizeof(refuse_bytes));
	ck_assert_int_eq(osd_secmsg_decode(refuse_bytes, sizeof(refuse_bytes), &d, NULL, 0),
			 (int)sizeof(refuse_bytes));
	ck_assert_int_eq(d.type, OSD_SECMSG_REFUSE);
	ck_assert_uint_eq(d.id, 7);
	ck_assert_uint_eq(d.reason, OSD_SECREF_DENIED);
	ck_assert_str_eq(d.text, "no");
}
END_TEST

START_TEST(grant_round_trip)
{
	enum osd_version v = _i ? OSD_V2 : OSD_V1;
	struct osd_secmsg m = grant_msg(v), d;
	uint8_t buf[OSD_SECMSG_MAX_LEN];
	int n = osd_secmsg_encode(&m, buf, sizeof(buf));

	ck_assert_int_eq(n, v == OSD_V2 ? 12 + 48 + 104 : 12 + 48 + 80);
	ck_assert_mem_eq(buf + 12 + 28 + (v == OSD_V2 ? 104 : 80), m.cred.cap_key, 20);
	ck_assert_int_eq(osd_secmsg_decode(buf, (size_t)n, &d, NULL, 0), n);
	ck_assert_int_eq(d.type, OSD_SECMSG_GRANT);
	ck_assert_int_eq(d.cred.version, v);
	ck_assert_mem_eq(d.cred.system_id, m.system_id, OSD_SYSTEM_ID_LEN);
	ck_assert_mem_eq(d.cred.cap_key, m.cred.cap_key, OSD_HMAC_LEN);
	ck_assert_uint_eq(d.cred.cap.expiration, 0x123456789AULL);
	ck_assert_uint_eq(d.cred.cap.key_version, 3);
	ck_assert_uint_eq(d.cred.cap.permissions, OSD_PERM_READ);
	ck_assert_uint_eq(d.cred.cap.security_method, OSD_SEC_CMDRSP);
	ck_assert_uint_eq(d.cred.cap.allowed_object, 0x10003);
	ck_assert_mem_eq(d.cred.cap.discriminator, m.cred.cap.discriminator, 12);
	/* every prefix is incomplete, never an error */
	for (int i = 0; i < n; i++)
		ck_assert_int_eq(osd_secmsg_decode(buf, (size_t)i, &d, NULL, 0), 0);
}
END_TEST

/* Decoding @p b (len) must fail with @p rc and say @p what. */
static void expect_bad(const uint8_t *b, size_t len, int rc, const char *what)
{
	struct osd_secmsg d;
	char err[200] = "";

	ck_assert_int_eq(osd_secmsg_decode(b, len, &d, err, sizeof(err)), rc);
	ck_assert_msg(strstr(err, what) != NULL, "message '%s' lacks '%s'", err, what);
	ck_assert_int_eq(d.type, 0); /* nothing half-decoded */
}

START_TEST(bad_headers)
{
	uint8_t b[sizeof(request_bytes)];

	memcpy(b, request_bytes, sizeof(b));
	b[0] = 'X';
	expect_bad(b, sizeof(b), -EBADMSG, "bad magic");
	expect_bad(b, 1, -EBADMSG, "bad magic"); /* as soon as a byte is wrong */
	memcpy(b, request_bytes, sizeof(b));
	b[4] = 2;
	expect_bad(b, sizeof(b), -EPROTONOSUPPORT, "protocol version 2");
	memcpy(b, request_bytes, sizeof(b));
	b[5] = 9;
	expect_bad(b, sizeof(b), -EBADMSG, "unknown message type 9");
	memcpy(b, request_bytes, sizeof(b));
	b[7] = 1;
	expect_bad(b, sizeof(b), -EBADMSG, "reserved header");
	memcpy(b, request_bytes, sizeof(b));
	b[11] = 0x33; /* 51: not a REQUEST's length */
	expect_bad(b, 12, -EBADMSG, "body length 51");
	b[8] = 0x7f; /* a huge length is refused before its body is awaited */
	expect_bad(b, 12, -EBADMSG, "does not fit");
}
END_TEST

START_TEST(bad_request_fields)
{
	static const struct { size_t off; uint8_t val; const char *what; } cases[] = {
		{ 36, 3, "OSD version 3" },
		{ 37, 2, "reserved bits" },
		{ 39, 1, "reserved bits" },
		{ 38, 4, "security method 4" },
		{ 41, 0x03, "bits OSD-2 lacks" },    /* reserved permission bits 1-0 */
	};
	uint8_t b[sizeof(request_bytes)];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		memcpy(b, request_bytes, sizeof(b));
		b[cases[i].off] = cases[i].val;
		expect_bad(b, sizeof(b), -EBADMSG, cases[i].what);
	}
	memcpy(b, request_bytes, sizeof(b));
	b[36] = 1;      /* OSD-1 ... */
	b[41] = 0x10;   /* ... with M_OBJECT */
	expect_bad(b, sizeof(b), -EBADMSG, "bits OSD-1 lacks");
	memcpy(b, request_bytes, sizeof(b));
	memset(b + 42, 0, 8); /* partition 0, object 0x10003 */
	expect_bad(b, sizeof(b), -EBADMSG, "of partition 0");
	memcpy(b, request_bytes, sizeof(b));
	b[37] = 1;
	memset(b + 50, 0, 8); /* a collection without id */
	expect_bad(b, sizeof(b), -EBADMSG, "collection without an id");
}
END_TEST

START_TEST(bad_grant_and_refuse)
{
	struct osd_secmsg m = grant_msg(OSD_V2);
	uint8_t b[OSD_SECMSG_MAX_LEN], r[sizeof(refuse_bytes)];
	int n = osd_secmsg_encode(&m, b, sizeof(b));

	ck_assert_int_gt(n, 0);
	b[12 + 25] = 1;
	expect_bad(b, (size_t)n, -EBADMSG, "reserved bytes");
	b[12 + 25] = 0;
	b[12 + 24] = 1; /* says OSD-1 but carries an OSD-2 capability */
	expect_bad(b, (size_t)n, -EBADMSG, "not 128 for OSD-1");
	b[12 + 24] = 2;
	b[12 + 28 + 2] |= 0x80; /* a reserved bit of the capability's method byte */
	expect_bad(b, (size_t)n, -EBADMSG, "capability");
	memcpy(r, refuse_bytes, sizeof(r));
	r[21] = 0x07;
	expect_bad(r, sizeof(r), -EBADMSG, "not printable");
	memcpy(r, refuse_bytes, sizeof(r));
	r[17] = 0;
	expect_bad(r, sizeof(r), -EBADMSG, "reason 0");
	memcpy(r, refuse_bytes, sizeof(r));
	r[18] = 3; /* text length beyond the body */
	expect_bad(r, sizeof(r), -EBADMSG, "does not hold its text");
}
END_TEST

START_TEST(encode_refuses_bad_fields)
{
	struct osd_secmsg m = request_msg();
	uint8_t buf[OSD_SECMSG_MAX_LEN];

	ck_assert_int_eq(osd_secmsg_encode(&m, buf, 20), -ENOBUFS);
	m.req.method = (enum osd_sec_method)4;
	ck_assert_int_eq(osd_secmsg_encode(&m, buf, sizeof(buf)), -EINVAL);
	m = request_msg();
	m.req.version = OSD_V1;
	m.req.permissions = OSD_PERM_QUERY;
	ck_assert_int_eq(osd_secmsg_encode(&m, buf, sizeof(buf)), -EINVAL);
	memset(&m, 0, sizeof(m));
	m.type = OSD_SECMSG_REFUSE;
	m.reason = OSD_SECREF_DENIED;
	strcpy(m.text, "tab\there");
	ck_assert_int_eq(osd_secmsg_encode(&m, buf, sizeof(buf)), -EINVAL);
	m.type = (enum osd_secmsg_type)7;
	ck_assert_int_eq(osd_secmsg_encode(&m, buf, sizeof(buf)), -EINVAL);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("secmsg");
	TCase *tc = tcase_create("codec");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, request_known_bytes);
	tcase_add_test(tc, refuse_known_bytes);
	tcase_add_loop_test(tc, grant_round_trip, 0, 2);
	tcase_add_test(tc, bad_headers);
	tcase_add_test(tc, bad_request_fields);
	tcase_add_test(tc, bad_grant_and_refuse);
	tcase_add_test(tc, encode_refuses_bad_fields);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
