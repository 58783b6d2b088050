# libosdfs/backends: the backend wrapper and the shipped object-store backends.
set(_osdfs_be ${CMAKE_CURRENT_LIST_DIR})
list(APPEND OSDFS_SOURCES
  ${_osdfs_be}/backend.c
  ${_osdfs_be}/htab.c
  ${_osdfs_be}/iov.c
  ${_osdfs_be}/mem.c
  ${_osdfs_be}/mem_attr.c
  ${_osdfs_be}/mem_data.c
  ${_osdfs_be}/op_sync.c
  ${_osdfs_be}/osd.c)
