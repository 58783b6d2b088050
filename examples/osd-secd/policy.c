/*
 * The policy file (docs/security-manager.md section 3): one grant per line,
 *
 *   grant IDENTITY [system HEX|any] partition P [object ID] perms LIST
 *         [method nosec|capkey|cmdrsp|alldata] [lifetime SECONDS|MSms]
 *
 * A request is granted when one line covers all of it: same identity and
 * system, the partition (every object in it when no object is named), and
 * permissions that are a subset of LIST.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "secd.h"
#include "toolcommon.h"

#define DEFAULT_LIFETIME_MS 600000u
#define MAX_LIFETIME_MS 86400000u /* a day: capabilities are meant to be short-lived */

static const struct { const char *name; uint16_t bit; } perm_names[] = {
	{ "read", OSD_PERM_READ }, { "write", OSD_PERM_WRITE },
	{ "get_attr", OSD_PERM_GET_ATTR }, { "set_attr", OSD_PERM_SET_ATTR },
	{ "create", OSD_PERM_CREATE }, { "remove", OSD_PERM_REMOVE },
	{ "obj_mgmt", OSD_PERM_OBJ_MGMT }, { "append", OSD_PERM_APPEND },
	{ "dev_mgmt", OSD_PERM_DEV_MGMT }, { "global", OSD_PERM_GLOBAL },
	{ "pol_sec", OSD_PERM_POL_SEC }, { "m_object", OSD_PERM_M_OBJECT },
	{ "query", OSD_PERM_QUERY }, { "gbl_rem", OSD_PERM_GBL_REM },
};

void secd_perms_name(uint16_t perms, char *out, size_t outlen)
{
	size_t used = 0;

	*out = 0;
	for (size_t i = 0; i < sizeof(perm_names) / sizeof(perm_names[0]); i++)
		if ((perms & perm_names[i].bit) && used < outlen)
			used += (size_t)snprintf(out + used, outlen - used, "%s%s", used ? "," : "",
						 perm_names[i].name);
	if (!*out)
		snprintf(out, outlen, "none");
}

static int parse_perms(char *list, uint16_t *out)
{
	char *sv = NULL;

	*out = 0;
	for (char *t = strtok_r(list, ",", &sv); t; t = strtok_r(NULL, ",", &sv)) {
		size_t i, n = sizeof(perm_names) / sizeof(perm_names[0]);

		if (!strcmp(t, "all")) {
			*out |= OSD_PERM_ALL_V2;
			continue;
		}
		for (i = 0; i < n && strcmp(t, perm_names[i].name); i++)
			;
		if (i == n)
			return -EINVAL;
		*out |= perm_names[i].bit;
	}
	return *out ? 0 : -EINVAL;
}

static int parse_u64(const char *s, uint64_t *v)
{
	char *e;

	errno = 0;
	*v = strtoull(s, &e, 0);
	return *s && *s != '-' && !*e && !errno ? 0 : -EINVAL;
}

static int parse_method(const char *s, enum osd_sec_method *m)
{
	static const char *const names[] = { "nosec", "capkey", "cmdrsp", "alldata" };

	for (int i = 0; i < 4; i++)
		if (!strcmp(s, names[i])) {
			*m = (enum osd_sec_method)i;
			return 0;
		}
	return -EINVAL;
}

static int parse_lifetime(const char *s, unsigned *ms)
{
	size_t n = strlen(s);
	uint64_t v;
	char buf[32];

	if (n > 2 && n < sizeof(buf) && !strcmp(s + n - 2, "ms")) {
		memcpy(buf, s, n - 2);
		buf[n - 2] = 0;
		if (parse_u64(buf, &v) < 0)
			return -EINVAL;
	} else if (parse_u64(s, &v) < 0 || v > MAX_LIFETIME_MS / 1000) {
		return -EINVAL;
	} else {
		v *= 1000;
	}
	if (v == 0 || v > MAX_LIFETIME_MS)
		return -EINVAL;
	*ms = (unsigned)v;
	return 0;
}

/* One keyword and its value; returns what was wrong or NULL. */
static const char *parse_kv(struct secd_grant *g, const char *k, char *v, int *have_part,
			    int *have_perms)
{
	uint64_t n;

	if (!strcmp(k, "system")) {
		g->any_system = !strcmp(v, "any");
		if (!g->any_system && (strlen(v) != 2 * OSD_SYSTEM_ID_LEN ||
				       tc_parse_hex(v, OSD_SYSTEM_ID_LEN, g->system_id) < 0))
			return "system is 40 hex digits or \"any\"";
	} else if (!strcmp(k, "partition")) {
		if (parse_u64(v, &g->partition) < 0)
			return "bad partition id";
		*have_part = 1;
	} else if (!strcmp(k, "object")) {
		if (parse_u64(v, &n) < 0 || n == 0)
			return "bad object id";
		g->object = n;
		g->whole_partition = 0;
	} else if (!strcmp(k, "perms")) {
		if (parse_perms(v, &g->perms) < 0)
			return "perms is a comma list of read, write, get_attr, set_attr, create, "
			       "remove, obj_mgmt, append, dev_mgmt, global, pol_sec, m_object, "
			       "query, gbl_rem or all";
		*have_perms = 1;
	} else if (!strcmp(k, "method")) {
		if (parse_method(v, &g->method) < 0)
			return "method is nosec, capkey, cmdrsp or alldata";
	} else if (!strcmp(k, "lifetime")) {
		if (parse_lifetime(v, &g->lifetime_ms) < 0)
			return "lifetime is 1 to 86400 seconds, or N ms";
	} else {
		return "unknown keyword";
	}
	return NULL;
}

static int parse_line(struct secd_policy *p, char *line, const char *path, unsigned lno,
		      char *err, size_t errlen)
{
	struct secd_grant g, *n;
	char *sv = NULL, *t = strtok_r(line, " \t\r\n", &sv), *k;
	const char *why = NULL;
	int have_part = 0, have_perms = 0;

	if (!t || *t == '#')
		return 0;
	memset(&g, 0, sizeof(g));
	g.any_system = 1;
	g.whole_partition = 1;
	g.method = OSD_SEC_CAPKEY;
	g.lifetime_ms = DEFAULT_LIFETIME_MS;
	g.line = lno;
	if (strcmp(t, "grant"))
		why = "a line starts with \"grant\"";
	else if (!(t = strtok_r(NULL, " \t\r\n", &sv)) || *t == '#' ||
		 strlen(t) >= sizeof(g.identity))
		why = "grant needs a client identity (at most 127 bytes)";
	else
		strcpy(g.identity, t);
	while (!why && (k = strtok_r(NULL, " \t\r\n", &sv)) && *k != '#') {
		char *v = strtok_r(NULL, " \t\r\n", &sv);

		why = v ? parse_kv(&g, k, v, &have_part, &have_perms) : "a keyword without value";
		if (why) {
			snprintf(err, errlen, "%s:%u: %s: %s", path, lno, k, why);
			return -EINVAL;
		}
	}
	if (!why && (!have_part || !have_perms))
		why = "grant needs partition and perms";
	if (!why && g.partition == 0 && !g.whole_partition)
		why = "partition 0 (the root) has no objects";
	if (why) {
		snprintf(err, errlen, "%s:%u: %s", path, lno, why);
		return -EINVAL;
	}
	n = realloc(p->g, (p->n + 1) * sizeof(*n));
	if (!n)
		return -ENOMEM;
	p->g = n;
	p->g[p->n++] = g;
	return 0;
}

int secd_policy_load(struct secd_policy *p, const char *path, char *err, size_t errlen)
{
	char line[1024];
	unsigned lno = 0;
	FILE *f = fopen(path, "r");
	int rc = 0;

	memset(p, 0, sizeof(*p));
	if (!f) {
		rc = -errno;
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return rc;
	}
	while (rc == 0 && fgets(line, sizeof(line), f)) {
		lno++;
		if (!strchr(line, '\n') && !feof(f)) {
			snprintf(err, errlen, "%s:%u: line longer than %zu bytes", path, lno,
				 sizeof(line) - 2);
			rc = -EINVAL;
		} else {
			rc = parse_line(p, line, path, lno, err, errlen);
		}
	}
	fclose(f);
	if (rc < 0)
		secd_policy_free(p);
	return rc;
}

void secd_policy_free(struct secd_policy *p)
{
	free(p->g);
	memset(p, 0, sizeof(*p));
}

static int covers(const struct secd_grant *g, const struct osd_cred_request *w)
{
	if (g->partition != w->obj.partition || (w->permissions & ~g->perms))
		return 0;
	if (g->whole_partition)
		return 1;
	/* one object: never the partition itself, never a partition-wide capability */
	return w->obj.id == g->object && !(w->permissions & OSD_PERM_GLOBAL);
}

const struct secd_grant *secd_policy_match(const struct secd_policy *p, const char *identity,
					   const uint8_t system_id[OSD_SYSTEM_ID_LEN],
					   const struct osd_cred_request *want)
{
	for (size_t i = 0; i < p->n; i++) {
		const struct secd_grant *g = &p->g[i];

		if (strcmp(g->identity, identity) ||
		    (!g->any_system && memcmp(g->system_id, system_id, OSD_SYSTEM_ID_LEN)))
			continue;
		if (covers(g, want))
			return g;
	}
	return NULL;
}
