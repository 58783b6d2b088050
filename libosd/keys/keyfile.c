/*
 * Secret files: the root key file and the CHAP secret file. Like ssh, a
 * secret that other users may read or write is refused.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <osd/keyring.h>
#include "iscsi/pdu.h"
#include "keys.h"

void osd__keys_error(char *error, size_t size, const char *fmt, ...)
{
	va_list ap;

	if (!error || !size)
		return;
	va_start(ap, fmt);
	vsnprintf(error, size, fmt, ap);
	va_end(ap);
}

int osd__secret_mode_private(unsigned mode, const char *path, const char *what, char *error,
			     size_t error_size)
{
	if (!(mode & 077))
		return 0;
	osd__keys_error(error, error_size, "permissions %04o for '%s' are too open: a %s must "
			"not be readable or writable by other users (chmod 600 %s)",
			mode & 07777, path, what, path);
	return -EPERM;
}

/* Opens @p path for reading; -EPERM (message in @p error) if group or other may touch it. */
static int open_private(const char *path, const char *what, FILE **out, char *error,
			size_t size)
{
	struct stat sb;
	FILE *f = fopen(path, "rb");
	int rc;

	if (!f) {
		rc = -errno;
		osd__keys_error(error, size, "%s: %s", path, strerror(-rc));
		return rc;
	}
	if (fstat(fileno(f), &sb) != 0) {
		rc = -errno;
		fclose(f);
		osd__keys_error(error, size, "%s: %s", path, strerror(-rc));
		return rc;
	}
	if ((rc = osd__secret_mode_private(sb.st_mode, path, what, error, size)) < 0) {
		fclose(f);
		return rc;
	}
	*out = f;
	return 0;
}

static int parse_hex(const uint8_t *hex, size_t nbytes, uint8_t *out)
{
	for (size_t i = 0; i < nbytes; i++) {
		int hi = osd__iscsi_hexval((char)hex[2 * i]);
		int lo = hi < 0 ? -1 : osd__iscsi_hexval((char)hex[2 * i + 1]);

		if (lo < 0)
			return -EINVAL;
		out[i] = (uint8_t)(hi << 4 | lo);
	}
	return 0;
}

int osd_keyring_read_key_file(const char *path, uint8_t key[OSD_HMAC_LEN], char *error,
			      size_t error_size)
{
	uint8_t buf[2 * OSD_HMAC_LEN + 8];
	FILE *f = NULL;
	size_t len;
	int rc;

	if (!path || !key)
		return -EINVAL;
	rc = open_private(path, "root key file", &f, error, error_size);
	if (rc < 0)
		return rc;
	len = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	/* Exactly 20 bytes are the key as it is: a random key ends in a newline,
	 * CR or space one time in 85, and trimming those refused it. Anything
	 * longer may end in a line ending. */
	while (len > OSD_HMAC_LEN &&
	       (buf[len - 1] == '\n' || buf[len - 1] == '\r' || buf[len - 1] == ' '))
		len--;
	if (len == OSD_HMAC_LEN) {
		memcpy(key, buf, OSD_HMAC_LEN);
		rc = 0;
	} else {
		rc = len == 2 * OSD_HMAC_LEN ? parse_hex(buf, OSD_HMAC_LEN, key) : -EINVAL;
	}
	memset(buf, 0, sizeof(buf));
	if (rc < 0)
		osd__keys_error(error, error_size, "%s: a key file holds 20 bytes or 40 hex digits",
				path);
	return rc;
}

int osd__read_chap_secret(const char *path, char *buf, size_t size, char *error,
			  size_t error_size)
{
	FILE *f = NULL;
	size_t len;
	int rc = open_private(path, "CHAP secret file", &f, error, error_size);

	if (rc < 0)
		return rc;
	len = fread(buf, 1, size - 1, f);
	fclose(f);
	buf[len] = '\0';
	buf[strcspn(buf, "\r\n")] = '\0';
	len = strlen(buf);
	if (len < OSD__CHAP_SECRET_MIN || len > OSD__CHAP_SECRET_MAX) {
		osd__keys_error(error, error_size, "%s: a CHAP secret file holds one line of %d "
				"to %d bytes", path, OSD__CHAP_SECRET_MIN, OSD__CHAP_SECRET_MAX);
		memset(buf, 0, size);
		return -EINVAL;
	}
	return 0;
}
