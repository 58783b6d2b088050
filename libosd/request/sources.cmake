list(APPEND LIBOSD_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/arena.c
  ${CMAKE_CURRENT_LIST_DIR}/dev.c
  ${CMAKE_CURRENT_LIST_DIR}/cred_cache.c
  ${CMAKE_CURRENT_LIST_DIR}/req_build.c
  ${CMAKE_CURRENT_LIST_DIR}/req_layout.c
  ${CMAKE_CURRENT_LIST_DIR}/req_exec.c
  ${CMAKE_CURRENT_LIST_DIR}/req_result.c
  ${CMAKE_CURRENT_LIST_DIR}/sync_helpers.c)
