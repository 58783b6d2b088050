/**
 * @file osdfs/layout.h
 * @brief Spreading one osdfs filesystem over several OSDs: striping,
 *        mirroring and parity (RFC 5664 data maps), as a backend.
 *
 * The layout backend is an ordinary object-store backend (osdfs/sys/backend.h)
 * built on N child backends, one per device (an "osd" backend on each OSD, or
 * any other backend). osdfs runs on it unchanged:
 *
 * - Each osdfs object is stored as components with the same object id on
 *   several devices. Regular-file data follows the file's data map (stripe
 *   unit, group width, group depth, mirror count, RAID algorithm: RFC 5664
 *   section 5.1); the first component rotates with the object id so load
 *   spreads over every device.
 * - Every other object (superblock, directories, symlinks, special files) is
 *   metadata: mirrored whole, on as many devices as the default data map
 *   tolerates failures plus one (all devices for the superblock).
 * - The device table (filesystem uuid, and the uuid and address of every
 *   device in slot order) and the default data map are an attribute of the
 *   superblock object, so every device carries them. Each file's own data map
 *   is an attribute of each of its components.
 * - Reads and writes fan out to the devices in parallel. A partial-stripe
 *   write on RAID 4/5/PQ is a read-modify-write of the parity under a
 *   per-stripe lock. When a device fails (an I/O or connection error) it is
 *   marked down: reads reconstruct its data from mirrors or parity (degraded
 *   reads), writes go to the remaining components, and the filesystem stays
 *   usable while the layout tolerates the failures. osdfs_layout_replace()
 *   and osdfs_layout_rebuild() restore redundancy onto a new device.
 * - A read that fails with -EIO on a device that still answers (a medium
 *   error, e.g. a target's data checksum mismatch) does not mark it down:
 *   the unit is rebuilt from mirrors or parity, returned, rewritten and
 *   counted (struct osdfs_layout_device). osdfs_layout_scrub() checks and
 *   repairs every copy and parity unit; osdfs_layout_events() and
 *   osdfs_layout_set_event_handler() report what happened.
 *
 * @defgroup osdfs_layout Multi-device layouts
 * @{
 */
#ifndef OSDFS_LAYOUT_H
#define OSDFS_LAYOUT_H

#include <stddef.h>
#include <stdint.h>
#include <osd/types.h>
#include <osdfs/sys/backend.h>

#ifdef __cplusplus
extern "C" {
#endif

/** RAID algorithms, numbered as RFC 5664's pnfs_osd_raid_algorithm4. */
enum osdfs_raid {
	OSDFS_RAID_0 = 1,  /**< striping only (with mirrors: RAID 1 / RAID 10) */
	OSDFS_RAID_4 = 2,  /**< one parity component per group, fixed */
	OSDFS_RAID_5 = 3,  /**< one parity component per group, rotating */
	OSDFS_RAID_PQ = 4  /**< two parity components (P and Q), rotating: RAID 6 */
};

/** Most devices in one layout. */
#define OSDFS_LAYOUT_MAX_DEVICES 64u

/**
 * The object on which the layout keeps its device table (and each device's
 * identity, health record and dirty-region log): stored whole on every
 * device. A filesystem on a layout creates it first after format(), and the
 * layout writes the table then; osdfs keeps its superblock there.
 */
#define OSDFS_LAYOUT_TABLE_OID 0x10000ULL

/** Attribute page of the device table on OSDFS_LAYOUT_TABLE_OID. */
#define OSDFS_LAYOUT_TABLE_PAGE 0x10000u

/** Attribute number of the device table in OSDFS_LAYOUT_TABLE_PAGE. */
#define OSDFS_LAYOUT_TABLE_NUMBER 5u

/**
 * The attribute page the layout keeps its own attributes in, on every
 * object (data maps, file lengths, per-device records): not the
 * filesystem's to use. A create may carry number 1, a data map image
 * (docs/layout.md), to choose a new file's map.
 */
#define OSDFS_LAYOUT_PAGE 0x10004u

/**
 * A data map (RFC 5664 section 5.1). Components of an object: group_width
 * times (mirror_cnt + 1) per group, in as many groups as @ref num_comps says.
 */
struct osdfs_data_map {
	uint64_t stripe_unit;  /**< bytes per stripe unit; a multiple of 512, > 0 */
	uint32_t num_comps;    /**< components per object; 0 = as many whole groups as
				    the devices hold */
	uint32_t group_width;  /**< components per group counting parity (before
				    mirroring); 0 = every component in one group */
	uint32_t group_depth;  /**< stripes per group before the next group; 0 = one
				    group only */
	uint32_t mirror_cnt;   /**< extra copies of each component (0 = none) */
	enum osdfs_raid raid;  /**< RAID algorithm */
};

/**
 * Parse a data map: a RAID name ("raid0", "raid1", "raid10", "raid4",
 * "raid5", "raid6"; raid1 = raid0 with one mirror) followed by comma-separated
 * settings "su=64K", "width=N", "depth=N", "comps=N", "mirrors=N", e.g.
 * "raid5,su=64K,width=4".
 * @param[out] map the map (unset fields as in the defaults: su=64K, one
 *             group of every component)
 * @param spec the text
 * @param err if not NULL, receives the reason on failure (NUL-terminated)
 * @param errlen size of @p err
 * @return 0 or -EINVAL.
 */
OSD_EXTERN int osdfs_data_map_parse(struct osdfs_data_map *map, const char *spec,
				    char *err, size_t errlen);

/**
 * Render @p map in the syntax osdfs_data_map_parse() reads.
 * @return the length of the full text (as snprintf), or -EINVAL.
 */
OSD_EXTERN int osdfs_data_map_format(const struct osdfs_data_map *map, char *buf,
				     size_t len);

/**
 * Check that @p map can be laid out on @p ndevices devices (enough devices
 * for one group with its mirrors, a parity group wide enough for its
 * parity, a valid stripe unit).
 * @return 0 or -EINVAL with the reason in @p err.
 */
OSD_EXTERN int osdfs_data_map_check(const struct osdfs_data_map *map, unsigned ndevices,
				    char *err, size_t errlen);

/** Version of struct osdfs_layout_config: 2 added @ref osdfs_layout_config.readonly,
 *  3 @ref osdfs_layout_config.no_write_gathering. Versions 1 and 2 are still
 *  accepted, with write gathering on; version 1 as read-write. */
#define OSDFS_LAYOUT_CONFIG_VERSION 3

/** What osdfs_backend_layout_new() is built from. */
struct osdfs_layout_config {
	int version;                 /**< OSDFS_LAYOUT_CONFIG_VERSION */
	unsigned ndevices;           /**< number of entries in @ref devices */
	osdfs_backend **devices;     /**< child backends; the layout backend owns
				          every non-NULL entry once created, even when
				          creation fails. NULL = device unavailable */
	const char *const *addresses;/**< address of each device (target directory
				          or iSCSI URL) for the table and messages;
				          copied; may be NULL */
	struct osdfs_data_map map;   /**< default data map written by format();
				          ignored when the devices carry a table */
	int readonly;                /**< (version 2) non-zero: write nothing to the
				          devices, not even the device table. A device
				          missing or failing is down in memory only;
				          every change (create, write, set_attrs, ...,
				          format, osdfs_layout_replace(),
				          osdfs_layout_rebuild(),
				          osdfs_layout_set_file_map()) gives -EROFS */
	int no_write_gathering;      /**< (version 3) non-zero: write every parity
				          row as it comes. By default the partial last
				          row of a write that extends a file is held in
				          memory (at most 200 ms, until the next write
				          completes it, a flush or a truncate), so that
				          sequential writes go out as whole rows and read
				          nothing back. The environment variable
				          OSDFS_LAYOUT_GATHER=0 also turns it off */
};

/** Initialiser of struct osdfs_layout_config (RAID 0, 64 KiB units, read-write,
 *  write gathering on). */
#define OSDFS_LAYOUT_CONFIG_INIT { OSDFS_LAYOUT_CONFIG_VERSION, 0, NULL, NULL, \
				   { 65536, 0, 0, 0, 0, OSDFS_RAID_0 }, 0, 0 }

/**
 * Create a layout backend over @p cfg's devices.
 *
 * If some device carries a device table (a formatted layout filesystem), the
 * children are matched to table slots by their device uuid, whatever their
 * order in @p cfg; slots without a matching child are down. A child that has
 * no table is a spare (see osdfs_layout_replace()). Otherwise the backend is
 * unformatted: the slots are @p cfg's order, and format() (osdfs_mkfs())
 * formats every device and writes the table.
 *
 * With @ref osdfs_layout_config.readonly the slots that are down are those
 * the table marks down plus those without a device now; the table is not
 * rewritten.
 *
 * @param[out] out the backend ("layout"), released with osdfs_backend_free()
 *                 or owned by a mount
 * @param cfg devices and default map
 * @param err if not NULL, receives the reason on failure
 * @param errlen size of @p err
 * @return 0; -EINVAL (bad config, tables of different filesystems, a map the
 *         devices cannot hold); -ENODEV (too many devices down to read the
 *         filesystem); -ENOMEM; or a child's error.
 */
OSD_EXTERN int osdfs_backend_layout_new(osdfs_backend **out,
					const struct osdfs_layout_config *cfg,
					char *err, size_t errlen);

/**
 * Whether the device behind @p child (a backend on one device, such as an
 * "osd" backend; not a layout) is a member of a layout: it carries the
 * layout's device table on its superblock, so it holds part of a filesystem
 * and cannot be mounted alone.
 * @return 1, 0, -EINVAL (NULL), or the backend's error.
 */
OSD_EXTERN int osdfs_layout_is_member(osdfs_backend *child);

/**
 * Remove the device table from @p child, so that a member of an old layout
 * starts afresh (before a new mkfs on it). Nothing to do for a device that is
 * not a member.
 * @return 0, -EINVAL, or the backend's error.
 */
OSD_EXTERN int osdfs_layout_forget_member(osdfs_backend *child);

/** Whether @p be is a layout backend (1) or not (0). */
OSD_EXTERN int osdfs_backend_is_layout(const osdfs_backend *be);

/** State of one device slot. */
enum osdfs_layout_dev_state {
	OSDFS_LAYOUT_DEV_UP,         /**< in service */
	OSDFS_LAYOUT_DEV_DOWN,       /**< missing or failed; its data is degraded */
	OSDFS_LAYOUT_DEV_REBUILDING  /**< a replacement not yet rebuilt: written to,
				          not read from */
};

/** One device slot, as osdfs_layout_device() reports it. */
struct osdfs_layout_device {
	unsigned slot;                       /**< index in the table */
	uint8_t uuid[16];                    /**< the device's uuid */
	char address[256];                   /**< address recorded in the table */
	enum osdfs_layout_dev_state state;   /**< current state */
	uint64_t errors;                     /**< device errors seen since the layout
					          was opened (each marks it down) */
	uint64_t medium_errors;              /**< reads that failed while the device
					          still answered (e.g. a data checksum
					          mismatch, MEDIUM ERROR), ever (kept on
					          the devices) */
	uint64_t repairs;                    /**< unit ranges rewritten on this device
					          from mirrors or parity, ever */
	uint64_t unrepaired;                 /**< medium errors and mismatches left
					          unrepaired (read-only, dry run, a
					          failed rewrite, or too little
					          redundancy), ever */
};

/** Number of device slots (0 if @p be is not a layout backend). */
OSD_EXTERN unsigned osdfs_layout_ndevices(const osdfs_backend *be);

/**
 * Report slot @p slot.
 * @return 0, -EINVAL (not a layout backend) or -ERANGE (no such slot).
 */
OSD_EXTERN int osdfs_layout_device(const osdfs_backend *be, unsigned slot,
				   struct osdfs_layout_device *out);

/** What an event of a layout is about. */
enum osdfs_layout_event_kind {
	OSDFS_LAYOUT_EV_DOWN = 1,       /**< a device was marked down */
	OSDFS_LAYOUT_EV_UP,             /**< a device is back in service (rebuilt) */
	OSDFS_LAYOUT_EV_REPAIRED,       /**< a unit was rewritten from redundancy */
	OSDFS_LAYOUT_EV_REPAIR_FAILED,  /**< a bad unit could not be rewritten (or
					     was not: read-only, dry run) */
	OSDFS_LAYOUT_EV_UNRECOVERABLE,  /**< data could not be read nor
					     reconstructed: the read gave -EIO */
	OSDFS_LAYOUT_EV_MISMATCH,       /**< copies or parity disagree and the bad
					     unit cannot be told (scrub) */
	OSDFS_LAYOUT_EV_RETURNED,       /**< a device marked down is present again
					     at open or to the return watch
					     (osdfs_layout_watch_start()); its data
					     is stale: resynced if the dirty-region
					     log covers its outage, else down until
					     rebuilt (another device at its address
					     is only reported) */
	OSDFS_LAYOUT_EV_RESYNC_STARTED, /**< a returned device is being resynced:
					     the regions written while it was away */
	OSDFS_LAYOUT_EV_RESYNC_FINISHED /**< a resync finished: the device is up */
};

/** One event of a layout (osdfs_layout_events(), the event handler). */
struct osdfs_layout_event {
	int64_t time;                        /**< seconds since the Epoch (UTC) */
	enum osdfs_layout_event_kind kind;   /**< what happened */
	int severity;                        /**< syslog(3) level: LOG_CRIT (2) to
					          LOG_NOTICE (5) */
	int slot;                            /**< device slot, or -1 */
	uint64_t oid;                        /**< object concerned, or 0 */
	uint64_t offset;                     /**< logical byte offset in the object
					          (start of the unit), or 0 */
	char reason[96];                     /**< text, NUL-terminated */
};

/** Name of an event kind ("down", "up", "repaired", "repair-failed",
 *  "unrecoverable", "mismatch", "returned", "resync-started",
 *  "resync-finished"), or "?". */
OSD_EXTERN const char *osdfs_layout_event_name(enum osdfs_layout_event_kind kind);

/**
 * The newest events of the layout, oldest first: those recorded on the
 * devices (the newest record at open) followed by the ones since (at most
 * 32 in all). A read-write layout keeps them and the counters of
 * struct osdfs_layout_device on every device (superblock attribute
 * 0x10004/4); a read-only one in memory only.
 * @param be the layout backend
 * @param[out] out room for @p max events
 * @param max entries in @p out
 * @return the number stored, or -EINVAL (not a layout backend).
 */
OSD_EXTERN int osdfs_layout_events(const osdfs_backend *be, struct osdfs_layout_event *out,
				   size_t max);

/**
 * Call @p fn for every new event (device down, back, repair, unrecoverable
 * read, mismatch) as it happens, from the thread that meets it (any I/O
 * thread): @p fn must be quick and must not call into the layout.
 * @param be the layout backend
 * @param fn the handler, or NULL to stop
 * @param payload passed to @p fn
 * @return 0 or -EINVAL (not a layout backend).
 */
OSD_EXTERN int osdfs_layout_set_event_handler(osdfs_backend *be,
					      void (*fn)(const struct osdfs_layout_event *ev,
							 void *payload),
					      void *payload);

/** osdfs_layout_scrub() flag: check and report, write nothing. */
#define OSDFS_LAYOUT_SCRUB_DRY_RUN 1u

/** Counters of a scrub. */
struct osdfs_layout_scrub_stats {
	uint64_t objects;      /**< objects examined */
	uint64_t rows;         /**< stripe rows (or metadata objects) checked */
	uint64_t bytes;        /**< component bytes read */
	uint64_t medium;       /**< units that failed to read on a device that answered */
	uint64_t mismatches;   /**< units whose copies or parity disagreed */
	uint64_t repaired;     /**< units rewritten from redundancy */
	uint64_t unrepaired;   /**< bad units left: undeterminable, too little
				    redundancy, dry run, read-only, or a failed rewrite */
};

/**
 * Read every stripe row of every object from every component (every copy
 * of metadata), check that mirror copies agree and that parity matches the
 * data, and rewrite from redundancy each unit that failed to read (a medium
 * error) or that disagrees where the bad one can be determined (a majority
 * of copies; for RAID 6, the one unit whose replacement makes P and Q both
 * agree). A disagreement whose culprit cannot be determined (two copies, or
 * RAID 5 parity) is reported as an OSDFS_LAYOUT_EV_MISMATCH event and left.
 * Slots that are down or rebuilding are skipped. Safe while mounted.
 * @param be the layout backend
 * @param flags OSDFS_LAYOUT_SCRUB_DRY_RUN or 0; a read-only layout never writes
 * @param[out] st if not NULL, receives the counters
 * @param progress if not NULL, called after each object with the counters so far
 * @param payload passed to @p progress
 * @return 0 when nothing bad is left (everything found repaired), -EIO when
 *         some bad unit is left (counted in unrepaired), -EINVAL, or a
 *         device error listing the objects.
 */
OSD_EXTERN int osdfs_layout_scrub(osdfs_backend *be, unsigned flags,
				  struct osdfs_layout_scrub_stats *st,
				  void (*progress)(const struct osdfs_layout_scrub_stats *st,
						   void *payload),
				  void *payload);

/** The default data map of the filesystem (from the table, or the config). */
OSD_EXTERN int osdfs_layout_default_map(const osdfs_backend *be, struct osdfs_data_map *out);

/**
 * Put a new, empty device in slot @p slot (which must be down): it gets a new
 * uuid, the table on every device names it, and the slot becomes
 * OSDFS_LAYOUT_DEV_REBUILDING. With @p fresh NULL, the first spare given at
 * creation is used, or without a spare the slot's own device if it is present
 * but down (stale: it came back after a failure); the device is emptied.
 * @param be the layout backend
 * @param slot the slot to fill
 * @param fresh the new device's backend (owned by @p be on success), or NULL
 * @param address its address for the table (copied), or NULL to keep the spare's
 * @return 0, -EINVAL, -EBUSY (the slot is up), -ENODEV (no spare), -EROFS (a
 *         read-only layout), -EOPNOTSUPP (a device of the layout, or the
 *         new one, has a backend without get_all_attrs, so objects could
 *         not be copied with all their attributes; nothing was changed and
 *         @p fresh is still the caller's), or an error writing the table.
 */
OSD_EXTERN int osdfs_layout_replace(osdfs_backend *be, unsigned slot, osdfs_backend *fresh,
				    const char *address);

/** Counters of a rebuild. */
struct osdfs_layout_rebuild_stats {
	uint64_t objects;        /**< objects examined */
	uint64_t components;     /**< components written to the slot */
	uint64_t bytes;          /**< data bytes written to the slot */
	uint64_t unrecoverable;  /**< objects that could not be reconstructed */
};

/**
 * Rebuild slot @p slot (state REBUILDING): recreate each of its components
 * from mirrors or parity, with data and attributes. On success the slot is
 * UP. Safe while the filesystem is mounted and in use.
 * @param be the layout backend
 * @param slot the slot to rebuild
 * @param[out] st if not NULL, receives the counters
 * @param progress if not NULL, called after each object with the counters so far
 * @param payload passed to @p progress
 * @return 0, -EINVAL, -EROFS (a read-only layout), -EOPNOTSUPP (a device's
 *         backend has no get_all_attrs: see osdfs_layout_replace()), -EIO if
 *         some object was unrecoverable (counted in @p st), or a device error.
 */
OSD_EXTERN int osdfs_layout_rebuild(osdfs_backend *be, unsigned slot,
				    struct osdfs_layout_rebuild_stats *st,
				    void (*progress)(const struct osdfs_layout_rebuild_stats *st,
						     void *payload),
				    void *payload);

/** Counters of a resync (osdfs_layout_resync()). */
struct osdfs_layout_resync_stats {
	uint64_t entries;        /**< dirty-log entries (object, region) replayed */
	uint64_t regions;        /**< file regions copied or reconstructed */
	uint64_t objects;        /**< objects copied whole (metadata, files created,
				      truncated or removed while the device was away) */
	uint64_t components;     /**< component writes, creates and removes sent to
				      the device */
	uint64_t bytes;          /**< data bytes written to the device */
};

/**
 * Bytes of one dirty region: writes while a device is down are logged per
 * (object, region), a region being this many bytes of every component's
 * address space (one stripe unit when the unit is larger). See
 * docs/layout.md, "Dirty-region log and resync".
 */
#define OSDFS_LAYOUT_REGION_BYTES (1u << 20)

/** Most entries the dirty-region log holds; beyond, it overflows and a
 * returned device needs a full rebuild. */
#define OSDFS_LAYOUT_DIRTY_MAX 4000u

/**
 * Resync slot @p slot: its device was down and is present again (the same
 * device, not a replacement), and the layout's dirty-region log has covered
 * it since it went down. Only what was written while it was away is copied
 * or reconstructed onto it (regions of files; whole metadata objects, and
 * objects created, truncated or removed meanwhile), then the slot is up and
 * the log entries no other down slot needs are cleared. Records
 * OSDFS_LAYOUT_EV_RESYNC_STARTED and _FINISHED events. A layout opened
 * read-write resyncs each returned device this way at open, and its return
 * watch (osdfs_layout_watch_start()) one that comes back while it is open.
 * Safe while the filesystem is in use: the slot is rebuilding (written to)
 * before the log is read, and goes up only if it did not fail meanwhile.
 * @param be the layout backend
 * @param slot the slot to resync (state down, or rebuilding after an
 *        interrupted resync)
 * @param[out] st if not NULL, receives the counters
 * @return 0; -EINVAL (not a layout, no such slot, or the slot is up);
 *         -ENODEV (its device is not present); -ESTALE (the log does not
 *         cover this outage, or overflowed: rebuild it); -EROFS (read-only);
 *         -EOPNOTSUPP (a device's backend has no get_all_attrs);
 *         -EIO if some entry could not be reconstructed; a device error.
 */
OSD_EXTERN int osdfs_layout_resync(osdfs_backend *be, unsigned slot,
				   struct osdfs_layout_resync_stats *st);

/**
 * What the dirty-region log holds now.
 * @param be the layout backend
 * @param[out] entries number of (object, region) entries
 * @param[out] covered bit s set: the log covers slot s since it went down
 * @return 0, -EINVAL (not a layout), or 1 if the log has overflowed
 *         (entries 0, covered 0: every down slot needs a rebuild).
 */
OSD_EXTERN int osdfs_layout_dirty_log(const osdfs_backend *be, uint64_t *entries,
				      uint64_t *covered);

/**
 * Opens the device of slot @p slot again, at @p address (the address the
 * device table records for it), for the return watch
 * (osdfs_layout_watch_start()). Called from the watch's thread; it should
 * give up within a few seconds (the watch is stopped, and the layout
 * destroyed, only once it returns).
 * @param slot the slot whose device is down
 * @param address its address in the table (target directory or iSCSI URL)
 * @param[out] out the new backend on that device, owned by the layout from
 *             then on (freed at its destruction)
 * @param payload @ref osdfs_layout_watch.payload
 * @return 0, or a negative errno (the device is still away).
 */
typedef int (*osdfs_layout_reopen_fn)(unsigned slot, const char *address, osdfs_backend **out,
				      void *payload);

/** Version of struct osdfs_layout_watch. */
#define OSDFS_LAYOUT_WATCH_VERSION 1

/** How osdfs_layout_watch_start() looks for devices that come back. */
struct osdfs_layout_watch {
	int version;                  /**< OSDFS_LAYOUT_WATCH_VERSION */
	unsigned interval_ms;         /**< between two probes of the down slots
					   (at least 100; 0 = 5000) */
	int report_only;              /**< non-zero: record that a device is back
					   but leave it down (no resync) */
	osdfs_layout_reopen_fn reopen;/**< opens a down slot's device again when
					   its own backend no longer answers (a
					   dead session); NULL: only the backend
					   the slot has is probed */
	void *payload;                /**< passed to @ref reopen */
};

/** Initialiser of struct osdfs_layout_watch (5 s, resync, no reopen). */
#define OSDFS_LAYOUT_WATCH_INIT { OSDFS_LAYOUT_WATCH_VERSION, 5000, 0, NULL, NULL }

/**
 * Look at the slots that are down once, now (what the watch thread does
 * every interval): for each, a cheap probe of its device (one attribute
 * read of the superblock: the device's identity), through its backend, else
 * through @p w's reopen function. A device that answers and carries this
 * slot's identity (filesystem and device uuid) is back: an
 * OSDFS_LAYOUT_EV_RETURNED event, then, when the dirty-region log covers
 * its outage and the layout is read-write, a resync of the regions written
 * while it was away (osdfs_layout_resync(): the filesystem stays in use;
 * writes during the resync go to the device too), which brings it up. A
 * device that answers with another identity (wiped, or another device at
 * that address), or that the log does not cover, is reported once and stays
 * down (it needs osdfs_layout_replace() and a rebuild). A read-only layout
 * only reports. A failed resync leaves the slot down, recorded as an
 * OSDFS_LAYOUT_EV_DOWN event; it is tried again after 1, 3, 7 and 15
 * skipped passes (5 tries), then only after the device has been away.
 * @param be the layout backend
 * @param w how to probe (NULL: OSDFS_LAYOUT_WATCH_INIT)
 * @return the number of slots brought up, or -EINVAL (not a layout backend).
 */
OSD_EXTERN int osdfs_layout_watch_once(osdfs_backend *be, const struct osdfs_layout_watch *w);

/**
 * Start a thread that calls osdfs_layout_watch_once() every
 * @ref osdfs_layout_watch.interval_ms while the layout lives (a mounted
 * filesystem: a device that returns is resynced without a remount). It is
 * stopped by osdfs_layout_watch_stop() or when the layout is destroyed.
 * @param be the layout backend
 * @param w how to probe (copied; NULL: OSDFS_LAYOUT_WATCH_INIT)
 * @return 0, -EINVAL (not a layout backend, a bad version or interval),
 *         -EBUSY (a watch runs already), or the error of pthread_create().
 */
OSD_EXTERN int osdfs_layout_watch_start(osdfs_backend *be, const struct osdfs_layout_watch *w);

/**
 * Stop the watch thread, waiting for a probe or resync under way to end.
 * Nothing to do when none runs.
 * @param be the layout backend
 */
OSD_EXTERN void osdfs_layout_watch_stop(osdfs_backend *be);

/**
 * The data map of regular file @p oid (what its components carry).
 * @param be the layout backend
 * @param oid the file's object id
 * @param[out] out its resolved map (concrete comps, width, depth)
 * @return 0; -EINVAL (not a layout backend); -ENODATA (the object is not a
 *         regular file: metadata has no map); -ENOENT; or a device error.
 */
OSD_EXTERN int osdfs_layout_file_map(osdfs_backend *be, uint64_t oid,
				     struct osdfs_data_map *out);

/**
 * Lay an empty regular file out again with @p map: its components are
 * re-created per the new map, the attributes osdfs keeps copied onto the new
 * attribute holders. A crash leaves either the old or the new map in effect
 * (the map on the file's first component decides; docs/layout.md).
 * @param be the layout backend
 * @param oid the file's object id
 * @param map the new map (resolved against the filesystem's device count)
 * @param attrs attributes to set with it on the holders (e.g. the inode with
 *              a new ctime); none may be on the layout's own page 0x10004
 * @param nattrs number of @p attrs (at most 32)
 * @return 0; -EINVAL (not a layout backend, not a regular file, or a map the
 *         devices cannot hold); -EROFS (a read-only layout); -EBUSY (the
 *         file's length is not 0); -EIO (a device either map uses is not up);
 *         -ENOENT; -EOPNOTSUPP (a device's backend has no get_all_attrs, so
 *         the holders' attributes cannot be moved); or a device error.
 */
OSD_EXTERN int osdfs_layout_set_file_map(osdfs_backend *be, uint64_t oid,
					 const struct osdfs_data_map *map,
					 const struct osdfs_attr *attrs, int nattrs);

#ifdef __cplusplus
}
#endif
/** @} */
#endif
