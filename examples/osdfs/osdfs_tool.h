/* osdfs (the tool): shared declarations of its files. */
#ifndef OSDFS_TOOL_H
#define OSDFS_TOOL_H

#include <stdint.h>
#include <stdio.h>
#include <sys/stat.h>
#include <osdfs/osdfs.h>
#include <osdfs/backends.h>
#include <osdfs/fsck.h>
#include "toolcommon.h"

/* fsck exit codes (e2fsck's convention) */
#define EXIT_FSCK_REPAIRED 1
#define EXIT_FSCK_DAMAGED 4
#define EXIT_FSCK_ERROR 8

#define DEFAULT_PARTITION 0x10000ULL

/* Global options and the open filesystem of one run. */
struct tool {
	struct tc_device_opts devopts;
	uint64_t partition;
	int json;
	int progress;
	int force;              /* --force: take over a holder that is gone; mkfs -f */
	const char *cmd;        /* running command, for messages */
	struct tc_targets targets; /* every --target */
	struct osdfs_data_map map; /* mkfs --layout (or the RAID 0 default) */
	int layout_given;       /* mkfs --layout: a layout even on one device */
	struct tc_devset set;   /* the open devices */
	osdfs_backend *be;      /* backend not handed to a mount (mkfs, fsck) */
	osdfs *fs;
};

/* A command: name, usage line, help text, handler. */
struct command {
	const char *name;
	const char *usage;
	const char *help;
	int (*run)(struct tool *t, int argc, char **argv);
};

/* session.c */
/* Mounts (read-write: with SIGINT/SIGTERM/SIGHUP trapped, see interrupt.c;
 * --force: over a holder that is gone). */
int tool_mount(struct tool *t, int readonly);
/* After a refusal (-EBUSY) on t->be: says how to get past the holder. */
void tool_holder_hint(struct tool *t, int readonly);
int tool_unmount(struct tool *t, int rc);
/* Opens the devices and t->be; @p create: mkfs (new devices, t->map);
 * @p readonly: a layout that writes nothing (not even a missing device's state). */
int tool_backend(struct tool *t, int create, int readonly);
void tool_release_backend(struct tool *t);
/* What the filesystem is on, for messages: the target, or "N devices". */
const char *tool_fs_name(struct tool *t);
/* "osdfs: <cmd>: <what>: <strerror> [(<detail>)]"; returns TC_EXIT_FAILED. */
int tool_fail(struct tool *t, int rc, const char *what);
/* tool_fail() about the whole partition ("<dir> partition 0x<p>"). */
int tool_fail_partition(struct tool *t, int rc);

/* Parses a command's options (getopt_long style, short options @p shorts,
 * long ones @p longs) and the global options; calls @p opt for each of the
 * command's own. Returns the index of the first operand, or -TC_EXIT_USAGE
 * / -TC_EXIT_OK (after --help). */
struct option;
int tool_getopt(struct tool *t, const struct command *c, int argc, char **argv,
		const char *shorts, const struct option *longs,
		int (*opt)(struct tool *t, int key, const char *arg, void *ctx), void *ctx);
const struct command *tool_find_command(const char *name);
void tool_command_help(const struct command *c, FILE *f);

/* interrupt.c: SIGINT, SIGTERM and SIGHUP while a command writes. From
 * tool_trap_signals() on they only set a flag that the copy loops check
 * (tool_interrupted(): the signal number, or 0); the command stops at the
 * next file, removes a partial one, restores directory modes and unmounts,
 * and tool_interrupt_status() turns its status into 128 + signal with a
 * message. */
void tool_trap_signals(void);
int tool_interrupted(void);
int tool_interrupt_status(struct tool *t, int status);

/* paths.c */
int is_remote(const char *arg);
/* The remote path of an argument with or without the leading ':' */
const char *remote_path(const char *arg);
/* Joins dir and name into buf; -ENAMETOOLONG if it does not fit. */
int path_join(char *buf, size_t size, const char *dir, const char *name);
const char *path_base(const char *path);
void format_mode(uint32_t mode, char out[11]);
void format_time(const struct osdfs_timespec *ts, char *buf, size_t size);
unsigned dt_of_mode(uint32_t mode);
const char *type_name(uint32_t mode);

/* Sorted listing of a remote directory (without "." and ".."). */
struct dir_entry {
	char *name;
	uint64_t ino;
	unsigned type;
};
int remote_list(osdfs *fs, uint64_t dir, struct dir_entry **out, size_t *n);
void dir_entries_free(struct dir_entry *v, size_t n);

/* sparse.c: the next run of non-zero SPARSE_BLOCK-sized blocks at or after
 * *start: returns 1 with [*start, *end), or 0 if the rest is zero. */
#define SPARSE_BLOCK 4096u
int next_data_run(const char *buf, size_t len, size_t *start, size_t *end);

/* cmd_layout.c: medium errors counted on every device of a layout (0 for
 * another backend): the reads rebuilt from redundancy */
uint64_t layout_medium_errors(osdfs_backend *be);

/* main.c: option handler of commands without options of their own */
int tool_no_options(struct tool *t, int key, const char *arg, void *ctx);

/* copy_in.c / copy_out.c */
/* Which symlinks a copy follows (GNU cp's -P, -H and -L). */
enum copy_deref {
	COPY_DEREF_NONE, /* -P: copy symlinks as symlinks */
	COPY_DEREF_ARGS, /* -H: follow those named on the command line */
	COPY_DEREF_ALL,  /* -L: follow every symlink */
};
struct copy_opts {
	int recursive;
	int archive;   /* owner and group too */
	int progress;
	enum copy_deref deref;
	int atomic;    /* put: write a temporary name, rename when complete */
	int dash;      /* put, get: "-" is standard input or output */
};
int copy_in(struct tool *t, char **srcs, int nsrc, const char *dest, const struct copy_opts *o);
int copy_out(struct tool *t, char **srcs, int nsrc, const char *dest, const struct copy_opts *o);
/* copy_totals.c: the totals of a copy's progress line (files, bytes), counted first. */
void copy_totals_local(struct tc_progress *p, char **srcs, int nsrc, int recursive);
void copy_totals_remote(struct tc_progress *p, osdfs *fs, char **srcs, int nsrc, int recursive);

/* the commands */
int cmd_mkfs(struct tool *t, int argc, char **argv);
int cmd_ls(struct tool *t, int argc, char **argv);
int cmd_stat(struct tool *t, int argc, char **argv);
int cmd_cat(struct tool *t, int argc, char **argv);
int cmd_tree(struct tool *t, int argc, char **argv);
int cmd_df(struct tool *t, int argc, char **argv);
int cmd_put(struct tool *t, int argc, char **argv);
int cmd_get(struct tool *t, int argc, char **argv);
int cmd_cp(struct tool *t, int argc, char **argv);
int cmd_mkdir(struct tool *t, int argc, char **argv);
int cmd_rm(struct tool *t, int argc, char **argv);
int cmd_mv(struct tool *t, int argc, char **argv);
int cmd_ln(struct tool *t, int argc, char **argv);
int cmd_fsck(struct tool *t, int argc, char **argv);
int cmd_devices(struct tool *t, int argc, char **argv);
int cmd_rebuild(struct tool *t, int argc, char **argv);
int cmd_resync(struct tool *t, int argc, char **argv);
int cmd_scrub(struct tool *t, int argc, char **argv);

#endif
