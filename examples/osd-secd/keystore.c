/*
 * The key store: one line per OSD, "system <40 hex digits> root <40 hex
 * digits> [target <iSCSI URL>]" ('#' starts a comment). The partition keys
 * and working key 0 follow from the root key as the tools derive them with
 * --key-file (libosd's keyring: osd_keyring_derive_keys()), so partitions
 * keyed by either are served. Working keys installed by rotation (random seeds) are kept in the
 * state file <key store>.working as "working <system> <partition> <version>
 * <key>" lines, which the daemon writes. Both files must belong to the
 * daemon's user and be readable by it alone.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "secd.h"
#include "toolcommon.h"

static int store_private(FILE *f, const char *path, char *err, size_t errlen)
{
	struct stat sb;

	if (fstat(fileno(f), &sb) != 0)
		return -errno;
	if (sb.st_uid != geteuid()) {
		snprintf(err, errlen, "%s: the key store belongs to uid %u, not to the daemon's "
			 "user (uid %u)", path, (unsigned)sb.st_uid, (unsigned)geteuid());
		return -EPERM;
	}
	if (sb.st_mode & 077) {
		snprintf(err, errlen, "permissions %04o for '%s' are too open: the key store "
			 "must be readable by its owner alone (chmod 600 %s)",
			 (unsigned)(sb.st_mode & 07777), path, path);
		return -EPERM;
	}
	return 0;
}

static int add_system(struct secd_keystore *ks, const uint8_t id[OSD_SYSTEM_ID_LEN],
		      const uint8_t key[OSD_HMAC_LEN])
{
	struct secd_system *n = realloc(ks->sys, (ks->n + 1) * sizeof(*n)), *s;
	int rc;

	if (!n)
		return -ENOMEM;
	ks->sys = n;
	s = &ks->sys[ks->n];
	memset(s, 0, sizeof(*s));
	memcpy(s->id, id, OSD_SYSTEM_ID_LEN);
	memcpy(s->root_key, key, OSD_HMAC_LEN);
	rc = osd_cred_issuer_new(&s->iss, id);
	if (rc == 0)
		rc = osd_cred_issuer_set_root_key(s->iss, key);
	if (rc < 0) {
		osd_cred_issuer_free(s->iss);
		return rc;
	}
	pthread_mutex_init(&s->lock, NULL);
	ks->n++;
	return 0;
}

static int parse_hex_word(const char *w, uint8_t *out, size_t n)
{
	return strlen(w) == 2 * n && tc_parse_hex(w, n, out) == 0 ? 0 : -EINVAL;
}

/* "working <system> <partition> <version> <key>" of the state file. */
static int parse_working(struct secd_keystore *ks, char **w, int n)
{
	uint8_t id[OSD_SYSTEM_ID_LEN], key[OSD_HMAC_LEN];
	struct secd_system *s;
	unsigned long long part;
	unsigned long ver;
	char *e;
	int rc;

	if (n != 5 || parse_hex_word(w[1], id, sizeof(id)) < 0 ||
	    parse_hex_word(w[4], key, sizeof(key)) < 0)
		return -EINVAL;
	part = strtoull(w[2], &e, 0);
	if (*e || part == 0)
		return -EINVAL;
	ver = strtoul(w[3], &e, 0);
	if (*e || ver > 15 || !(s = secd_keystore_find(ks, id)))
		return -EINVAL;
	rc = secd_system_key_partition(s, part, NULL);
	if (rc == 0)
		rc = secd_system_set_working(s, part, (uint8_t)ver, key);
	memset(key, 0, sizeof(key));
	return rc;
}

static int parse_line(struct secd_keystore *ks, char *line, const char *path, unsigned lno,
		      int state, char *err, size_t errlen)
{
	char *sv = NULL, *w[7];
	uint8_t id[OSD_SYSTEM_ID_LEN], key[OSD_HMAC_LEN];
	int n = 0, rc;

	for (char *t = strtok_r(line, " \t\r\n", &sv); t; t = strtok_r(NULL, " \t\r\n", &sv)) {
		if (*t == '#')
			break;
		if (n == 7) {
			n++;
			break;
		}
		w[n++] = t;
	}
	if (n == 0)
		return 0;
	if (state) {
		rc = !strcmp(w[0], "working") ? parse_working(ks, w, n) : -EINVAL;
		if (rc < 0)
			snprintf(err, errlen, "%s:%u: expected \"working <system> <partition> "
				 "<version 0-15> <key>\" of a system in the key store", path, lno);
		return rc;
	}
	if ((n != 4 && n != 6) || strcmp(w[0], "system") || strcmp(w[2], "root") ||
	    (n == 6 && (strcmp(w[4], "target") || strlen(w[5]) >= sizeof(ks->sys->target))) ||
	    parse_hex_word(w[1], id, sizeof(id)) < 0 || parse_hex_word(w[3], key, sizeof(key)) < 0) {
		snprintf(err, errlen, "%s:%u: expected \"system <40 hex digits> root <40 hex "
			 "digits> [target <iSCSI URL>]\"", path, lno);
		return -EINVAL;
	}
	if (secd_keystore_find(ks, id)) {
		snprintf(err, errlen, "%s:%u: system %s is listed twice", path, lno, w[1]);
		return -EINVAL;
	}
	rc = add_system(ks, id, key);
	if (rc == 0 && n == 6)
		strcpy(ks->sys[ks->n - 1].target, w[5]);
	memset(key, 0, sizeof(key));
	memset(w[3], 0, strlen(w[3]));
	return rc;
}

static int load_file(struct secd_keystore *ks, const char *path, int state, char *err,
		     size_t errlen)
{
	char line[512];
	unsigned lno = 0;
	FILE *f = fopen(path, "r");
	int rc;

	if (!f) {
		rc = -errno;
		if (state && rc == -ENOENT)
			return 0; /* nothing rotated yet */
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return rc;
	}
	rc = store_private(f, path, err, errlen);
	while (rc == 0 && fgets(line, sizeof(line), f)) {
		lno++;
		rc = parse_line(ks, line, path, lno, state, err, errlen);
	}
	memset(line, 0, sizeof(line));
	fclose(f);
	return rc;
}

static void state_path(const char *path, char *out, size_t len)
{
	snprintf(out, len, "%s.working", path);
}

int secd_keystore_load(struct secd_keystore *ks, const char *path, char *err, size_t errlen)
{
	char state[4200];
	int rc;

	memset(ks, 0, sizeof(*ks));
	rc = load_file(ks, path, 0, err, errlen);
	if (rc == 0 && ks->n == 0) {
		snprintf(err, errlen, "%s: no system listed", path);
		rc = -EINVAL;
	}
	state_path(path, state, sizeof(state));
	if (rc == 0)
		rc = load_file(ks, state, 1, err, errlen);
	if (rc < 0)
		secd_keystore_free(ks);
	return rc;
}

static void put_hex(FILE *f, const uint8_t *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		fprintf(f, "%02x", b[i]);
}

int secd_keystore_save_working(struct secd_keystore *ks, const char *path)
{
	char state[4200], tmp[4300];
	FILE *f;
	int fd, rc = 0;

	state_path(path, state, sizeof(state));
	snprintf(tmp, sizeof(tmp), "%s.tmp", state);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || !(f = fdopen(fd, "w"))) {
		if (fd >= 0)
			close(fd);
		return -errno;
	}
	fprintf(f, "# working keys installed by osd-secd rotation (SET KEY); written by the "
		"daemon\n");
	for (size_t i = 0; i < ks->n; i++) {
		struct secd_system *s = &ks->sys[i];

		pthread_mutex_lock(&s->lock);
		for (size_t j = 0; j < s->npart; j++) {
			if (!s->part[j].rotated)
				continue;
			fprintf(f, "working ");
			put_hex(f, s->id, OSD_SYSTEM_ID_LEN);
			fprintf(f, " 0x%llx %u ", (unsigned long long)s->part[j].id,
				s->part[j].version);
			put_hex(f, s->part[j].wkey, OSD_HMAC_LEN);
			fprintf(f, "\n");
		}
		pthread_mutex_unlock(&s->lock);
	}
	if (fflush(f) != 0 || fsync(fileno(f)) != 0)
		rc = -errno;
	if (fclose(f) != 0 && rc == 0)
		rc = -errno;
	if (rc == 0 && rename(tmp, state) != 0)
		rc = -errno;
	if (rc < 0)
		unlink(tmp);
	return rc;
}

void secd_keystore_free(struct secd_keystore *ks)
{
	for (size_t i = 0; i < ks->n; i++) {
		osd_cred_issuer_free(ks->sys[i].iss);
		memset(ks->sys[i].root_key, 0, OSD_HMAC_LEN);
		pthread_mutex_destroy(&ks->sys[i].lock);
		if (ks->sys[i].part)
			memset(ks->sys[i].part, 0, ks->sys[i].cap * sizeof(*ks->sys[i].part));
		free(ks->sys[i].part);
	}
	free(ks->sys);
	memset(ks, 0, sizeof(*ks));
}

struct secd_system *secd_keystore_find(struct secd_keystore *ks,
				       const uint8_t id[OSD_SYSTEM_ID_LEN])
{
	for (size_t i = 0; i < ks->n; i++)
		if (!memcmp(ks->sys[i].id, id, OSD_SYSTEM_ID_LEN))
			return &ks->sys[i];
	return NULL;
}

static struct secd_partition *find_part(struct secd_system *s, uint64_t partition)
{
	for (size_t i = 0; i < s->npart; i++)
		if (s->part[i].id == partition)
			return &s->part[i];
	return NULL;
}

int secd_system_key_partition(struct secd_system *s, uint64_t partition, uint8_t *version)
{
	uint8_t pkey[OSD_HMAC_LEN], wkey[OSD_HMAC_LEN];
	struct secd_partition *p;
	int rc = 0;

	if (version)
		*version = 0;
	if (partition == 0)
		return 0; /* the root key is installed */
	pthread_mutex_lock(&s->lock);
	if ((p = find_part(s, partition)))
		goto out;
	if (s->npart == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 16;
		struct secd_partition *n = realloc(s->part, cap * sizeof(*n));

		if (!n) {
			rc = -ENOMEM;
			goto out;
		}
		s->part = n;
		s->cap = cap;
	}
	rc = osd_keyring_derive_keys(s->root_key, partition, 0, pkey, wkey);
	if (rc == 0)
		rc = osd_cred_issuer_set_partition_key(s->iss, partition, pkey);
	if (rc == 0)
		rc = osd_cred_issuer_set_working_key(s->iss, partition, 0, wkey);
	if (rc == 0) {
		p = &s->part[s->npart++];
		memset(p, 0, sizeof(*p));
		p->id = partition;
	}
	memset(pkey, 0, sizeof(pkey));
	memset(wkey, 0, sizeof(wkey));
out:
	if (rc == 0 && version)
		*version = p->version;
	pthread_mutex_unlock(&s->lock);
	return rc;
}

int secd_system_set_working(struct secd_system *s, uint64_t partition, uint8_t version,
			    const uint8_t key[OSD_HMAC_LEN])
{
	struct secd_partition *p;
	int rc;

	pthread_mutex_lock(&s->lock);
	p = find_part(s, partition);
	rc = p ? osd_cred_issuer_set_working_key(s->iss, partition, version, key) : -ENOENT;
	if (rc == 0) {
		p->version = version;
		p->rotated = 1;
		memcpy(p->wkey, key, OSD_HMAC_LEN);
	}
	pthread_mutex_unlock(&s->lock);
	return rc;
}

int secd_system_on_osd(struct secd_system *s, uint64_t partition)
{
	struct secd_partition *p;
	int on;

	pthread_mutex_lock(&s->lock);
	p = find_part(s, partition);
	on = p && p->on_osd;
	pthread_mutex_unlock(&s->lock);
	return on;
}

void secd_system_set_on_osd(struct secd_system *s, uint64_t partition)
{
	struct secd_partition *p;

	pthread_mutex_lock(&s->lock);
	if ((p = find_part(s, partition)))
		p->on_osd = 1;
	pthread_mutex_unlock(&s->lock);
}

#define INSTALL_RETRY_MS 5000

int secd_system_install_due(struct secd_system *s, uint64_t partition)
{
	struct secd_partition *p;
	uint64_t now = osd_now_ms();
	int due = 0;

	pthread_mutex_lock(&s->lock);
	p = find_part(s, partition);
	if (p && !p->on_osd && (!p->tried_ms || now >= p->tried_ms + INSTALL_RETRY_MS)) {
		p->tried_ms = now;
		due = 1;
	}
	pthread_mutex_unlock(&s->lock);
	return due;
}

void secd_system_install_retry(struct secd_system *s, uint64_t partition)
{
	struct secd_partition *p;

	pthread_mutex_lock(&s->lock);
	if ((p = find_part(s, partition)))
		p->tried_ms = 0;
	pthread_mutex_unlock(&s->lock);
}
