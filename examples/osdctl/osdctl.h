/* osdctl: shared declarations of the tool's files. */
#ifndef OSDCTL_H
#define OSDCTL_H

#include <stdint.h>
#include <stdio.h>
#include <osd/osd.h>
#include <osdtarget/target.h>
#include "toolcommon.h"

#define EXIT_OK TC_EXIT_OK
#define EXIT_FAILED TC_EXIT_FAILED
#define EXIT_USAGE TC_EXIT_USAGE

/* Device options (shared with the other tools), plus the per-command ones. */
struct ctl_opts {
	struct tc_device_opts dev;
	int json;
	/* per-command */
	const char *input, *output;
	uint64_t offset, length, capacity;
	int have_length;
	unsigned count;
	int text;
	unsigned size;        /* setattr: bytes of a decimal value (1, 2, 4, 8) */
	unsigned key_version;
	int scope;            /* flush scope */
	int force;            /* format: erase partitions that exist */
};

/* values.c */
int ctl_parse_u64(const char *s, uint64_t *v);
int ctl_parse_value(const char *s, int text, unsigned size, uint8_t *buf, size_t cap,
		    size_t *len);
int ctl_read_all(FILE *f, uint8_t **buf, size_t *len);

/* output.c */
void out_json_string(FILE *f, const char *s, size_t len);
/* Big-endian value of 1..8 bytes. */
uint64_t out_be_value(const uint8_t *p, size_t len);
void out_attr(FILE *f, const struct osd_attr *a, int json, int text);
void out_hex(FILE *f, const uint8_t *p, size_t len);

/* commands.c */
struct ctl_command {
	const char *name;
	const char *args;
	const char *summary;
	const char *options;   /* help text of command-specific options */
	int min_args, max_args;
	const char *kinds;     /* per argument: p partition, o object, a page/number, v value */
	int (*run)(struct tc_device *s, const struct ctl_opts *o, int argc, char **argv);
	int creates_store;     /* format: create the store, bootstrap keys */
};
extern const struct ctl_command ctl_commands[];
extern const unsigned ctl_num_commands;

#endif
