# iovec byte ranges, shared by the iSCSI transport and the target.
list(APPEND LIBOSD_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/iov.c)
list(APPEND OSD_WIRE_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/iov.c)
