/*
 * The initiator ports the target remembers (osdtarget/iscsi/nexus.c), which
 * decide whether a new session's unit attention is 29h/00h (a port not seen
 * since the process started) or 29h/07h I_T NEXUS LOSS OCCURRED (one seen
 * before), spc4r37 §4.5.6. A port is InitiatorName + ISID (RFC 7143
 * §4.4.1); the set keeps the ISCSI_SEEN_MAX most recently added ports and
 * forgets the oldest. Through the static library (the set is internal).
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "iscsi/server.h"

static const uint8_t isid_a[6] = { 0x80, 0x55, 0xAA, 0x01, 0x02, 0x03 };
static const uint8_t isid_b[6] = { 0x80, 0x55, 0xAA, 0x01, 0x02, 0x04 };

static void srv_init(struct osd_target_iscsi *srv)
{
	memset(srv, 0, sizeof(*srv));
	ck_assert_int_eq(pthread_mutex_init(&srv->lock, NULL), 0);
}

static void srv_fini(struct osd_target_iscsi *srv)
{
	osd__tgt_iscsi_ports_free(srv);
	ck_assert_ptr_null(srv->seen);
	ck_assert_uint_eq(srv->nseen, 0);
	pthread_mutex_destroy(&srv->lock);
}

/* Port @p i of the eviction test: its own InitiatorName, one ISID. */
static int seen_nth(struct osd_target_iscsi *srv, unsigned i)
{
	char name[64];

	snprintf(name, sizeof(name), "iqn.2026-12.org.osd:nexus-%u", i);
	return osd__tgt_iscsi_port_seen(srv, name, isid_a);
}

START_TEST(port_new_then_seen)
{
	static const char *name = "iqn.2026-12.org.osd:nexus";
	struct osd_target_iscsi srv;

	srv_init(&srv);
	ck_assert_int_eq(osd__tgt_iscsi_port_seen(&srv, name, isid_a), 0);
	ck_assert_int_eq(osd__tgt_iscsi_port_seen(&srv, name, isid_a), 1);
	ck_assert_int_eq(osd__tgt_iscsi_port_seen(&srv, name, isid_a), 1);
	/* the same initiator with another ISID is another port */
	ck_assert_int_eq(osd__tgt_iscsi_port_seen(&srv, name, isid_b), 0);
	ck_assert_int_eq(osd__tgt_iscsi_port_seen(&srv, name, isid_b), 1);
	/* the same ISID from another initiator, or one whose name the first
	 * one's begins with, too */
	ck_assert_int_eq(osd__tgt_iscsi_port_seen(&srv, "iqn.2026-12.org.osd:nexus2", isid_a), 0);
	ck_assert_int_eq(osd__tgt_iscsi_port_seen(&srv, "iqn.2026-12.org.osd:nexu", isid_a), 0);
	ck_assert_uint_eq(srv.nseen, 4);
	ck_assert_int_eq(osd__tgt_iscsi_port_seen(&srv, name, isid_a), 1);
	ck_assert_int_eq(osd__tgt_iscsi_port_seen(&srv, name, isid_b), 1);
	srv_fini(&srv);
	/* the set freed (the server stopped): every port is new again */
	srv_init(&srv);
	ck_assert_int_eq(osd__tgt_iscsi_port_seen(&srv, name, isid_a), 0);
	srv_fini(&srv);
}
END_TEST

/*
 * Port 0, then ISCSI_SEEN_MAX - 1 others: all held, port 0 still seen. One
 * more forgets port 0, the oldest, and only it: ports 1..ISCSI_SEEN_MAX are
 * seen. Port 0 logging in again is new (29h/00h) and, added, forgets port
 * 1, now the oldest; port 1 back forgets port 2; and so on in the order
 * they were added, whether or not they logged in again meanwhile.
 */
START_TEST(oldest_port_forgotten)
{
	struct osd_target_iscsi srv;

	srv_init(&srv);
	for (unsigned i = 0; i < ISCSI_SEEN_MAX; i++)
		ck_assert_int_eq(seen_nth(&srv, i), 0);
	ck_assert_uint_eq(srv.nseen, ISCSI_SEEN_MAX);
	ck_assert_int_eq(seen_nth(&srv, 0), 1);
	ck_assert_int_eq(seen_nth(&srv, ISCSI_SEEN_MAX - 1), 1);
	ck_assert_int_eq(seen_nth(&srv, ISCSI_SEEN_MAX), 0);
	ck_assert_uint_eq(srv.nseen, ISCSI_SEEN_MAX);
	for (unsigned i = 1; i <= ISCSI_SEEN_MAX; i++)
		ck_assert_msg(seen_nth(&srv, i) == 1, "port %u of %u forgotten", i, ISCSI_SEEN_MAX);
	ck_assert_int_eq(seen_nth(&srv, 0), 0); /* forgets port 1 */
	ck_assert_int_eq(seen_nth(&srv, 0), 1);
	ck_assert_int_eq(seen_nth(&srv, 1), 0); /* forgets port 2 */
	for (unsigned i = 3; i <= ISCSI_SEEN_MAX; i++)
		ck_assert_msg(seen_nth(&srv, i) == 1, "port %u of %u forgotten", i, ISCSI_SEEN_MAX);
	ck_assert_int_eq(seen_nth(&srv, 0), 1);
	ck_assert_int_eq(seen_nth(&srv, 1), 1);
	ck_assert_uint_eq(srv.nseen, ISCSI_SEEN_MAX);
	ck_assert_int_eq(seen_nth(&srv, 2), 0); /* forgets port 3 */
	ck_assert_int_eq(seen_nth(&srv, 3), 0);
	srv_fini(&srv);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("iscsi_nexus");
	TCase *tc = tcase_create("ports");
	SRunner *r;
	int failed;

	tcase_add_test(tc, port_new_then_seen);
	tcase_add_test(tc, oldest_port_forgotten);
	suite_add_tcase(s, tc);
	r = srunner_create(s);
	srunner_run_all(r, CK_NORMAL);
	failed = srunner_ntests_failed(r);
	srunner_free(r);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
