/*
 * Metadata records and the append-only metadata log of the store.
 *
 * A record is: CRC32C (4, big-endian) | payload length (4) | type (1) |
 * payload. The CRC covers length, type and payload. The same record stream
 * makes up the checkpoint file; both files start with a 32-byte header
 * carrying a magic, a format version and an epoch (docs/target-store.md).
 *
 * The log buffers appended records in memory and writes them out in large
 * chunks. osd__log_sync() is a group commit: one fdatasync covers every
 * record any thread appended before it started.
 */
#ifndef OSDTARGET_STORE_LOG_H
#define OSDTARGET_STORE_LOG_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

enum osd__rec_type {
	OSD__REC_PART_CREATE = 1, /* pid */
	OSD__REC_PART_REMOVE = 2, /* pid */
	OSD__REC_OBJ_CREATE = 3,  /* pid, oid, gen, type(1) */
	OSD__REC_OBJ_REMOVE = 4,  /* pid, oid */
	OSD__REC_ATTR = 5,        /* pid, oid, page(4), num(4), value (empty = delete) */
	OSD__REC_CAPACITY = 6,    /* total(8) */
	OSD__REC_QUOTA = 7,       /* pid, oid, quota(8) */
	OSD__REC_NEXT_GEN = 8,    /* next data-file generation(8); checkpoint only */
	OSD__REC_END = 9,         /* record count(8); ends a checkpoint */
	OSD__REC_ATTRS = 10,      /* pid, oid, entries page(4) num(4) len(2) value; log v2 only */
	OSD__REC_PACK = 11,       /* pid, oid, where(8) length(8) crc(4), then ATTRS entries;
				     store format 3 (packed small objects) */
	OSD__REC_PACK_MAP = 12,   /* first word(8), then words(8 each) of the slot map;
				     checkpoint version 3 only */
	OSD__REC_PART_USED = 13,  /* pid, bytes(8) its objects use (version 3: in pack
				     slots; version 4: in slots and files); checkpoint only */
	OSD__REC_FILE = 14,       /* pid, oid, length(8) used(8) flags(1): an object whose
				     files are read when it loads; checkpoint version 4 */
	OSD__REC_DATA = 15,       /* pid, oid: its data changed in this log's epoch; log v3 */
	OSD__REC_GENS = 16        /* generation(8): no data file of this or a higher one
				     exists; log v3 */
};

/* FILE record flags: the object had a data file, a sidecar. */
#define OSD__FILE_HAS_DATA 0x1u
#define OSD__FILE_HAS_SUMS 0x2u
#define OSD__FILE_LEN 33u   /* pid oid length(8) used(8) flags(1) */

/* ATTRS: the attribute changes of one object in one record, applied in order
 * (a first WRITE logs its pending access time and "data modified" at once). */
#define OSD__ATTRS_HDR 16u  /* pid(8) oid(8) */
#define OSD__ATTRS_ENT 10u  /* page(4) num(4) value length(2), then the value (empty = delete) */

#define OSD__REC_HDR 9u
#define OSD__REC_MAX_PAYLOAD (24u + 0xFFFEu)
#define OSD__FILE_HDR 32u
#define OSD__FORMAT_VERSION 1u  /* checkpoint; a log without ATTRS records */
#define OSD__LOG_VERSION_ATTRS 2u /* a log that may hold ATTRS records */
#define OSD__LOG_VERSION 3u     /* ...and DATA and GENS records (store format 6) */
/* Superblock versions: 1 without data checksums, 2 with checksum sidecars
 * (docs/target-store.md, "Data checksums"), 3 with packed small objects
 * ("Packed small objects"), 4 with the indexed checkpoint ("Checkpoint
 * index"), 5 with the slot map in the checkpoint (packed objects load when
 * used), 6 with file objects in the checkpoint (objects with a data file
 * load when used: "Objects with a data file"). */
#define OSD__SB_VERSION_NOSUMS 1u
#define OSD__SB_VERSION_PACK 3u
#define OSD__SB_VERSION_PACKMAP 5u
#define OSD__SB_VERSION 6u
#define OSD__SB_FLAG_NO_SUMS 0x1u /* made with checksums off (benchmarks) */

/** A parsed record; payload points into the parsed buffer. */
struct osd__rec {
	uint8_t type;
	uint32_t len;
	const uint8_t *payload;
};

/**
 * Parse the record at @p buf. @return its total size, or 0 if the bytes do
 * not hold a whole, intact record (short, impossible length, bad CRC).
 */
size_t osd__rec_parse(const uint8_t *buf, size_t avail, struct osd__rec *rec);

/** Encode a record with payload p1|p2 into @p dst (OSD__REC_HDR + l1 + l2 bytes). */
void osd__rec_encode(uint8_t *dst, uint8_t type, const void *p1, size_t l1,
		     const void *p2, size_t l2);

/** Fill a file header. */
void osd__file_hdr_put(uint8_t hdr[OSD__FILE_HDR], const char magic[8], uint64_t epoch);

/** Fill a file header with a @p version and @p flags (bytes 8-15; the superblock). */
void osd__file_hdr_put_ver(uint8_t hdr[OSD__FILE_HDR], const char magic[8], uint32_t version,
			   uint32_t flags, uint64_t epoch);

/** Check a header's magic and CRC; return its version and flags. @return 0 or -EUCLEAN. */
int osd__file_hdr_get_ver(const uint8_t hdr[OSD__FILE_HDR], const char magic[8],
			  uint32_t *version, uint32_t *flags, uint64_t *epoch);


struct osd__log {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int fd;
	uint8_t *buf;       /* records appended but not yet written to fd */
	size_t len, cap;
	uint64_t base;      /* logical position of file offset 0 (grows across switches) */
	uint64_t file_end;  /* bytes written to fd */
	uint64_t synced;    /* logical position known durable */
	int syncing;        /* a thread is in fdatasync */
	int err;            /* sticky failure: a record was lost, or fdatasync gave EIO */
	int failing;        /* last write-out or sync failed with this (not sticky) */
	uint64_t rewrite;   /* file offset from which written bytes must be written
			       again before the next fdatasync (UINT64_MAX: none) */
	/* Told when write-outs start failing (err < 0) and when they work again
	 * (0); called with mu held, so it must not call into the log. */
	void (*event)(void *arg, int err);
	void *event_arg;
	/* Called by the committer before each fdatasync of the log, without
	 * mu: what records may name must be durable first (the pack file). */
	int (*pre_sync)(void *arg);
	void *pre_sync_arg;
};

int osd__log_init(struct osd__log *lg, int fd, uint64_t end);
void osd__log_destroy(struct osd__log *lg);

/**
 * Append one record (payload p1|p2).
 * @param[out] pos logical log position just past the record (may be NULL).
 *             Logical positions only grow, also across osd__log_switch().
 */
int osd__log_append(struct osd__log *lg, uint8_t type, const void *p1, size_t l1,
		    const void *p2, size_t l2, uint64_t *pos);
/** osd__log_append() that also says where in the current file the record
 * starts (@p file_off), for a note that reads it back (osd__obj_note()). */
int osd__log_append_at(struct osd__log *lg, uint8_t type, const void *p1, size_t l1,
		       const void *p2, size_t l2, uint64_t *pos, uint64_t *file_off);

/**
 * Hand the buffered records to the kernel (no fdatasync). Called before a
 * data change: the records it may depend on (the object's CREATE, the
 * attributes a client wrote before it) then survive a crash of the process
 * whenever the data change does. @return 0 or the write error.
 *
 * A failed write-out (ENOSPC) is not sticky: what was not written stays
 * buffered, and every later append, write-out and sync tries again, so the
 * log works again as soon as the filesystem has room. Only a lost record
 * (the buffer could not grow) or an fdatasync EIO (file state unknown) is
 * sticky, until a checkpoint.
 */
int osd__log_write_out(struct osd__log *lg);

/** Logical position past the last appended record. */
uint64_t osd__log_end(struct osd__log *lg);
/** Logical position up to which records are in the file (readable by pread). */
uint64_t osd__log_written(struct osd__log *lg);

/** Make everything up to logical @p pos durable (UINT64_MAX: everything appended so far). */
int osd__log_sync(struct osd__log *lg, uint64_t pos);

/**
 * Switch to a new, already durable log file of @p end bytes (after a
 * checkpoint made everything so far durable). Waits for an in-progress sync; the caller guarantees no
 * concurrent appends. Closes the old fd.
 */
void osd__log_switch(struct osd__log *lg, int fd, uint64_t end);

#endif
