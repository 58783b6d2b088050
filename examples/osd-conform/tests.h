/* The tests of the table in tests.c, by file. */
#ifndef OSD_CONFORM_TESTS_H
#define OSD_CONFORM_TESTS_H

#include "conform.h"

enum cf_result t_inquiry(struct cf_ctx *c);
enum cf_result t_inquiry_vpd(struct cf_ctx *c);
enum cf_result t_report_luns(struct cf_ctx *c);
enum cf_result t_test_unit_ready(struct cf_ctx *c);
enum cf_result t_object_structure_check(struct cf_ctx *c);
enum cf_result t_unknown_service_action(struct cf_ctx *c);
enum cf_result t_nonce_replay(struct cf_ctx *c);
enum cf_result t_create(struct cf_ctx *c);
enum cf_result t_create_any_id(struct cf_ctx *c);
enum cf_result t_create_existing(struct cf_ctx *c);
enum cf_result t_write_read(struct cf_ctx *c);
enum cf_result t_write_sparse(struct cf_ctx *c);
enum cf_result t_read_short(struct cf_ctx *c);
enum cf_result t_read_missing(struct cf_ctx *c);
enum cf_result t_read_wrong_partition(struct cf_ctx *c);
enum cf_result t_append(struct cf_ctx *c);
enum cf_result t_create_and_write(struct cf_ctx *c);
enum cf_result t_clear(struct cf_ctx *c);
enum cf_result t_punch(struct cf_ctx *c);
enum cf_result t_flush(struct cf_ctx *c);
enum cf_result t_flush_partition(struct cf_ctx *c);
enum cf_result t_flush_osd(struct cf_ctx *c);
enum cf_result t_remove(struct cf_ctx *c);
enum cf_result t_write_missing(struct cf_ctx *c);
enum cf_result t_write_read_large(struct cf_ctx *c);
enum cf_result t_write_piggyback(struct cf_ctx *c);
enum cf_result t_timestamps(struct cf_ctx *c);
enum cf_result t_create_with_attributes(struct cf_ctx *c);
enum cf_result t_append_missing(struct cf_ctx *c);
enum cf_result t_get_attr_list(struct cf_ctx *c);
enum cf_result t_get_attr_page(struct cf_ctx *c);
enum cf_result t_set_attr_list(struct cf_ctx *c);
enum cf_result t_set_attr_page(struct cf_ctx *c);
enum cf_result t_set_attr_readonly(struct cf_ctx *c);
enum cf_result t_get_attr_undefined(struct cf_ctx *c);
enum cf_result t_set_logical_length(struct cf_ctx *c);
enum cf_result t_root_information(struct cf_ctx *c);
enum cf_result t_partition_information(struct cf_ctx *c);
enum cf_result t_get_attr_missing(struct cf_ctx *c);
enum cf_result t_set_attr_bad_length(struct cf_ctx *c);
enum cf_result t_list(struct cf_ctx *c);
enum cf_result t_list_partitions(struct cf_ctx *c);
enum cf_result t_collection(struct cf_ctx *c);
enum cf_result t_remove_collection(struct cf_ctx *c);
enum cf_result t_flush_collection(struct cf_ctx *c);
enum cf_result t_query(struct cf_ctx *c);
enum cf_result t_get_member_attributes(struct cf_ctx *c);
enum cf_result t_set_member_attributes(struct cf_ctx *c);
enum cf_result t_remove_member_objects(struct cf_ctx *c);
enum cf_result t_create_collection_existing(struct cf_ctx *c);
enum cf_result t_create_partition_existing(struct cf_ctx *c);
enum cf_result t_remove_partition(struct cf_ctx *c);
enum cf_result t_set_key(struct cf_ctx *c);
enum cf_result t_set_master_key(struct cf_ctx *c);
enum cf_result t_format(struct cf_ctx *c);
enum cf_result t_cap_wrong_object(struct cf_ctx *c);
enum cf_result t_cap_permissions(struct cf_ctx *c);
enum cf_result t_cap_expired(struct cf_ctx *c);
enum cf_result t_bad_request_icv(struct cf_ctx *c);
enum cf_result t_weaker_method(struct cf_ctx *c);

#endif
