# The durable object store under the software OSD target (docs/target-store.md).
set(OSD_STORE_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/attr.c
  ${CMAKE_CURRENT_LIST_DIR}/data.c
  ${CMAKE_CURRENT_LIST_DIR}/ids.c
  ${CMAKE_CURRENT_LIST_DIR}/log.c
  ${CMAKE_CURRENT_LIST_DIR}/namespace.c
  ${CMAKE_CURRENT_LIST_DIR}/pack.c
  ${CMAKE_CURRENT_LIST_DIR}/pending.c
  ${CMAKE_CURRENT_LIST_DIR}/pool.c
  ${CMAKE_CURRENT_LIST_DIR}/recover.c
  ${CMAKE_CURRENT_LIST_DIR}/store.c
  ${CMAKE_CURRENT_LIST_DIR}/sums.c
  ${CMAKE_CURRENT_LIST_DIR}/table.c
  ${CMAKE_CURRENT_LIST_DIR}/trust.c)
# The store uses libosd's big-endian helpers (proto/byteorder.h) and CRC32C
# (checksum/crc32c.h).
get_filename_component(OSD_STORE_LIBOSD_DIR ${CMAKE_CURRENT_LIST_DIR}/../../libosd ABSOLUTE)
set_property(SOURCE ${OSD_STORE_SOURCES} APPEND PROPERTY
  INCLUDE_DIRECTORIES ${OSD_STORE_LIBOSD_DIR})
list(APPEND OSDTARGET_SOURCES ${OSD_STORE_SOURCES})
