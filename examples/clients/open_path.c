/*
 * open_path.c - opening a filesystem the osdfs tool made, as the tool does.
 *
 * `osdfs --target DIR|URL --security M --key-file K mkfs` keys the
 * filesystem's partition with keys derived from the root key in K.
 * osdfs_open_path() (<osdfs/open.h>) opens the same store or iSCSI target
 * with the same key scheme and mounts the filesystem; osdfs_unmount()
 * closes everything again. The program prints one file of it to standard
 * output, read-only.
 *
 * It also compares the version of the headers it was built with
 * (<osd/version.h>) with the version of the library it runs with.
 *
 * Usage: open_path DIR|URL SECURITY KEYFILE PATH
 *        (SECURITY: nosec, capkey, cmdrsp or alldata; KEYFILE "-" for none)
 * Exit status: 0 on success, 1 on any failure.
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <osd/version.h>
#include <osdfs/open.h>

static int parse_method(const char *s, enum osd_sec_method *out)
{
	static const char *const names[] = { "nosec", "capkey", "cmdrsp", "alldata" };

	for (int i = 0; i < 4; i++) {
		if (strcmp(s, names[i]) == 0) {
			*out = (enum osd_sec_method)i;
			return 0;
		}
	}
	return -1;
}

/* Copies the file at @p path to standard output. */
static int print_file(osdfs *fs, const char *path)
{
	char buf[65536];
	osdfs_file *fh;
	uint64_t ino;
	uint64_t off = 0;
	ssize_t n;
	int rc = osdfs_resolve(fs, path, 1, &ino);

	if (rc == 0)
		rc = osdfs_open(fs, ino, O_RDONLY, &fh);
	if (rc < 0) {
		fprintf(stderr, "open_path: %s: %s\n", path, strerror(-rc));
		return rc;
	}
	while ((n = osdfs_read(fs, fh, buf, sizeof(buf), off)) > 0) {
		fwrite(buf, 1, (size_t)n, stdout);
		off += (uint64_t)n;
	}
	if (n < 0)
		fprintf(stderr, "open_path: %s: %s\n", path, strerror((int)-n));
	osdfs_release(fs, fh);
	return n < 0 ? (int)n : 0;
}

int main(int argc, char **argv)
{
	struct osd_open_options dev = OSD_OPEN_OPTIONS_INIT;
	struct osdfs_mount_options mount = OSDFS_MOUNT_OPTIONS_INIT;
	struct osdfs_open_options o = OSDFS_OPEN_OPTIONS_INIT;
	char err[512] = "";
	osdfs *fs;
	int rc;

	if (argc != 5 || parse_method(argv[2], &dev.security) < 0) {
		fprintf(stderr, "usage: open_path DIR|URL nosec|capkey|cmdrsp|alldata KEYFILE|- "
			"PATH\n");
		return 1;
	}
	if (osdfs_version_number() < OSD_VERSION_NUMBER) {
		fprintf(stderr, "open_path: built with osd %s headers, running with libosdfs %s\n",
			OSD_VERSION_STRING, osdfs_version_string());
		return 1;
	}
	if (strcmp(argv[3], "-") != 0)
		dev.key_file = argv[3];
	mount.flags = OSDFS_MOUNT_RDONLY;
	o.device = &dev;
	o.mount = &mount;
	o.error = err;
	o.error_size = sizeof(err);
	rc = osdfs_open_path(&fs, argv[1], &o);
	if (rc < 0) {
		fprintf(stderr, "open_path: %s\n", err);
		return 1;
	}
	rc = print_file(fs, argv[4]);
	if (osdfs_unmount(fs) < 0)
		rc = -1;
	return rc < 0 ? 1 : 0;
}
