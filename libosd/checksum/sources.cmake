# CRC32C, shared by the iSCSI digests and the target's store.
list(APPEND LIBOSD_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/crc32c.c)
list(APPEND OSD_WIRE_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/crc32c.c)
