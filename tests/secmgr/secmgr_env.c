/* See secmgr_env.h. */
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <openssl/rand.h>
#include "daemon_wait.h"
#include "secmgr_env.h"

#define WAIT_MS 15000
#define TARGET_IQN "iqn.2026-12.org.osd:target"

const char *secenv_path(const struct secenv *e, const char *name)
{
	static __thread char buf[8][512]; /* a few at once in one call */
	static __thread int next;
	char *p = buf[next++ & 7];

	snprintf(p, 512, "%s/%s", e->dir, name);
	return p;
}

static int sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static int sh(const char *fmt, ...)
{
	char cmd[4096];
	va_list ap;
	int rc;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	rc = system(cmd);
	if (rc != 0)
		fprintf(stderr, "secenv: failed (%d): %s\n", rc, cmd);
	return rc == 0 ? 0 : -1;
}

static int write_file(const char *path, const char *text, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);
	size_t n = strlen(text);

	if (fd < 0 || write(fd, text, n) != (ssize_t)n || fchmod(fd, mode) < 0) {
		perror(path);
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return close(fd);
}

/* A key and a certificate for @p name (CN @p name) signed by CA @p ca. */
static int make_cert(const struct secenv *e, const char *ca, const char *name, const char *ext)
{
	const char *d = e->dir;

	if (write_file(secenv_path(e, "ext"), ext, 0644) < 0)
		return -1;
	return sh("cd %s && openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes "
		  "-keyout %s.key -out %s.csr -subj /CN=%s 2>/dev/null && "
		  "openssl x509 -req -in %s.csr -CA %s.pem -CAkey %s.key -CAcreateserial "
		  "-out %s.pem -days 1 -extfile ext 2>/dev/null && chmod 600 %s.key",
		  d, name, name, name, name, ca, ca, name, name);
}

static int make_ca(const struct secenv *e, const char *name)
{
	return sh("cd %s && openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 "
		  "-nodes -keyout %s.key -out %s.pem -subj /CN=%s -days 1 2>/dev/null",
		  e->dir, name, name, name);
}

static int make_certs(const struct secenv *e)
{
	static const char *const clients[] = { "reader", "writer", "admin" };

	if (make_ca(e, "ca") < 0 || make_ca(e, "otherca") < 0 ||
	    make_cert(e, "ca", "server", "subjectAltName=IP:127.0.0.1\n") < 0 ||
	    make_cert(e, "otherca", "stranger", "basicConstraints=CA:FALSE\n") < 0)
		return -1;
	for (size_t i = 0; i < sizeof(clients) / sizeof(clients[0]); i++)
		if (make_cert(e, "ca", clients[i], "basicConstraints=CA:FALSE\n") < 0)
			return -1;
	return 0;
}

static void hex(const uint8_t *b, size_t n, char *out)
{
	for (size_t i = 0; i < n; i++)
		sprintf(out + 2 * i, "%02x", b[i]);
}

/* The store with a root key and keyed partitions A and B, as an admin with
 * the root key makes it (osdctl --key-file). */
static int make_store(const struct secenv *e)
{
	uint8_t key[20];
	char h[41], line[64];

	if (RAND_bytes(key, sizeof(key)) != 1)
		return -1;
	hex(key, sizeof(key), h);
	snprintf(line, sizeof(line), "%s\n", h);
	if (write_file(secenv_path(e, "root.key"), line, 0600) < 0)
		return -1;
	return sh("%s --target %s --key-file %s format >/dev/null && "
		  "%s --target %s --key-file %s --security capkey create-partition 0x%llx "
		  ">/dev/null && "
		  "%s --target %s --key-file %s --security capkey create-partition 0x%llx "
		  ">/dev/null", OSDCTL_PATH, secenv_path(e, "store"), secenv_path(e, "root.key"),
		  OSDCTL_PATH, secenv_path(e, "store"), secenv_path(e, "root.key"), PART_A,
		  OSDCTL_PATH, secenv_path(e, "store"), secenv_path(e, "root.key"), PART_B);
}

int secenv_open_dev(const struct secenv *e, osd_dev **dev)
{
	struct osd_iscsi_options io = OSD_ISCSI_OPTIONS_INIT;
	struct osd_dev_options o = OSD_DEV_OPTIONS_INIT;
	struct osd_transport tp;
	int rc = osd_iscsi_transport_new(&tp, e->url, &io);

	if (rc == 0 && (rc = osd_dev_open(dev, &tp, &o)) < 0)
		tp.ops->destroy(tp.impl);
	return rc;
}

static int write_keys(struct secenv *e)
{
	char id[41], line[512];
	FILE *f = fopen(secenv_path(e, "root.key"), "r");
	osd_dev *dev;
	int rc = secenv_open_dev(e, &dev);

	if (rc == 0) {
		rc = osd_dev_system_id(dev, e->system_id);
		osd_dev_close(dev);
	}
	if (rc < 0 || !f || !fgets(id, sizeof(id), f)) {
		fprintf(stderr, "secenv: no system id or root key (%d)\n", rc);
		if (f)
			fclose(f);
		return -1;
	}
	fclose(f);
	snprintf(line, sizeof(line), "# test key store\nsystem ");
	hex(e->system_id, OSD_SYSTEM_ID_LEN, line + strlen(line));
	snprintf(line + strlen(line), sizeof(line) - strlen(line), " root %.40s target %s\n", id,
		 e->url);
	return write_file(secenv_path(e, "keys"), line, 0600);
}

int secenv_log_count(const struct secenv *e, const char *needle)
{
	char line[2048];
	FILE *f = fopen(secenv_path(e, "secd.log"), "r");
	int n = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		n += strstr(line, needle) != NULL;
	fclose(f);
	return n;
}

int secenv_wait_log(const struct secenv *e, const char *needle, int n)
{
	uint64_t end = osd_test_now_ms() + WAIT_MS;

	while (osd_test_now_ms() < end) {
		if (secenv_log_count(e, needle) >= n)
			return 0;
		poll(NULL, 0, 10); /* waiting for a condition, bounded above */
	}
	fprintf(stderr, "secenv: osd-secd did not log '%s' %d times\n", needle, n);
	return -1;
}

/* Waits (bounded) until the daemon logged its @p n-th load of the configuration. */
static int wait_loads(const struct secenv *e, int n)
{
	return secenv_wait_log(e, ": notice: loaded ", n);
}

static int start_secd(struct secenv *e)
{
	e->secd = fork();
	if (e->secd < 0)
		return -1;
	if (e->secd == 0) {
		int log = open(secenv_path(e, "secd.log"), O_WRONLY | O_CREAT | O_APPEND, 0644);

		prctl(PR_SET_PDEATHSIG, SIGTERM);
		if (log >= 0)
			dup2(log, 2);
		execl(OSD_SECD_PATH, "osd-secd", "--listen", "127.0.0.1:0",
		      "--port-file", secenv_path(e, "sport"), "--cert", secenv_path(e, "server.pem"),
		      "--key", secenv_path(e, "server.key"), "--ca", secenv_path(e, "ca.pem"),
		      "--keys", secenv_path(e, "keys"), "--policy", secenv_path(e, "policy"),
		      (char *)NULL);
		_exit(127);
	}
	e->sport = osd_test_wait_port(secenv_path(e, "sport"), &e->secd, WAIT_MS);
	if (!e->sport) {
		fprintf(stderr, "secenv: osd-secd did not start\n");
		return -1;
	}
	snprintf(e->mgr_url, sizeof(e->mgr_url), "osdsec://127.0.0.1:%u", e->sport);
	e->loads = 1;
	return wait_loads(e, 1);
}

int secenv_start(struct secenv *e, const char *policy)
{
	unsigned tport;

	memset(e, 0, sizeof(*e));
	e->targetd = e->secd = -1;
	snprintf(e->dir, sizeof(e->dir), "/tmp/osd-secmgr-XXXXXX");
	if (!mkdtemp(e->dir)) {
		perror("mkdtemp");
		return -1;
	}
	if (make_certs(e) < 0 || make_store(e) < 0)
		return -1;
	tport = osd_test_targetd_start(OSD_TARGETD_PATH, e->dir, &e->targetd, WAIT_MS);
	if (!tport) {
		fprintf(stderr, "secenv: osd-targetd did not start\n");
		return -1;
	}
	snprintf(e->url, sizeof(e->url), "iscsi://127.0.0.1:%u/%s/0", tport, TARGET_IQN);
	if (write_keys(e) < 0 || write_file(secenv_path(e, "policy"), policy, 0644) < 0)
		return -1;
	return start_secd(e);
}

void secenv_stop(struct secenv *e)
{
	int status;

	if (e->secd > 0) {
		kill(e->secd, SIGCONT); /* a test that failed with it stopped */
		kill(e->secd, SIGTERM);
		waitpid(e->secd, &status, 0);
		e->secd = -1;
	}
	if (getenv("OSD_TEST_VERBOSE"))
		sh("cat %s/secd.log >&2", e->dir);
	osd_test_targetd_stop(&e->targetd, e->dir);
}

int secenv_set_policy(struct secenv *e, const char *policy)
{
	if (write_file(secenv_path(e, "policy"), policy, 0644) < 0 || kill(e->secd, SIGHUP) < 0)
		return -1;
	return wait_loads(e, ++e->loads);
}

int secenv_open_mgr(const struct secenv *e, const char *who, osd_secmgr **m)
{
	struct osd_secmgr_options o = OSD_SECMGR_OPTIONS_INIT;
	char cert[64], key[64], err[512] = "";
	int rc;

	snprintf(cert, sizeof(cert), "%s.pem", who);
	snprintf(key, sizeof(key), "%s.key", who);
	o.url = e->mgr_url;
	o.cert_file = secenv_path(e, cert);
	o.key_file = secenv_path(e, key);
	o.ca_file = secenv_path(e, "ca.pem");
	rc = osd_secmgr_open(m, &o, err, sizeof(err));
	if (rc < 0)
		fprintf(stderr, "secenv: %s: %s\n", who, err);
	return rc;
}
