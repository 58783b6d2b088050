list(APPEND LIBOSD_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/action.c
  ${CMAKE_CURRENT_LIST_DIR}/offset.c
  ${CMAKE_CURRENT_LIST_DIR}/capability.c
  ${CMAKE_CURRENT_LIST_DIR}/cdb.c
  ${CMAKE_CURRENT_LIST_DIR}/attr.c
  ${CMAKE_CURRENT_LIST_DIR}/sense.c
  ${CMAKE_CURRENT_LIST_DIR}/list.c
  ${CMAKE_CURRENT_LIST_DIR}/answer.c
  ${CMAKE_CURRENT_LIST_DIR}/command.c)
# The command descriptor table: the target's dispatch and permission checks
# read it too.
list(APPEND OSD_WIRE_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/command.c)
