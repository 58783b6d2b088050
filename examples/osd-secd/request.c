/*
 * Answering a credential request: the policy decides, the key store signs
 * (docs/security-manager.md section 3), and every answer is logged.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "secd.h"

static const char *method_name(enum osd_sec_method m)
{
	static const char *const n[] = { "nosec", "capkey", "cmdrsp", "alldata" };

	return (unsigned)m < 4 ? n[m] : "?";
}

static void hex(const uint8_t *b, size_t n, char *out)
{
	for (size_t i = 0; i < n; i++)
		sprintf(out + 2 * i, "%02x", b[i]);
}

static void refuse(struct osd_secmsg *a, const char *identity, const struct osd_secmsg *q,
		   enum osd_secmsg_reason reason, const char *why)
{
	char perms[160], sys[2 * OSD_SYSTEM_ID_LEN + 1];

	a->type = OSD_SECMSG_REFUSE;
	a->reason = (uint16_t)reason;
	snprintf(a->text, sizeof(a->text), "%.*s", OSD_SECMSG_REASON_MAX, why);
	secd_perms_name(q->req.permissions, perms, sizeof(perms));
	hex(q->system_id, OSD_SYSTEM_ID_LEN, sys);
	secd_log(reason == OSD_SECREF_INTERNAL ? SECD_ERR : SECD_WARNING,
		 "refuse client=%s system=%s object=0x%llx/0x%llx%s perms=%s method=%s: %s",
		 identity, sys, (unsigned long long)q->req.obj.partition,
		 (unsigned long long)q->req.obj.id, q->req.is_collection ? " (collection)" : "",
		 perms, method_name(q->req.method), why);
}

void secd_answer(const char *identity, const struct osd_secmsg *q, struct osd_secmsg *a)
{
	struct secd_config *c = secd_config_get();
	const struct secd_grant *g;
	struct secd_system *s;
	struct osd_cred_request r;
	char perms[160], sys[2 * OSD_SYSTEM_ID_LEN + 1];
	unsigned life;
	int rc;

	memset(a, 0, sizeof(*a));
	a->id = q->id;
	s = secd_keystore_find(&c->ks, q->system_id);
	if (!s) {
		refuse(a, identity, q, OSD_SECREF_UNKNOWN_SYSTEM, "no keys for that OSD system id");
		goto out;
	}
	g = secd_policy_match(&c->policy, identity, q->system_id, &q->req);
	if (!g) {
		refuse(a, identity, q, OSD_SECREF_DENIED,
		       "the policy grants this client no such access");
		goto out;
	}
	r = q->req;
	if (r.method < g->method)
		r.method = g->method; /* the policy's method is the weakest issued */
	life = q->lifetime_ms && q->lifetime_ms < g->lifetime_ms ? q->lifetime_ms : g->lifetime_ms;
	/* the OSD clock is taken to follow UTC (docs/security-manager.md 3.3) */
	r.expiration = osd_now_ms() + life;
	r.object_created = 0;
	r.policy_access_tag = 0;
	rc = secd_system_key_partition(s, r.obj.partition, &r.key_version);
	if (rc == 0 && s->target[0] && secd_system_install_due(s, r.obj.partition))
		secd_install_partition(s, r.obj.partition); /* logged; the OSD will tell */
	if (rc == 0)
		rc = osd_cred_issue(s->iss, &r, &a->cred);
	if (rc < 0) {
		refuse(a, identity, q, rc == -EINVAL ? OSD_SECREF_BAD_REQUEST : OSD_SECREF_INTERNAL,
		       rc == -EINVAL ? "the request cannot be made into a capability" :
		       "the credential could not be issued");
		goto out;
	}
	a->type = OSD_SECMSG_GRANT;
	memcpy(a->system_id, q->system_id, OSD_SYSTEM_ID_LEN);
	secd_perms_name(r.permissions, perms, sizeof(perms));
	hex(q->system_id, OSD_SYSTEM_ID_LEN, sys);
	secd_log(SECD_INFO, "grant client=%s system=%s object=0x%llx/0x%llx%s perms=%s "
		 "method=%s key_version=%u lifetime=%ums (policy line %u)", identity, sys,
		 (unsigned long long)r.obj.partition, (unsigned long long)r.obj.id,
		 r.is_collection ? " (collection)" : "", perms, method_name(r.method),
		 r.key_version, life, g->line);
out:
	secd_config_put(c);
}
