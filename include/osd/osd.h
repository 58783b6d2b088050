/**
 * @file osd/osd.h
 * @brief Umbrella header: includes every public libosd header.
 *
 * Applications may include this one header instead of the individual ones.
 * The transport interface (osd/sys/transport.h) is included as well, since
 * opening a device needs a transport.
 *
 * @defgroup osd_all libosd umbrella header
 * @{
 */
#ifndef OSD_OSD_H
#define OSD_OSD_H

#include <osd/types.h>
#include <osd/attributes.h>
#include <osd/attr.h>
#include <osd/capability.h>
#include <osd/cdb.h>
#include <osd/list.h>
#include <osd/offset.h>
#include <osd/sense.h>
#include <osd/security.h>
#include <osd/sys/transport.h>
#include <osd/request.h>
#include <osd/iscsi.h>
#include <osd/secmgr.h>
#include <osd/version.h>
#include <osd/keyring.h>

#endif
/** @} */
