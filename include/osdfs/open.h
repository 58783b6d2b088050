/**
 * @file osdfs/open.h
 * @brief Mounting a filesystem by the directory of its store or an iSCSI URL.
 *
 * What the osdfs tool does with `--target DIR|URL --security M --key-file K`,
 * for applications: open the device (a store in a local directory through
 * libosdtarget, or an iSCSI target through libosd), with the root key's
 * derived partition keys (osd/keyring.h), make the "osd" backend on the
 * filesystem's partition and mount it. The mount owns the device: one
 * osdfs_unmount() closes everything.
 *
 * @code
 * struct osd_open_options dev = OSD_OPEN_OPTIONS_INIT;
 * struct osdfs_open_options o = OSDFS_OPEN_OPTIONS_INIT;
 * char err[256];
 * osdfs *fs;
 * dev.security = OSD_SEC_CAPKEY;
 * dev.key_file = "root.key";
 * o.device = &dev;
 * o.error = err;
 * o.error_size = sizeof(err);
 * if (osdfs_open_path(&fs, "/srv/osd/store", &o) < 0)
 *         fprintf(stderr, "%s\n", err);
 * @endcode
 *
 * @defgroup osdfs_open Opening by path or URL
 * @{
 */
#ifndef OSDFS_OPEN_H
#define OSDFS_OPEN_H

#include <osdfs/osdfs.h>
#include <osd/keyring.h>

#ifdef __cplusplus
extern "C" {
#endif

struct osd_target_options;

/** The partition the osdfs tools make filesystems on unless told otherwise. */
#define OSDFS_DEFAULT_PARTITION 0x10000ULL

/** Version of struct osdfs_open_options. */
#define OSDFS_OPEN_OPTIONS_VERSION 1

/** Options of osdfs_open_path(); initialise with @ref OSDFS_OPEN_OPTIONS_INIT. */
struct osdfs_open_options {
	unsigned int version;                  /**< OSDFS_OPEN_OPTIONS_VERSION */
	uint64_t partition;                    /**< the filesystem's partition; 0 =
						    OSDFS_DEFAULT_PARTITION */
	const struct osd_open_options *device; /**< OSD version, security method, root key,
						    iSCSI options; NULL: defaults (NOSEC).
						    Its error buffer is not used */
	const struct osd_target_options *store; /**< a directory's store options; NULL:
						     an existing store with default
						     durability. Not used for a URL */
	const struct osdfs_mount_options *mount; /**< mount options; NULL: read-write.
						      OSDFS_MOUNT_KEEP_BACKEND is refused */
	char *error;                           /**< if not NULL, receives why it failed */
	size_t error_size;                     /**< size of @ref error */
};

/** Defaults: the tools' partition, NOSEC, existing store, read-write mount. */
#define OSDFS_OPEN_OPTIONS_INIT \
	{ OSDFS_OPEN_OPTIONS_VERSION, 0, NULL, NULL, NULL, NULL, 0 }

/**
 * Mount the filesystem on @p dir_or_url: an iSCSI URL (anything containing
 * "://", see osd_dev_open_url()) or the directory of an embedded target's
 * store (osd_target_open_dev()). A filesystem spread over several devices
 * (a layout, osdfs/layout.h) is not opened here: each device carries only
 * part of it.
 * @param[out] out the mounted filesystem, released with osdfs_unmount(),
 *                 which also closes the device (and the store)
 * @param dir_or_url where the filesystem is
 * @param opts options, or NULL for the defaults
 * @return 0; -EINVAL (bad options), -EMEDIUMTYPE (a device of a layout),
 *         or the device's error (osd_dev_open_url(), osd_target_open_dev())
 *         or the mount's (osdfs_mount()); -EACCES when the target refuses
 *         the credentials (a weaker method than the partition's, or another
 *         key).
 */
OSD_EXTERN int osdfs_open_path(osdfs **out, const char *dir_or_url,
			       const struct osdfs_open_options *opts);

#ifdef __cplusplus
}
#endif
/** @} */
#endif
