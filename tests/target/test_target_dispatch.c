/*
 * The command descriptor table (libosd/proto/command.c) against the target:
 * every descriptor has a dispatch row (a handler or an explicit
 * "unsupported"), an unsupported command is answered INVALID COMMAND
 * OPERATION CODE, and the permissions the target demands of each command it
 * runs are exactly the descriptor's (osd2r03 §4.11.2.2): any one bit missing
 * is refused at capability byte 49, all of them present is not.
 */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "exec/exec.h"
#include "harness.h"
#include "proto/command.h"

#define P1 0x10000ULL
#define O1 0x10000ULL
#define C1 0x10001ULL
#define FIELD_PERMISSIONS (80 + 49)

static struct h_target ht;

static enum osd_version ver(int i)
{
	return i ? OSD_V2 : OSD_V1;
}

/* Commands whose own object is a collection. */
static int on_collection(enum osd_action a)
{
	switch (a) {
	case OSD_ACT_REMOVE_COLLECTION:
	case OSD_ACT_LIST_COLLECTION:
	case OSD_ACT_FLUSH_COLLECTION:
	case OSD_ACT_GET_MEMBER_ATTRIBUTES:
	case OSD_ACT_SET_MEMBER_ATTRIBUTES:
	case OSD_ACT_REMOVE_MEMBER_OBJECTS:
		return 1;
	default:
		return 0;
	}
}

/* The object a command addresses, by the object its capability describes. */
static struct osd_obj_id addressed(const struct osd__cmd_desc *d)
{
	struct osd_obj_id o = { P1, on_collection(d->action) ? C1 : O1 };

	if (d->cap_scope == OSD__CAP_ROOT)
		o.partition = 0;
	if (d->cap_scope != OSD__CAP_SELF)
		o.id = 0;
	return o;
}

static void setup(enum osd_version v)
{
	struct h_req r;

	h_target_open(&ht);
	h_create_partition(&ht, v, P1);
	h_create_object(&ht, v, P1, O1);
	h_req(&r, v, OSD_ACT_CREATE_COLLECTION, P1, C1);
	h_run(&ht, &r);
	h_expect_good(&r);
	h_req_free(&r);
}

/* Run @p d with a NOSEC capability for its described object holding @p perms;
 * returns the field the target refused, or 0. */
static unsigned run_with(enum osd_version v, const struct osd__cmd_desc *d, uint16_t perms)
{
	struct osd_obj_id o = addressed(d);
	struct osd_credential cred;
	struct osd_obj_id cap_obj;
	struct h_req r;
	unsigned field = 0;

	h_req(&r, v, d->action, o.partition, o.id);
	if (d->action == OSD_ACT_SET_KEY)
		r.cdb.cmd_options = OSD_KEY_WORKING;
	if (d->action == OSD_ACT_SET_MASTER_KEY)
		r.cdb.cmd_options = 1;
	cap_obj = osd__cmd_cap_object(d, &o, r.cdb.cmd_options);
	memset(&cred, 0, sizeof(cred));
	cred.version = v;
	osd_capability_init(&cred.cap, v, &cap_obj, on_collection(d->action) && cap_obj.id,
			    perms, OSD_SEC_NOSEC);
	r.cred = &cred;
	h_run(&ht, &r);
	if (r.x.status == OSD_STATUS_CHECK_CONDITION && r.sense.has_field &&
	    r.sense.field_in_cdb)
		field = r.sense.field_pointer;
	h_req_free(&r);
	return field;
}

START_TEST(every_descriptor_has_a_dispatch_row)
{
	unsigned n = 0;

	for (size_t i = 0; i < OSD__CMD_SLOTS; i++) {
		const struct osd__cmd_desc *d = osd__cmd_desc_at(i);

		if (!d)
			continue;
		n++;
		ck_assert_msg(osd__target_cmd_state(d->action) >= 0, "%s has no dispatch row",
			      d->name);
	}
	ck_assert_uint_eq(n, 39);
	ck_assert_int_eq(osd__target_cmd_state((enum osd_action)0x888D), -ENOENT);
}
END_TEST

START_TEST(unsupported_is_invalid_opcode)
{
	enum osd_version v = ver(_i);

	setup(v);
	for (size_t i = 0; i < OSD__CMD_SLOTS; i++) {
		const struct osd__cmd_desc *d = osd__cmd_desc_at(i);
		struct h_req r;

		if (!d || osd__target_cmd_state(d->action) != 0 ||
		    osd_action_code(v, d->action) < 0)
			continue;
		h_req(&r, v, d->action, P1, O1);
		h_run(&ht, &r);
		h_expect_field(&r, OSD_SK_ILLEGAL_REQUEST, OSD_ASC_INVALID_OPCODE, 8);
		h_req_free(&r);
	}
	h_target_close(&ht);
}
END_TEST

START_TEST(target_demands_the_descriptor_permissions)
{
	enum osd_version v = ver(_i);
	uint16_t all = v == OSD_V1 ? OSD_PERM_ALL_V1 : OSD_PERM_ALL_V2;
	unsigned checked = 0;

	for (size_t i = 0; i < OSD__CMD_SLOTS; i++) {
		const struct osd__cmd_desc *d = osd__cmd_desc_at(i);

		if (!d || osd__target_cmd_state(d->action) != 1 ||
		    osd_action_code(v, d->action) < 0)
			continue;
		setup(v);
		for (unsigned b = 0; b < 16; b++) {
			uint16_t bit = (uint16_t)(1u << b);

			if (!(d->perms & bit))
				continue;
			ck_assert_msg(run_with(v, d, (uint16_t)(all & ~bit)) == FIELD_PERMISSIONS,
				      "%s without permission 0x%04x was not refused", d->name, bit);
		}
		ck_assert_msg(run_with(v, d, d->perms) != FIELD_PERMISSIONS,
			      "%s refused with exactly its permissions 0x%04x", d->name, d->perms);
		h_target_close(&ht);
		checked++;
	}
	ck_assert_uint_eq(checked, v == OSD_V1 ? 21 : 28);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("target_dispatch");
	TCase *tc = tcase_create("descriptors");

	tcase_add_test(tc, every_descriptor_has_a_dispatch_row);
	tcase_add_loop_test(tc, unsupported_is_invalid_opcode, 0, 2);
	tcase_add_loop_test(tc, target_demands_the_descriptor_permissions, 0, 2);
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
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
