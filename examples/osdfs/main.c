/*
 * osdfs: command-line access to an osdfs filesystem on an OSD.
 *
 *   osdfs [--target DIR|URL]... [--partition ID] [global options] COMMAND [args]
 *
 * One --target is a plain filesystem (or one device of a layout); several
 * are the devices of a layout that spreads the filesystem over them.
 * Every command opens the device, mounts (read-only for queries), does its
 * work and unmounts. Exit codes: 0 success, 1 the operation failed, 2 usage
 * error, 128 + N stopped by signal N (interrupt.c); fsck: 0 clean, 1 damage
 * repaired, 4 damage left, 8 fsck could not run (docs/osdfs-cli.md).
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include "osdfs_tool.h"

static const struct command commands[] = {
	{ "mkfs", "mkfs [-f] [--capacity SIZE] [--label L] [--block-size SIZE] [--layout SPEC]",
	  "Create an empty filesystem on the partition (creating the target store\n"
	  "if needed). With several --target, the filesystem is spread over all of\n"
	  "them (RAID 0 unless --layout).\n"
	  "  -f, --force        erase what the partition holds, or build the store in\n"
	  "                     a directory of other files (refused without)\n"
	  "  --capacity SIZE    partition quota, e.g. 10G (default: unlimited)\n"
	  "  --label L          filesystem label (at most 63 bytes)\n"
	  "  --block-size SIZE  directory block size, 1K..32K (default 4K)\n"
	  "  --layout SPEC      default data map: raid0, raid1, raid10, raid4, raid5 or\n"
	  "                     raid6, then su=SIZE (stripe unit, default 64K),\n"
	  "                     width=N, depth=N, comps=N, mirrors=N, comma-separated,\n"
	  "                     e.g. raid5,su=64K,width=4\n", cmd_mkfs },
	{ "ls", "ls [-l] [-a] [-R] [PATH...]",
	  "List directories (or show files).\n"
	  "  -l  long format: mode, links, owner, group, size, mtime\n"
	  "  -a  include names starting with '.', and '.' and '..'\n"
	  "  -R  list subdirectories recursively\n", cmd_ls },
	{ "stat", "stat PATH...", "Show every attribute of files (symlinks not followed).\n", cmd_stat },
	{ "cat", "cat PATH...", "Write files to standard output.\n", cmd_cat },
	{ "put", "put [-P|-H|-L] LOCAL REMOTE",
	  "Copy one local file into the filesystem (into REMOTE if it is a directory),\n"
	  "under a temporary name renamed when complete: a failed put leaves nothing.\n"
	  "LOCAL '-' is standard input; a fifo or device is read to its end.\n"
	  "  -H  follow a symlink LOCAL (the default)\n"
	  "  -P  store a symlink LOCAL as a symlink\n", cmd_put },
	{ "get", "get [-P|-H|-L] REMOTE LOCAL",
	  "Copy one file out of the filesystem (into LOCAL if it is a directory;\n"
	  "LOCAL '-' is standard output).\n"
	  "  -H  follow a symlink REMOTE (the default)\n"
	  "  -P  copy a symlink REMOTE as a symlink\n", cmd_get },
	{ "cp", "cp [-r] [-a] [-P|-H|-L] SRC... DEST",
	  "Copy into or out of the filesystem. Remote paths start with ':' (\":/dir\"):\n"
	  "either every SRC is local and DEST remote, or the other way round.\n"
	  "Modes, times (to the nanosecond), symlinks, hard links and holes are kept.\n"
	  "A file that fails or is interrupted is removed.\n"
	  "  -r  copy directories recursively\n"
	  "  -a  archive: -r, and keep owner and group (copying out: when root)\n"
	  "  -P  copy symlinks as symlinks (the default with -r)\n"
	  "  -H  follow symlinks named as SRC (the default without -r)\n"
	  "  -L  follow every symlink\n"
	  "  --progress  show progress on stderr even when it is not a terminal\n", cmd_cp },
	{ "mkdir", "mkdir [-p] PATH...",
	  "Create directories.\n  -p  create missing parents; no error if it exists\n", cmd_mkdir },
	{ "rm", "rm [-r] [-f] PATH...",
	  "Remove files.\n  -r  remove directories and their contents\n"
	  "  -f  ignore missing files\n", cmd_rm },
	{ "mv", "mv SRC DEST", "Rename or move (into DEST if it is a directory).\n", cmd_mv },
	{ "ln", "ln [-s] TARGET LINKNAME",
	  "Create a hard link LINKNAME to the remote file TARGET, or with -s a\n"
	  "symbolic link whose contents are TARGET.\n", cmd_ln },
	{ "df", "df [-h]", "Show space and inode usage.\n  -h  sizes like 1.5G\n", cmd_df },
	{ "fsck", "fsck [--repair] [--verify-data]",
	  "Check the filesystem; with --repair fix what is found. A filesystem in use\n"
	  "is checked with a warning and not repaired; one whose holder is gone is\n"
	  "repaired with --force.\n"
	  "  --verify-data  also read every byte of every file and report each range\n"
	  "                 that gives an I/O error, by path (data-io)\n"
	  "Exit status: 0 clean, 1 damage repaired, 4 damage left, 8 could not check\n"
	  "(or the repair was refused).\n",
	  cmd_fsck },
	{ "tree", "tree [PATH]", "Show a directory tree.\n", cmd_tree },
	{ "devices", "devices",
	  "Show the device table of a multi-device filesystem: slot, state, I/O\n"
	  "errors, medium errors, repairs and unrepaired errors, uuid and address of\n"
	  "each device, the default data map, the dirty-region log (the down slots a\n"
	  "resync can bring back), and the recent events (device down or back, resync\n"
	  "started and finished, repairs, unrecoverable reads, mismatches) with time\n"
	  "and reason.\n",
	  cmd_devices },
	{ "scrub", "scrub [--dry-run]",
	  "Read every stripe of every object of a multi-device filesystem from every\n"
	  "device, check that mirror copies agree and parity matches, and rewrite\n"
	  "from redundancy each unit that failed to read or that is outvoted (RAID 6:\n"
	  "located by P and Q). A disagreement whose bad side cannot be told is\n"
	  "reported, not guessed. A filesystem mounted elsewhere is refused.\n"
	  "  --dry-run  report only; write nothing (opens the devices read-only)\n"
	  "Exit status: 0 clean, 1 everything found repaired, 4 damage left,\n"
	  "8 could not scrub.\n", cmd_scrub },
	{ "rebuild", "rebuild [--slot N] [--replace TARGET]",
	  "Restore redundancy: put a new, empty device (--replace, or a spare given\n"
	  "as one more --target) in the place of the device that is down (or slot N),\n"
	  "and rebuild its data from mirrors or parity. Give the other devices with\n"
	  "--target as usual. A filesystem mounted elsewhere is refused (unmount it\n"
	  "first; one whose holder is gone needs --force).\n"
	  "  --slot N           the slot to rebuild (default: the only one down)\n"
	  "  --replace TARGET   the new device: an empty store directory or iSCSI URL\n",
	  cmd_rebuild },
	{ "resync", "resync [--slot N]",
	  "Bring back a device that was down and is present again (the same device):\n"
	  "copy onto it only what the dirty-region log says was written while it was\n"
	  "away, then mark it up. Any read-write open does this by itself; resync\n"
	  "reports it and retries what the open could not. A device the log does not\n"
	  "cover needs 'osdfs rebuild'. A filesystem mounted elsewhere is refused.\n"
	  "  --slot N   only this slot (default: every slot that is not up)\n",
	  cmd_resync },
};

#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

enum { OPT_PARTITION = 256, OPT_OSD_VERSION, OPT_SECURITY, OPT_KEY_FILE, OPT_JSON,
       OPT_PROGRESS, OPT_HELP, OPT_VERSION, OPT_FORCE,
       OPT_ISCSI /* + index in tc_device_iscsi_options */,
       OPT_SECMGR = OPT_ISCSI + 5 /* + index in tc_device_secmgr_options */ };

static const struct option global_longs[] = {
	{ "target", required_argument, NULL, 't' },
	{ "partition", required_argument, NULL, OPT_PARTITION },
	{ "osd-version", required_argument, NULL, OPT_OSD_VERSION },
	{ "security", required_argument, NULL, OPT_SECURITY },
	{ "key-file", required_argument, NULL, OPT_KEY_FILE },
	{ "initiator-name", required_argument, NULL, OPT_ISCSI + 0 },
	{ "header-digest", required_argument, NULL, OPT_ISCSI + 1 },
	{ "data-digest", required_argument, NULL, OPT_ISCSI + 2 },
	{ "chap-user", required_argument, NULL, OPT_ISCSI + 3 },
	{ "chap-secret-file", required_argument, NULL, OPT_ISCSI + 4 },
	{ "security-manager", required_argument, NULL, OPT_SECMGR + 0 },
	{ "cert", required_argument, NULL, OPT_SECMGR + 1 },
	{ "key", required_argument, NULL, OPT_SECMGR + 2 },
	{ "ca", required_argument, NULL, OPT_SECMGR + 3 },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "progress", no_argument, NULL, OPT_PROGRESS },
	{ "force", no_argument, NULL, OPT_FORCE },
	{ "help", no_argument, NULL, OPT_HELP },
	{ "version", no_argument, NULL, OPT_VERSION },
	{ "verbose", no_argument, NULL, 'v' },
	{ NULL, 0, NULL, 0 },
};
#define NGLOBAL (sizeof(global_longs) / sizeof(global_longs[0]) - 1)

static const char global_help[] =
	"Global options (before or after the command):\n"
	"      --partition ID     partition holding the filesystem (default 0x10000)\n"
	"      --json             machine-readable output (ls, stat, df, fsck, devices,\n"
	"                         tree, scrub); names that are not UTF-8 are escaped (osdfs(1))\n"
	"      --progress         progress line on stderr even when not a terminal\n"
	"  -v, --verbose          say what is opened and mounted (stderr)\n"
	"      --force            take over a filesystem whose holder is gone (its lease\n"
	"                         ran out, or its process on this host ended); mkfs:\n"
	"                         erase what the partition holds (as -f)\n"
	"      --help             help (after a command: that command's help)\n"
	"  -V, --version          print the version\n";

static void usage(FILE *f)
{
	fprintf(f, "usage: osdfs [--target DIR|URL]... [--partition ID] [options] COMMAND [args]\n\n"
		   "Commands:\n");
	for (size_t i = 0; i < NCOMMANDS; i++)
		fprintf(f, "  %s\n", commands[i].usage);
	fprintf(f, "\nRemote paths may be written with a leading ':' (cp requires it).\n"
		   "Repeat --target for a filesystem on several devices (mkfs --layout).\n\n%s%s%s%s",
		tc_device_help, tc_device_secmgr_help, tc_device_iscsi_help, global_help);
}

const struct command *tool_find_command(const char *name)
{
	for (size_t i = 0; i < NCOMMANDS; i++)
		if (strcmp(commands[i].name, name) == 0)
			return &commands[i];
	return NULL;
}

void tool_command_help(const struct command *c, FILE *f)
{
	fprintf(f, "usage: osdfs [global options] %s\n\n%s\n%s%s%s%s", c->usage, c->help,
		tc_device_help, tc_device_secmgr_help, tc_device_iscsi_help, global_help);
}

/* A global option; returns 0, or an exit code (+1) to stop with. */
static int global_option(struct tool *t, int key, const char *arg, const struct command *c)
{
	const char *name = NULL;
	int rc;

	switch (key) {
	case 't':
		return tc_targets_add(&t->targets, &t->devopts, arg) < 0 ? TC_EXIT_USAGE + 1 : 0;
	case OPT_OSD_VERSION: name = "osd-version"; break;
	case OPT_SECURITY: name = "security"; break;
	case OPT_KEY_FILE: name = "key-file"; break;
	case OPT_ISCSI + 0:
	case OPT_ISCSI + 1:
	case OPT_ISCSI + 2:
	case OPT_ISCSI + 3:
	case OPT_ISCSI + 4: name = tc_device_iscsi_options[key - OPT_ISCSI]; break;
	case OPT_SECMGR + 0:
	case OPT_SECMGR + 1:
	case OPT_SECMGR + 2:
	case OPT_SECMGR + 3: name = tc_device_secmgr_options[key - OPT_SECMGR]; break;
	case OPT_PARTITION:
		if (tc_parse_u64(arg, &t->partition) < 0 || t->partition < OSD_FIRST_ID) {
			tc_usage_err("--partition: '%s' is not a partition id (at least 0x10000)", arg);
			return TC_EXIT_USAGE + 1;
		}
		return 0;
	case OPT_JSON: t->json = 1; return 0;
	case OPT_PROGRESS: t->progress = 1; return 0;
	case 'v': tc_set_verbose(tc_verbose() + 1); return 0;
	case OPT_FORCE: t->force = 1; return 0;
	case OPT_HELP:
		if (c)
			tool_command_help(c, stdout);
		else
			usage(stdout);
		return TC_EXIT_OK + 1;
	case 'V':
	case OPT_VERSION:
		printf("osdfs %s\n", osd_version_string());
		return TC_EXIT_OK + 1;
	default:
		return -1;
	}
	rc = tc_device_option(&t->devopts, name, arg);
	return rc < 0 ? TC_EXIT_USAGE + 1 : 0;
}

/* tc_usage_err() already says "osdfs: "; inside a command, name it too. */
static int bad_option(struct tool *t, char **argv, int key)
{
	const char *where = t->cmd ? t->cmd : "", *sep = t->cmd ? ": " : "";

	if (key == ':')
		return tc_usage_err("%s%soption '%s' needs an argument", where, sep,
				    argv[optind - 1]);
	if (optopt && optopt < 256)
		return tc_usage_err("%s%sunknown option '-%c'", where, sep, optopt);
	return tc_usage_err("%s%sunknown option '%s'", where, sep, argv[optind - 1]);
}

int tool_no_options(struct tool *t, int key, const char *arg, void *ctx)
{
	(void)t; (void)key; (void)arg; (void)ctx;
	return TC_EXIT_USAGE;
}

int tool_getopt(struct tool *t, const struct command *c, int argc, char **argv,
		const char *shorts, const struct option *longs,
		int (*opt)(struct tool *t, int key, const char *arg, void *ctx), void *ctx)
{
	struct option all[64];
	char sopts[32];
	size_t n = 0;
	int key;

	for (; longs && longs[n].name; n++)
		all[n] = longs[n];
	for (size_t i = 0; i <= NGLOBAL; i++)
		all[n++] = global_longs[i];
	snprintf(sopts, sizeof(sopts), ":%st:vV", shorts);
	optind = 0;
	opterr = 0;
	while ((key = getopt_long(argc, argv, sopts, all, NULL)) != -1) {
		int rc;

		if (key == '?' || key == ':')
			return -bad_option(t, argv, key);
		rc = global_option(t, key, optarg, c);
		if (rc > 0)
			return -(rc - 1);
		if (rc == 0)
			continue;
		rc = opt(t, key, optarg, ctx);
		if (rc != 0)
			return -rc;
	}
	if (!t->devopts.target_dir)
		return -tc_usage_err("%s: no device given (use --target DIR or URL)", c->name);
	if (tc_targets_check(&t->targets, &t->devopts) < 0)
		return -TC_EXIT_USAGE;
	return optind;
}

int main(int argc, char **argv)
{
	struct tool t;
	const struct command *c;
	int key, rc;

	memset(&t, 0, sizeof(t));
	t.devopts = (struct tc_device_opts)TC_DEVICE_OPTS_INIT;
	t.partition = DEFAULT_PARTITION;
	t.map = ((struct osdfs_layout_config)OSDFS_LAYOUT_CONFIG_INIT).map;
	tc_set_prog("osdfs");
	opterr = 0;
	while ((key = getopt_long(argc, argv, "+:t:hvV", global_longs, NULL)) != -1) {
		if (key == 'h')
			key = OPT_HELP;
		if (key == '?' || key == ':')
			return bad_option(&t, argv, key);
		rc = global_option(&t, key, optarg, NULL);
		if (rc > 0)
			return rc - 1;
	}
	if (optind >= argc)
		return tc_usage_err("no command given");
	c = tool_find_command(argv[optind]);
	if (!c)
		return tc_usage_err("unknown command '%s'", argv[optind]);
	t.cmd = c->name;
	return tool_interrupt_status(&t, c->run(&t, argc - optind, argv + optind));
}
