/* libosd/keys internals: error text and secret files. */
#ifndef OSD_KEYS_H
#define OSD_KEYS_H

#include <stddef.h>

/* CHAP secrets longer than this are refused by the initiator anyway. */
#define OSD__CHAP_SECRET_MAX 255
/* RFC 7143 12.1.3: shorter secrets fall to an offline search of one exchange. */
#define OSD__CHAP_SECRET_MIN 12

/* snprintf into @p error (if not NULL). */
void osd__keys_error(char *error, size_t size, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Refuses a secret file whose @p mode lets group or other read or write it,
 * as ssh does: -EPERM with "permissions 0644 for 'P' are too open" in
 * @p error (@p what names the file: "root key file"); else 0. */
int osd__secret_mode_private(unsigned mode, const char *path, const char *what, char *error,
			     size_t error_size);

/* The first line of the private file @p path into @p buf; -EPERM if too open,
 * -EINVAL if not 12..255 bytes (message in @p error). */
int osd__read_chap_secret(const char *path, char *buf, size_t size, char *error,
			  size_t error_size);

#endif
