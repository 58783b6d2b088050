# Transport faults: the initiator against osd-targetd through a
# fault-injecting iSCSI proxy (drops, delays, truncation, corruption).
osd_add_check_test(NAME test_rel_proxy
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_rel_proxy.c ${CMAKE_CURRENT_LIST_DIR}/fault_proxy.c
          ${CMAKE_CURRENT_LIST_DIR}/rel_env.c
          ${PROJECT_SOURCE_DIR}/tests/common/daemon_wait.c
  LIBS osd_static OpenSSL::Crypto
  TIMEOUT 300
  LABELS reliability)
if(TARGET osd-targetd)
  target_compile_definitions(test_rel_proxy PRIVATE
    OSD_TARGETD_PATH="$<TARGET_FILE:osd-targetd>")
  add_dependencies(test_rel_proxy osd-targetd)
endif()
