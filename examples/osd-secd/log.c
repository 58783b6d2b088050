/* Log lines "osd-secd: <severity>: <what>" on stderr, or syslog(3) with the
 * same severities (--syslog). */
#include <stdarg.h>
#include <stdio.h>
#include <syslog.h>
#include "secd.h"

static int use_syslog;

void secd_log_syslog(int on)
{
	use_syslog = on;
	if (on)
		openlog(PROG, LOG_PID, LOG_AUTHPRIV);
}

static const char *sev_name(enum secd_sev s)
{
	return s == SECD_ERR ? "error" : s == SECD_WARNING ? "warning" :
	       s == SECD_NOTICE ? "notice" : "info";
}

void secd_log(enum secd_sev sev, const char *fmt, ...)
{
	char line[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (use_syslog)
		syslog((int)sev, "%s", line);
	else
		fprintf(stderr, PROG ": %s: %s\n", sev_name(sev), line);
}
