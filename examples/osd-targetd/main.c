/*
 * osd-targetd: an iSCSI target daemon serving one software OSD store per
 * LUN (include/osdtarget/iscsi.h). Logs to stderr; SIGTERM or SIGINT stops
 * it cleanly (connections closed, stores flushed and closed).
 */
#include <osdtarget/iscsi.h>

#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PROG "osd-targetd"
#define MAX_LUNS 256
#define MAX_SECRET 256

static osd_target_iscsi *g_server;

struct config {
	char address[64];
	int port;
	const char *iqn;
	const char *chap_user;
	const char *chap_secret_file;
	const char *port_file;
	int create;
	int verbose;
	char **dirs;
	int ndirs;
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
		"  -c, --create               create stores that do not exist\n"
		"      --port-file FILE       write the bound TCP port to FILE\n"
		"  -v, --verbose              also log every PDU\n"
		"  -h, --help                 show this help\n"
		"  -V, --version              show the version\n");
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

static int parse_args(int argc, char **argv, struct config *cfg)
{
	enum { OPT_CHAP_USER = 256, OPT_CHAP_SECRET, OPT_PORT_FILE };
	static const struct option longopts[] = {
		{ "listen", required_argument, NULL, 'l' },
		{ "iqn", required_argument, NULL, 'n' },
		{ "chap-user", required_argument, NULL, OPT_CHAP_USER },
		{ "chap-secret-file", required_argument, NULL, OPT_CHAP_SECRET },
		{ "create", no_argument, NULL, 'c' },
		{ "port-file", required_argument, NULL, OPT_PORT_FILE },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	int opt;
	strcpy(cfg->address, "127.0.0.1");
	cfg->port = 3260;
	while ((opt = getopt_long(argc, argv, "l:n:cvhV", longopts, NULL)) != -1) {
		switch (opt) {
		case 'l':
			if (parse_listen(optarg, cfg))
				return usage_error("invalid --listen", optarg);
			break;
		case 'n': cfg->iqn = optarg; break;
		case OPT_CHAP_USER: cfg->chap_user = optarg; break;
		case OPT_CHAP_SECRET: cfg->chap_secret_file = optarg; break;
		case 'c': cfg->create = 1; break;
		case OPT_PORT_FILE: cfg->port_file = optarg; break;
		case 'v': cfg->verbose++; break;
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
	if (!f)
		return -errno;
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

static void log_stderr(void *payload, int level, const char *msg)
{
	static const char *const names[] = { "error", "warning", "info", "debug" };
	int verbose = *(const int *)payload;
	if (level > OSD_TARGET_ISCSI_LOG_INFO + verbose)
		return;
	fprintf(stderr, PROG ": %s: %s\n", names[level & 3], msg);
}

static void on_signal(int sig)
{
	(void)sig;
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

static int open_targets(const struct config *cfg, osd_target **luns)
{
	struct osd_target_options topts = OSD_TARGET_OPTIONS_INIT;
	topts.create = cfg->create;
	for (int i = 0; i < cfg->ndirs; i++) {
		int rc = osd_target_open(&luns[i], cfg->dirs[i], &topts);
		if (rc) {
			fprintf(stderr, PROG ": %s: %s%s\n", cfg->dirs[i], strerror(-rc),
				rc == -ENOENT && !cfg->create ? " (use --create)" : "");
			return rc;
		}
		fprintf(stderr, PROG ": info: LUN %d: %s\n", i, cfg->dirs[i]);
	}
	return 0;
}

static int serve(const struct config *cfg, osd_target **luns)
{
	struct osd_target_iscsi_options o = OSD_TARGET_ISCSI_OPTIONS_INIT;
	uint8_t secret[MAX_SECRET];
	int verbose = cfg->verbose;
	o.address = cfg->address;
	o.port = cfg->port;
	o.target_name = cfg->iqn;
	o.log = log_stderr;
	o.log_payload = &verbose;
	if (cfg->chap_secret_file) {
		long n = read_secret(cfg->chap_secret_file, secret, sizeof(secret));
		if (n < 0) {
			fprintf(stderr, PROG ": %s: %s\n", cfg->chap_secret_file, strerror((int)-n));
			return 1;
		}
		o.chap_user = cfg->chap_user;
		o.chap_secret = secret;
		o.chap_secret_len = (size_t)n;
	}
	int rc = osd_target_iscsi_create(&g_server, luns, (size_t)cfg->ndirs, &o);
	memset(secret, 0, sizeof(secret));
	if (rc) {
		fprintf(stderr, PROG ": cannot listen on %s:%d: %s\n", cfg->address, cfg->port,
			strerror(-rc));
		return 1;
	}
	if (cfg->port_file && (rc = write_port_file(cfg->port_file, osd_target_iscsi_port(g_server)))) {
		fprintf(stderr, PROG ": %s: %s\n", cfg->port_file, strerror(-rc));
		osd_target_iscsi_free(g_server);
		return 1;
	}
	rc = osd_target_iscsi_run(g_server);
	if (rc)
		fprintf(stderr, PROG ": %s\n", osd_target_iscsi_error(g_server));
	fprintf(stderr, PROG ": info: shutting down\n");
	osd_target_iscsi_free(g_server);
	g_server = NULL;
	return rc ? 1 : 0;
}

int main(int argc, char **argv)
{
	struct config cfg = { 0 };
	int rc = parse_args(argc, argv, &cfg);
	if (rc)
		return rc;
	osd_target *luns[MAX_LUNS] = { 0 };
	if (install_signals()) {
		perror(PROG ": sigaction");
		return 1;
	}
	int status = open_targets(&cfg, luns) ? 1 : serve(&cfg, luns);
	for (int i = 0; i < cfg.ndirs; i++)
		osd_target_close(luns[i]);
	return status;
}
