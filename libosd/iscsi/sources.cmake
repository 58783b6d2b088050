# iSCSI PDU codec shared by the initiator transport and the target.
set(LIBOSD_ISCSI_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/pdu.c
  ${CMAKE_CURRENT_LIST_DIR}/ahs.c
  ${CMAKE_CURRENT_LIST_DIR}/text.c
  ${CMAKE_CURRENT_LIST_DIR}/params.c
  ${CMAKE_CURRENT_LIST_DIR}/chap.c)
list(APPEND LIBOSD_SOURCES ${LIBOSD_ISCSI_SOURCES})
