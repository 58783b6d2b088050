/*
 * osd_toolcommon: helpers shared by the command-line tools in examples/.
 *
 * Messages go to stderr as "<tool>: <what>: <reason>" (tc_set_prog() names
 * the tool). Functions return 0 or a negative errno like the libraries.
 */
#ifndef OSD_TOOLCOMMON_H
#define OSD_TOOLCOMMON_H

#include <stdint.h>
#include <stdio.h>
#include <time.h>
#include <osd/osd.h>
#include <osd/iscsi.h>
#include <osdtarget/target.h>
#include <osdfs/layout.h>

/* Exit codes shared by the tools. */
#define TC_EXIT_OK 0
#define TC_EXIT_FAILED 1
#define TC_EXIT_USAGE 2

/* ---- messages (report.c) ---- */
void tc_set_prog(const char *name);
const char *tc_prog(void);
/* "<prog>: <formatted>\n" */
void tc_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* "<prog>: <formatted>: strerror(-rc)\n"; returns TC_EXIT_FAILED. */
int tc_err_rc(int rc, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* "<prog>: <formatted>\nTry '<prog> --help'.\n"; returns TC_EXIT_USAGE. */
int tc_usage_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Writes s as a JSON string literal (with quotes). */
void tc_json_string(FILE *f, const char *s);

/* ---- device selection and opening (device.c, remote.c) ---- */
/*
 * --target is either the directory of an embedded software target or an
 * iSCSI URL (iscsi://host[:port]/iqn/lun, anything with "://" is taken for a
 * URL); the iSCSI options only apply to a URL.
 */
struct tc_device_opts {
	const char *target_dir;               /* --target DIR or URL */
	enum osd_version_select osd_version;  /* --osd-version */
	enum osd_sec_method security;         /* --security */
	const char *key_file;                 /* --key-file */
	const char *create_cmd;               /* what makes a store, for messages (NULL: mkfs) */
	int remote;                           /* target_dir is an iSCSI URL (checked) */
	const char *initiator_name;           /* --initiator-name (NULL: libosd's) */
	enum osd_iscsi_digest header_digest;  /* --header-digest */
	enum osd_iscsi_digest data_digest;    /* --data-digest */
	const char *chap_user;                /* --chap-user */
	const char *chap_secret_file;         /* --chap-secret-file */
	int iscsi_opts;                       /* some iSCSI option was given */
};
#define TC_DEVICE_OPTS_INIT { NULL, OSD_VERSION_AUTO, OSD_SEC_NOSEC, NULL, NULL, 0, NULL, \
			      OSD_ISCSI_DIGEST_PREFER_NONE, OSD_ISCSI_DIGEST_PREFER_NONE, \
			      NULL, NULL, 0 }

/* Help text of the device options, for a tool's --help. */
extern const char tc_device_help[];

/*
 * The iSCSI device options by name, NULL-terminated: "initiator-name",
 * "header-digest", "data-digest", "chap-user", "chap-secret-file". Each
 * takes a value; tools offer them as --NAME (osdfs-mount as -o NAME=).
 */
extern const char *const tc_device_iscsi_options[];

/* Help text of the iSCSI options, for a tool's --help. */
extern const char tc_device_iscsi_help[];

/*
 * Applies device option @p name ("target", "osd-version", "security",
 * "key-file" or one of tc_device_iscsi_options) with @p value. A --target
 * URL is parsed here (osd_iscsi_url_parse()'s message on error). Returns 1
 * if used, 0 if @p name is not a device option, -EINVAL (message printed)
 * for a bad value.
 */
int tc_device_option(struct tc_device_opts *o, const char *name, const char *value);

/* Whether @p target names an iSCSI URL rather than a directory. */
int tc_target_is_url(const char *target);

/*
 * The iSCSI transport's last error for a failure @p rc that it may explain
 * (-EPROTO, -EIO, -ENOTCONN, -ENOBUFS, and -ENODEV from an open whose
 * probes the target refused) as " (iSCSI: TEXT)" in
 * @p buf, else "" (remote.c).
 */
void tc__iscsi_cause(const struct osd_transport *tp, int rc, char *buf, size_t len);

/* Applies an iSCSI option (remote.c); same contract as tc_device_option(). */
int tc__iscsi_option(struct tc_device_opts *o, const char *name, const char *value);

/* "nosec", "capkey", "cmdrsp" or "alldata". */
const char *tc_security_name(enum osd_sec_method m);

/* Checks that the options name a device and are consistent (message printed). */
int tc_device_check(const struct tc_device_opts *o);

/*
 * An open device: the embedded target (NULL for an iSCSI one), the libosd device and, with
 * a root key, the credential issuer acting as security manager
 * (security.c). The device's credential source points at this structure:
 * it must stay where it is while the device is open.
 */
struct tc_device {
	osd_target *tgt;
	osd_dev *dev;
	osd_cred_issuer *iss;
	enum osd_sec_method method;
	uint8_t root_key[OSD_HMAC_LEN];
	int have_key;
	uint64_t keyed[64];      /* partitions whose keys the issuer holds */
	unsigned nkeyed;
	int root_secured;        /* the root has a root key: no keyless root commands */
	int root_key_refused;    /* ... and it is not the key of --key-file */
	enum osd_sec_method root_method; /* what root commands are signed with */
	int root_refused;        /* a root command needed the root key (tc_device_fail) */
	struct osd_transport tp; /* an iSCSI device's transport (ops NULL otherwise) */
};

/*
 * Opens the device the options name. @p create: create the target store if
 * the directory is missing or empty (mkfs/format); a remote target's store
 * exists already (its daemon serves it), so @p create does not apply there.
 * Prints a message on failure.
 */
int tc_device_open(struct tc_device *d, const struct tc_device_opts *o, int create);
void tc_device_close(struct tc_device *d);
/*
 * Connects to the URL in @p o and opens d->dev on it, with the issuer set
 * up for the target's system id (remote.c). Prints a message on failure.
 */
int tc__device_open_remote(struct tc_device *d, const struct tc_device_opts *o,
			   const struct osd_dev_options *dopt);

/* ---- several devices as one filesystem (devset.c) ---- */
/*
 * Tools that take several devices repeat --target (a directory may hold a
 * comma, so no lists in one argument). Each value is checked as
 * tc_device_option() checks one; the device options apply to every device.
 */
#define TC_MAX_TARGETS OSDFS_LAYOUT_MAX_DEVICES
struct tc_targets {
	const char *v[TC_MAX_TARGETS];
	unsigned n;
};
/* Adds one --target value (also set in @p o as the last one). Returns 1, or
 * -EINVAL (message printed) for a bad value or too many. */
int tc_targets_add(struct tc_targets *t, struct tc_device_opts *o, const char *value);
/* What a filesystem is on, for messages: its only target, or "N devices". */
const char *tc_targets_name(const struct tc_targets *t);
/* tc_device_check() for several targets: the iSCSI options need one URL. */
int tc_targets_check(const struct tc_targets *t, const struct tc_device_opts *o);
/* The device options for target @p target: @p o with target_dir and remote set. */
struct tc_device_opts tc_targets_opts(const struct tc_device_opts *o, const char *target);

/*
 * The open devices of one filesystem and the backend over them: the "osd"
 * backend of the only device of a plain filesystem, or a layout backend
 * (osdfs/layout.h) over the "osd" backend of each device.
 */
struct tc_devset {
	unsigned n;              /* devices named (plus a spare opened later) */
	unsigned missing;        /* named devices that could not be opened */
	struct tc_device *dev;   /* TC_MAX_TARGETS + 1 entries; dev[i].dev NULL: not open */
	char **addr;             /* the address of each: absolute directory or URL */
	osdfs_backend *be;       /* the filesystem's backend (NULL once taken) */
	int layout;              /* be is a layout backend */
};
/*
 * Opens the devices @p t names and builds s->be on @p partition.
 * @p map NULL: an existing filesystem; a device that cannot be opened is
 * left out with a warning (the layout runs degraded) unless it is the only
 * one; a single device is a plain filesystem unless it carries a device
 * table. @p map not NULL (mkfs): every device is opened, created if
 * @p create, its partition made and keyed, any old device table dropped, and
 * the backend is a layout with @p map, unless @p map is @p plain_ok and there
 * is one device. @p readonly (existing filesystems): the layout writes
 * nothing, not even the state of a missing device. Prints a message on failure.
 */
int tc_devset_open(struct tc_devset *s, const struct tc_device_opts *o,
		   const struct tc_targets *t, uint64_t partition,
		   const struct osdfs_data_map *map, int plain_ok, int readonly);
/*
 * Opens one more device (a replacement: created if it is a new directory,
 * its partition made and keyed) and its "osd" backend in @p child. Prints
 * a message on failure.
 */
int tc_devset_open_spare(struct tc_devset *s, const struct tc_device_opts *o,
			 const char *target, uint64_t partition, osdfs_backend **child);
/* Releases s->be (unless taken) and closes every device. */
void tc_devset_close(struct tc_devset *s);
/* "up", "down" or "rebuilding". */
const char *tc_layout_state_name(enum osdfs_layout_dev_state st);
/* The 36-character text form of a uuid. */
void tc_format_uuid(const uint8_t uuid[16], char out[37]);

/* ---- security manager (security.c) ---- */
/*
 * Refuses a secret file (@p f open on @p path) that other users may read or
 * write, as ssh does: -EPERM with "permissions 0644 for 'K' are too open"
 * printed; @p what names the file in the message ("root key file").
 */
int tc_secret_file_private(FILE *f, const char *path, const char *what);
/*
 * Reads a root key file: 20 raw bytes or 40 hex digits (trailing newline ok).
 * Returns 0, -EINVAL (bad content), -EPERM (group/other bits set; message
 * printed) or another -errno.
 */
int tc_read_key_file(const char *path, uint8_t key[OSD_HMAC_LEN]);
/*
 * Learns how the OSD's root must be signed (d->root_secured, root_method,
 * root_key_refused) once d->dev is open: a root with a root key needs at
 * least CAPKEY and the root's own default method. Returns 0 (a probe that
 * fails for another reason than a refusal leaves the root taken as NOSEC).
 */
int tc__device_probe_root(struct tc_device *d);
/* The credential source installed by tc_device_open() (payload: the tc_device). */
int tc_issue_credential(const struct osd_cred_request *want, struct osd_credential *out,
			void *payload);
/* Parses 2 * @p nbytes hex digits into @p out. Returns 0 or -EINVAL. */
int tc_parse_hex(const char *hex, size_t nbytes, uint8_t *out);
/*
 * Sets the partition key and working key @p version of @p partition with SET
 * KEY, derived from the root key (and gives them to the issuer); the SET
 * KEY commands use the device's method. -ENOKEY without a root key.
 */
int tc_device_set_partition_keys(struct tc_device *d, uint64_t partition, uint8_t version);
/*
 * Keys @p partition (as above, working key 0) and sets its default security
 * method (policy/security page, attribute 1) to the device's method, so the
 * target refuses clients with a weaker one. With NOSEC only the attribute.
 * Returns 0 or -errno.
 */
int tc_device_secure_partition(struct tc_device *d, uint64_t partition);
/*
 * Creates @p partition unless it exists, then tc_device_secure_partition():
 * what mkfs does before the filesystem's format (which keeps the keys).
 */
int tc_device_setup_partition(struct tc_device *d, uint64_t partition);
/*
 * Installs the root key in the embedded target (a new or formatted store).
 * A remote target must know the root key already (it is set out of band on
 * its store): nothing to do there.
 */
int tc_device_install_root_key(struct tc_device *d);
/*
 * Prints why a command failed; names the remedy when the target refused the
 * credential (-EACCES: e.g. a NOSEC run on a partition keyed for CAPKEY).
 * Returns TC_EXIT_FAILED.
 */
int tc_device_fail(const struct tc_device *d, int rc, const char *what);

/* ---- sizes (size.c) ---- */
/*
 * Parses "4096", "10G", "1.5M", "64KiB", "2T" (binary units K, M, G, T, P,
 * E; optional "i" and "B"). Returns 0 or -EINVAL / -ERANGE.
 */
int tc_parse_size(const char *s, uint64_t *out);
/* Parses an unsigned integer (decimal or 0x hex) into *out. */
int tc_parse_u64(const char *s, uint64_t *out);
/* "1.5G"-style rendering (binary units, one decimal under 10). */
void tc_format_size(uint64_t bytes, char *buf, size_t size);

/* ---- progress line (progress.c) ---- */
struct tc_progress {
	int enabled;
	const char *label;
	uint64_t files, bytes, total_bytes;
	struct timespec start, last;
	int shown;
};
/* Enabled when @p force or stderr is a terminal. @p total_bytes 0 = unknown. */
void tc_progress_init(struct tc_progress *p, const char *label, int force,
		      uint64_t total_bytes);
/* Adds work done and redraws at most ten times a second. */
void tc_progress_add(struct tc_progress *p, uint64_t files, uint64_t bytes);
/* Erases the line (or, when @p summary, leaves a final summary line). */
void tc_progress_end(struct tc_progress *p, int summary);

#endif
