/* Error and usage messages in one format for every tool: "<tool>: ...". */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "toolcommon.h"

static const char *prog = "osd";
static int verbose;

void tc_set_prog(const char *name)
{
	prog = name;
}

const char *tc_prog(void)
{
	return prog;
}

void tc_set_verbose(int level)
{
	verbose = level;
}

int tc_verbose(void)
{
	return verbose;
}

void tc_info(const char *fmt, ...)
{
	va_list ap;

	if (!verbose)
		return;
	va_start(ap, fmt);
	fprintf(stderr, "%s: ", prog);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
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

/*
 * Length of the well-formed UTF-8 sequence at @p p (at most @p n bytes), or
 * 0: RFC 3629 section 4, so no overlong forms, no surrogates (U+D800..DFFF)
 * and nothing above U+10FFFF.
 */
static size_t utf8_len(const unsigned char *p, size_t n)
{
	size_t len = p[0] >= 0xF0 ? 4 : p[0] >= 0xE0 ? 3 : 2;
	unsigned char lo = 0x80, hi = 0xBF; /* range of the second byte */

	if (p[0] < 0xC2 || p[0] > 0xF4 || n < len)
		return 0;
	if (p[0] == 0xE0)
		lo = 0xA0;
	else if (p[0] == 0xED)
		hi = 0x9F;
	else if (p[0] == 0xF0)
		lo = 0x90;
	else if (p[0] == 0xF4)
		hi = 0x8F;
	if (p[1] < lo || p[1] > hi)
		return 0;
	for (size_t i = 2; i < len; i++)
		if ((p[i] & 0xC0) != 0x80)
			return 0;
	return len;
}

void tc_json_string_n(FILE *f, const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;

	fputc('"', f);
	for (size_t i = 0; i < n; i++) {
		size_t len;

		switch (p[i]) {
		case '"': fputs("\\\"", f); continue;
		case '\\': fputs("\\\\", f); continue;
		case '\n': fputs("\\n", f); continue;
		case '\t': fputs("\\t", f); continue;
		case '\r': fputs("\\r", f); continue;
		}
		if (p[i] < 0x20 || p[i] == 0x7F) {
			fprintf(f, "\\u%04x", p[i]);
		} else if (p[i] < 0x80) {
			fputc(p[i], f);
		} else if ((len = utf8_len(p + i, n - i)) > 0) {
			fwrite(p + i, 1, len, f);
			i += len - 1;
		} else {
			/* not UTF-8: the byte as a lone low surrogate (PEP 383) */
			fprintf(f, "\\udc%02x", p[i]);
		}
	}
	fputc('"', f);
}

void tc_json_string(FILE *f, const char *s)
{
	tc_json_string_n(f, s, strlen(s));
}
