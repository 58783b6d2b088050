# libosdfs/fsck: the offline checker (included by libosdfs/CMakeLists.txt).
list(APPEND OSDFS_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/fsck.c
  ${CMAKE_CURRENT_LIST_DIR}/scan.c
  ${CMAKE_CURRENT_LIST_DIR}/dirscan.c
  ${CMAKE_CURRENT_LIST_DIR}/check.c
  ${CMAKE_CURRENT_LIST_DIR}/repair.c
  ${CMAKE_CURRENT_LIST_DIR}/verify.c)
