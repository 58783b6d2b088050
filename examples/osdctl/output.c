/* osdctl: printing attribute values as text or JSON. */
#include <ctype.h>
#include "osdctl.h"

void out_hex(FILE *f, const uint8_t *p, size_t len)
{
	fputs("0x", f);
	for (size_t i = 0; i < len; i++)
		fprintf(f, "%02x", p[i]);
}

void out_json_string(FILE *f, const char *s, size_t len)
{
	tc_json_string_n(f, s, len);
}

static int is_number_len(size_t len)
{
	return len == 1 || len == 2 || len == 4 || len == 6 || len == 8;
}

uint64_t out_be_value(const uint8_t *p, size_t len)
{
	uint64_t v = 0;

	for (size_t i = 0; i < len; i++)
		v = v << 8 | p[i];
	return v;
}

/* Text: the number for 1/2/4/6/8-byte values, the string with --text, else
 * hex. JSON: page, number, length, hex always, value when numeric, text when
 * asked. */
void out_attr(FILE *f, const struct osd_attr *a, int json, int text)
{
	const uint8_t *v = a->value;

	if (json) {
		fprintf(f, "{\"page\":%u,\"number\":%u,\"length\":%u,\"defined\":%s",
			a->page, a->number, a->length, v ? "true" : "false");
		if (v) {
			fputs(",\"hex\":\"", f);
			out_hex(f, v, a->length);
			fputc('"', f);
			if (is_number_len(a->length))
				fprintf(f, ",\"value\":%llu",
					(unsigned long long)out_be_value(v, a->length));
			if (text) {
				fputs(",\"text\":", f);
				out_json_string(f, (const char *)v, a->length);
			}
		}
		fputc('}', f);
		return;
	}
	if (!v)
		fputs("(undefined)", f);
	else if (text)
		fwrite(v, 1, a->length, f);
	else if (is_number_len(a->length))
		fprintf(f, "%llu", (unsigned long long)out_be_value(v, a->length));
	else
		out_hex(f, v, a->length);
}
