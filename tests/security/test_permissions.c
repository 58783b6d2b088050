/* osd_sec_required_permissions against the table in docs/security.md section 1. */
#include <check.h>
#include <stdlib.h>

#include <osd/capability.h>
#include <osd/security.h>

static const struct {
	enum osd_action action;
	uint16_t perms;
} table[] = {
	{ OSD_ACT_OBJECT_STRUCTURE_CHECK, 0x0080 },
	{ OSD_ACT_FORMAT_OSD, 0x0080 },
	{ OSD_ACT_CREATE, 0x0800 },
	{ OSD_ACT_LIST, 0x8000 },
	{ OSD_ACT_PUNCH, 0x4000 },
	{ OSD_ACT_READ, 0x8000 },
	{ OSD_ACT_WRITE, 0x4000 },
	{ OSD_ACT_APPEND, 0x0100 },
	{ OSD_ACT_FLUSH, 0x0200 },
	{ OSD_ACT_CLEAR, 0x4000 },
	{ OSD_ACT_REMOVE, 0x0400 },
	{ OSD_ACT_CREATE_PARTITION, 0x0800 },
	{ OSD_ACT_REMOVE_PARTITION, 0x0400 },
	{ OSD_ACT_GET_ATTRIBUTES, 0x2000 },
	{ OSD_ACT_SET_ATTRIBUTES, 0x1000 },
	{ OSD_ACT_CREATE_AND_WRITE, 0x4800 },
	{ OSD_ACT_COPY_USER_OBJECTS, 0x4800 },
	{ OSD_ACT_CREATE_USER_TRACKING_COLLECTION, 0x0800 },
	{ OSD_ACT_CREATE_COLLECTION, 0x0800 },
	{ OSD_ACT_REMOVE_COLLECTION, 0x0400 },
	{ OSD_ACT_LIST_COLLECTION, 0x8000 },
	{ OSD_ACT_SET_KEY, 0x0020 },
	{ OSD_ACT_SET_MASTER_KEY, 0x0020 },
	{ OSD_ACT_FLUSH_COLLECTION, 0x0200 },
	{ OSD_ACT_FLUSH_PARTITION, 0x0200 },
	{ OSD_ACT_FLUSH_OSD, 0x0200 },
	{ OSD_ACT_QUERY, 0x0008 },
	{ OSD_ACT_REMOVE_MEMBER_OBJECTS, 0x0410 },
	{ OSD_ACT_GET_MEMBER_ATTRIBUTES, 0x2010 },
	{ OSD_ACT_SET_MEMBER_ATTRIBUTES, 0x1010 },
	{ OSD_ACT_CREATE_CLONE, 0x0800 },
	{ OSD_ACT_CREATE_SNAPSHOT, 0x0800 },
	{ OSD_ACT_DETACH_CLONE, 0x0080 },
	{ OSD_ACT_REFRESH_SNAPSHOT_OR_CLONE, 0x0080 },
	{ OSD_ACT_RESTORE_PARTITION_FROM_SNAPSHOT, 0x0080 },
	{ OSD_ACT_READ_MAP, 0x8000 },
	{ OSD_ACT_READ_MAPS_AND_COMPARE, 0x8000 },
	{ OSD_ACT_PERFORM_SCSI_COMMAND, 0x0080 },
	{ OSD_ACT_PERFORM_TASK_MGMT, 0x0080 },
};

#define NACTIONS ((int)(sizeof(table) / sizeof(table[0])))

START_TEST(test_each_action)
{
	uint16_t got = osd_sec_required_permissions(table[_i].action);

	ck_assert_msg(got == table[_i].perms, "%s: got %04x want %04x",
		      osd_action_name(table[_i].action), got, table[_i].perms);
	/* every requirement is satisfiable by a full OSD-2 capability */
	ck_assert_uint_eq(got & ~OSD_PERM_ALL_V2, 0);
}
END_TEST

/* The table covers every action osd_action_from_code() knows. */
START_TEST(test_table_is_complete)
{
	unsigned code;
	int known = 0, i;

	for (code = 0x8800; code <= 0x8FFF; code++) {
		enum osd_action a;
		enum osd_version v;

		if (osd_action_from_code((uint16_t)code, &a, &v) != 0 || v != OSD_V2)
			continue;
		known++;
		for (i = 0; i < NACTIONS && table[i].action != a; i++)
			;
		ck_assert_msg(i < NACTIONS, "action %04x missing from the test table", code);
	}
	ck_assert_int_eq(known, NACTIONS);
}
END_TEST

/* v1 actions need no v2-only permission bits. */
START_TEST(test_v1_actions_fit_v1_capabilities)
{
	int i;

	for (i = 0; i < NACTIONS; i++) {
		if (osd_action_code(OSD_V1, table[i].action) < 0)
			continue;
		ck_assert_msg((table[i].perms & ~OSD_PERM_ALL_V1) == 0, "%s",
			      osd_action_name(table[i].action));
	}
}
END_TEST

START_TEST(test_unknown_action)
{
	ck_assert_uint_eq(osd_sec_required_permissions((enum osd_action)0), 0xFFFF);
	ck_assert_uint_eq(osd_sec_required_permissions((enum osd_action)0x888D), 0xFFFF);
	ck_assert_uint_eq(osd_sec_required_permissions((enum osd_action)0x8805), 0xFFFF);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("security_permissions");
	TCase *tc = tcase_create("permissions");
	SRunner *sr;
	int failed;

	tcase_add_loop_test(tc, test_each_action, 0, NACTIONS);
	tcase_add_test(tc, test_table_is_complete);
	tcase_add_test(tc, test_v1_actions_fit_v1_capabilities);
	tcase_add_test(tc, test_unknown_action);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
