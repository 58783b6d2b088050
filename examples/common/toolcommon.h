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
#include <osd/keyring.h>
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
/* -v/--verbose: tc_info() messages are printed (stderr) from then on. */
void tc_set_verbose(int level);
int tc_verbose(void);
/* "<prog>: <formatted>\n" on stderr, only when verbose. */
void tc_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* "<prog>: <formatted>: strerror(-rc)\n"; returns TC_EXIT_FAILED. */
int tc_err_rc(int rc, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* "<prog>: <formatted>\nTry '<prog> --help'.\n"; returns TC_EXIT_USAGE. */
int tc_usage_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/*
 * Writes @p s as a JSON string literal (with quotes) that is valid UTF-8
 * whatever the bytes: well-formed UTF-8 is kept, control characters and DEL
 * are escaped, and each byte that is not part of well-formed UTF-8 becomes
 * the escape of a lone low surrogate, \udc80..\udcff for 0x80..0xff (PEP
 * 383's "surrogateescape": Python's name.encode("utf-8", "surrogateescape")
 * gives the bytes back; documented in osdfs(1) and osdctl(1)).
 */
void tc_json_string(FILE *f, const char *s);
/* tc_json_string() of @p n bytes (NUL bytes escaped as \u0000). */
void tc_json_string_n(FILE *f, const char *s, size_t n);

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
	const char *secmgr_url;               /* --security-manager (secmgr.c) */
	const char *secmgr_cert;              /* --cert */
	const char *secmgr_key;               /* --key */
	const char *secmgr_ca;                /* --ca */
	int quiet;                            /* tc_device_open() prints nothing and does not
						 wait for a busy store (a probe that
						 fails until a device is back) */
	unsigned connect_timeout_ms;          /* iSCSI connect + login limit (0: libosd's) */
	int no_gather;                        /* a layout gets no_write_gathering */
};
#define TC_DEVICE_OPTS_INIT { NULL, OSD_VERSION_AUTO, OSD_SEC_NOSEC, NULL, NULL, 0, NULL, \
			      OSD_ISCSI_DIGEST_PREFER_NONE, OSD_ISCSI_DIGEST_PREFER_NONE, \
			      NULL, NULL, 0, NULL, NULL, NULL, NULL, 0, 0, 0 }

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

/*
 * The security manager options by name, NULL-terminated: "security-manager",
 * "cert", "key", "ca" (secmgr.c). Each takes a value. With them a tool holds
 * no key: osd-secd hands it the credentials its policy allows.
 */
extern const char *const tc_device_secmgr_options[];
/* Help text of the security manager options, for a tool's --help. */
extern const char tc_device_secmgr_help[];
/* Applies a security manager option; same contract as tc_device_option(). */
int tc__secmgr_option(struct tc_device_opts *o, const char *name, const char *value);
/* Checks the security manager options (message printed). */
int tc__secmgr_check(const struct tc_device_opts *o);

/* "nosec", "capkey", "cmdrsp" or "alldata". */
const char *tc_security_name(enum osd_sec_method m);

/* Checks that the options name a device and are consistent (message printed). */
int tc_device_check(const struct tc_device_opts *o);

/*
 * An open device: the embedded target (NULL for an iSCSI one) and the
 * libosd device, whose keyring (osd/keyring.h) is the security manager
 * with the root key of --key-file; with --security-manager, osd-secd is
 * (mgr) and the device has no keyring.
 */
struct tc_device {
	osd_target *tgt;
	osd_dev *dev;
	osd_keyring *kr;         /* the device's, borrowed */
	enum osd_sec_method method;
	const char *key_file;    /* --key-file (borrowed from the options) */
	struct osd_transport tp; /* the device's transport (owned by dev), for plain SCSI
				    commands such as INQUIRY; ops NULL when not open */
	osd_secmgr *mgr;         /* --security-manager: the credential source instead of
				    the keyring (kr NULL then) */
};

/*
 * Opens the device the options name. @p create: create the target store if
 * the directory is missing or empty (mkfs/format), and install the root key
 * of --key-file in it; a remote target's store exists already (its daemon
 * serves it), so @p create does not apply there. Prints a message on failure.
 */
int tc_device_open(struct tc_device *d, const struct tc_device_opts *o, int create);
void tc_device_close(struct tc_device *d);
/* The libosd open options of @p o (key file, method, version). */
struct osd_open_options tc_device_open_options(const struct tc_device_opts *o);
/* Connects to the security manager of @p o into d->mgr (secmgr.c), which
 * the device's open then attaches (osd_open_options::secmgr). */
int tc__device_open_secmgr(struct tc_device *d, const struct tc_device_opts *o);
/*
 * Connects to the URL in @p o and opens d->dev on it with a keyring
 * (remote.c). Writes the reason into @p dopt->error on failure.
 */
int tc__device_open_remote(struct tc_device *d, const struct tc_device_opts *o,
			   struct osd_open_options *dopt);

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
/*
 * The device whose last error tells why the target refused a command: the
 * only device of a plain filesystem, open; else @p fallback, a device-less
 * one with the method of @p o and the security manager of the first device
 * (tc_device_fail() then names the method, or the manager's refusal).
 */
const struct tc_device *tc_devset_refusing(const struct tc_devset *s,
					   const struct tc_device_opts *o,
					   struct tc_device *fallback);
/* Releases s->be (unless taken) and closes every device. */
void tc_devset_close(struct tc_devset *s);
/* "up", "down" or "rebuilding". */
const char *tc_layout_state_name(enum osdfs_layout_dev_state st);
/* The 36-character text form of a uuid. */
void tc_format_uuid(const uint8_t uuid[16], char out[37]);

/* ---- security manager (security.c; the key scheme is libosd's osd/keyring.h) ---- */
/* Parses 2 * @p nbytes hex digits into @p out. Returns 0 or -EINVAL. */
int tc_parse_hex(const char *hex, size_t nbytes, uint8_t *out);
/*
 * Sets the partition key and working key @p version of @p partition with SET
 * KEY, derived from the root key (osd_keyring_set_partition_keys()).
 * -ENOKEY without a root key.
 */
int tc_device_set_partition_keys(struct tc_device *d, uint64_t partition, uint8_t version);
/* osd_keyring_secure_partition(): keys and default security method. */
int tc_device_secure_partition(struct tc_device *d, uint64_t partition);
/* osd_keyring_setup_partition(): what mkfs does before the filesystem's format. */
int tc_device_setup_partition(struct tc_device *d, uint64_t partition);
/*
 * Installs the root key of --key-file in the embedded target again (FORMAT
 * OSD resets the root). A remote target's root key is set out of band on its
 * store: nothing to do there.
 */
int tc_device_install_root_key(struct tc_device *d);
/* Whether --key-file gave a root key. */
int tc_device_has_key(const struct tc_device *d);
/*
 * Prints why a command failed; names the remedy when the target refused the
 * credential (-EACCES: e.g. a NOSEC run on a partition keyed for CAPKEY, or
 * an integrity check that failed). Returns TC_EXIT_FAILED.
 */
int tc_device_fail(const struct tc_device *d, int rc, const char *what);

/* ---- guard rails (guard.c) ---- */

/* What a store directory holds before mkfs/format erase it. */
struct tc_dir_survey {
	unsigned entries;  /* names in it */
	int store;         /* it is an OSD store (has its superblock file) */
	char example[64];  /* the first name seen */
};
/* 0 with @p out filled in (a missing directory: all zero), or -errno. */
int tc_dir_survey(const char *dir, struct tc_dir_survey *out);
/* Refuses (-ENOTEMPTY, with a message naming @p force_opt) to make a store
 * in @p dir when it holds files but no store, unless @p force. */
int tc_guard_dir(const char *dir, int force, const char *force_opt);

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
	const char *unit;        /* what files counts ("files" unless set) */
	uint64_t files, bytes, total_files, total_bytes;
	struct timespec start, last;
	int shown;
};
/* Enabled when @p force or stderr is a terminal. @p total_bytes 0 = unknown. */
void tc_progress_init(struct tc_progress *p, const char *label, int force,
		      uint64_t total_bytes);
/* The totals once known (0: unknown): the line then shows the share done
 * (by bytes if known, else by files) and the time left. */
void tc_progress_set_total(struct tc_progress *p, uint64_t files, uint64_t bytes);
/* Adds work done and redraws at most ten times a second. */
void tc_progress_add(struct tc_progress *p, uint64_t files, uint64_t bytes);
/* Sets the work done so far (a callback's counters) and redraws as above. */
void tc_progress_set(struct tc_progress *p, uint64_t files, uint64_t bytes);
/* Erases the line (or, when @p summary, leaves a final summary line). */
void tc_progress_end(struct tc_progress *p, int summary);
/* The line (without "<prog>: ") after @p secs seconds, e.g. "copying in: 3 of 10
 * files, 1.5M of 4.0M (37%), 1.5M/s, 0:02 left". */
void tc_progress_format(const struct tc_progress *p, double secs, char *buf, size_t size);

#endif
