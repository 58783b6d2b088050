# libosdfs/open: mounting a filesystem by directory or iSCSI URL.
list(APPEND OSDFS_SOURCES ${CMAKE_CURRENT_LIST_DIR}/open.c)
