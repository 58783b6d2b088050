/* The library version, fixed at build time from the CMake project version. */
#include <osd/version.h>
#include <osdtarget/target.h>

const char *osd_target_version_string(void)
{
	return OSD_VERSION_STRING;
}

long osd_target_version_number(void)
{
	return OSD_VERSION_NUMBER;
}
