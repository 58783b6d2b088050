/* Strict parsing of iscsi://host[:port]/target/lun URLs. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <openssl/evp.h>
#include <osd/iscsi.h>
#include "transport/iscsi_private.h"

#define LUN_MAX 16383u

static int url_err(char *errbuf, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (errbuf && errlen) {
		va_start(ap, fmt);
		vsnprintf(errbuf, errlen, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

/* RFC 7143 section 4.2.7: names are lower-case letters, digits, '-', '.',
 * ':' (after stringprep); we accept the ASCII subset and the three types. */
int osd__iscsi_name_valid(const char *name, size_t len)
{
	if (len == 0 || len > OSD_ISCSI_NAME_MAX)
		return 0;
	if (!(len > 4 && (!strncmp(name, "iqn.", 4) || !strncmp(name, "eui.", 4) ||
			  !strncmp(name, "naa.", 4))))
		return 0;
	for (size_t i = 0; i < len; i++) {
		char c = name[i];

		if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
		      c == '.' || c == ':' || (c >= 'A' && c <= 'F' && name[0] != 'i')))
			return 0;
	}
	return 1;
}

/* The host's identity: /etc/machine-id, else its host name. */
static size_t host_identity(char *buf, size_t cap)
{
	FILE *f = fopen("/etc/machine-id", "re");
	size_t n = 0;

	if (f) {
		n = fread(buf, 1, cap - 1, f);
		fclose(f);
		while (n && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
			n--;
	}
	if (n == 0 && gethostname(buf, cap - 1) == 0)
		n = strnlen(buf, cap - 1);
	buf[n] = 0;
	return n;
}

/*
 * The default initiator name: OSD_ISCSI_DEFAULT_NAME_PREFIX and 12 hex
 * digits of a SHA-1 of the host's identity. iSCSI names are meant to be
 * unique per initiator (RFC 7143 §4.2.7.1); a target reinstates a session
 * on InitiatorName + ISID (§6.3.5), so one constant name everywhere would
 * let any host take over another's session by copying an ISID. The hash
 * keeps the machine id itself off the wire.
 */
void osd__iscsi_default_name(char out[OSD_ISCSI_DEFAULT_NAME_LEN])
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int mdlen = 0;
	char id[256];
	size_t n = host_identity(id, sizeof(id));
	int pos = snprintf(out, OSD_ISCSI_DEFAULT_NAME_LEN, "%s", OSD_ISCSI_DEFAULT_NAME_PREFIX);

	if (EVP_Digest(id, n, md, &mdlen, EVP_sha1(), NULL) != 1 || mdlen < 6)
		memset(md, 0, 6); /* no digest: the bare prefix and zeros, still a valid name */
	for (int i = 0; i < 6; i++)
		pos += snprintf(out + pos, OSD_ISCSI_DEFAULT_NAME_LEN - (size_t)pos, "%02x", md[i]);
}

/* Parses "host[:port]" of @p len bytes. */
int osd__iscsi_parse_hostport(const char *s, size_t len, char *host, size_t hostsz,
			      uint16_t *port, char *errbuf, size_t errlen)
{
	const char *end = s + len, *h = s, *hend, *p = NULL;

	if (len == 0)
		return url_err(errbuf, errlen, "missing host");
	if (*s == '[') {
		hend = memchr(s, ']', len);
		if (!hend)
			return url_err(errbuf, errlen, "unterminated '[' in IPv6 address");
		h = s + 1;
		if (hend + 1 < end) {
			if (hend[1] != ':')
				return url_err(errbuf, errlen, "junk after ']' in host");
			p = hend + 2;
		}
		for (const char *c = h; c < hend; c++)
			if (!(strchr("0123456789abcdefABCDEF:.", *c)))
				return url_err(errbuf, errlen, "bad character in IPv6 address");
	} else {
		hend = memchr(s, ':', len);
		if (hend)
			p = hend + 1;
		else
			hend = end;
		for (const char *c = h; c < hend; c++)
			if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
			      (*c >= '0' && *c <= '9') || *c == '-' || *c == '.'))
				return url_err(errbuf, errlen, "bad character '%c' in host", *c);
	}
	if (hend == h)
		return url_err(errbuf, errlen, "missing host");
	if ((size_t)(hend - h) >= hostsz)
		return url_err(errbuf, errlen, "host name too long");
	*port = 3260u;
	if (p) {
		unsigned long v = 0;

		if (p == end)
			return url_err(errbuf, errlen, "empty port");
		for (const char *c = p; c < end; c++) {
			if (*c < '0' || *c > '9')
				return url_err(errbuf, errlen, "port is not a decimal number");
			v = v * 10 + (unsigned long)(*c - '0');
			if (v > 65535)
				return url_err(errbuf, errlen, "port out of range (1-65535)");
		}
		if (v == 0)
			return url_err(errbuf, errlen, "port out of range (1-65535)");
		*port = (uint16_t)v;
	}
	memcpy(host, h, (size_t)(hend - h));
	host[hend - h] = '\0';
	return 0;
}

int osd_iscsi_url_parse(struct osd_iscsi_url *out, const char *url, char *errbuf, size_t errlen)
{
	static const char scheme[] = "iscsi://";
	struct osd_iscsi_url u;
	const char *hp, *slash, *tgt, *tend, *lun;
	unsigned long v = 0;
	int rc;

	if (!out || !url)
		return url_err(errbuf, errlen, "no URL");
	if (strncmp(url, scheme, sizeof(scheme) - 1))
		return url_err(errbuf, errlen, "URL must start with iscsi://");
	memset(&u, 0, sizeof(u));
	hp = url + sizeof(scheme) - 1;
	if (strpbrk(hp, "@?# \t"))
		return url_err(errbuf, errlen, "user info, query, fragment or blank in URL");
	slash = strchr(hp, '/');
	if (!slash)
		return url_err(errbuf, errlen, "missing /target/lun after the host");
	rc = osd__iscsi_parse_hostport(hp, (size_t)(slash - hp), u.host, sizeof(u.host), &u.port,
				       errbuf, errlen);
	if (rc)
		return rc;
	tgt = slash + 1;
	tend = strchr(tgt, '/');
	if (!tend)
		return url_err(errbuf, errlen, "missing /lun after the target name");
	if (!osd__iscsi_name_valid(tgt, (size_t)(tend - tgt)))
		return url_err(errbuf, errlen, "target '%.*s' is not a valid iSCSI name "
			       "(iqn./eui./naa., at most %d bytes)", (int)(tend - tgt) > 64 ? 64 :
			       (int)(tend - tgt), tgt, OSD_ISCSI_NAME_MAX);
	lun = tend + 1;
	if (*lun == '\0')
		return url_err(errbuf, errlen, "missing LUN");
	for (const char *c = lun; *c; c++) {
		if (*c < '0' || *c > '9')
			return url_err(errbuf, errlen, "LUN is not a decimal number");
		v = v * 10 + (unsigned long)(*c - '0');
		if (v > LUN_MAX)
			return url_err(errbuf, errlen, "LUN out of range (0-%u)", LUN_MAX);
	}
	memcpy(u.target, tgt, (size_t)(tend - tgt));
	u.lun = (uint32_t)v;
	*out = u;
	return 0;
}
