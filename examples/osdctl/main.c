/*
 * osdctl: command-line access to an OSD.
 *
 *   osdctl [global options] COMMAND [options] [arguments]
 *
 * Options may appear before or after the command. Exit codes: 0 success,
 * 1 the operation failed, 2 usage error.
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include "osdctl.h"

enum {
	OPT_TARGET = 't', OPT_HELP = 'h', OPT_VERSION = 'V', OPT_JSON = 'j',
	OPT_OSD_VERSION = 256, OPT_SECURITY, OPT_KEY_FILE, OPT_INITIATOR_NAME,
	OPT_HEADER_DIGEST, OPT_DATA_DIGEST, OPT_CHAP_USER, OPT_CHAP_SECRET_FILE,
	OPT_SECMGR, OPT_CERT, OPT_KEY, OPT_CA, OPT_INPUT, OPT_OUTPUT,
	OPT_OFFSET, OPT_LENGTH, OPT_CAPACITY, OPT_COUNT, OPT_TEXT, OPT_SIZE,
	OPT_KEY_VERSION, OPT_SCOPE, OPT_FORCE
};

static const struct option long_opts[] = {
	{ "target", required_argument, NULL, OPT_TARGET },
	{ "osd-version", required_argument, NULL, OPT_OSD_VERSION },
	{ "security", required_argument, NULL, OPT_SECURITY },
	{ "key-file", required_argument, NULL, OPT_KEY_FILE },
	{ "security-manager", required_argument, NULL, OPT_SECMGR },
	{ "cert", required_argument, NULL, OPT_CERT },
	{ "key", required_argument, NULL, OPT_KEY },
	{ "ca", required_argument, NULL, OPT_CA },
	{ "initiator-name", required_argument, NULL, OPT_INITIATOR_NAME },
	{ "header-digest", required_argument, NULL, OPT_HEADER_DIGEST },
	{ "data-digest", required_argument, NULL, OPT_DATA_DIGEST },
	{ "chap-user", required_argument, NULL, OPT_CHAP_USER },
	{ "chap-secret-file", required_argument, NULL, OPT_CHAP_SECRET_FILE },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "help", no_argument, NULL, OPT_HELP },
	{ "version", no_argument, NULL, OPT_VERSION },
	{ "verbose", no_argument, NULL, 'v' },
	{ "input", required_argument, NULL, OPT_INPUT },
	{ "output", required_argument, NULL, OPT_OUTPUT },
	{ "offset", required_argument, NULL, OPT_OFFSET },
	{ "length", required_argument, NULL, OPT_LENGTH },
	{ "capacity", required_argument, NULL, OPT_CAPACITY },
	{ "count", required_argument, NULL, OPT_COUNT },
	{ "text", no_argument, NULL, OPT_TEXT },
	{ "size", required_argument, NULL, OPT_SIZE },
	{ "key-version", required_argument, NULL, OPT_KEY_VERSION },
	{ "scope", required_argument, NULL, OPT_SCOPE },
	{ "force", no_argument, NULL, OPT_FORCE },
	{ NULL, 0, NULL, 0 },
};

static const char other_help[] =
	"Other options:\n"
	"  -j, --json             machine-readable output (strings that are not UTF-8:\n"
	"                         see osdctl(1), JSON)\n"
	"  -v, --verbose          say which device is opened and how (stderr)\n"
	"  -h, --help             this help (after a command: that command's help)\n"
	"  -V, --version          print the version\n";

static void usage(FILE *f)
{
	fprintf(f, "usage: osdctl [options] COMMAND [command options] [arguments]\n\nCommands:\n");
	for (unsigned i = 0; i < ctl_num_commands; i++) {
		char head[64];

		snprintf(head, sizeof(head), "%s %s", ctl_commands[i].name, ctl_commands[i].args);
		fprintf(f, "  %-34s %s\n", head, ctl_commands[i].summary);
	}
	fprintf(f, "\n%s%s%s%s\nExit status: 0 success, 1 the operation failed, 2 usage error.\n",
		tc_device_help, tc_device_secmgr_help, tc_device_iscsi_help, other_help);
}

static void command_help(const struct ctl_command *c)
{
	printf("usage: osdctl [options] %s %s\n\n%s.\n", c->name, c->args, c->summary);
	if (*c->options)
		printf("\nOptions:\n%s", c->options);
	printf("\n%s%s%s%s", tc_device_help, tc_device_secmgr_help, tc_device_iscsi_help, other_help);
}

static const struct ctl_command *find_command(const char *name)
{
	for (unsigned i = 0; i < ctl_num_commands; i++)
		if (!strcmp(ctl_commands[i].name, name))
			return &ctl_commands[i];
	return NULL;
}

/* Command-specific options are accepted only by commands that document them. */
static int option_allowed(const struct ctl_command *c, const char *name)
{
	char key[32];

	snprintf(key, sizeof(key), "--%s ", name);
	return c && strstr(c->options, key) != NULL;
}

static int try_help(const char *cmd)
{
	fprintf(stderr, "Try 'osdctl %s%s--help'.\n", cmd ? cmd : "", cmd ? " " : "");
	return EXIT_USAGE;
}

static int bad(const char *cmd, const char *msg, const char *arg)
{
	fprintf(stderr, "osdctl%s%s: %s%s%s\n", cmd ? " " : "", cmd ? cmd : "", msg,
		arg ? ": " : "", arg ? arg : "");
	return try_help(cmd);
}

static int num_opt(const char *cmd, const char *name, const char *arg, uint64_t *v)
{
	if (ctl_parse_u64(arg, v)) {
		char msg[64];

		snprintf(msg, sizeof(msg), "invalid --%s", name);
		return bad(cmd, msg, arg);
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct ctl_opts o = { .dev = TC_DEVICE_OPTS_INIT };
	const struct ctl_command *cmd = NULL;
	const char *cmdname = NULL;
	int want_help = 0, want_version = 0, c, idx, rc;
	int nargs = 0;
	char **args = calloc((size_t)argc + 1, sizeof(*args));
	uint64_t v;

	if (!args)
		return EXIT_FAILED;
	tc_set_prog("osdctl");
	o.dev.create_cmd = "'osdctl format'";
	opterr = 0;
	/* '-' keeps operands in order: the first is the command, the rest its arguments. */
	while ((c = getopt_long(argc, argv, "-t:jhvVf", long_opts, &idx)) != -1) {
		const char *name = NULL;

		if (c == 'f')
			c = OPT_FORCE;
		for (const struct option *lo = long_opts; lo->name; lo++)
			if (lo->val == c)
				name = lo->name;
		if (c >= OPT_INPUT && name && !option_allowed(cmd, name)) {
			rc = bad(cmdname, "option not accepted here", argv[optind - 1]);
			goto out;
		}
		switch (c) {
		case 1:
			if (!cmd) {
				cmdname = optarg;
				cmd = find_command(optarg);
				if (!cmd) {
					rc = bad(NULL, "unknown command", optarg);
					goto out;
				}
			} else {
				args[nargs++] = optarg;
			}
			break;
		case OPT_TARGET:
		case OPT_OSD_VERSION:
		case OPT_SECURITY:
		case OPT_KEY_FILE:
		case OPT_INITIATOR_NAME:
		case OPT_HEADER_DIGEST:
		case OPT_DATA_DIGEST:
		case OPT_CHAP_USER:
		case OPT_CHAP_SECRET_FILE:
		case OPT_SECMGR:
		case OPT_CERT:
		case OPT_KEY:
		case OPT_CA:
			if (tc_device_option(&o.dev, name, optarg) < 0) {
				rc = try_help(cmdname);
				goto out;
			}
			break;
		case OPT_JSON: o.json = 1; break;
		case 'v': tc_set_verbose(tc_verbose() + 1); break;
		case OPT_HELP: want_help = 1; break;
		case OPT_VERSION: want_version = 1; break;
		case OPT_INPUT: o.input = optarg; break;
		case OPT_OUTPUT: o.output = optarg; break;
		case OPT_TEXT: o.text = 1; break;
		case OPT_FORCE: o.force = 1; break;
		case OPT_OFFSET:
		case OPT_LENGTH:
		case OPT_CAPACITY:
		case OPT_COUNT:
		case OPT_SIZE:
		case OPT_KEY_VERSION:
		case OPT_SCOPE:
			if (num_opt(cmdname, name, optarg, &v)) {
				rc = EXIT_USAGE;
				goto out;
			}
			if (c == OPT_OFFSET)
				o.offset = v;
			else if (c == OPT_LENGTH) {
				o.length = v;
				o.have_length = 1;
			} else if (c == OPT_CAPACITY)
				o.capacity = v;
			else if (c == OPT_COUNT && v >= 1 && v <= 0xFFFF)
				o.count = (unsigned)v;
			else if (c == OPT_SIZE && (v == 1 || v == 2 || v == 4 || v == 8))
				o.size = (unsigned)v;
			else if (c == OPT_KEY_VERSION && v <= 15)
				o.key_version = (unsigned)v;
			else if (c == OPT_SCOPE && v <= 2)
				o.scope = (int)v;
			else {
				rc = bad(cmdname, "value out of range", argv[optind - 1]);
				goto out;
			}
			break;
		default:
			rc = bad(cmdname, "unknown or incomplete option", argv[optind - 1]);
			goto out;
		}
	}
	if (want_version) {
		printf("osdctl %s\n", osd_version_string());
		rc = EXIT_OK;
		goto out;
	}
	if (want_help) {
		if (cmd)
			command_help(cmd);
		else
			usage(stdout);
		rc = EXIT_OK;
		goto out;
	}
	if (!cmd) {
		usage(stderr);
		rc = EXIT_USAGE;
		goto out;
	}
	if (nargs < cmd->min_args || nargs > cmd->max_args) {
		rc = bad(cmd->name, nargs < cmd->min_args ? "missing arguments" : "too many arguments",
			 NULL);
		goto out;
	}
	for (int i = 0; i < nargs; i++) {
		uint8_t val[OSD_ATTR_MAX_LEN];
		size_t vlen;
		char kind = cmd->kinds[i];

		if ((kind == 'p' || kind == 'o') && ctl_parse_u64(args[i], &v)) {
			rc = bad(cmd->name, kind == 'p' ? "invalid partition id" : "invalid object id",
				 args[i]);
			goto out;
		}
		if (kind == 'a' && strcmp(args[i], "all") &&
		    (ctl_parse_u64(args[i], &v) || v > UINT32_MAX)) {
			rc = bad(cmd->name, "invalid attribute page or number", args[i]);
			goto out;
		}
		if (kind == 'v' && ctl_parse_value(args[i], o.text, o.size, val, sizeof(val), &vlen)) {
			rc = bad(cmd->name, "invalid value (0x<hex bytes>, a number that fits --size, or --text)",
				 args[i]);
			goto out;
		}
	}
	if (tc_device_check(&o.dev) < 0) {
		rc = try_help(cmd->name);
		goto out;
	}
	{
		struct tc_device s;

		/* no store built among unrelated files (format's own check: cmd_format) */
		if (cmd->creates_store && !o.dev.remote &&
		    tc_guard_dir(o.dev.target_dir, o.force, "--force") < 0) {
			rc = EXIT_FAILED;
			goto out;
		}
		if (tc_device_open(&s, &o.dev, cmd->creates_store) < 0) {
			rc = EXIT_FAILED;
			goto out;
		}
		rc = cmd->run(&s, &o, nargs, args);
		tc_device_close(&s);
	}
out:
	free(args);
	return rc;
}
