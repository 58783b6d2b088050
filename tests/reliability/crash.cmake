# Crash consistency and corrupted filesystems (docs/crash-model.md).
# test_rel_crash: SIGKILL of osd-targetd and of the filesystem process at
# random points of a metadata workload; test_rel_corrupt: random damage to
# directory, inode, superblock and xattr attributes and directory data.
# OSD_REL_SCALE scales both (the ASan run uses less).
if(TARGET osd_toolcommon)
  osd_add_check_test(NAME test_rel_crash
    SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_rel_crash.c
            ${CMAKE_CURRENT_LIST_DIR}/test_rel_crash_work.c
            ${CMAKE_CURRENT_LIST_DIR}/test_rel_crash_check.c
            ${CMAKE_CURRENT_LIST_DIR}/test_rel_crash_journal.c
            ${CMAKE_CURRENT_LIST_DIR}/rel_env.c
            ${PROJECT_SOURCE_DIR}/tests/common/daemon_wait.c
    LIBS osd_toolcommon osdfs osdtarget osd TIMEOUT 240 LABELS reliability)
  set(rel_crash_targetd "")
  if(TARGET osd-targetd)
    set(rel_crash_targetd $<TARGET_FILE:osd-targetd>)
    add_dependencies(test_rel_crash osd-targetd)
  endif()
  target_compile_definitions(test_rel_crash PRIVATE OSD_TARGETD_PATH="${rel_crash_targetd}")
endif()

if(TARGET osd_toolcommon)
  osd_add_check_test(NAME test_rel_corrupt
    SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_rel_corrupt.c ${CMAKE_CURRENT_LIST_DIR}/rel_env.c
            ${PROJECT_SOURCE_DIR}/tests/common/daemon_wait.c
    LIBS osd_toolcommon osdfs osdtarget osd TIMEOUT 240 LABELS reliability)
  set(rel_corrupt_tool "")
  if(TARGET osdfs_tool)
    set(rel_corrupt_tool $<TARGET_FILE:osdfs_tool>)
    add_dependencies(test_rel_corrupt osdfs_tool)
  endif()
  target_compile_definitions(test_rel_corrupt PRIVATE OSDFS_TOOL_PATH="${rel_corrupt_tool}")
endif()
