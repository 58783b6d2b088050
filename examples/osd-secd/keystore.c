/*
 * The key store: one line per OSD, "system <40 hex digits> root <40 hex
 * digits>" ('#' starts a comment). The partition and working keys follow
 * from the root key as the tools derive them with --key-file
 * (tc_derive_partition_keys()), so partitions keyed by either are served.
 * The file must belong to the daemon's user and be readable by it alone.
 */
#include <errno.h>
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

static int parse_line(struct secd_keystore *ks, char *line, const char *path, unsigned lno,
		      char *err, size_t errlen)
{
	char *sv = NULL, *w[4];
	uint8_t id[OSD_SYSTEM_ID_LEN], key[OSD_HMAC_LEN];
	int n = 0, rc;

	for (char *t = strtok_r(line, " \t\r\n", &sv); t; t = strtok_r(NULL, " \t\r\n", &sv)) {
		if (*t == '#')
			break;
		if (n == 4) {
			n++;
			break;
		}
		w[n++] = t;
	}
	if (n == 0)
		return 0;
	if (n != 4 || strcmp(w[0], "system") || strcmp(w[2], "root") ||
	    strlen(w[1]) != 2 * OSD_SYSTEM_ID_LEN || strlen(w[3]) != 2 * OSD_HMAC_LEN ||
	    tc_parse_hex(w[1], OSD_SYSTEM_ID_LEN, id) < 0 ||
	    tc_parse_hex(w[3], OSD_HMAC_LEN, key) < 0) {
		snprintf(err, errlen, "%s:%u: expected \"system <40 hex digits> root <40 hex "
			 "digits>\"", path, lno);
		return -EINVAL;
	}
	if (secd_keystore_find(ks, id)) {
		snprintf(err, errlen, "%s:%u: system %s is listed twice", path, lno, w[1]);
		return -EINVAL;
	}
	rc = add_system(ks, id, key);
	memset(key, 0, sizeof(key));
	memset(w[3], 0, strlen(w[3]));
	return rc;
}

int secd_keystore_load(struct secd_keystore *ks, const char *path, char *err, size_t errlen)
{
	char line[512];
	unsigned lno = 0;
	FILE *f = fopen(path, "r");
	int rc;

	memset(ks, 0, sizeof(*ks));
	if (!f) {
		rc = -errno;
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return rc;
	}
	rc = store_private(f, path, err, errlen);
	while (rc == 0 && fgets(line, sizeof(line), f)) {
		lno++;
		rc = parse_line(ks, line, path, lno, err, errlen);
	}
	memset(line, 0, sizeof(line));
	fclose(f);
	if (rc == 0 && ks->n == 0) {
		snprintf(err, errlen, "%s: no system listed", path);
		rc = -EINVAL;
	}
	if (rc < 0)
		secd_keystore_free(ks);
	return rc;
}

void secd_keystore_free(struct secd_keystore *ks)
{
	for (size_t i = 0; i < ks->n; i++) {
		osd_cred_issuer_free(ks->sys[i].iss);
		memset(ks->sys[i].root_key, 0, OSD_HMAC_LEN);
		pthread_mutex_destroy(&ks->sys[i].lock);
		free(ks->sys[i].keyed);
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

static int is_keyed(const struct secd_system *s, uint64_t partition)
{
	for (size_t i = 0; i < s->nkeyed; i++)
		if (s->keyed[i] == partition)
			return 1;
	return 0;
}

int secd_system_key_partition(struct secd_system *s, uint64_t partition)
{
	uint8_t pkey[OSD_HMAC_LEN], wkey[OSD_HMAC_LEN];
	int rc = 0;

	if (partition == 0)
		return 0; /* the root key is installed */
	pthread_mutex_lock(&s->lock);
	if (is_keyed(s, partition))
		goto out;
	if (s->nkeyed == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 16;
		uint64_t *n = realloc(s->keyed, cap * sizeof(*n));

		if (!n) {
			rc = -ENOMEM;
			goto out;
		}
		s->keyed = n;
		s->cap = cap;
	}
	rc = tc_derive_partition_keys(s->root_key, partition, 0, pkey, wkey);
	if (rc == 0)
		rc = osd_cred_issuer_set_partition_key(s->iss, partition, pkey);
	if (rc == 0)
		rc = osd_cred_issuer_set_working_key(s->iss, partition, 0, wkey);
	if (rc == 0)
		s->keyed[s->nkeyed++] = partition;
	memset(pkey, 0, sizeof(pkey));
	memset(wkey, 0, sizeof(wkey));
out:
	pthread_mutex_unlock(&s->lock);
	return rc;
}
