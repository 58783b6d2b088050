/* osdctl: shared declarations of the tool's files. */
#ifndef OSDCTL_H
#define OSDCTL_H

#include <stdint.h>
#include <stdio.h>
#include <osd/osd.h>
#include <osdtarget/target.h>

#define EXIT_OK 0
#define EXIT_FAILED 1
#define EXIT_USAGE 2

/* Options common to every subcommand, plus the per-command ones. */
struct ctl_opts {
	const char *target_dir;
	enum osd_version_select osd_version;
	enum osd_sec_method security;
	const char *key_file;
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
};

/* An open session: target, transport and device, credentials. */
struct ctl_session {
	osd_target *tgt;
	osd_dev *dev;
	osd_cred_issuer *iss;
	uint8_t root_key[OSD_HMAC_LEN];
	int have_root_key;
	uint8_t system_id[OSD_SYSTEM_ID_LEN];
	uint64_t keyed_partitions[64]; /* partitions whose working key 0 the issuer has */
	unsigned nkeyed;
	enum osd_sec_method method;
};

/* session.c */
int ctl_open(struct ctl_session *s, const struct ctl_opts *o, int create);
void ctl_close(struct ctl_session *s);
int ctl_fail(struct ctl_session *s, const char *what, int rc);
int ctl_bootstrap_root_key(struct ctl_session *s);
int ctl_set_partition_keys(struct ctl_session *s, uint64_t partition, unsigned key_version);

/* values.c */
int ctl_parse_u64(const char *s, uint64_t *v);
int ctl_parse_value(const char *s, int text, unsigned size, uint8_t *buf, size_t cap,
		    size_t *len);
int ctl_read_all(FILE *f, uint8_t **buf, size_t *len);

/* output.c */
void out_json_string(FILE *f, const char *s, size_t len);
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
	int (*run)(struct ctl_session *s, const struct ctl_opts *o, int argc, char **argv);
	int creates_store;     /* format: create the store, bootstrap keys */
};
extern const struct ctl_command ctl_commands[];
extern const unsigned ctl_num_commands;

#endif
