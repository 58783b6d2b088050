/*
 * osd-secd: the security manager daemon (docs/man/osd-secd.8). Loads the
 * key store and the policy, serves the credential protocol over TLS 1.3,
 * reloads both on SIGHUP (keeping the old ones if the new ones are wrong)
 * and stops on SIGTERM or SIGINT.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "secd.h"

static pthread_mutex_t config_lock = PTHREAD_MUTEX_INITIALIZER;
static struct secd_config *config;
static const char *keys_path, *policy_path;
static volatile int stop_flag, reload_flag, rotate_flag;
static unsigned rotate_every_s;  /* --rotate-every; 0 = on SIGUSR1 only */
static uint64_t next_rotation;   /* osd_now_ms() of the next timed rotation */

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: " PROG " [OPTION]...\n"
		"Hand out OSD capabilities to clients that authenticate with X.509\n"
		"certificates, by a policy, over TLS 1.3.\n"
		"\n"
		"  -l, --listen HOST:PORT   address to listen on (default 127.0.0.1:3270;\n"
		"                           :PORT for every address)\n"
		"      --cert FILE          the daemon's certificate chain (PEM)\n"
		"      --key FILE           its private key (PEM)\n"
		"      --ca FILE            CA certificates client certificates must chain to\n"
		"      --keys FILE          key store: \"system <id hex> root <key hex>\" lines;\n"
		"                           must be owned by the daemon's user, mode 0600\n"
		"      --policy FILE        policy: \"grant IDENTITY partition P [object ID]\n"
		"                           perms LIST [method M] [lifetime S]\" lines\n"
		"      --max-clients N      connections served at once (default 256)\n"
		"      --idle-timeout S     close a connection idle this long (default 300)\n"
		"      --rotate-every S     rotate working keys every S seconds (SET KEY on\n"
		"                           each OSD with a target URL in the key store)\n"
		"      --port-file FILE     write the bound TCP port to FILE\n"
		"      --syslog             log to syslog (LOG_AUTHPRIV) instead of stderr\n"
		"  -h, --help               show this help\n"
		"  -V, --version            show the version\n"
		"\n"
		"SIGHUP reloads the key store and the policy; SIGUSR1 rotates the working\n"
		"keys now. Every grant and refusal is\n"
		"logged. See osd-secd(8) and docs/security-manager.md.\n");
}

static int usage_error(const char *msg, const char *arg)
{
	fprintf(stderr, PROG ": %s%s%s\nTry '" PROG " --help'.\n", msg, arg ? ": " : "",
		arg ? arg : "");
	return 2;
}

struct secd_config *secd_config_get(void)
{
	struct secd_config *c;

	pthread_mutex_lock(&config_lock);
	c = config;
	c->refs++;
	pthread_mutex_unlock(&config_lock);
	return c;
}

static void config_free(struct secd_config *c)
{
	secd_keystore_free(&c->ks);
	secd_policy_free(&c->policy);
	free(c);
}

void secd_config_put(struct secd_config *c)
{
	int last;

	pthread_mutex_lock(&config_lock);
	last = --c->refs == 0;
	pthread_mutex_unlock(&config_lock);
	if (last)
		config_free(c);
}

static struct secd_config *config_load(void)
{
	struct secd_config *c = calloc(1, sizeof(*c));
	char err[512];

	if (!c)
		return NULL;
	if (secd_keystore_load(&c->ks, keys_path, err, sizeof(err)) < 0) {
		secd_log(SECD_ERR, "%s", err);
		free(c);
		return NULL;
	}
	if (secd_policy_load(&c->policy, policy_path, err, sizeof(err)) < 0) {
		secd_log(SECD_ERR, "%s", err);
		secd_keystore_free(&c->ks);
		free(c);
		return NULL;
	}
	c->refs = 1;
	secd_log(SECD_NOTICE, "loaded %zu OSD system(s) from %s and %zu grant(s) from %s",
		 c->ks.n, keys_path, c->policy.n, policy_path);
	return c;
}

/* SIGHUP: the new configuration answers every request from now on; those
 * being answered finish under the old one. */
static void reload(void)
{
	struct secd_config *c = config_load(), *old;

	if (!c) {
		secd_log(SECD_ERR, "reload failed: still serving the previous key store and policy");
		return;
	}
	pthread_mutex_lock(&config_lock);
	old = config;
	config = c;
	pthread_mutex_unlock(&config_lock);
	secd_config_put(old);
}

/* SIGUSR1 or --rotate-every: new working keys for every OSD with a target
 * URL, saved to the state file so a restart or reload keeps signing with
 * them. */
static void rotate(void)
{
	struct secd_config *c = secd_config_get();
	int failed = 0, rc;

	for (size_t i = 0; i < c->ks.n; i++)
		failed += secd_rotate_system(&c->ks.sys[i]);
	rc = secd_keystore_save_working(&c->ks, keys_path);
	if (rc < 0)
		secd_log(SECD_ERR, "cannot save the rotated working keys to %s.working: %s",
			 keys_path, strerror(-rc));
	secd_log(failed || rc < 0 ? SECD_ERR : SECD_NOTICE, "rotation done%s",
		 failed ? " (with failures)" : "");
	secd_config_put(c);
	if (rotate_every_s)
		next_rotation = osd_now_ms() + rotate_every_s * 1000ull;
}

static int until_rotation(void)
{
	uint64_t now = osd_now_ms();

	if (!rotate_every_s)
		return -1;
	return next_rotation <= now ? 0 : (int)(next_rotation - now);
}

static void on_signal(int sig)
{
	if (sig == SIGHUP)
		reload_flag = 1;
	else if (sig == SIGUSR1)
		rotate_flag = 1;
	else
		stop_flag = 1;
}

static int parse_uint(const char *s, unsigned min, unsigned max, unsigned *out)
{
	char *e;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &e, 10);
	if (!*s || *e || errno || v < min || v > max)
		return -1;
	*out = (unsigned)v;
	return 0;
}

enum { OPT_CERT = 256, OPT_KEY, OPT_CA, OPT_KEYS, OPT_POLICY, OPT_MAX, OPT_IDLE, OPT_PORT_FILE,
       OPT_SYSLOG, OPT_ROTATE };

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "listen", required_argument, NULL, 'l' },
		{ "cert", required_argument, NULL, OPT_CERT },
		{ "key", required_argument, NULL, OPT_KEY },
		{ "ca", required_argument, NULL, OPT_CA },
		{ "keys", required_argument, NULL, OPT_KEYS },
		{ "policy", required_argument, NULL, OPT_POLICY },
		{ "max-clients", required_argument, NULL, OPT_MAX },
		{ "idle-timeout", required_argument, NULL, OPT_IDLE },
		{ "port-file", required_argument, NULL, OPT_PORT_FILE },
		{ "syslog", no_argument, NULL, OPT_SYSLOG },
		{ "rotate-every", required_argument, NULL, OPT_ROTATE },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	struct secd_server_opts so = { "127.0.0.1:3270", NULL, NULL, NULL, NULL, 256, 300000 };
	struct secd_server *srv = NULL;
	struct secd_events ev;
	struct sigaction sa;
	sigset_t block;
	unsigned idle_s = 300;
	int opt;

	while ((opt = getopt_long(argc, argv, "l:hV", longopts, NULL)) != -1) {
		switch (opt) {
		case 'l': so.listen = optarg; break;
		case OPT_CERT: so.cert = optarg; break;
		case OPT_KEY: so.key = optarg; break;
		case OPT_CA: so.ca = optarg; break;
		case OPT_KEYS: keys_path = optarg; break;
		case OPT_POLICY: policy_path = optarg; break;
		case OPT_MAX:
			if (parse_uint(optarg, 1, 65536, &so.max_clients) < 0)
				return usage_error("invalid --max-clients (1-65536)", optarg);
			break;
		case OPT_IDLE:
			if (parse_uint(optarg, 1, 86400, &idle_s) < 0)
				return usage_error("invalid --idle-timeout (1-86400 s)", optarg);
			so.idle_ms = idle_s * 1000;
			break;
		case OPT_PORT_FILE: so.port_file = optarg; break;
		case OPT_SYSLOG: secd_log_syslog(1); break;
		case OPT_ROTATE:
			if (parse_uint(optarg, 1, 86400 * 365, &rotate_every_s) < 0)
				return usage_error("invalid --rotate-every (seconds)", optarg);
			break;
		case 'h': usage(stdout); return 0;
		case 'V': printf(PROG " %s\n", osd_version_string()); return 0;
		default: return usage_error("invalid option", NULL);
		}
	}
	if (optind < argc)
		return usage_error("unexpected argument", argv[optind]);
	if (!so.cert || !so.key || !so.ca)
		return usage_error("--cert, --key and --ca are needed", NULL);
	if (!keys_path || !policy_path)
		return usage_error("--keys and --policy are needed", NULL);

	/* Blocked everywhere but in the accept loop's ppoll(); threads inherit it. */
	sigemptyset(&block);
	sigaddset(&block, SIGHUP);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &block, NULL);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGHUP, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGUSR1, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	config = config_load();
	if (!config)
		return 1;
	if (secd_server_start(&srv, &so) < 0)
		return 1;
	secd_log(SECD_NOTICE, "serving on %s", so.listen);
	ev.stop = &stop_flag;
	ev.reload = &reload_flag;
	ev.rotate = &rotate_flag;
	ev.do_reload = reload;
	ev.do_rotate = rotate;
	ev.timeout_ms = until_rotation;
	if (rotate_every_s)
		next_rotation = osd_now_ms() + rotate_every_s * 1000ull;
	if (secd_server_run(srv, &ev) < 0)
		return 1;
	secd_log(SECD_NOTICE, "stopping");
	secd_server_free(srv);
	secd_config_put(config);
	return 0;
}
