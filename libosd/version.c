/* The library version, fixed at build time from the CMake project version. */
#include <osd/types.h>

const char *osd_version_string(void)
{
	return OSD_PROJECT_VERSION;
}
