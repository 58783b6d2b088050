/*
 * The command descriptor table (libosd/proto/command.c) and everything
 * derived from it: codes and names, the codec, permissions, resend classes
 * and the object a capability describes all agree with the table, and the
 * table is internally consistent.
 */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <osd/capability.h>
#include <osd/cdb.h>
#include <osd/security.h>
#include <osd/sys/transport.h>
#include "proto/command.h"

/* Every slot holds its own action, and lookups find it. */
START_TEST(slots_and_lookup)
{
	unsigned n = 0;

	for (size_t i = 0; i < OSD__CMD_SLOTS; i++) {
		const struct osd__cmd_desc *d = osd__cmd_desc_at(i);

		if (!d)
			continue;
		n++;
		ck_assert_uint_eq(OSD__CMD_INDEX(d->action), i);
		ck_assert_ptr_eq(osd__cmd_desc_of(d->action), d);
		ck_assert(d->name && d->name[0]);
		ck_assert_str_eq(osd_action_name(d->action), d->name);
		for (size_t j = 0; j < i; j++) {
			const struct osd__cmd_desc *e = osd__cmd_desc_at(j);

			ck_assert_msg(!e || strcmp(e->name, d->name), "%s twice", d->name);
		}
	}
	ck_assert_uint_eq(n, 39);
	ck_assert_ptr_null(osd__cmd_desc_at(OSD__CMD_SLOTS));
	ck_assert_ptr_null(osd__cmd_desc_of((enum osd_action)0x888D));
	ck_assert_ptr_null(osd__cmd_desc_of((enum osd_action)0x8F7E));
	ck_assert_ptr_null(osd__cmd_desc_of((enum osd_action)0));
}
END_TEST

/* Every service-action code the decoder knows has a descriptor, and the
 * codes of a descriptor decode back to it. */
START_TEST(every_code_has_a_descriptor)
{
	unsigned v1 = 0, v2 = 0;

	for (unsigned code = 0; code <= 0xFFFF; code++) {
		enum osd_action a;
		enum osd_version v;

		if (osd_action_from_code((uint16_t)code, &a, &v) != 0)
			continue;
		ck_assert_ptr_nonnull(osd__cmd_desc_of(a));
		ck_assert_int_eq(osd_action_code(v, a), (int)code);
		if (v == OSD_V1) {
			ck_assert(osd__cmd_desc_of(a)->in_v1);
			v1++;
		} else {
			v2++;
		}
	}
	ck_assert_uint_eq(v2, 39);
	ck_assert_uint_eq(v1, 23);
}
END_TEST

/* Permissions and resend classes are the descriptor's, and sane. */
START_TEST(derived_permissions_and_resend)
{
	for (size_t i = 0; i < OSD__CMD_SLOTS; i++) {
		const struct osd__cmd_desc *d = osd__cmd_desc_at(i);

		if (!d)
			continue;
		ck_assert_uint_eq(osd_sec_required_permissions(d->action), d->perms);
		ck_assert_int_eq(osd_action_resend(d->action), d->resend);
		ck_assert_uint_ne(d->perms, 0);
		ck_assert_uint_eq(d->perms & ~OSD_PERM_ALL_V2, 0);
		if (d->in_v1)
			ck_assert_msg((d->perms & ~OSD_PERM_ALL_V1) == 0,
				      "%s needs a permission OSD-1 lacks", d->name);
		else
			ck_assert_uint_eq(d->opt_v1, 0);
		/* Only commands that change nothing are sent twice blindly; a
		 * creating or removing one never. OBJECT STRUCTURE CHECK is a
		 * device management command that only verifies (a scrub). */
		if ((d->perms & (OSD_PERM_CREATE | OSD_PERM_REMOVE | OSD_PERM_APPEND |
				 OSD_PERM_POL_SEC | OSD_PERM_DEV_MGMT)) &&
		    d->action != OSD_ACT_OBJECT_STRUCTURE_CHECK)
			ck_assert_msg(d->resend == OSD_XFER_RESEND_NEVER, "%s resent", d->name);
		if (d->resend == OSD_XFER_RESEND_ALWAYS)
			ck_assert_msg(!(d->perms & (OSD_PERM_WRITE | OSD_PERM_SET_ATTR)),
				      "%s writes but is always resent", d->name);
		if (d->data != OSD__DATA_NONE)
			ck_assert(d->uses & OSD__U_LEN);
		if (d->range == OSD__RANGE_BYTES)
			ck_assert((d->uses & (OSD__U_LEN | OSD__U_SBA)) ==
				  (OSD__U_LEN | OSD__U_SBA));
	}
}
END_TEST

/* Every descriptor encodes in each version it exists in and decodes back. */
START_TEST(codec_covers_every_descriptor)
{
	for (size_t i = 0; i < OSD__CMD_SLOTS; i++) {
		const struct osd__cmd_desc *d = osd__cmd_desc_at(i);

		for (int v = OSD_V1; d && v <= OSD_V2; v++) {
			struct osd_cdb c, back;
			uint8_t buf[OSD_CDB_MAX_LEN];
			uint16_t field = 0;
			int n;

			osd_cdb_init(&c, (enum osd_version)v, d->action);
			if (d->action == OSD_ACT_SET_KEY)
				c.cmd_options = OSD_KEY_PARTITION;
			c.obj.partition = d->cap_scope == OSD__CAP_ROOT ? 0 : 0x10000;
			n = osd_cdb_encode(&c, buf, sizeof(buf));
			if (v == OSD_V1 && !d->in_v1) {
				ck_assert_int_eq(n, -ENOTSUP);
				continue;
			}
			ck_assert_msg(n > 0, "%s v%d: %d", d->name, v, n);
			ck_assert_int_eq(osd_cdb_decode(buf, (size_t)n, &back, &field), 0);
			ck_assert_int_eq(back.action, d->action);
			ck_assert_int_eq(back.version, v);
		}
	}
}
END_TEST

/* The described object, known-good: osd2r03 §4.11.2.2 (docs/security.md §1). */
START_TEST(capability_object)
{
	const struct osd_obj_id obj = { 0x10000, 0x10005 };
	struct osd_obj_id o;

	o = osd__cmd_cap_object(osd__cmd_desc_of(OSD_ACT_READ), &obj, 0);
	ck_assert(o.partition == 0x10000 && o.id == 0x10005);
	o = osd__cmd_cap_object(osd__cmd_desc_of(OSD_ACT_CREATE), &obj, 0);
	ck_assert(o.partition == 0x10000 && o.id == 0);
	o = osd__cmd_cap_object(osd__cmd_desc_of(OSD_ACT_CREATE_AND_WRITE), &obj, 0);
	ck_assert(o.partition == 0x10000 && o.id == 0);
	o = osd__cmd_cap_object(osd__cmd_desc_of(OSD_ACT_CREATE_PARTITION), &obj, 0);
	ck_assert(o.partition == 0 && o.id == 0);
	o = osd__cmd_cap_object(osd__cmd_desc_of(OSD_ACT_FORMAT_OSD), &obj, 0);
	ck_assert(o.partition == 0 && o.id == 0);
	o = osd__cmd_cap_object(osd__cmd_desc_of(OSD_ACT_LIST), &obj, 0);
	ck_assert(o.partition == 0x10000 && o.id == 0);
	o = osd__cmd_cap_object(osd__cmd_desc_of(OSD_ACT_SET_KEY), &obj, OSD_KEY_ROOT);
	ck_assert(o.partition == 0 && o.id == 0);
	o = osd__cmd_cap_object(osd__cmd_desc_of(OSD_ACT_SET_KEY), &obj, OSD_KEY_WORKING);
	ck_assert(o.partition == 0x10000 && o.id == 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("proto_command");
	TCase *tc = tcase_create("descriptors");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, slots_and_lookup);
	tcase_add_test(tc, every_code_has_a_descriptor);
	tcase_add_test(tc, derived_permissions_and_resend);
	tcase_add_test(tc, codec_covers_every_descriptor);
	tcase_add_test(tc, capability_object);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
