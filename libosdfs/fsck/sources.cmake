# libosdfs/fsck: the offline checker (included by libosdfs/CMakeLists.txt).
list(APPEND OSDFS_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/fsck.c
  ${CMAKE_CURRENT_LIST_DIR}/scan.c
  ${CMAKE_CURRENT_LIST_DIR}/dirscan.c
  ${CMAKE_CURRENT_LIST_DIR}/check.c
  ${CMAKE_CURRENT_LIST_DIR}/repair.c)
# core/fs.h, which these include, uses libosd's internal hash+LRU (lru/lru.h).
set_property(SOURCE
  ${CMAKE_CURRENT_LIST_DIR}/fsck.c
  ${CMAKE_CURRENT_LIST_DIR}/scan.c
  ${CMAKE_CURRENT_LIST_DIR}/dirscan.c
  ${CMAKE_CURRENT_LIST_DIR}/check.c
  ${CMAKE_CURRENT_LIST_DIR}/repair.c
  APPEND PROPERTY INCLUDE_DIRECTORIES ${PROJECT_SOURCE_DIR}/libosd)
