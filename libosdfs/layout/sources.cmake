# libosdfs/layout: the multi-device layout backend (striping, mirrors, RAID 4/5/6).
set(_osdfs_lay ${CMAKE_CURRENT_LIST_DIR})
list(APPEND OSDFS_SOURCES
  ${_osdfs_lay}/map.c
  ${_osdfs_lay}/gf256.c
  ${_osdfs_lay}/scratch.c
  ${_osdfs_lay}/gather.c
  ${_osdfs_lay}/table.c
  ${_osdfs_lay}/fanout.c
  ${_osdfs_lay}/cops.c
  ${_osdfs_lay}/layout.c
  ${_osdfs_lay}/member.c
  ${_osdfs_lay}/objinfo.c
  ${_osdfs_lay}/objops.c
  ${_osdfs_lay}/io.c
  ${_osdfs_lay}/rebuild.c
  ${_osdfs_lay}/relayout.c
  ${_osdfs_lay}/health.c
  ${_osdfs_lay}/dirty.c
  ${_osdfs_lay}/watch.c
  ${_osdfs_lay}/scrub.c)
