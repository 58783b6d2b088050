/*
 * osd-secd end to end over 127.0.0.1 (docs/security-manager.md): osd-targetd
 * with a root key, the daemon, and clients holding different policies. Every
 * allowed operation works; what the policy does not grant is refused by the
 * manager, and a client that bypasses its library (reuses, widens or
 * forges a capability) is refused by the OSD itself; expiry, refreshing
 * without waiting, and revocation by a policy reload within the lifetime.
 */
#include <check.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>
#include "daemon_wait.h"
#include "secmgr_env.h"

#define LIFE_S 3
#define LIFE_MS (LIFE_S * 1000u)
#define OBJ_X 0x10100ULL
#define OBJ_Y 0x10101ULL

#define POLICY_FMT \
	"# the test policy\n" \
	"grant reader partition 0x10000 perms read,get_attr lifetime %d\n" \
	"grant writer partition 0x10000 perms %s lifetime %d\n" \
	"grant admin partition 0 perms all\n" \
	"grant admin partition 0x10002 perms all\n" \
	"grant reader partition 0x10002 perms read,get_attr\n"
#define WRITER_RW "read,write,create,remove,get_attr,set_attr"

static struct secenv env;
static char cmd_buf[8192];

static void policy(char *buf, size_t len, const char *writer_perms)
{
	snprintf(buf, len, POLICY_FMT, LIFE_S, writer_perms, LIFE_S);
}

/* A device whose credentials come from the manager as @p who. */
static void client(const char *who, osd_dev **dev, osd_secmgr **m)
{
	ck_assert_int_eq(secenv_open_dev(&env, dev), 0);
	ck_assert_int_eq(secenv_open_mgr(&env, who, m), 0);
	ck_assert_int_eq(osd_secmgr_attach(*m, *dev), 0);
}

static void client_close(osd_dev *dev, osd_secmgr *m)
{
	osd_dev_close(dev);
	osd_secmgr_close(m);
}

static int exec_free(osd_req *req, int rc)
{
	if (rc == 0)
		rc = osd_req_execute(req);
	osd_req_free(req);
	return rc;
}

static int do_create(osd_dev *dev, uint64_t id)
{
	struct osd_obj_id o = { PART_A, id };
	osd_req *req = NULL;

	return exec_free(req, osd_req_create(&req, dev, &o, 1));
}

static int do_write(osd_dev *dev, uint64_t id, const char *text)
{
	struct osd_obj_id o = { PART_A, id };
	struct iovec iov = { (void *)text, strlen(text) };
	osd_req *req = NULL;
	int rc = osd_req_write(&req, dev, &o, 0, &iov, 1);

	return exec_free(req, rc);
}

/* READ of @p len bytes of @p obj, with @p cred when not NULL; the request's
 * sense is left in *asc (0 when none). */
static int do_read_cred(osd_dev *dev, struct osd_obj_id o, char *buf, size_t len,
			const struct osd_credential *cred, uint16_t *asc)
{
	struct iovec iov = { buf, len };
	osd_req *req = NULL;
	int rc = osd_req_read(&req, dev, &o, 0, &iov, 1);

	if (rc == 0 && cred)
		rc = osd_req_set_credential(req, cred);
	if (rc == 0)
		rc = osd_req_execute(req);
	if (asc)
		*asc = osd_req_sense(req) ? osd_req_sense(req)->asc : 0;
	osd_req_free(req);
	return rc;
}

static int do_write_cred(osd_dev *dev, struct osd_obj_id o, const char *text,
			 const struct osd_credential *cred, uint16_t *asc)
{
	struct iovec iov = { (void *)text, strlen(text) };
	osd_req *req = NULL;
	int rc = osd_req_write(&req, dev, &o, 0, &iov, 1);

	if (rc == 0)
		rc = osd_req_set_credential(req, cred);
	if (rc == 0)
		rc = osd_req_execute(req);
	*asc = osd_req_sense(req) ? osd_req_sense(req)->asc : 0;
	osd_req_free(req);
	return rc;
}

static struct osd_cred_request want(uint64_t id, uint16_t perms)
{
	struct osd_cred_request w;

	memset(&w, 0, sizeof(w));
	w.version = OSD_V2;
	w.obj.partition = PART_A;
	w.obj.id = id;
	w.permissions = perms;
	w.method = OSD_SEC_CAPKEY;
	return w;
}

START_TEST(allowed_operations_work)
{
	struct osd_obj_id x = { PART_A, OBJ_X };
	osd_dev *wd, *rd;
	osd_secmgr *wm, *rm;
	char buf[32] = "";
	uint64_t len = 0;

	client("writer", &wd, &wm);
	client("reader", &rd, &rm);
	ck_assert_int_eq(do_create(wd, OBJ_X), 0);
	ck_assert_int_eq(do_create(wd, OBJ_Y), 0);
	ck_assert_int_eq(do_write(wd, OBJ_X, "granted by policy"), 0);
	ck_assert_int_eq(do_read_cred(wd, x, buf, 17, NULL, NULL), 0);
	ck_assert_mem_eq(buf, "granted by policy", 17);
	memset(buf, 0, sizeof(buf));
	ck_assert_int_eq(do_read_cred(rd, x, buf, 17, NULL, NULL), 0);
	ck_assert_mem_eq(buf, "granted by policy", 17);
	ck_assert_int_eq(osd_get_attr_u64(rd, &x, OSD_APAGE_USER_BASE + OSD_APAGE_INFORMATION,
					  OSD_ATTR_UI_LOGICAL_LENGTH, &len), 0);
	ck_assert_uint_eq(len, 17);
	ck_assert_int_ge(secenv_log_count(&env, "info: grant client=writer"), 3);
	ck_assert_int_ge(secenv_log_count(&env, "info: grant client=reader"), 1);
	client_close(wd, wm);
	client_close(rd, rm);
}
END_TEST

START_TEST(manager_refuses_what_policy_lacks)
{
	struct osd_obj_id b = { PART_B, OBJ_X };
	osd_dev *rd, *wd;
	osd_secmgr *rm, *wm;
	char buf[8];
	int before = secenv_log_count(&env, "warning: refuse client=reader");

	client("reader", &rd, &rm);
	client("writer", &wd, &wm);
	ck_assert_int_eq(do_write(rd, OBJ_X, "no"), -EACCES);
	ck_assert_ptr_nonnull(strstr(osd_secmgr_error(rm), "refused"));
	ck_assert_int_eq(do_create(rd, 0x10200), -EACCES);
	ck_assert_int_eq(do_read_cred(rd, b, buf, sizeof(buf), NULL, NULL), -EACCES);
	ck_assert_int_eq(do_read_cred(wd, b, buf, sizeof(buf), NULL, NULL), -EACCES);
	ck_assert_int_ge(secenv_log_count(&env, "warning: refuse client=reader"), before + 3);
	client_close(rd, rm);
	client_close(wd, wm);
}
END_TEST

/* The reader holds a genuine READ credential for X and tries to stretch it:
 * only the OSD stands in the way (no library check is involved, since the
 * credential is given to the request by hand). */
START_TEST(osd_refuses_bypass)
{
	struct osd_obj_id x = { PART_A, OBJ_X }, y = { PART_A, OBJ_Y };
	struct osd_cred_request w = want(OBJ_X, OSD_PERM_READ);
	struct osd_credential cred, forged;
	osd_dev *dev;
	osd_secmgr *m;
	uint16_t asc = 0;
	char buf[8];

	ck_assert_int_eq(secenv_open_dev(&env, &dev), 0);
	ck_assert_int_eq(secenv_open_mgr(&env, "reader", &m), 0);
	ck_assert_int_eq(osd_secmgr_request(m, env.system_id, &w, 0, &cred), 0);
	/* control: the credential itself is good */
	ck_assert_int_eq(do_read_cred(dev, x, buf, sizeof(buf), &cred, &asc), 0);
	/* a WRITE with a READ capability: permissions (check 12) */
	ck_assert_int_eq(do_write_cred(dev, x, "nope", &cred, &asc), -EACCES);
	ck_assert_uint_eq(asc, 0x2400);
	/* the same capability for another object: object match (check 9) */
	ck_assert_int_eq(do_read_cred(dev, y, buf, sizeof(buf), &cred, &asc), -EACCES);
	ck_assert_uint_eq(asc, 0x2400);
	/* widened to WRITE, or rewritten to name Y, with the old key: signature (check 5) */
	forged = cred;
	forged.cap.permissions |= OSD_PERM_WRITE;
	ck_assert_int_eq(do_write_cred(dev, x, "nope", &forged, &asc), -EACCES);
	ck_assert_uint_eq(asc, 0x2400);
	forged = cred;
	forged.cap.allowed_object = OBJ_Y;
	ck_assert_int_eq(do_read_cred(dev, y, buf, sizeof(buf), &forged, &asc), -EACCES);
	ck_assert_uint_eq(asc, 0x2400);
	/* a later expiry with the old key */
	forged = cred;
	forged.cap.expiration += 3600000;
	ck_assert_int_eq(do_read_cred(dev, x, buf, sizeof(buf), &forged, &asc), -EACCES);
	ck_assert_uint_eq(asc, 0x2400);
	/* asking for more than the policy grants gets nothing to forge from */
	w.permissions |= OSD_PERM_WRITE;
	ck_assert_int_eq(osd_secmgr_request(m, env.system_id, &w, 0, &forged), -EACCES);
	osd_dev_close(dev);
	osd_secmgr_close(m);
}
END_TEST

START_TEST(expiry_is_honoured)
{
	struct osd_obj_id x = { PART_A, OBJ_X };
	struct osd_cred_request w = want(OBJ_X, OSD_PERM_READ);
	struct osd_credential cred;
	osd_dev *dev;
	osd_secmgr *m;
	uint64_t before = osd_now_ms(), end;
	uint16_t asc;
	char buf[8];

	ck_assert_int_eq(secenv_open_dev(&env, &dev), 0);
	ck_assert_int_eq(secenv_open_mgr(&env, "writer", &m), 0);
	/* a client may ask for less than the policy's lifetime, never more */
	ck_assert_int_eq(osd_secmgr_request(m, env.system_id, &w, 3600000, &cred), 0);
	ck_assert_uint_le(cred.cap.expiration, osd_now_ms() + LIFE_MS);
	ck_assert_uint_ge(cred.cap.expiration, before + LIFE_MS);
	ck_assert_int_eq(osd_secmgr_request(m, env.system_id, &w, 800, &cred), 0);
	ck_assert_uint_le(cred.cap.expiration, osd_now_ms() + 800);
	ck_assert_int_eq(do_read_cred(dev, x, buf, sizeof(buf), &cred, &asc), 0);
	end = osd_test_now_ms() + 5000;
	while (osd_now_ms() <= cred.cap.expiration + 20 && osd_test_now_ms() < end)
		poll(NULL, 0, 20); /* waiting for the clock to pass the expiry, bounded */
	ck_assert_int_eq(do_read_cred(dev, x, buf, sizeof(buf), &cred, &asc), -EACCES);
	ck_assert_uint_eq(asc, 0x2400);
	osd_dev_close(dev);
	osd_secmgr_close(m);
}
END_TEST

/* I/O over two and a half lifetimes: the refresher renews the credential
 * before it expires, so only the first one is asked for while I/O waits. */
START_TEST(refresh_keeps_io_off_the_manager)
{
	struct osd_obj_id x = { PART_A, OBJ_X };
	struct osd_secmgr_stats st;
	uint64_t end = osd_test_now_ms() + LIFE_MS * 5 / 2;
	osd_dev *dev;
	osd_secmgr *m;
	unsigned n = 0;
	char buf[8];

	client("reader", &dev, &m);
	while (osd_test_now_ms() < end) {
		ck_assert_int_eq(do_read_cred(dev, x, buf, sizeof(buf), NULL, NULL), 0);
		n++;
		poll(NULL, 0, 5);
	}
	/* A renewal in flight has counted its round trip and not yet its
	 * refresh: let it finish (bounded) before comparing the two. */
	end = osd_test_now_ms() + 5000;
	do
		osd_secmgr_get_stats(m, &st);
	while (st.round_trips - st.refreshes != 1 && osd_test_now_ms() < end &&
	       poll(NULL, 0, 10) == 0);
	fprintf(stderr, "refresh: %u reads, %llu round trips, %llu renewals, %llu cache hits\n",
		n, (unsigned long long)st.round_trips, (unsigned long long)st.refreshes,
		(unsigned long long)st.cache_hits);
	ck_assert_uint_ge(st.refreshes, 2);
	ck_assert_uint_eq(st.round_trips - st.refreshes, 1); /* the first READ only */
	ck_assert_uint_eq(st.refusals, 0);
	client_close(dev, m);
}
END_TEST

/* With the manager frozen (SIGSTOP), I/O goes on with the cached
 * credentials: nothing on the I/O path waits for the manager. */
START_TEST(io_goes_on_while_manager_is_frozen)
{
	struct osd_obj_id x = { PART_A, OBJ_X };
	struct osd_secmgr_stats before, after;
	osd_dev *dev;
	osd_secmgr *m;
	uint64_t end;
	unsigned n = 0;
	char buf[8];

	client("reader", &dev, &m);
	/* inside the first half-life of the credential the first READ gets,
	 * counted from before that READ (a loaded machine may be slow to stop
	 * the manager): the refresher has nothing to renew yet */
	end = osd_test_now_ms() + LIFE_MS / 3;
	ck_assert_int_eq(do_read_cred(dev, x, buf, sizeof(buf), NULL, NULL), 0);
	osd_secmgr_get_stats(m, &before);
	ck_assert_int_eq(kill(env.secd, SIGSTOP), 0);
	do {
		ck_assert_int_eq(do_read_cred(dev, x, buf, sizeof(buf), NULL, NULL), 0);
		n++;
	} while (osd_test_now_ms() < end);
	ck_assert_int_eq(kill(env.secd, SIGCONT), 0);
	osd_secmgr_get_stats(m, &after);
	ck_assert_uint_gt(n, 0);
	ck_assert_uint_eq(after.round_trips, before.round_trips);
	client_close(dev, m);
}
END_TEST

/* The writer loses WRITE by a reload; its cached capability stops working
 * within the lifetime, refused first by the manager, then by expiry. */
START_TEST(reload_revokes_within_lifetime)
{
	char pol[512];
	osd_dev *dev;
	osd_secmgr *m;
	uint64_t t0, end, tried = 0;
	int rc = 0;

	client("writer", &dev, &m);
	ck_assert_int_eq(do_write(dev, OBJ_Y, "before"), 0);
	policy(pol, sizeof(pol), "read,get_attr");
	ck_assert_int_eq(secenv_set_policy(&env, pol), 0);
	t0 = osd_test_now_ms();
	end = t0 + LIFE_MS + 2000;
	while ((tried = osd_test_now_ms()) < end && (rc = do_write(dev, OBJ_Y, "after")) == 0)
		poll(NULL, 0, 20);
	fprintf(stderr, "revocation: a write begun %llu ms after the reload refused (lifetime %u ms)\n",
		(unsigned long long)(tried - t0), LIFE_MS);
	ck_assert_int_eq(rc, -EACCES);
	/* when the refused write began, not when it returned: a loaded
	 * machine's slow last call does not count */
	ck_assert_uint_le(tried - t0, LIFE_MS + 500);
	client_close(dev, m);
	policy(pol, sizeof(pol), WRITER_RW);
	ck_assert_int_eq(secenv_set_policy(&env, pol), 0);
}
END_TEST

/* Two rotations of the working key (SIGUSR1: the daemon sends SET KEY) in
 * the middle of reads and writes: no client error, the new capabilities
 * name the new key version, and one issued before still works. */
START_TEST(rotation_mid_workload)
{
	struct osd_obj_id x = { PART_A, OBJ_X };
	struct osd_cred_request w = want(OBJ_X, OSD_PERM_READ);
	struct osd_credential old, now;
	struct stat sb;
	osd_dev *dev;
	osd_secmgr *m;
	int sent = 0, base = secenv_log_count(&env, "notice: rotation done"), done = 0;
	unsigned ios = 0;
	uint64_t settle = 0, end = osd_test_now_ms() + 30000;
	char buf[8];

	client("writer", &dev, &m);
	ck_assert_int_eq(osd_secmgr_request(m, env.system_id, &w, 0, &old), 0);
	while (osd_test_now_ms() < end && (!settle || osd_test_now_ms() < settle)) {
		ck_assert_int_eq(do_write(dev, OBJ_Y, "rotating"), 0);
		ck_assert_int_eq(do_read_cred(dev, x, buf, sizeof(buf), NULL, NULL), 0);
		ios += 2;
		done = secenv_log_count(&env, "notice: rotation done") - base;
		if (sent < 2 && done == sent) {
			ck_assert_int_eq(kill(env.secd, SIGUSR1), 0);
			sent++;
		}
		if (done == 2 && !settle) /* long enough for every credential to renew */
			settle = osd_test_now_ms() + LIFE_MS;
		poll(NULL, 0, 5);
	}
	fprintf(stderr, "rotation: %u I/Os without error across 2 rotations\n", ios);
	ck_assert_int_eq(done, 2);
	ck_assert_int_eq(secenv_log_count(&env, "rotated partition 0x10000"), 2);
	ck_assert_int_eq(osd_secmgr_request(m, env.system_id, &w, 0, &now), 0);
	ck_assert_uint_eq(now.cap.key_version, (old.cap.key_version + 2) & 15);
	ck_assert_int_eq(do_read_cred(dev, x, buf, sizeof(buf), &now, NULL), 0);
	if (old.cap.expiration > osd_now_ms() + 200)
		ck_assert_int_eq(do_read_cred(dev, x, buf, sizeof(buf), &old, NULL), 0);
	/* the new working key survives a reload (kept in the 0600 state file) */
	ck_assert_int_eq(stat(secenv_path(&env, "keys.working"), &sb), 0);
	ck_assert_uint_eq(sb.st_mode & 0777, 0600);
	{
		char pol[512];

		policy(pol, sizeof(pol), WRITER_RW);
		ck_assert_int_eq(secenv_set_policy(&env, pol), 0);
	}
	ck_assert_int_eq(osd_secmgr_request(m, env.system_id, &w, 0, &now), 0);
	ck_assert_uint_eq(now.cap.key_version, (old.cap.key_version + 2) & 15);
	ck_assert_int_eq(do_read_cred(dev, x, buf, sizeof(buf), &now, NULL), 0);
	client_close(dev, m);
}
END_TEST

START_TEST(unknown_ca_is_refused)
{
	struct osd_cred_request w = want(OBJ_X, OSD_PERM_READ);
	struct osd_credential cred;
	osd_secmgr *m = NULL;
	int before = secenv_log_count(&env, "TLS handshake failed");

	/* TLS 1.3: the client may finish its handshake before the server's
	 * verdict, which then ends the first request */
	if (secenv_open_mgr(&env, "stranger", &m) == 0) {
		ck_assert_int_lt(osd_secmgr_request(m, env.system_id, &w, 0, &cred), 0);
		osd_secmgr_close(m);
	}
	ck_assert_int_gt(secenv_log_count(&env, "TLS handshake failed"), before);
}
END_TEST

/* osdctl with --security-manager: the reader reads and cannot write. */
START_TEST(osdctl_uses_the_manager)
{
	char cmd[4096], common[2048];
	int st;

	snprintf(common, sizeof(common), "%s --target %s --security-manager %s --ca %s "
		 "--cert %s --key %s", OSDCTL_PATH, env.url, env.mgr_url,
		 secenv_path(&env, "ca.pem"), secenv_path(&env, "reader.pem"),
		 secenv_path(&env, "reader.key"));
	snprintf(cmd, sizeof(cmd), "%s read 0x%llx 0x%llx --length 17 > %s", common, PART_A,
		 OBJ_X, secenv_path(&env, "out"));
	ck_assert_int_eq(system(cmd), 0);
	snprintf(cmd, sizeof(cmd), "grep -qx 'granted by policy' %s", secenv_path(&env, "out"));
	ck_assert_int_eq(system(cmd), 0);
	snprintf(cmd, sizeof(cmd), "echo x | %s write 0x%llx 0x%llx 2> %s", common, PART_A,
		 OBJ_X, secenv_path(&env, "err"));
	st = system(cmd);
	ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 1);
	snprintf(cmd, sizeof(cmd), "grep -q 'security manager refused' %s",
		 secenv_path(&env, "err"));
	ck_assert_int_eq(system(cmd), 0);
	/* usage errors (exit 2) and a private key others may read (exit 1) */
	snprintf(cmd, sizeof(cmd), "%s --key-file %s info 2>/dev/null", common,
		 secenv_path(&env, "root.key"));
	st = system(cmd);
	ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 2);
	snprintf(cmd, sizeof(cmd), "%s --target %s --security-manager %s info 2>/dev/null",
		 OSDCTL_PATH, env.url, env.mgr_url);
	st = system(cmd);
	ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 2);
	snprintf(cmd, sizeof(cmd), "cp -p %s/reader.key %s/open.key && chmod 644 %s/open.key && "
		 "%s --target %s --security-manager %s --ca %s --cert %s --key %s/open.key info "
		 "2>&1 | grep -q 'permissions 0644 for .* are too open'", env.dir, env.dir, env.dir,
		 OSDCTL_PATH, env.url, env.mgr_url, secenv_path(&env, "ca.pem"),
		 secenv_path(&env, "reader.pem"), env.dir);
	ck_assert_int_eq(system(cmd), 0);
}
END_TEST

/* Runs the tool @p path with the manager options of @p who, then @p args;
 * returns its exit status (-1 if it did not exit). */
static int tool_as(const char *path, const char *who, const char *args)
{
	char cmd[8192];
	int st;

	snprintf(cmd, sizeof(cmd), "%s --target %s --security-manager %s --ca %s --cert %s/%s.pem "
		 "--key %s/%s.key %s", path, env.url, env.mgr_url, secenv_path(&env, "ca.pem"),
		 env.dir, who, env.dir, who, args);
	st = system(cmd);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* osdfs under a policy: the admin makes a filesystem on a partition it
 * creates through the manager (which keys it on the OSD) and checks it; a
 * read-only client reads and cannot change anything; a client without a
 * grant on the partition cannot even list it; nor can anyone without a
 * credential (the manager raised the new partition's method to CAPKEY). */
START_TEST(osdfs_under_policy)
{
	struct osd_obj_id p = { 0x10002, 0 };
	char args[4096];
	uint64_t v;
	osd_dev *dev;

	ck_assert_int_eq(tool_as(OSDFS_PATH, "admin", "--partition 0x10002 mkfs >/dev/null"), 0);
	ck_assert_int_eq(secenv_log_count(&env, "keyed partition 0x10002"), 1);
	snprintf(args, sizeof(args), "--partition 0x10002 cp %s/server.pem :/f >/dev/null", env.dir);
	ck_assert_int_eq(tool_as(OSDFS_PATH, "admin", args), 0);
	ck_assert_int_eq(tool_as(OSDFS_PATH, "admin", "--partition 0x10002 fsck >/dev/null"), 0);
	snprintf(args, sizeof(args), "--partition 0x10002 cat /f | cmp - %s/server.pem", env.dir);
	ck_assert_int_eq(tool_as(OSDFS_PATH, "reader", args), 0);
	snprintf(args, sizeof(args), "--partition 0x10002 mkdir /d 2> %s/err", env.dir);
	ck_assert_int_eq(tool_as(OSDFS_PATH, "reader", args), 1);
	snprintf(args, sizeof(args), "grep -q 'security manager refused' %s/err", env.dir);
	ck_assert_int_eq(system(args), 0);
	snprintf(args, sizeof(args), "--partition 0x10002 cp %s/server.pem :/g 2>/dev/null", env.dir);
	ck_assert_int_eq(tool_as(OSDFS_PATH, "reader", args), 1);
	ck_assert_int_eq(tool_as(OSDFS_PATH, "writer", "--partition 0x10002 ls / 2>/dev/null"), 1);
	ck_assert_int_eq(secenv_open_dev(&env, &dev), 0);
	ck_assert_int_eq(osd_get_attr_u64(dev, &p, OSD_APAGE_PARTITION_BASE +
					  OSD_APAGE_POLICY_SECURITY, OSD_ATTR_PS_DEFAULT_METHOD, &v),
			 -EACCES);
	osd_dev_close(dev);
}
END_TEST

/* osd-secd with @p keys and @p policy (paths) and the test bed's
 * certificates; its exit status, its stderr in the file "start.log". */
static int secd_once(const char *keys, const char *policy)
{
	char cmd[8192];
	int st;

	snprintf(cmd, sizeof(cmd), "%s --listen 127.0.0.1:0 --cert %s/server.pem --key "
		 "%s/server.key --ca %s/ca.pem --keys %s --policy %s 2> %s/start.log < /dev/null",
		 OSD_SECD_PATH, env.dir, env.dir, env.dir, keys, policy, env.dir);
	st = system(cmd);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static int start_log_has(const char *text)
{
	char cmd[4096];

	snprintf(cmd, sizeof(cmd), "grep -qF -- '%s' %s/start.log", text, env.dir);
	return system(cmd) == 0;
}

/* A key store others may read, a malformed key store or policy: the daemon
 * says what and where, and does not start; the same mistakes in a reload
 * leave it serving the previous configuration. */
START_TEST(bad_configuration_is_refused)
{
	struct osd_cred_request w = want(OBJ_X, OSD_PERM_READ);
	struct osd_credential cred;
	char keys[512], pol[512], good[512];
	osd_secmgr *m;

	snprintf(keys, sizeof(keys), "%s/keys644", env.dir);
	snprintf(cmd_buf, sizeof(cmd_buf), "cp %s/keys %s && chmod 644 %s", env.dir, keys, keys);
	ck_assert_int_eq(system(cmd_buf), 0);
	ck_assert_int_eq(secd_once(keys, secenv_path(&env, "policy")), 1);
	ck_assert(start_log_has("are too open: the key store must be readable by its owner"));
	snprintf(cmd_buf, sizeof(cmd_buf), "printf 'system 12 root 34\\n' > %s && chmod 600 %s",
		 keys, keys);
	ck_assert_int_eq(system(cmd_buf), 0);
	ck_assert_int_eq(secd_once(keys, secenv_path(&env, "policy")), 1);
	ck_assert(start_log_has("keys644:1: expected \"system <40 hex digits>"));
	snprintf(pol, sizeof(pol), "%s/badpolicy", env.dir);
	snprintf(cmd_buf, sizeof(cmd_buf), "printf '# ok\\ngrant x partition 0x10000 perms "
		 "read,fly\\n' > %s", pol);
	ck_assert_int_eq(system(cmd_buf), 0);
	ck_assert_int_eq(secd_once(secenv_path(&env, "keys"), pol), 1);
	ck_assert(start_log_has("badpolicy:2: perms: perms is a comma list"));

	/* the same policy in a reload: refused, the old one still answers */
	policy(good, sizeof(good), WRITER_RW);
	snprintf(cmd_buf, sizeof(cmd_buf), "cp %s %s/policy", pol, env.dir);
	ck_assert_int_eq(system(cmd_buf), 0);
	ck_assert_int_eq(kill(env.secd, SIGHUP), 0);
	ck_assert_int_eq(secenv_wait_log(&env, "reload failed: still serving the previous", 1), 0);
	ck_assert_int_eq(secenv_open_mgr(&env, "reader", &m), 0);
	ck_assert_int_eq(osd_secmgr_request(m, env.system_id, &w, 0, &cred), 0);
	osd_secmgr_close(m);
	ck_assert_int_eq(secenv_set_policy(&env, good), 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("secmgr");
	TCase *tc = tcase_create("e2e");
	char pol[512];
	SRunner *sr;
	int failed;

	policy(pol, sizeof(pol), WRITER_RW);
	if (secenv_start(&env, pol) < 0) {
		secenv_stop(&env);
		return 1;
	}
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, allowed_operations_work);
	tcase_add_test(tc, manager_refuses_what_policy_lacks);
	tcase_add_test(tc, osd_refuses_bypass);
	tcase_add_test(tc, expiry_is_honoured);
	tcase_add_test(tc, refresh_keeps_io_off_the_manager);
	tcase_add_test(tc, io_goes_on_while_manager_is_frozen);
	tcase_add_test(tc, reload_revokes_within_lifetime);
	tcase_add_test(tc, rotation_mid_workload);
	tcase_add_test(tc, unknown_ca_is_refused);
	tcase_add_test(tc, osdctl_uses_the_manager);
	tcase_add_test(tc, osdfs_under_policy);
	tcase_add_test(tc, bad_configuration_is_refused);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_set_fork_status(sr, CK_NOFORK);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	secenv_stop(&env);
	return failed ? 1 : 0;
}
