# libosdfs/core: the filesystem on the backend API (included by libosdfs/CMakeLists.txt).
list(APPEND OSDFS_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/bcache.c
  ${CMAKE_CURRENT_LIST_DIR}/dir.c
  ${CMAKE_CURRENT_LIST_DIR}/dirsums.c
  ${CMAKE_CURRENT_LIST_DIR}/file.c
  ${CMAKE_CURRENT_LIST_DIR}/format.c
  ${CMAKE_CURRENT_LIST_DIR}/inode.c
  ${CMAKE_CURRENT_LIST_DIR}/lease.c
  ${CMAKE_CURRENT_LIST_DIR}/mount.c
  ${CMAKE_CURRENT_LIST_DIR}/namei.c
  ${CMAKE_CURRENT_LIST_DIR}/orphan.c
  ${CMAKE_CURRENT_LIST_DIR}/path.c
  ${CMAKE_CURRENT_LIST_DIR}/punch.c
  ${CMAKE_CURRENT_LIST_DIR}/siphash.c
  ${CMAKE_CURRENT_LIST_DIR}/sums.c
  ${CMAKE_CURRENT_LIST_DIR}/version.c
  ${CMAKE_CURRENT_LIST_DIR}/xattr.c)
