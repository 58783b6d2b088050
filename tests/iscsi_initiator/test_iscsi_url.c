/* URL parsing, option checking and connection errors of the iSCSI
 * initiator transport (no target needed). */
#include <check.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <osd/iscsi.h>

START_TEST(url_good)
{
	struct osd_iscsi_url u;
	char err[128] = "";

	ck_assert_int_eq(osd_iscsi_url_parse(&u, "iscsi://127.0.0.1:3261/iqn.2026-01.org.x:osd/7",
					     err, sizeof(err)), 0);
	ck_assert_str_eq(u.host, "127.0.0.1");
	ck_assert_uint_eq(u.port, 3261);
	ck_assert_str_eq(u.target, "iqn.2026-01.org.x:osd");
	ck_assert_uint_eq(u.lun, 7);
	ck_assert_int_eq(osd_iscsi_url_parse(&u, "iscsi://storage-1.example/eui.02004567A425678D/0",
					     NULL, 0), 0);
	ck_assert_str_eq(u.host, "storage-1.example");
	ck_assert_uint_eq(u.port, 3260);
	ck_assert_str_eq(u.target, "eui.02004567A425678D");
	ck_assert_uint_eq(u.lun, 0);
	ck_assert_int_eq(osd_iscsi_url_parse(&u, "iscsi://[::1]:860/naa.52004567ba64678d/16383",
					     NULL, 0), 0);
	ck_assert_str_eq(u.host, "::1");
	ck_assert_uint_eq(u.port, 860);
	ck_assert_uint_eq(u.lun, 16383);
}
END_TEST

static const struct {
	const char *url, *msg;
} bad_urls[] = {
	{ NULL, "no URL" },
	{ "", "must start with iscsi://" },
	{ "http://h/iqn.2026-01.x:y/0", "must start with iscsi://" },
	{ "iscsi://h", "missing /target/lun" },
	{ "iscsi:///iqn.2026-01.x:y/0", "missing host" },
	{ "iscsi://h:/iqn.2026-01.x:y/0", "empty port" },
	{ "iscsi://h:0/iqn.2026-01.x:y/0", "port out of range" },
	{ "iscsi://h:65536/iqn.2026-01.x:y/0", "port out of range" },
	{ "iscsi://h:12a/iqn.2026-01.x:y/0", "port is not a decimal" },
	{ "iscsi://h_x/iqn.2026-01.x:y/0", "bad character '_' in host" },
	{ "iscsi://[::1/iqn.2026-01.x:y/0", "unterminated '['" },
	{ "iscsi://[::1]x/iqn.2026-01.x:y/0", "junk after ']'" },
	{ "iscsi://user@h/iqn.2026-01.x:y/0", "user info, query" },
	{ "iscsi://h/iqn.2026-01.x:y/0?x=1", "user info, query" },
	{ "iscsi://h/iqn.2026-01.x:y", "missing /lun" },
	{ "iscsi://h/iqn.2026-01.x:y/", "missing LUN" },
	{ "iscsi://h/iqn.2026-01.x:y/1x", "LUN is not a decimal" },
	{ "iscsi://h/iqn.2026-01.x:y/-1", "LUN is not a decimal" },
	{ "iscsi://h/iqn.2026-01.x:y/16384", "LUN out of range" },
	{ "iscsi://h/iqn.2026-01.x:y/0/1", "LUN is not a decimal" },
	{ "iscsi://h//0", "not a valid iSCSI name" },
	{ "iscsi://h/target/0", "not a valid iSCSI name" },
	{ "iscsi://h/iqn.2026-01.X:Upper/0", "not a valid iSCSI name" },
	{ "iscsi://h/iqn./0", "not a valid iSCSI name" },
};

START_TEST(url_bad)
{
	struct osd_iscsi_url u, keep;
	char err[160];

	memset(&u, 0x5A, sizeof(u));
	keep = u;
	err[0] = '\0';
	ck_assert_int_eq(osd_iscsi_url_parse(&u, bad_urls[_i].url, err, sizeof(err)), -EINVAL);
	ck_assert_msg(strstr(err, bad_urls[_i].msg) != NULL, "url '%s': message '%s', want '%s'",
		      bad_urls[_i].url ? bad_urls[_i].url : "(null)", err, bad_urls[_i].msg);
	ck_assert_mem_eq(&u, &keep, sizeof(u)); /* untouched on failure */
	/* NULL error buffer is allowed */
	ck_assert_int_eq(osd_iscsi_url_parse(&u, bad_urls[_i].url, NULL, 0), -EINVAL);
}
END_TEST

START_TEST(url_name_length)
{
	char url[400], name[300];
	struct osd_iscsi_url u;

	memset(name, 'a', sizeof(name));
	memcpy(name, "iqn.", 4);
	name[OSD_ISCSI_NAME_MAX] = '\0';
	snprintf(url, sizeof(url), "iscsi://h/%s/0", name);
	ck_assert_int_eq(osd_iscsi_url_parse(&u, url, NULL, 0), 0);
	ck_assert_uint_eq(strlen(u.target), OSD_ISCSI_NAME_MAX);
	name[OSD_ISCSI_NAME_MAX] = 'a';
	name[OSD_ISCSI_NAME_MAX + 1] = '\0';
	snprintf(url, sizeof(url), "iscsi://h/%s/0", name);
	ck_assert_int_eq(osd_iscsi_url_parse(&u, url, NULL, 0), -EINVAL);
}
END_TEST

/* Each bad option gives -EINVAL and names the problem, before any I/O. */
START_TEST(options_bad)
{
	static const char *const url = "iscsi://127.0.0.1:1/iqn.2026-01.org.x:t/0";
	struct osd_iscsi_options o;
	struct osd_transport tp = { NULL, NULL };
	char err[160];

#define EXPECT_BAD(setup, text) do {                                              \
		struct osd_iscsi_options d = OSD_ISCSI_OPTIONS_INIT;              \
		o = d;                                                            \
		o.errbuf = err;                                                   \
		o.errbuf_len = sizeof(err);                                       \
		err[0] = '\0';                                                    \
		setup;                                                            \
		ck_assert_int_eq(osd_iscsi_transport_new(&tp, url, &o), -EINVAL); \
		ck_assert_msg(strstr(err, text), "got '%s', want '%s'", err, text); \
		ck_assert_ptr_null(tp.ops);                                       \
	} while (0)

	EXPECT_BAD(o.version = 99, "options version");
	EXPECT_BAD(o.header_digest = (enum osd_iscsi_digest)9, "digest");
	EXPECT_BAD(o.initiator_name = "Not A Name", "initiator name");
	EXPECT_BAD(o.chap_user = "u", "CHAP needs both");
	EXPECT_BAD((o.chap_user = "u", o.chap_secret = ""), "1 to 255");
	EXPECT_BAD((o.chap_target_user = "t", o.chap_target_secret = "s"), "one-way CHAP");
	EXPECT_BAD((o.chap_user = "u", o.chap_secret = "same-secret-123",
		    o.chap_target_user = "t", o.chap_target_secret = "same-secret-123"), "differ");
	EXPECT_BAD(o.max_inflight = 0, "max_inflight");
	EXPECT_BAD(o.max_recv_data_segment = 100, "max_recv_data_segment");
	EXPECT_BAD(o.failover_ms = 299, "failover_ms must be 0 or at least 300");
	EXPECT_BAD((o.nop_interval_ms = 10, o.nop_timeout_ms = 0), "keepalive");
#undef EXPECT_BAD
	o.errbuf = err;
	o.errbuf_len = sizeof(err);
	o.nop_timeout_ms = 100;
	ck_assert_int_eq(osd_iscsi_transport_new(&tp, "iscsi://h/bad/0", &o), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "not a valid iSCSI name"));
	ck_assert_int_eq(osd_iscsi_transport_new(NULL, url, NULL), -EINVAL);
}
END_TEST

/* A port nobody listens on: the connect error comes back with a message. */
START_TEST(connect_refused)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t sl = sizeof(sa);
	struct osd_iscsi_options o = OSD_ISCSI_OPTIONS_INIT;
	struct osd_iscsi_target_info *list = (void *)1;
	struct osd_transport tp = { NULL, NULL };
	char url[128], err[160] = "";
	size_t n = 99;
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	/* bind then close: the port is free and (almost surely) unused */
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	ck_assert_int_eq(getsockname(fd, (struct sockaddr *)&sa, &sl), 0);
	close(fd);
	snprintf(url, sizeof(url), "iscsi://127.0.0.1:%u/iqn.2026-01.org.x:t/0", ntohs(sa.sin_port));
	o.errbuf = err;
	o.errbuf_len = sizeof(err);
	o.connect_timeout_ms = 5000;
	ck_assert_int_eq(osd_iscsi_transport_new(&tp, url, &o), -ECONNREFUSED);
	ck_assert_ptr_nonnull(strstr(err, "connect to 127.0.0.1"));
	ck_assert_ptr_null(tp.ops);
	/* Version 1 options (no failover_ms) are still taken: the same refusal. */
	o.version = 1;
	o.failover_ms = 1; /* beyond a version 1 struct: never read */
	ck_assert_int_eq(osd_iscsi_transport_new(&tp, url, &o), -ECONNREFUSED);
	o.version = OSD_ISCSI_OPTIONS_VERSION;
	o.failover_ms = 0;
	ck_assert_int_eq(osd_iscsi_discover(&list, &n, url, &o), -ECONNREFUSED);
	ck_assert_ptr_null(list);
	ck_assert_uint_eq(n, 0);
	ck_assert_int_eq(osd_iscsi_discover(&list, &n, "h:99999", &o), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "port out of range"));
}
END_TEST

START_TEST(task_mgmt_bad)
{
	struct osd_transport tp = { NULL, NULL };

	ck_assert_int_eq(osd_iscsi_task_mgmt(NULL, OSD_ISCSI_TASK_LUN_RESET, NULL, 0), -EINVAL);
	ck_assert_int_eq(osd_iscsi_task_mgmt(&tp, OSD_ISCSI_TASK_LUN_RESET, NULL, 0), -EINVAL);
}
END_TEST

/* Which errors the transport's last error explains, and bad arguments of
 * osd_iscsi_transport_error(). */
START_TEST(transport_error_class)
{
	static const int yes[] = { -EPROTO, -EIO, -ENOTCONN, -ENOBUFS, -ENODEV };
	static const int no[] = { 0, -ETIMEDOUT, -EACCES, -ENOENT, -EINVAL, -ENOMEM, EIO };
	struct osd_transport tp = { NULL, NULL };
	char buf[8];

	for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++)
		ck_assert_int_eq(osd_iscsi_error_is_transport(yes[i]), 1);
	for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++)
		ck_assert_int_eq(osd_iscsi_error_is_transport(no[i]), 0);
	ck_assert_int_eq(osd_iscsi_transport_error(NULL, buf, sizeof(buf)), -EINVAL);
	ck_assert_int_eq(osd_iscsi_transport_error(&tp, buf, sizeof(buf)), -EINVAL);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("iscsi_url");
	TCase *tc = tcase_create("url");

	tcase_add_test(tc, url_good);
	tcase_add_loop_test(tc, url_bad, 0, (int)(sizeof(bad_urls) / sizeof(bad_urls[0])));
	tcase_add_test(tc, url_name_length);
	tcase_add_test(tc, options_bad);
	tcase_add_test(tc, connect_refused);
	tcase_add_test(tc, task_mgmt_bad);
	tcase_add_test(tc, transport_error_class);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
