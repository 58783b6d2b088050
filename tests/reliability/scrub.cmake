# Data damage through osd-targetd, libosd and osdctl: MEDIUM ERROR naming
# object and offset, OBJECT STRUCTURE CHECK and osdctl scrub finding it.
if(TARGET osd-targetd AND TARGET osdctl)
  osd_add_check_test(NAME test_rel_scrub
    SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_rel_scrub.c ${CMAKE_CURRENT_LIST_DIR}/rel_env.c
            ${PROJECT_SOURCE_DIR}/tests/common/daemon_wait.c
    LIBS osdtarget osd TIMEOUT 120 LABELS reliability)
  target_compile_definitions(test_rel_scrub PRIVATE
    OSD_TARGETD_PATH="$<TARGET_FILE:osd-targetd>" OSDCTL_PATH="$<TARGET_FILE:osdctl>")
  add_dependencies(test_rel_scrub osd-targetd osdctl)
endif()
