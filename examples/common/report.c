/* Error and usage messages in one format for every tool: "<tool>: ...". */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "toolcommon.h"

static const char *prog = "osd";

void tc_set_prog(const char *name)
{
	prog = name;
}

const char *tc_prog(void)
{
	return prog;
}

/* "<prog>: <formatted>" and then @p tail. */
static void vmessage(const char *fmt, va_list ap, const char *tail)
{
	fprintf(stderr, "%s: ", prog);
	vfprintf(stderr, fmt, ap);
	fputs(tail, stderr);
}

void tc_err(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmessage(fmt, ap, "\n");
	va_end(ap);
}

int tc_err_rc(int rc, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmessage(fmt, ap, ": ");
	va_end(ap);
	fprintf(stderr, "%s\n", strerror(rc < 0 ? -rc : rc));
	return TC_EXIT_FAILED;
}

int tc_usage_err(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmessage(fmt, ap, "\n");
	va_end(ap);
	fprintf(stderr, "Try '%s --help'.\n", prog);
	return TC_EXIT_USAGE;
}

void tc_json_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		switch (*p) {
		case '"': fputs("\\\"", f); break;
		case '\\': fputs("\\\\", f); break;
		case '\n': fputs("\\n", f); break;
		case '\t': fputs("\\t", f); break;
		case '\r': fputs("\\r", f); break;
		default:
			if (*p < 0x20)
				fprintf(f, "\\u%04x", *p);
			else
				fputc(*p, f);
		}
	}
	fputc('"', f);
}
