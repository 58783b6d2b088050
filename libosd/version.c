/* The library version, fixed at build time from the CMake project version. */
#include <osd/types.h>
#include <osd/version.h>

const char *osd_version_string(void)
{
	return OSD_VERSION_STRING;
}

long osd_version_number(void)
{
	return OSD_VERSION_NUMBER;
}
