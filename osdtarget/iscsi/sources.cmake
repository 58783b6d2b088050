# The iSCSI server of libosdtarget (include/osdtarget/iscsi.h, docs/iscsi.md).
set(OSDTARGET_ISCSI_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/server.c
  ${CMAKE_CURRENT_LIST_DIR}/conn.c
  ${CMAKE_CURRENT_LIST_DIR}/login.c
  ${CMAKE_CURRENT_LIST_DIR}/nexus.c
  ${CMAKE_CURRENT_LIST_DIR}/ffp.c
  ${CMAKE_CURRENT_LIST_DIR}/task.c
  ${CMAKE_CURRENT_LIST_DIR}/sched.c
  ${CMAKE_CURRENT_LIST_DIR}/lun.c)
# The PDU codec (iscsi/pdu.h) and byte order helpers live in libosd.
get_filename_component(OSD_ISCSI_LIBOSD_DIR ${CMAKE_CURRENT_LIST_DIR}/../../libosd ABSOLUTE)
set_property(SOURCE ${OSDTARGET_ISCSI_SOURCES} APPEND PROPERTY
  INCLUDE_DIRECTORIES ${OSD_ISCSI_LIBOSD_DIR})
list(APPEND OSDTARGET_SOURCES ${OSDTARGET_ISCSI_SOURCES})
