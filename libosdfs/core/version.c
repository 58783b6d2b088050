/* The library version, fixed at build time from the CMake project version. */
#include <osd/version.h>
#include <osdfs/osdfs.h>

const char *osdfs_version_string(void)
{
	return OSD_VERSION_STRING;
}

long osdfs_version_number(void)
{
	return OSD_VERSION_NUMBER;
}
