/*
 * Command line: "osdfs-mount [-o options] TARGET [TARGET...] MOUNTPOINT"
 * (several TARGETs: the devices of a multi-device layout). Our own -o
 * options are taken out of the list; everything else goes to libfuse, which
 * rejects what it does not know when the session is created.
 */
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "mount.h"

/* Longest attribute or entry timeout accepted: about 31 years. */
#define MAX_TIMEOUT 1e9
/* Most worker threads of the multithreaded loop we allow asking for. */
#define MAX_THREADS 10000

enum {
	KEY_PID, KEY_MKFS, KEY_LAYOUT, KEY_FORCE, KEY_FORMAT, KEY_RO, KEY_WRITEBACK, KEY_ATTR_TIMEOUT,
	KEY_ENTRY_TIMEOUT, KEY_SECURITY, KEY_KEYFILE, KEY_OSD_VERSION, KEY_ISCSI,
	KEY_MAX_THREADS, KEY_CLONE_FD, KEY_FOREGROUND, KEY_DEBUG, KEY_SINGLE, KEY_HELP, KEY_VERSION,
	KEY_VERBOSE, KEY_PROBE, KEY_NO_AUTO_RESYNC, KEY_NO_GATHER,
};

static const struct fuse_opt spec[] = {
	FUSE_OPT_KEY("pid=", KEY_PID),
	FUSE_OPT_KEY("mkfs", KEY_MKFS),
	FUSE_OPT_KEY("layout=", KEY_LAYOUT),
	FUSE_OPT_KEY("force", KEY_FORCE),
	FUSE_OPT_KEY("--force", KEY_FORCE),
	FUSE_OPT_KEY("format=", KEY_FORMAT),
	FUSE_OPT_KEY("ro", KEY_RO),
	FUSE_OPT_KEY("probe_interval=", KEY_PROBE),
	FUSE_OPT_KEY("no_auto_resync", KEY_NO_AUTO_RESYNC),
	FUSE_OPT_KEY("no_write_gathering", KEY_NO_GATHER),
	FUSE_OPT_KEY("writeback_cache", KEY_WRITEBACK),
	FUSE_OPT_KEY("attr_timeout=", KEY_ATTR_TIMEOUT),
	FUSE_OPT_KEY("entry_timeout=", KEY_ENTRY_TIMEOUT),
	FUSE_OPT_KEY("security=", KEY_SECURITY),
	FUSE_OPT_KEY("keyfile=", KEY_KEYFILE),
	FUSE_OPT_KEY("osd_version=", KEY_OSD_VERSION),
	/* the iSCSI options keep osdctl's and osdfs's names */
	FUSE_OPT_KEY("initiator-name=", KEY_ISCSI),
	FUSE_OPT_KEY("header-digest=", KEY_ISCSI),
	FUSE_OPT_KEY("data-digest=", KEY_ISCSI),
	FUSE_OPT_KEY("chap-user=", KEY_ISCSI),
	FUSE_OPT_KEY("chap-secret-file=", KEY_ISCSI),
	/* the security manager options too: values kept the same way */
	FUSE_OPT_KEY("security-manager=", KEY_ISCSI),
	FUSE_OPT_KEY("cert=", KEY_ISCSI),
	FUSE_OPT_KEY("key=", KEY_ISCSI),
	FUSE_OPT_KEY("ca=", KEY_ISCSI),
	FUSE_OPT_KEY("max_threads=", KEY_MAX_THREADS),
	FUSE_OPT_KEY("clone_fd", KEY_CLONE_FD),
	FUSE_OPT_KEY("-f", KEY_FOREGROUND),
	FUSE_OPT_KEY("-d", KEY_DEBUG),
	FUSE_OPT_KEY("debug", KEY_DEBUG),
	FUSE_OPT_KEY("-s", KEY_SINGLE),
	FUSE_OPT_KEY("-h", KEY_HELP),
	FUSE_OPT_KEY("--help", KEY_HELP),
	FUSE_OPT_KEY("-V", KEY_VERSION),
	FUSE_OPT_KEY("--version", KEY_VERSION),
	FUSE_OPT_KEY("-v", KEY_VERBOSE),
	FUSE_OPT_KEY("--verbose", KEY_VERBOSE),
	FUSE_OPT_END
};

struct parse_state {
	struct mnt_options *o;
	const char *nonopt[TC_MAX_TARGETS + 1]; /* TARGET... MOUNTPOINT */
	int nonopts;
	int bad;      /* a message was printed */
	int request;  /* MNT_PARSE_HELP / MNT_PARSE_VERSION */
};

/* The value of "name=value" (fuse_opt gives the whole option). */
static const char *value_of(const char *arg)
{
	const char *eq = strchr(arg, '=');

	return eq ? eq + 1 : "";
}

static int bad_value(struct parse_state *s, const char *arg, const char *why)
{
	tc_err("bad option '-o %s': %s", arg, why);
	s->bad = 1;
	return -1;
}

/* Decimal or 0x hex, the full 64-bit range. A leading 0 would mean octal to
 * strtoull; refuse it rather than guess. */
static int parse_number(const char *v, uint64_t *out)
{
	if (v[0] == '0' && v[1] >= '0' && v[1] <= '9')
		return -EINVAL;
	return tc_parse_u64(v, out);
}

static int parse_timeout(const char *v, double *out)
{
	char *end;
	double d;

	if (!*v || *v == ' ' || *v == '+')
		return -EINVAL;
	errno = 0;
	d = strtod(v, &end);
	if (*end || end == v || errno == ERANGE || !isfinite(d) || d < 0 || d > MAX_TIMEOUT)
		return -EINVAL;
	*out = d;
	return 0;
}

static int on_nonopt(struct parse_state *s, const char *arg)
{
	if (s->nonopts == TC_MAX_TARGETS + 1) {
		tc_err("unexpected argument '%s' (at most %u TARGETs, then MOUNTPOINT)", arg,
		       TC_MAX_TARGETS);
		s->bad = 1;
		return -1;
	}
	s->nonopt[s->nonopts++] = arg;
	return 0;
}

/* The last argument is MOUNTPOINT, the ones before it the TARGETs. */
static int split_nonopts(struct parse_state *s)
{
	struct mnt_options *o = s->o;

	if (s->nonopts < 2)
		return tc_usage_err("give TARGET and MOUNTPOINT");
	o->mountpoint = s->nonopt[s->nonopts - 1];
	o->target = s->nonopt[0];
	for (int i = 0; i < s->nonopts - 1; i++) {
		o->targets.v[i] = s->nonopt[i];
		/* a URL is checked here; a directory once made absolute (main.c) */
		if (tc_target_is_url(s->nonopt[i]) &&
		    tc_device_option(&o->dev, "target", s->nonopt[i]) < 0) {
			fprintf(stderr, "Try '%s --help'.\n", tc_prog());
			return TC_EXIT_USAGE;
		}
	}
	o->targets.n = (unsigned)s->nonopts - 1;
	return 0;
}

/*
 * "layout=SPEC": the default data map of a new multi-device filesystem.
 * Commas separate -o options, so SPEC's settings are joined by ':' here
 * (raid5:su=64K:width=4); an escaped "\," reaches us as a comma too.
 */
static int layout_option(struct parse_state *s, const char *arg)
{
	char text[128], err[256] = "";

	if (strlen(value_of(arg)) >= sizeof(text))
		return bad_value(s, arg, "too long");
	strcpy(text, value_of(arg));
	for (char *p = text; *p; p++)
		if (*p == ':')
			*p = ',';
	if (osdfs_data_map_parse(&s->o->map, text, err, sizeof(err)) < 0)
		return bad_value(s, arg, err);
	s->o->layout_given = 1;
	return 0;
}

/* Options that name the device go through osd_toolcommon's parser. */
static int device_option(struct parse_state *s, const char *name, const char *arg)
{
	if (tc_device_option(&s->o->dev, name, value_of(arg)) < 0)
		return bad_value(s, arg, "see --help");
	return 0;
}

/* "-o name=value" iSCSI or security manager option: the value is kept
 * (fuse_opt's is temporary). */
static int iscsi_option(struct parse_state *s, const char *arg)
{
	struct mnt_options *o = s->o;
	const char *eq = strchr(arg, '=');
	char name[32];
	char *v;

	if (!eq || (size_t)(eq - arg) >= sizeof(name))
		return bad_value(s, arg, "see --help");
	memcpy(name, arg, (size_t)(eq - arg));
	name[eq - arg] = '\0';
	if (o->nstrings == sizeof(o->strings) / sizeof(o->strings[0]))
		return bad_value(s, arg, "given too often");
	v = strdup(eq + 1);
	if (!v)
		return bad_value(s, arg, "out of memory");
	o->strings[o->nstrings++] = v;
	if (tc_device_option(&o->dev, name, v) < 0)
		return bad_value(s, arg, "see --help");
	return 0;
}

static int on_key(void *data, const char *arg, int key, struct fuse_args *out)
{
	struct parse_state *s = data;
	struct mnt_options *o = s->o;
	const char *v = value_of(arg);
	int rc;

	(void)out;
	switch (key) {
	case FUSE_OPT_KEY_NONOPT:
		return on_nonopt(s, arg);
	case KEY_PID:
		rc = parse_number(v, &o->partition);
		if (rc == -ERANGE)
			return bad_value(s, arg, "larger than 64 bits");
		if (rc < 0)
			return bad_value(s, arg, "not a decimal or 0x-hex partition id");
		if (o->partition < OSD_FIRST_ID)
			return bad_value(s, arg, "partition ids below 0x10000 are reserved");
		return 0;
	case KEY_MKFS:
		o->mkfs = 1;
		return 0;
	case KEY_LAYOUT:
		return layout_option(s, arg);
	case KEY_FORCE:
		o->force = 1;
		return 0;
	case KEY_FORMAT:
		rc = tc_parse_size(v, &o->capacity);
		if (rc < 0 || o->capacity == 0)
			return bad_value(s, arg, rc == -ERANGE ? "too large" :
					 "not a capacity like 10G");
		return 0;
	case KEY_RO:
		o->readonly = 1;
		return 1; /* also a kernel mount flag */
	case KEY_WRITEBACK:
		o->writeback = 1;
		return 0;
	case KEY_PROBE: {
		double sec;

		if (parse_timeout(v, &sec) < 0 || (sec > 0 && sec < 0.1) || sec > 86400)
			return bad_value(s, arg, "not 0 or a number of seconds from 0.1 to 86400");
		o->probe_ms = (unsigned)(sec * 1000 + 0.5);
		return 0;
	}
	case KEY_NO_AUTO_RESYNC:
		o->no_auto_resync = 1;
		return 0;
	case KEY_NO_GATHER:
		o->dev.no_gather = 1;
		return 0;
	case KEY_ATTR_TIMEOUT:
	case KEY_ENTRY_TIMEOUT:
		if (parse_timeout(v, key == KEY_ATTR_TIMEOUT ? &o->attr_timeout :
				  &o->entry_timeout) < 0)
			return bad_value(s, arg, "not a number of seconds from 0 to 1e9");
		return 0;
	case KEY_SECURITY:
		return device_option(s, "security", arg);
	case KEY_KEYFILE:
		if (!*v)
			return bad_value(s, arg, "empty file name");
		/* fuse_opt hands us a piece of a temporary copy of "-o ..." */
		free(o->key_file);
		o->key_file = strdup(v);
		if (!o->key_file)
			return bad_value(s, arg, "out of memory");
		o->dev.key_file = o->key_file;
		return 0;
	case KEY_OSD_VERSION:
		return device_option(s, "osd-version", arg);
	case KEY_ISCSI:
		return iscsi_option(s, arg);
	case KEY_MAX_THREADS: {
		uint64_t n;

		if (parse_number(v, &n) < 0 || n < 1 || n > MAX_THREADS)
			return bad_value(s, arg, "not a thread count from 1 to 10000");
		o->max_threads = (unsigned int)n;
		return 0;
	}
	case KEY_CLONE_FD:
		o->clone_fd = 1;
		return 0;
	case KEY_FOREGROUND:
		o->foreground = 1;
		return 0;
	case KEY_DEBUG:
		o->debug = o->foreground = 1;
		return 1; /* libfuse prints requests too */
	case KEY_SINGLE:
		o->single_thread = 1;
		return 0;
	case KEY_HELP:
		s->request = MNT_PARSE_HELP;
		return 0;
	case KEY_VERSION:
		s->request = MNT_PARSE_VERSION;
		return 0;
	case KEY_VERBOSE:
		tc_set_verbose(tc_verbose() + 1);
		return 0;
	default:
		return 1; /* a FUSE option: libfuse decides */
	}
}

/* Everything about the arguments that one option alone cannot tell. */
static int check_combination(struct parse_state *s)
{
	struct mnt_options *o = s->o;
	char err[256] = "";
	int rc = split_nonopts(s);

	if (rc)
		return rc;
	if (o->layout_given && !o->mkfs)
		return tc_usage_err("layout= sets the layout of a new filesystem: add -o mkfs");
	if (o->mkfs && (o->layout_given || o->targets.n > 1) &&
	    osdfs_data_map_check(&o->map, o->targets.n, err, sizeof(err)) < 0)
		return tc_usage_err("the layout does not fit %u TARGET%s: %s", o->targets.n,
				    o->targets.n == 1 ? "" : "s", err);
	if (o->capacity && !o->mkfs)
		return tc_usage_err("format= sets the capacity of a new filesystem: add -o mkfs");
	if (o->mkfs && o->readonly)
		return tc_usage_err("mkfs and ro do not go together");
	if (o->writeback && o->readonly)
		return tc_usage_err("writeback_cache and ro do not go together");
	return 0;
}

/* "fsname=" value: TARGET, unless it holds characters -o would split on. */
static int add_fuse_defaults(struct mnt_options *o)
{
	const char *name = strpbrk(o->target, ",\\") ? "osdfs" : o->target;
	char *fsname;
	int rc;

	if (asprintf(&fsname, "-ofsname=%s", name) < 0)
		return tc_err_rc(-ENOMEM, "options");
	/* the library checks no permissions: the kernel must (see docs);
	 * the names go first so that the user's own fsname= or subtype= win */
	rc = fuse_opt_add_arg(&o->fuse, "-odefault_permissions") ||
	     fuse_opt_insert_arg(&o->fuse, 1, "-osubtype=osdfs") ||
	     fuse_opt_insert_arg(&o->fuse, 1, fsname);
	free(fsname);
	return rc ? tc_err_rc(-ENOMEM, "options") : 0;
}

int mnt_parse_args(struct mnt_options *o, int argc, char **argv)
{
	struct parse_state s = { .o = o };
	struct tc_device_opts dev = TC_DEVICE_OPTS_INIT;
	int rc;

	memset(o, 0, sizeof(*o));
	o->dev = dev;
	o->partition = OSD_FIRST_ID;
	o->attr_timeout = 1.0;
	o->entry_timeout = 1.0;
	o->probe_ms = MNT_PROBE_MS;
	o->map = ((struct osdfs_layout_config)OSDFS_LAYOUT_CONFIG_INIT).map;
	o->fuse = (struct fuse_args)FUSE_ARGS_INIT(argc, argv);
	if (fuse_opt_parse(&o->fuse, &s, spec, on_key) != 0) {
		if (!s.bad)
			return -tc_usage_err("cannot parse the options");
		fprintf(stderr, "Try '%s --help'.\n", tc_prog());
		return -TC_EXIT_USAGE;
	}
	if (s.request)
		return s.request;
	rc = check_combination(&s);
	if (rc)
		return -rc;
	rc = add_fuse_defaults(o);
	if (rc)
		return -rc;
	return MNT_PARSE_RUN;
}

void mnt_options_free(struct mnt_options *o)
{
	free(o->key_file);
	o->key_file = NULL;
	while (o->nstrings > 0)
		free(o->strings[--o->nstrings]);
	fuse_opt_free_args(&o->fuse);
}

void mnt_print_help(const char *prog)
{
	printf("usage: %s [-o options] TARGET [TARGET...] MOUNTPOINT\n\n"
	       "Mount the osdfs filesystem stored on an OSD at MOUNTPOINT. TARGET is\n"
	       "the directory of an embedded software OSD target, or an iSCSI target\n"
	       "as iscsi://host[:port]/iqn/lun. Several TARGETs are the devices of a\n"
	       "filesystem spread over them (all of them, or all but failed ones).\n\n"
	       "General options:\n"
	       "  -f                     stay in the foreground\n"
	       "  -d, -o debug           print every request (implies -f)\n"
	       "  -s                     handle one request at a time\n"
	       "  -o max_threads=N       at most N worker threads (default: libfuse's, 10)\n"
	       "  -o clone_fd            one /dev/fuse descriptor per worker thread\n"
	       "  -h, --help             print this help\n"
	       "  -v, --verbose          say which devices are opened and how (stderr)\n"
	       "  -V, --version          print the version\n\n"
	       "osdfs options:\n"
	       "  -o pid=ID              partition holding the filesystem, decimal or\n"
	       "                         0x hex (default 0x10000)\n"
	       "  -o mkfs                create an empty filesystem first (erases the partition;\n"
	       "                         not one another client holds)\n"
	       "  -o layout=SPEC         with mkfs: the data map over the TARGETs, as\n"
	       "                         osdfs mkfs --layout with ':' for ',', e.g.\n"
	       "                         raid5:su=64K:width=4 (default raid0 over all)\n"
	       "  -o force, --force      take over a filesystem whose holder is gone (its\n"
	       "                         lease ran out, or its process on this host ended);\n"
	       "                         with ro: look at a mounted one\n"
	       "  -o format=SIZE         with mkfs: partition capacity, e.g. 10G\n"
	       "  -o ro                  mount read-only\n"
	       "  -o attr_timeout=S      seconds the kernel caches attributes (default 1.0)\n"
	       "  -o entry_timeout=S     seconds the kernel caches names (default 1.0)\n"
	       "  -o writeback_cache     let the kernel cache writes (see the manual)\n"
	       "  -o probe_interval=S    seconds between two looks at the devices that are\n"
	       "                         down: one back is resynced (the regions written\n"
	       "                         while it was away) and up again (default 5; 0: off)\n"
	       "  -o no_auto_resync      report a device that comes back, leave it down\n"
	       "  -o no_write_gathering  parity layouts: write each partial row at once\n"
	       "                         instead of holding it for the next write\n"
	       "  -o security=M          nosec, capkey, cmdrsp or alldata (default nosec)\n"
	       "  -o keyfile=PATH        root key file (20 bytes or 40 hex digits)\n"
	       "  -o osd_version=V       OSD version to speak: 1, 2 or auto (default auto)\n\n"
	       "Security manager options (instead of keyfile=):\n"
	       "  -o security-manager=URL  ask osd-secd at osdsec://host[:port] for credentials\n"
	       "  -o cert=F              this client's certificate (PEM)\n"
	       "  -o key=F               its private key (PEM, mode 0600)\n"
	       "  -o ca=F                CA certificates the manager's certificate must chain to\n\n"
	       "iSCSI options (with an iscsi:// TARGET):\n"
	       "  -o initiator-name=N    our iSCSI name (default iqn.2026-01.org.libosd:initiator.HOSTID)\n"
	       "  -o header-digest=D     none or crc32c (default: either, none preferred)\n"
	       "  -o data-digest=D       none or crc32c (default: either, none preferred)\n"
	       "  -o chap-user=NAME      log in with CHAP under NAME\n"
	       "  -o chap-secret-file=F  the CHAP secret (first line of F)\n\n"
	       "FUSE options:\n", prog);
	fflush(stdout);
	fuse_lowlevel_help();
}
