#include "sec_testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int sec_hex(const char *hex, uint8_t *out, size_t outlen)
{
	size_t n = strlen(hex), i;

	if (n % 2 != 0 || n / 2 > outlen)
		return -1;
	for (i = 0; i < n / 2; i++) {
		int hi = hexval(hex[2 * i]), lo = hexval(hex[2 * i + 1]);

		if (hi < 0 || lo < 0)
			return -1;
		out[i] = (uint8_t)(hi << 4 | lo);
	}
	return (int)(n / 2);
}

int sec_cli_available(void)
{
	FILE *p = popen("openssl version >/dev/null 2>&1", "r");

	return p != NULL && pclose(p) == 0;
}

static int run_cli(const char *keyhex, const char *path, uint8_t out[20])
{
	char cmd[1024], line[256];
	FILE *p;
	int ok;

	snprintf(cmd, sizeof(cmd),
		 "openssl mac -digest SHA1 -macopt hexkey:%s -in '%s' HMAC 2>/dev/null",
		 keyhex, path);
	p = popen(cmd, "r");
	if (p == NULL)
		return -1;
	ok = fgets(line, sizeof(line), p) != NULL;
	if (pclose(p) != 0 || !ok)
		return -1;
	line[strcspn(line, "\r\n")] = '\0';
	return sec_hex(line, out, 20) == 20 ? 0 : -1;
}

int sec_cli_hmac_sha1(const uint8_t *key, size_t klen, const uint8_t *msg, size_t mlen,
		      uint8_t out[20])
{
	const char *tmp = getenv("TMPDIR");
	char dir[512], path[600], *keyhex;
	FILE *f;
	size_t i;
	int rc = -1;

	snprintf(dir, sizeof(dir), "%s/osdsec.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (mkdtemp(dir) == NULL)
		return -1;
	snprintf(path, sizeof(path), "%s/msg", dir);
	keyhex = malloc(2 * klen + 1);
	if (keyhex == NULL)
		goto out_dir;
	for (i = 0; i < klen; i++)
		sprintf(keyhex + 2 * i, "%02x", key[i]);
	keyhex[2 * klen] = '\0';
	f = fopen(path, "wb");
	if (f == NULL)
		goto out_key;
	if (fwrite(msg, 1, mlen, f) != mlen) {
		fclose(f);
		goto out_file;
	}
	if (fclose(f) != 0)
		goto out_file;
	rc = run_cli(keyhex, path, out);
out_file:
	unlink(path);
out_key:
	free(keyhex);
out_dir:
	rmdir(dir);
	return rc;
}
