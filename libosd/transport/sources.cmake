list(APPEND LIBOSD_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/iscsi_url.c
  ${CMAKE_CURRENT_LIST_DIR}/iscsi_conn.c
  ${CMAKE_CURRENT_LIST_DIR}/iscsi_login.c
  ${CMAKE_CURRENT_LIST_DIR}/iscsi_command.c
  ${CMAKE_CURRENT_LIST_DIR}/iscsi_token.c
  ${CMAKE_CURRENT_LIST_DIR}/iscsi_session.c
  ${CMAKE_CURRENT_LIST_DIR}/iscsi_api.c)
