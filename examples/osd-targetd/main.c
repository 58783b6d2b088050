/*
 * osd-targetd: an iSCSI target daemon serving one software OSD store per
 * LUN (include/osdtarget/iscsi.h). Logs with syslog severities to stderr or
 * (--syslog) to syslog: the server's events and every event of the stores
 * (damage, repairs, a full filesystem). SIGTERM or SIGINT stops it cleanly
 * (connections closed, stores flushed and closed).
 */
#include <osdtarget/iscsi.h>

#include <errno.h>
#include <getopt.h>
#include <netdb.h>
#include <stdarg.h>
#include <limits.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <syslog.h>

#define PROG "osd-targetd"
#define MAX_LUNS 256
#define MAX_SECRET 256
#define MAX_ALLOW 256

static osd_target_iscsi *g_server;

struct config {
	char address[64];
	int port;
	const char *iqn;
	const char *chap_user;
	const char *chap_secret_file;
	const char *port_file;
	int create;
	int salvage;          /* --salvage: open damaged stores, keeping what is intact */
	int scan_data;        /* --scan-data: read every data file against the records */
	int verify_reads;     /* --verify-reads: check every READ against the checksums */
	size_t meta_cache;    /* --meta-cache N: objects kept in memory once used */
	int insecure;         /* --insecure: serve a NOSEC root beyond loopback */
	unsigned quirks;      /* --quirk: emulate another target (OSD_TARGET_QUIRK_*) */
	int level;            /* log messages up to this syslog level (-v, -q) */
	int use_syslog;       /* --syslog */
	char **dirs;
	int ndirs;
	const char *allow[MAX_ALLOW];   /* --allow: the initiator access list */
	size_t nallow;
	struct osd_target_iscsi_options limits; /* --limit KEY=VALUE */
};

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: " PROG " [OPTIONS] DIR [DIR...]\n"
		"Serve each DIR (a software OSD store) as one LUN of an iSCSI target.\n\n"
		"  -l, --listen ADDR[:PORT]   address to listen on (default 127.0.0.1:3260;\n"
		"                             IPv6 as [ADDR]:PORT; port 0 picks a free one)\n"
		"  -n, --iqn IQN              target name (default " OSD_TARGET_ISCSI_DEFAULT_NAME ")\n"
		"      --chap-user USER       require CHAP: the initiator's user name\n"
		"      --chap-secret-file F   ... and the file holding its secret\n"
		"      --allow IQN            only this initiator may log in (repeatable)\n"
		"      --limit KEY=VALUE      a resource bound (repeatable; docs/iscsi.md):\n"
		"                             connections, per-address, reserved, pending,\n"
		"                             login-ms, idle-ms, nop-ms, dataout-ms,\n"
		"                             budget (bytes), auth-delay-ms, auth-delay-max-ms,\n"
		"                             workers (threads executing commands)\n"
		"  -c, --create               create stores that do not exist\n"
		"      --salvage              open a store whose metadata log or checkpoint is\n"
		"                             damaged: keep every intact record, skip the damage,\n"
		"                             move data files no record names to quarantine/,\n"
		"                             recompute missing data checksums from the data\n"
		"      --scan-data            read every data file of each store against its\n"
		"                             objects' records at the open: count the space used\n"
		"                             again, move files no object names (a crash's\n"
		"                             leftovers) to quarantine/ (slow at millions of files)\n"
		"      --verify-reads         check every READ against the data checksums (by\n"
		"                             default a block verified once is trusted while\n"
		"                             its page stays in the page cache)\n"
		"      --meta-cache N         objects each store keeps in memory once used\n"
		"                             (default 65536; the others stay on disk)\n"
		"      --insecure             serve a store without a root key (a NOSEC root:\n"
		"                             anyone reaching the port may FORMAT it) on an\n"
		"                             address other than loopback\n"
		"      --quirk NAME           behave like another target, for testing initiators\n"
		"                             (repeatable): osd1-descriptor, no-flush-partition,\n"
		"                             no-flush-osd, no-flush-collection, no-flush-object,\n"
		"                             no-object-count, no-punch, punch-shifts\n"
		"                             (docs/target.md)\n"
		"      --port-file FILE       write the bound TCP port to FILE\n"
		"      --syslog               log to syslog (facility daemon) instead of stderr\n"
		"  -v, --verbose              log more: once for every PDU (debug)\n"
		"  -q, --quiet                log less: once drops info (logins, LUNs), twice\n"
		"                             notices, three times warnings; errors always\n"
		"  -h, --help                 show this help\n"
		"  -V, --version              show the version\n");
}

/* The logger: severities are the syslog levels (LOG_ERR..LOG_DEBUG). */
static int g_level = LOG_INFO;
static int g_syslog;

static const char *level_name(int level)
{
	switch (level) {
	case LOG_EMERG: case LOG_ALERT: case LOG_CRIT: case LOG_ERR: return "error";
	case LOG_WARNING: return "warning";
	case LOG_NOTICE: return "notice";
	case LOG_INFO: return "info";
	default: return "debug";
	}
}

static void log_msg(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void log_msg(int level, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	if (level > g_level)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (g_syslog)
		syslog(level, "%s", msg);
	else
		fprintf(stderr, PROG ": %s: %s\n", level_name(level), msg);
}

static int usage_error(const char *msg, const char *arg)
{
	fprintf(stderr, PROG ": %s%s%s\n", msg, arg ? ": " : "", arg ? arg : "");
	fprintf(stderr, "Try '" PROG " --help'.\n");
	return 2;
}

static int parse_port(const char *s, int *port)
{
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (errno || *s == 0 || *end || v < 0 || v > 65535)
		return -1;
	*port = (int)v;
	return 0;
}

/* ADDR, ADDR:PORT, [V6ADDR], [V6ADDR]:PORT, V6ADDR, :PORT */
static int parse_listen(const char *s, struct config *cfg)
{
	const char *colon = strrchr(s, ':');
	size_t alen;
	if (s[0] == '[') {
		const char *close = strchr(s, ']');
		if (!close || (close[1] && close[1] != ':'))
			return -1;
		if (close[1] == ':' && parse_port(close + 2, &cfg->port))
			return -1;
		s++;
		alen = (size_t)(close - s);
	} else if (colon && strchr(s, ':') == colon) {
		if (parse_port(colon + 1, &cfg->port))
			return -1;
		alen = (size_t)(colon - s);
	} else {
		alen = strlen(s);
	}
	if (alen >= sizeof(cfg->address))
		return -1;
	if (alen) {
		memcpy(cfg->address, s, alen);
		cfg->address[alen] = 0;
	}
	return 0;
}

/* --limit KEY=VALUE: one of the bounds of struct osd_target_iscsi_options. */
static int parse_limit(const char *s, struct osd_target_iscsi_options *o)
{
	static const struct { const char *key; size_t off; } keys[] = {
#define LIMIT(k, f) { k, offsetof(struct osd_target_iscsi_options, f) }
		LIMIT("connections", max_connections),
		LIMIT("per-address", max_connections_per_address),
		LIMIT("reserved", reserved_connections),
		LIMIT("pending", max_pending_tasks),
		LIMIT("login-ms", login_timeout_ms),
		LIMIT("idle-ms", idle_timeout_ms),
		LIMIT("nop-ms", nop_timeout_ms),
		LIMIT("dataout-ms", dataout_timeout_ms),
		LIMIT("auth-delay-ms", auth_fail_delay_ms),
		LIMIT("auth-delay-max-ms", auth_fail_delay_max_ms),
		LIMIT("workers", workers),
#undef LIMIT
	};
	const char *eq = strchr(s, '=');
	char *end;
	if (!eq || !eq[1])
		return -1;
	errno = 0;
	unsigned long long v = strtoull(eq + 1, &end, 10);
	if (errno || *end || eq[1] == '-' || v == 0)
		return -1;
	size_t klen = (size_t)(eq - s);
	if (klen == 6 && !memcmp(s, "budget", 6)) {
		o->dataout_budget = (size_t)v;
		return v > SIZE_MAX ? -1 : 0;
	}
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		if (strlen(keys[i].key) == klen && !memcmp(s, keys[i].key, klen)) {
			if (v > UINT_MAX)
				return -1;
			*(unsigned *)((char *)o + keys[i].off) = (unsigned)v;
			return 0;
		}
	}
	return -1;
}

/* --quirk NAME: one OSD_TARGET_QUIRK_* flag. */
/* A count of 1 to 2^32, digits only. */
static int parse_count(const char *s, size_t *out)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (!*s || *s < '0' || *s > '9' || *end || errno || v == 0 || v > (1ULL << 32))
		return -1;
	*out = (size_t)v;
	return 0;
}

static int parse_quirk(const char *s, unsigned *quirks)
{
	static const struct { const char *name; unsigned flag; } names[] = {
		{ "osd1-descriptor", OSD_TARGET_QUIRK_OSD1_DESCRIPTOR },
		{ "no-flush-partition", OSD_TARGET_QUIRK_NO_FLUSH_PARTITION },
		{ "no-flush-osd", OSD_TARGET_QUIRK_NO_FLUSH_OSD },
		{ "no-flush-collection", OSD_TARGET_QUIRK_NO_FLUSH_COLLECTION },
		{ "no-flush-object", OSD_TARGET_QUIRK_NO_FLUSH_OBJECT },
		{ "no-object-count", OSD_TARGET_QUIRK_NO_OBJECT_COUNT },
		{ "no-punch", OSD_TARGET_QUIRK_NO_PUNCH },
		{ "punch-shifts", OSD_TARGET_QUIRK_PUNCH_SHIFTS },
	};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (strcmp(s, names[i].name) == 0) {
			*quirks |= names[i].flag;
			return 0;
		}
	}
	return -1;
}

static int parse_args(int argc, char **argv, struct config *cfg)
{
	enum { OPT_CHAP_USER = 256, OPT_CHAP_SECRET, OPT_PORT_FILE, OPT_ALLOW, OPT_LIMIT,
	       OPT_INSECURE, OPT_SALVAGE, OPT_QUIRK, OPT_SYSLOG, OPT_VERIFY_READS,
	       OPT_META_CACHE, OPT_SCAN_DATA };
	static const struct option longopts[] = {
		{ "listen", required_argument, NULL, 'l' },
		{ "iqn", required_argument, NULL, 'n' },
		{ "chap-user", required_argument, NULL, OPT_CHAP_USER },
		{ "chap-secret-file", required_argument, NULL, OPT_CHAP_SECRET },
		{ "allow", required_argument, NULL, OPT_ALLOW },
		{ "limit", required_argument, NULL, OPT_LIMIT },
		{ "create", no_argument, NULL, 'c' },
		{ "insecure", no_argument, NULL, OPT_INSECURE },
		{ "salvage", no_argument, NULL, OPT_SALVAGE },
		{ "scan-data", no_argument, NULL, OPT_SCAN_DATA },
		{ "verify-reads", no_argument, NULL, OPT_VERIFY_READS },
		{ "meta-cache", required_argument, NULL, OPT_META_CACHE },
		{ "quirk", required_argument, NULL, OPT_QUIRK },
		{ "port-file", required_argument, NULL, OPT_PORT_FILE },
		{ "verbose", no_argument, NULL, 'v' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "syslog", no_argument, NULL, OPT_SYSLOG },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	int opt;
	strcpy(cfg->address, "127.0.0.1");
	cfg->port = 3260;
	cfg->level = LOG_INFO;
	while ((opt = getopt_long(argc, argv, "l:n:cvqhV", longopts, NULL)) != -1) {
		switch (opt) {
		case 'l':
			if (parse_listen(optarg, cfg))
				return usage_error("invalid --listen", optarg);
			break;
		case 'n': cfg->iqn = optarg; break;
		case OPT_CHAP_USER: cfg->chap_user = optarg; break;
		case OPT_CHAP_SECRET: cfg->chap_secret_file = optarg; break;
		case OPT_ALLOW:
			if (cfg->nallow == MAX_ALLOW || !optarg[0])
				return usage_error("invalid --allow (at most 256)", optarg);
			cfg->allow[cfg->nallow++] = optarg;
			break;
		case OPT_LIMIT:
			if (parse_limit(optarg, &cfg->limits))
				return usage_error("invalid --limit", optarg);
			break;
		case 'c': cfg->create = 1; break;
		case OPT_INSECURE: cfg->insecure = 1; break;
		case OPT_SALVAGE: cfg->salvage = 1; break;
		case OPT_SCAN_DATA: cfg->scan_data = 1; break;
		case OPT_VERIFY_READS: cfg->verify_reads = 1; break;
		case OPT_META_CACHE:
			if (parse_count(optarg, &cfg->meta_cache))
				return usage_error("invalid --meta-cache (1 to 2^32 objects)", optarg);
			break;
		case OPT_QUIRK:
			if (parse_quirk(optarg, &cfg->quirks))
				return usage_error("unknown --quirk", optarg);
			break;
		case OPT_PORT_FILE: cfg->port_file = optarg; break;
		case 'v': cfg->level += cfg->level < LOG_DEBUG; break;
		case 'q': cfg->level -= cfg->level > LOG_ERR; break;
		case OPT_SYSLOG: cfg->use_syslog = 1; break;
		case 'h': usage(stdout); exit(0);
		case 'V': printf(PROG " %s\n", osd_version_string()); exit(0);
		default: return usage_error("invalid option", NULL);
		}
	}
	if (!cfg->chap_user != !cfg->chap_secret_file)
		return usage_error("--chap-user and --chap-secret-file go together", NULL);
	cfg->dirs = argv + optind;
	cfg->ndirs = argc - optind;
	if (cfg->ndirs == 0)
		return usage_error("no store directory given", NULL);
	if (cfg->ndirs > MAX_LUNS)
		return usage_error("too many stores (at most 256 LUNs)", NULL);
	return 0;
}

/* The secret is the file's content without a trailing newline. */
static long read_secret(const char *path, uint8_t *buf, size_t cap)
{
	FILE *f = fopen(path, "rb");
	struct stat sb;
	if (!f)
		return -errno;
	if (fstat(fileno(f), &sb) == 0 && (sb.st_mode & 077)) {
		/* refused like ssh refuses a private key others can read */
		log_msg(LOG_ERR, "permissions %04o for '%s' are too open: a CHAP secret "
			"file must not be readable or writable by other users (chmod 600 %s)",
			(unsigned)(sb.st_mode & 07777), path, path);
		fclose(f);
		return -EPERM;
	}
	size_t n = fread(buf, 1, cap, f);
	int too_long = n == cap && fgetc(f) != EOF;
	fclose(f);
	if (too_long)
		return -EFBIG;
	while (n && (buf[n - 1] == '\n' || buf[n - 1] == '\r'))
		n--;
	return n ? (long)n : -ENODATA;
}

static int write_port_file(const char *path, int port)
{
	char tmp[4096];
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	FILE *f = fopen(tmp, "w");
	if (!f)
		return -errno;
	int ok = fprintf(f, "%d\n", port) > 0;
	ok = (fclose(f) == 0) && ok;
	if (!ok || rename(tmp, path)) {
		int err = errno ? -errno : -EIO;
		remove(tmp);
		return err;
	}
	return 0;
}

/* The iSCSI server's events (OSD_TARGET_ISCSI_LOG_*) at their syslog levels. */
static void log_server(void *payload, int level, const char *msg)
{
	static const int levels[] = { LOG_ERR, LOG_WARNING, LOG_INFO, LOG_DEBUG };

	(void)payload;
	log_msg(levels[level & 3], "%s", msg);
}

static volatile sig_atomic_t g_stop; /* a stop signal came, maybe before g_server */

static void on_signal(int sig)
{
	(void)sig;
	g_stop = 1;
	if (g_server)
		osd_target_iscsi_stop(g_server);
}

static int install_signals(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGTERM, &sa, NULL) || sigaction(SIGINT, &sa, NULL))
		return -errno;
	signal(SIGPIPE, SIG_IGN);
	return 0;
}

/* Store events (damage, quarantine, repaired modes, a full filesystem): their
 * severities are the syslog levels (OSD_TARGET_LOG_*). @p arg: the store. */
static void log_store_event(void *arg, int severity, const char *msg)
{
	log_msg(severity < LOG_ERR ? LOG_ERR : severity > LOG_DEBUG ? LOG_DEBUG : severity,
		"%s: %s", (const char *)arg, msg);
}

/*
 * --listen takes a host name too (localhost): the server binds a numeric
 * address, so resolve it here (the first address getaddrinfo() gives).
 */
static int resolve_listen(struct config *cfg)
{
	struct addrinfo hints, *res;
	int rc;

	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_PASSIVE | AI_ADDRCONFIG;
	rc = getaddrinfo(cfg->address, NULL, &hints, &res);
	if (rc == EAI_ADDRFAMILY || rc == EAI_NONAME) {
		hints.ai_flags = AI_PASSIVE; /* localhost with only loopback configured */
		rc = getaddrinfo(cfg->address, NULL, &hints, &res);
	}
	if (rc != 0) {
		log_msg(LOG_ERR, "--listen %s: %s", cfg->address, gai_strerror(rc));
		return -1;
	}
	rc = getnameinfo(res->ai_addr, res->ai_addrlen, cfg->address, sizeof(cfg->address),
			 NULL, 0, NI_NUMERICHOST);
	freeaddrinfo(res);
	if (rc != 0) {
		log_msg(LOG_ERR, "--listen: %s", gai_strerror(rc));
		return -1;
	}
	return 0;
}

/* 127.0.0.0/8 or ::1 (names are resolved first): only local users reach the port. */
static int is_loopback(const char *addr)
{
	return !strncmp(addr, "127.", 4) || !strcmp(addr, "::1");
}

/*
 * A store without a root key has a NOSEC root: whoever reaches the port may
 * FORMAT it or take its root (docs/security.md 5). Warn; beyond loopback
 * refuse unless --insecure.
 */
static int check_root(const struct config *cfg, int lun, osd_target *tgt)
{
	int local = is_loopback(cfg->address);
	char port[32] = " (the port it picks)"; /* port 0: bound later */

	if (osd_target_root_secured(tgt) != 0)
		return 0;
	if (cfg->port)
		snprintf(port, sizeof(port), ":%d", cfg->port);
	log_msg(local || cfg->insecure ? LOG_WARNING : LOG_ERR, "LUN %d: %s has no root key: its "
		"root is NOSEC, so anyone who reaches %s%s can FORMAT it (osdctl --target DIR "
		"--key-file K format makes a store with a root key)", lun, cfg->dirs[lun],
		cfg->address, port);
	if (local || cfg->insecure)
		return 0;
	log_msg(LOG_ERR, "refusing to serve a NOSEC root on %s, which is not a loopback "
		"address (--insecure to do it anyway)", cfg->address);
	return -EPERM;
}

static int open_targets(const struct config *cfg, osd_target **luns)
{
	struct osd_target_options topts = OSD_TARGET_OPTIONS_INIT;
	topts.create = cfg->create;
	topts.salvage = cfg->salvage;
	topts.scan_data = cfg->scan_data;
	topts.verify_reads = cfg->verify_reads;
	topts.meta_cache = cfg->meta_cache;
	topts.quirks = cfg->quirks;
	topts.log_event = log_store_event;
	for (int i = 0; i < cfg->ndirs; i++) {
		topts.log_event_arg = cfg->dirs[i];
		int rc = osd_target_open(&luns[i], cfg->dirs[i], &topts);
		if (rc) {
			log_msg(LOG_ERR, "%s: %s%s", cfg->dirs[i], strerror(-rc),
				rc == -ENOENT && !cfg->create ? " (use --create)" : "");
			return rc;
		}
		log_msg(LOG_INFO, "LUN %d: %s", i, cfg->dirs[i]);
		if ((rc = check_root(cfg, i, luns[i])) != 0)
			return rc;
	}
	return 0;
}

static int serve(const struct config *cfg, osd_target **luns)
{
	struct osd_target_iscsi_options o = cfg->limits;
	uint8_t secret[MAX_SECRET];
	o.address = cfg->address;
	o.port = cfg->port;
	o.target_name = cfg->iqn;
	o.log = log_server;
	o.log_payload = NULL;
	o.allowed_initiators = cfg->allow;
	o.nallowed_initiators = cfg->nallow;
	if (cfg->chap_secret_file) {
		long n = read_secret(cfg->chap_secret_file, secret, sizeof(secret));
		if (n == -EPERM)
			return 1; /* read_secret() said why */
		if (n < 0) {
			log_msg(LOG_ERR, "%s: %s", cfg->chap_secret_file, strerror((int)-n));
			return 1;
		}
		if (n < 12) { /* RFC 7143 12.1.3 */
			log_msg(LOG_ERR, "%s: CHAP secret of %ld bytes; at least 12 needed",
				cfg->chap_secret_file, n);
			return 1;
		}
		o.chap_user = cfg->chap_user;
		o.chap_secret = secret;
		o.chap_secret_len = (size_t)n;
	}
	int rc = osd_target_iscsi_create(&g_server, luns, (size_t)cfg->ndirs, &o);
	memset(secret, 0, sizeof(secret));
	if (rc) {
		log_msg(LOG_ERR, "cannot listen on %s:%d: %s", cfg->address, cfg->port,
			strerror(-rc));
		return 1;
	}
	log_msg(LOG_NOTICE, "listening on %s%s%s:%d", strchr(cfg->address, ':') ? "[" : "",
		cfg->address, strchr(cfg->address, ':') ? "]" : "",
		osd_target_iscsi_port(g_server));
	if (cfg->port_file && (rc = write_port_file(cfg->port_file, osd_target_iscsi_port(g_server)))) {
		log_msg(LOG_ERR, "%s: %s", cfg->port_file, strerror(-rc));
		osd_target_iscsi_free(g_server);
		return 1;
	}
	if (g_stop) /* came while the stores opened: run() returns at once */
		osd_target_iscsi_stop(g_server);
	rc = osd_target_iscsi_run(g_server);
	if (rc)
		log_msg(LOG_ERR, "%s", osd_target_iscsi_error(g_server));
	log_msg(LOG_NOTICE, "shutting down");
	osd_target_iscsi_free(g_server);
	g_server = NULL;
	return rc ? 1 : 0;
}

int main(int argc, char **argv)
{
	struct config cfg = { .limits = OSD_TARGET_ISCSI_OPTIONS_INIT };
	int rc = parse_args(argc, argv, &cfg);
	if (rc)
		return rc;
	osd_target *luns[MAX_LUNS] = { 0 };
	g_level = cfg.level;
	g_syslog = cfg.use_syslog;
	if (g_syslog)
		openlog(PROG, LOG_PID, LOG_DAEMON);
	if (install_signals()) {
		log_msg(LOG_ERR, "sigaction: %s", strerror(errno));
		return 1;
	}
	if (resolve_listen(&cfg))
		return 1;
	int status = open_targets(&cfg, luns) ? 1 : serve(&cfg, luns);
	for (int i = 0; i < cfg.ndirs; i++)
		osd_target_close(luns[i]);
	if (g_syslog)
		closelog();
	return status;
}
