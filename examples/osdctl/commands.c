/* osdctl subcommands. Each returns an exit code (0, 1 or 2). */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "osdctl.h"

#define IO_CHUNK (4u << 20)
#define GETALL_ALLOC (256u * 1024u)

static int usage_err(const char *cmd, const char *msg, const char *arg)
{
	fprintf(stderr, "osdctl %s: %s%s%s\n", cmd, msg, arg ? ": " : "", arg ? arg : "");
	fprintf(stderr, "Try 'osdctl %s --help'.\n", cmd);
	return EXIT_USAGE;
}

static int parse_id(const char *cmd, const char *what, const char *s, uint64_t *v)
{
	if (ctl_parse_u64(s, v))
		return usage_err(cmd, what, s);
	return 0;
}

/* PID [OID] as an object id; OID defaults to 0 when optional. */
static int parse_obj(const char *cmd, int argc, char **argv, struct osd_obj_id *o)
{
	o->partition = o->id = 0;
	if (argc > 0 && parse_id(cmd, "invalid partition id", argv[0], &o->partition))
		return EXIT_USAGE;
	if (argc > 1 && parse_id(cmd, "invalid object id", argv[1], &o->id))
		return EXIT_USAGE;
	return 0;
}

static int exec_req(struct tc_device *s, osd_req *req, const char *what)
{
	int rc = osd_req_execute(req);

	if (rc)
		return tc_device_fail(s, rc, what);
	return 0;
}

/* Partition ids seen by LIST at the root: all counted, the first 64 kept. */
struct id_list {
	uint64_t v[64];
	uint64_t n;
};

static int note_id(uint64_t id, void *p)
{
	struct id_list *l = p;

	if (l->n < 64)
		l->v[l->n] = id;
	l->n++;
	return 0;
}

/* What FORMAT OSD would erase: every partition and its objects (osd2r05,
 * FORMAT OSD clause). 0 to go on, or a failure's exit code. */
static int format_guard(struct tc_device *s, const struct ctl_opts *o)
{
	struct osd_obj_id root = { 0, 0 };
	struct id_list parts = { { 0 }, 0 }, objects = { { 0 }, 0 };
	char what[64] = "";
	int rc;

	if (o->force)
		return 0;
	rc = osd_list_foreach(s->dev, OSD_ACT_LIST, &root, note_id, &parts);
	if (rc)
		return tc_device_fail(s, rc, "format"); /* the same refusal as FORMAT OSD's */
	if (parts.n == 0)
		return 0;
	/* objects as far as this credential may list them (a partition's own key
	 * may be needed, which FORMAT OSD does not need) */
	for (uint64_t i = 0; rc == 0 && i < parts.n && i < 64; i++) {
		struct osd_obj_id part = { parts.v[i], 0 };

		rc = osd_list_foreach(s->dev, OSD_ACT_LIST, &part, note_id, &objects);
	}
	if (rc == 0)
		snprintf(what, sizeof(what), " with %s%" PRIu64 " object%s",
			 parts.n > 64 ? "at least " : "", objects.n, objects.n == 1 ? "" : "s");
	tc_err("format: %s holds %" PRIu64 " partition%s%s; format would erase them (--force "
	       "to erase)", o->dev.target_dir, parts.n, parts.n == 1 ? "" : "s", what);
	return EXIT_FAILED;
}

static int cmd_format(struct tc_device *s, const struct ctl_opts *o, int argc, char **argv)
{
	osd_req *req;
	int rc;

	(void)argc;
	(void)argv;
	rc = format_guard(s, o);
	if (rc)
		return rc;
	rc = osd_req_format(&req, s->dev, o->capacity);
	if (rc)
		return tc_device_fail(s, rc, "format");
	rc = exec_req(s, req, "format");
	osd_req_free(req);
	if (rc)
		return rc;
	/* FORMAT resets the root; install the root key again so it survives. */
	if (tc_device_install_root_key(s))
		return tc_device_fail(s, -EIO, "format: installing the root key");
	if (o->json)
		printf("{\"formatted\":true,\"version\":%d}\n", (int)osd_dev_version(s->dev));
	else
		printf("formatted (OSD-%d)\n", (int)osd_dev_version(s->dev));
	return EXIT_OK;
}

static int cmd_create_partition(struct tc_device *s, const struct ctl_opts *o, int argc,
				char **argv)
{
	struct osd_obj_id made;
	uint64_t pid = 0;
	osd_req *req;
	int rc;

	if (argc > 0 && parse_id("create-partition", "invalid partition id", argv[0], &pid))
		return EXIT_USAGE;
	if (pid != 0 && pid < OSD_FIRST_ID)
		return usage_err("create-partition", "partition ids start at 0x10000", argv[0]);
	rc = osd_req_create_partition(&req, s->dev, pid);
	if (rc)
		return tc_device_fail(s, rc, "create-partition");
	rc = exec_req(s, req, "create-partition");
	if (rc == 0 && osd_req_created_id(req, &made) != 0)
		made.partition = pid;
	osd_req_free(req);
	if (rc)
		return rc;
	if (made.partition == 0) {
		fprintf(stderr, "osdctl: create-partition: the target did not report the new id\n");
		return EXIT_FAILED;
	}
	/* keys, and the default security method that makes the target use them */
	rc = tc_device_secure_partition(s, made.partition);
	if (rc)
		return tc_device_fail(s, rc, "create-partition: keys and security method");
	if (o->json)
		printf("{\"partition\":%" PRIu64 "}\n", made.partition);
	else
		printf("0x%" PRIx64 "\n", made.partition);
	return EXIT_OK;
}

static int cmd_remove_partition(struct tc_device *s, const struct ctl_opts *o, int argc,
				char **argv)
{
	struct osd_obj_id obj;
	osd_req *req;
	int rc;

	(void)o;
	if (parse_obj("remove-partition", argc, argv, &obj))
		return EXIT_USAGE;
	rc = osd_req_remove_partition(&req, s->dev, obj.partition);
	if (rc)
		return rc == -EINVAL ? usage_err("remove-partition", "invalid partition id", argv[0])
				     : tc_device_fail(s, rc, "remove-partition");
	rc = exec_req(s, req, "remove-partition");
	osd_req_free(req);
	return rc;
}

static int cmd_create(struct tc_device *s, const struct ctl_opts *o, int argc, char **argv)
{
	struct osd_obj_id obj, made;
	osd_req *req;
	int rc;

	if (parse_obj("create", argc, argv, &obj))
		return EXIT_USAGE;
	if (obj.partition < OSD_FIRST_ID)
		return usage_err("create", "partition ids start at 0x10000", argv[0]);
	if (obj.id && obj.id < OSD_FIRST_ID)
		return usage_err("create", "object ids start at 0x10000", argv[1]);
	if (o->count > 1 && obj.id)
		return usage_err("create", "--count needs the target to pick the ids (no OID)", NULL);
	rc = osd_req_create(&req, s->dev, &obj, o->count);
	if (rc)
		return tc_device_fail(s, rc, "create");
	rc = exec_req(s, req, "create");
	if (rc == 0 && osd_req_created_id(req, &made) != 0)
		made = obj;
	osd_req_free(req);
	if (rc)
		return rc;
	if (o->json)
		printf("{\"partition\":%" PRIu64 ",\"object\":%" PRIu64 "}\n", made.partition,
		       made.id);
	else
		printf("0x%" PRIx64 "\n", made.id);
	return EXIT_OK;
}

static int need_user_obj(const char *cmd, int argc, char **argv, struct osd_obj_id *obj)
{
	if (parse_obj(cmd, argc, argv, obj))
		return EXIT_USAGE;
	if (obj->partition < OSD_FIRST_ID || obj->id < OSD_FIRST_ID)
		return usage_err(cmd, "partition and object ids start at 0x10000", NULL);
	return 0;
}

static int load_input(const struct ctl_opts *o, const char *cmd, uint8_t **buf, size_t *len)
{
	FILE *f = stdin;
	int rc;

	if (o->input && strcmp(o->input, "-") && !(f = fopen(o->input, "rb"))) {
		fprintf(stderr, "osdctl %s: %s: %s\n", cmd, o->input, strerror(errno));
		return EXIT_FAILED;
	}
	rc = ctl_read_all(f, buf, len);
	if (f != stdin)
		fclose(f);
	if (rc) {
		fprintf(stderr, "osdctl %s: reading the input: %s\n", cmd, strerror(-rc));
		return EXIT_FAILED;
	}
	return 0;
}

static int write_like(struct tc_device *s, const struct ctl_opts *o, int argc, char **argv,
		      int append)
{
	const char *cmd = append ? "append" : "write";
	struct osd_obj_id obj;
	uint64_t first_at = 0;
	uint8_t *buf;
	size_t len, done = 0;
	int rc = 0;

	if (need_user_obj(cmd, argc, argv, &obj))
		return EXIT_USAGE;
	if (load_input(o, cmd, &buf, &len))
		return EXIT_FAILED;
	do {
		size_t n = len - done < IO_CHUNK ? len - done : IO_CHUNK;
		struct iovec iov = { buf + done, n };
		osd_req *req;

		rc = append ? osd_req_append(&req, s->dev, &obj, &iov, 1)
			    : osd_req_write(&req, s->dev, &obj, o->offset + done, &iov, 1);
		if (rc) {
			rc = tc_device_fail(s, rc, cmd);
			break;
		}
		rc = exec_req(s, req, cmd);
		if (rc == 0 && append && done == 0 && osd_req_append_offset(req, &first_at))
			first_at = UINT64_MAX;
		osd_req_free(req);
		done += n;
	} while (rc == 0 && done < len);
	free(buf);
	if (rc)
		return rc;
	if (o->json) {
		printf("{\"bytes\":%zu", len);
		if (append && first_at != UINT64_MAX)
			printf(",\"offset\":%" PRIu64, first_at);
		printf("}\n");
	} else if (append && first_at != UINT64_MAX) {
		printf("appended %zu bytes at %" PRIu64 "\n", len, first_at);
	}
	return EXIT_OK;
}

static int cmd_write(struct tc_device *s, const struct ctl_opts *o, int argc, char **argv)
{
	return write_like(s, o, argc, argv, 0);
}

static int cmd_append(struct tc_device *s, const struct ctl_opts *o, int argc, char **argv)
{
	return write_like(s, o, argc, argv, 1);
}

static int cmd_read(struct tc_device *s, const struct ctl_opts *o, int argc, char **argv)
{
	struct osd_obj_id obj;
	uint64_t length = o->length, done = 0;
	uint8_t *buf;
	FILE *f = stdout;
	int rc = 0, is_short = 0;

	if (need_user_obj("read", argc, argv, &obj))
		return EXIT_USAGE;
	if (!o->have_length) {
		uint64_t logical;

		rc = osd_get_attr_u64(s->dev, &obj, OSD_APAGE_USER_BASE + OSD_APAGE_INFORMATION,
				      OSD_ATTR_UI_LOGICAL_LENGTH, &logical);
		if (rc)
			return tc_device_fail(s, rc, "read");
		length = logical > o->offset ? logical - o->offset : 0;
	}
	buf = malloc(IO_CHUNK);
	if (!buf)
		return tc_device_fail(s, -ENOMEM, "read");
	if (o->output && strcmp(o->output, "-") && !(f = fopen(o->output, "wb"))) {
		fprintf(stderr, "osdctl read: %s: %s\n", o->output, strerror(errno));
		free(buf);
		return EXIT_FAILED;
	}
	while (rc == 0 && done < length && !is_short) {
		uint64_t n = length - done < IO_CHUNK ? length - done : IO_CHUNK;
		struct iovec iov = { buf, (size_t)n };
		osd_req *req;

		rc = osd_req_read(&req, s->dev, &obj, o->offset + done, &iov, 1);
		if (rc) {
			rc = tc_device_fail(s, rc, "read");
			break;
		}
		rc = exec_req(s, req, "read");
		if (rc == 0) {
			n = osd_req_bytes_read(req);
			is_short = osd_req_is_short(req);
			if (fwrite(buf, 1, (size_t)n, f) != n) {
				fprintf(stderr, "osdctl read: writing the output: %s\n", strerror(errno));
				rc = EXIT_FAILED;
			}
			done += n;
		}
		osd_req_free(req);
	}
	free(buf);
	if (f != stdout && fclose(f) && rc == 0) {
		fprintf(stderr, "osdctl read: %s: %s\n", o->output, strerror(errno));
		rc = EXIT_FAILED;
	}
	return rc;
}

static int cmd_remove(struct tc_device *s, const struct ctl_opts *o, int argc, char **argv)
{
	struct osd_obj_id obj;
	osd_req *req;
	int rc;

	(void)o;
	if (need_user_obj("remove", argc, argv, &obj))
		return EXIT_USAGE;
	rc = osd_req_remove(&req, s->dev, &obj);
	if (rc)
		return tc_device_fail(s, rc, "remove");
	rc = exec_req(s, req, "remove");
	osd_req_free(req);
	return rc;
}

struct list_out {
	const struct ctl_opts *o;
	unsigned n;
};

static int print_id(uint64_t id, void *p)
{
	struct list_out *l = p;

	if (l->o->json)
		printf("%s%" PRIu64, l->n ? "," : "", id);
	else
		printf("0x%" PRIx64 "\n", id);
	l->n++;
	return 0;
}

static int cmd_list(struct tc_device *s, const struct ctl_opts *o, int argc, char **argv)
{
	struct osd_obj_id obj;
	struct list_out l = { o, 0 };
	int rc;

	if (parse_obj("list", argc, argv, &obj))
		return EXIT_USAGE;
	if (obj.partition && obj.partition < OSD_FIRST_ID)
		return usage_err("list", "partition ids start at 0x10000", argv[0]);
	if (o->json)
		printf(obj.partition ? "{\"partition\":%" PRIu64 ",\"objects\":["
				     : "{\"partitions\":[", obj.partition);
	rc = osd_list_foreach(s->dev, OSD_ACT_LIST, &obj, print_id, &l);
	if (o->json)
		printf("]}\n");
	return rc ? tc_device_fail(s, rc, "list") : EXIT_OK;
}

static int parse_attr_id(const char *cmd, const char *s, uint32_t *v)
{
	uint64_t x;

	if (!strcmp(s, "all")) {
		*v = OSD_ATTR_ALL;
		return 0;
	}
	if (ctl_parse_u64(s, &x) || x > UINT32_MAX)
		return usage_err(cmd, "invalid attribute page or number", s);
	*v = (uint32_t)x;
	return 0;
}

static int cmd_getattr(struct tc_device *s, const struct ctl_opts *o, int argc, char **argv)
{
	struct osd_obj_id obj;
	uint32_t page, number;
	struct osd_attr a;
	osd_req *req;
	int rc, n = 0;

	if (parse_obj("getattr", argc, argv, &obj) || parse_attr_id("getattr", argv[2], &page) ||
	    parse_attr_id("getattr", argv[3], &number))
		return EXIT_USAGE;
	rc = osd_req_get_attributes(&req, s->dev, &obj);
	if (rc == 0)
		rc = osd_req_add_get_attr(req, page, number);
	if (rc == 0)
		rc = osd_req_set_get_alloc(req, GETALL_ALLOC);
	if (rc) {
		osd_req_free(req);
		return tc_device_fail(s, rc, "getattr");
	}
	rc = exec_req(s, req, "getattr");
	if (rc) {
		osd_req_free(req);
		return rc;
	}
	if (o->json)
		printf("{\"attributes\":[");
	while ((rc = osd_req_next_attr(req, &a)) == 1) {
		if (o->json) {
			printf(n ? "," : "");
			out_attr(stdout, &a, 1, o->text);
		} else {
			if (page == OSD_ATTR_ALL || number == OSD_ATTR_ALL)
				printf("0x%x/0x%x: ", a.page, a.number);
			out_attr(stdout, &a, 0, o->text);
			printf("\n");
		}
		n++;
	}
	if (o->json)
		printf("]}\n");
	osd_req_free(req);
	if (rc < 0 && rc != -ENODATA)
		return tc_device_fail(s, rc, "getattr: malformed answer");
	if (n == 0 && page != OSD_ATTR_ALL && number != OSD_ATTR_ALL) {
		fprintf(stderr, "osdctl: getattr: attribute 0x%x/0x%x is not defined\n", page, number);
		return EXIT_FAILED;
	}
	return EXIT_OK;
}

static int cmd_setattr(struct tc_device *s, const struct ctl_opts *o, int argc, char **argv)
{
	struct osd_obj_id obj;
	uint32_t page, number;
	uint8_t val[OSD_ATTR_MAX_LEN];
	size_t len;
	int rc;

	if (parse_obj("setattr", argc, argv, &obj) || parse_attr_id("setattr", argv[2], &page) ||
	    parse_attr_id("setattr", argv[3], &number))
		return EXIT_USAGE;
	if (page == OSD_ATTR_ALL || number == OSD_ATTR_ALL)
		return usage_err("setattr", "'all' cannot be set", NULL);
	rc = ctl_parse_value(argv[4], o->text, o->size, val, sizeof(val), &len);
	if (rc)
		return usage_err("setattr", rc == -ERANGE ? "value does not fit in --size bytes" :
				 rc == -E2BIG ? "value too long" :
				 "invalid value (0x<hex bytes>, a decimal number, or --text)", argv[4]);
	rc = osd_set_attr(s->dev, &obj, page, number, val, (uint16_t)len);
	return rc ? tc_device_fail(s, rc, "setattr") : EXIT_OK;
}

static int cmd_flush(struct tc_device *s, const struct ctl_opts *o, int argc, char **argv)
{
	struct osd_obj_id obj;
	osd_req *req;
	int rc;

	if (parse_obj("flush", argc, argv, &obj))
		return EXIT_USAGE;
	if (o->scope < 0 || o->scope > 2)
		return usage_err("flush", "--scope is 0, 1 or 2", NULL);
	if (obj.id)
		rc = osd_req_flush(&req, s->dev, &obj, (enum osd_flush_scope)o->scope, 0, 0);
	else if (obj.partition)
		rc = osd_req_flush_partition(&req, s->dev, obj.partition,
					     (enum osd_flush_scope)o->scope);
	else
		rc = osd_req_flush_osd(&req, s->dev, (enum osd_flush_scope)o->scope);
	if (rc)
		return rc == -EINVAL ? usage_err("flush", "invalid object", NULL)
				     : tc_device_fail(s, rc, "flush");
	rc = exec_req(s, req, "flush");
	osd_req_free(req);
	return rc;
}

static int cmd_set_key(struct tc_device *s, const struct ctl_opts *o, int argc, char **argv)
{
	struct osd_obj_id obj;
	int rc;

	if (parse_obj("set-key", argc, argv, &obj))
		return EXIT_USAGE;
	if (obj.partition < OSD_FIRST_ID)
		return usage_err("set-key", "partition ids start at 0x10000", argv[0]);
	if (o->key_version > 15)
		return usage_err("set-key", "--key-version is 0..15", NULL);
	if (!tc_device_has_key(s))
		return usage_err("set-key", "--key-file with the root key is required", NULL);
	rc = tc_device_set_partition_keys(s, obj.partition, (uint8_t)o->key_version);
	return rc ? tc_device_fail(s, rc, "set-key") : EXIT_OK;
}

static const struct {
	uint32_t number;
	const char *name;
	int text;
} info_attrs[] = {
	{ OSD_ATTR_RI_VENDOR_ID, "vendor", 1 },
	{ OSD_ATTR_RI_PRODUCT_ID, "product", 1 },
	{ OSD_ATTR_RI_PRODUCT_MODEL, "model", 1 },
	{ OSD_ATTR_RI_PRODUCT_REVISION, "revision", 1 },
	{ OSD_ATTR_RI_SERIAL, "serial", 1 },
	{ OSD_ATTR_RI_OSD_NAME, "osd_name", 1 },
	{ OSD_ATTR_RI_SYSTEM_ID, "system_id", 0 },
	{ OSD_ATTR_RI_TOTAL_CAPACITY, "total_capacity", 0 },
	{ OSD_ATTR_RI_USED_CAPACITY, "used_capacity", 0 },
	{ OSD_ATTR_RI_NUM_PARTITIONS, "partitions", 0 },
	{ OSD_ATTR_RI_CLOCK, "clock_ms", 0 },
};

static int cmd_info(struct tc_device *s, const struct ctl_opts *o, int argc, char **argv)
{
	const uint32_t ri = OSD_APAGE_ROOT_BASE + OSD_APAGE_INFORMATION;
	struct osd_obj_id root = { 0, 0 };
	struct osd_attr a;
	osd_req *req;
	int rc;

	(void)argc;
	(void)argv;
	rc = osd_req_get_attributes(&req, s->dev, &root);
	for (size_t i = 0; rc == 0 && i < sizeof(info_attrs) / sizeof(info_attrs[0]); i++)
		rc = osd_req_add_get_attr(req, ri, info_attrs[i].number);
	if (rc) {
		osd_req_free(req);
		return tc_device_fail(s, rc, "info");
	}
	rc = exec_req(s, req, "info");
	if (rc) {
		osd_req_free(req);
		return rc;
	}
	if (o->json)
		printf("{\"osd_version\":%d", (int)osd_dev_version(s->dev));
	else
		printf("%-16s OSD-%d\n", "osd_version", (int)osd_dev_version(s->dev));
	for (size_t i = 0; i < sizeof(info_attrs) / sizeof(info_attrs[0]); i++) {
		if (osd_req_find_attr(req, ri, info_attrs[i].number, &a))
			continue;
		if (o->json) {
			printf(",\"%s\":", info_attrs[i].name);
			if (info_attrs[i].text) {
				size_t n = a.length;

				while (n && (((const char *)a.value)[n - 1] == ' ' ||
					     ((const char *)a.value)[n - 1] == '\0'))
					n--;
				out_json_string(stdout, a.value, n);
			} else if (a.length <= 8) {
				/* CLOCK is 6 bytes (osd2r01 §7.1.2.8): any length up to 8 */
				printf("%llu",
				       (unsigned long long)out_be_value(a.value, a.length));
			} else {
				printf("\"");
				out_hex(stdout, a.value, a.length);
				printf("\"");
			}
		} else {
			printf("%-16s ", info_attrs[i].name);
			out_attr(stdout, &a, 0, info_attrs[i].text);
			printf("\n");
		}
	}
	if (o->json)
		printf("}\n");
	osd_req_free(req);
	return EXIT_OK;
}

/* ---- scrub ------------------------------------------------------------------- */

struct ids {
	uint64_t *v;
	size_t n, cap;
};

static int collect_id(uint64_t id, void *payload)
{
	struct ids *l = payload;

	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 256;
		uint64_t *v = realloc(l->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		l->v = v;
		l->cap = cap;
	}
	l->v[l->n++] = id;
	return 0;
}

struct scrub {
	const struct ctl_opts *o;
	struct tc_progress prog;
	uint64_t objects, bytes, errors;
};

/* A damaged object: MEDIUM ERROR naming it and its first bad byte. */
static void scrub_error(struct scrub *sc, const struct osd_sense *sn, const char *msg)
{
	sc->errors++;
	if (sc->o->json) {
		printf("%s{\"partition\":%" PRIu64 ",\"object\":%" PRIu64 ",\"offset\":%" PRIu64
		       ",\"message\":", sc->errors > 1 ? "," : "", sn->object.partition,
		       sn->object.id, sn->information);
		out_json_string(stdout, msg, strlen(msg));
		printf("}");
	} else {
		fprintf(stderr, "%s%s: scrub: object 0x%" PRIx64 " in partition 0x%" PRIx64
			": data damaged at byte %" PRIu64 "\n", sc->prog.shown ? "\n" : "",
			tc_prog(), sn->object.id, sn->object.partition, sn->information);
		sc->prog.shown = 0;
	}
}

/* OBJECT STRUCTURE CHECK of one object, then its logical length (what was verified). */
static int scrub_object(struct tc_device *s, struct scrub *sc, uint64_t pid, uint64_t oid)
{
	struct osd_obj_id obj = { pid, oid };
	uint64_t len = 0;
	osd_req *req;
	int rc = osd_req_object_structure_check(&req, s->dev, &obj), damaged = 0;

	if (rc)
		return tc_device_fail(s, rc, "scrub");
	rc = osd_req_execute(req);
	const struct osd_sense *sn = osd_req_sense(req);
	if (rc == -EIO && sn && sn->key == OSD_SK_MEDIUM_ERROR) {
		scrub_error(sc, sn, osd_req_error(req));
		damaged = 1;
		rc = 0;
	}
	osd_req_free(req);
	if (rc == 0 && !damaged) {
		/* a collection has no length; a removed object none either */
		rc = osd_get_attr_u64(s->dev, &obj, OSD_APAGE_USER_BASE + OSD_APAGE_INFORMATION,
				      OSD_ATTR_UI_LOGICAL_LENGTH, &len);
		if (rc == -ENOENT || rc == -EINVAL)
			rc = 0;
	}
	if (rc == -ENOENT)
		rc = 0; /* removed meanwhile */
	if (rc)
		return tc_device_fail(s, rc, "scrub");
	sc->objects++;
	sc->bytes += len;
	tc_progress_add(&sc->prog, 1, len);
	return 0;
}

static int scrub_partition(struct tc_device *s, struct scrub *sc, uint64_t pid)
{
	struct osd_obj_id part = { pid, 0 };
	struct ids l = { NULL, 0, 0 };
	int rc = osd_list_foreach(s->dev, OSD_ACT_LIST, &part, collect_id, &l);

	if (rc) {
		free(l.v);
		return tc_device_fail(s, rc, "scrub: list");
	}
	for (size_t i = 0; i < l.n && !rc; i++)
		rc = scrub_object(s, sc, pid, l.v[i]);
	free(l.v);
	return rc;
}

static int cmd_scrub(struct tc_device *s, const struct ctl_opts *o, int argc, char **argv)
{
	struct osd_obj_id obj;
	struct ids parts = { NULL, 0, 0 };
	struct scrub sc = { .o = o };
	int rc = 0;

	if (parse_obj("scrub", argc, argv, &obj))
		return EXIT_USAGE;
	if (obj.partition && obj.partition < OSD_FIRST_ID)
		return usage_err("scrub", "partition ids start at 0x10000", argv[0]);
	if (obj.partition)
		rc = collect_id(obj.partition, &parts);
	else
		rc = osd_list_foreach(s->dev, OSD_ACT_LIST, &obj, collect_id, &parts);
	if (rc) {
		free(parts.v);
		return tc_device_fail(s, rc, "scrub: list");
	}
	tc_progress_init(&sc.prog, "scrub", 0, 0);
	if (o->json)
		printf("{\"errors\":[");
	for (size_t i = 0; i < parts.n && !rc; i++)
		rc = scrub_partition(s, &sc, parts.v[i]);
	free(parts.v);
	tc_progress_end(&sc.prog, 0);
	if (o->json)
		printf("],\"objects\":%" PRIu64 ",\"bytes_verified\":%" PRIu64
		       ",\"complete\":%s}\n", sc.objects, sc.bytes, rc ? "false" : "true");
	else if (!rc)
		printf("scrub: %" PRIu64 " objects, %" PRIu64 " bytes verified, %" PRIu64
		       " damaged\n", sc.objects, sc.bytes, sc.errors);
	if (rc)
		return rc;
	return sc.errors ? EXIT_FAILED : EXIT_OK;
}

const struct ctl_command ctl_commands[] = {
	{ "format", "", "erase the OSD (creates the store in --target DIR)",
	  "  --capacity BYTES   formatted capacity (default: all)\n"
	  "  -f, --force        erase the partitions it holds, or build the store in a\n"
	  "                     directory holding other files\n", 0, 0, "", cmd_format, 1 },
	{ "create-partition", "[PID]", "create a partition (PID 0 or none: the target picks)",
	  "", 0, 1, "p", cmd_create_partition, 0 },
	{ "remove-partition", "PID", "remove an empty partition", "", 1, 1, "p",
	  cmd_remove_partition, 0 },
	{ "create", "PID [OID]", "create a user object (no OID: the target picks)",
	  "  --count N          create N objects (target-picked ids)\n", 1, 2, "po", cmd_create, 0 },
	{ "write", "PID OID", "write a file or stdin into an object",
	  "  --offset N         byte offset (default 0)\n  --input FILE       read from FILE (default stdin)\n",
	  2, 2, "po", cmd_write, 0 },
	{ "append", "PID OID", "append a file or stdin to an object",
	  "  --input FILE       read from FILE (default stdin)\n", 2, 2, "po", cmd_append, 0 },
	{ "read", "PID OID", "read an object to stdout or a file",
	  "  --offset N         byte offset (default 0)\n  --length N         bytes (default: to the end)\n  --output FILE      write to FILE (default stdout)\n",
	  2, 2, "po", cmd_read, 0 },
	{ "remove", "PID OID", "remove a user object", "", 2, 2, "po", cmd_remove, 0 },
	{ "list", "[PID]", "list partitions, or the objects of partition PID", "", 0, 1, "p",
	  cmd_list, 0 },
	{ "getattr", "PID OID PAGE NUMBER", "print an attribute (PID OID 0 0 = root; 'all' allowed)",
	  "  --text             print the value as text\n", 4, 4, "poaa", cmd_getattr, 0 },
	{ "setattr", "PID OID PAGE NUMBER VALUE", "set an attribute",
	  "  --text             VALUE is text\n  --size N           bytes of a decimal VALUE: 1, 2, 4 or 8 (default 8)\n"
	  "                     (VALUE 0x... is raw hex bytes)\n", 5, 5, "poaav", cmd_setattr, 0 },
	{ "flush", "[PID [OID]]", "flush an object, a partition or the whole OSD",
	  "  --scope N          flush scope 0, 1 or 2 (default 0)\n", 0, 2, "po", cmd_flush, 0 },
	{ "set-key", "PID", "install partition key and a working key (SET KEY)",
	  "  --key-version V    working key version 0..15 (default 0)\n", 1, 1, "p", cmd_set_key, 0 },
	{ "scrub", "[PID]", "verify the data checksums of every object (OBJECT STRUCTURE CHECK)",
	  "", 0, 1, "p", cmd_scrub, 0 },
	{ "info", "", "print the root information (identity, capacity, clock)", "", 0, 0, "",
	  cmd_info, 0 },
	{ "inquiry", "", "same as info", "", 0, 0, "", cmd_info, 0 },
};

const unsigned ctl_num_commands = sizeof(ctl_commands) / sizeof(ctl_commands[0]);
