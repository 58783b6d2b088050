# Concurrent load and resource limits (issue 7): many clients on one target
# with every byte verified, key rotation under load, ENOSPC and recovery,
# bounded memory. Scale with $OSD_REL_SCALE (the ASan run uses less).
osd_add_check_test(NAME test_rel_load
  SOURCES test_rel_load.c test_rel_load_client.c rel_env.c
          ${PROJECT_SOURCE_DIR}/tests/common/daemon_wait.c
  LIBS osdtarget_static osd_static OpenSSL::Crypto
  TIMEOUT 240 LABELS reliability)
if(TARGET osd-targetd)
  target_compile_definitions(test_rel_load PRIVATE
    OSD_TARGETD_PATH="$<TARGET_FILE:osd-targetd>")
  add_dependencies(test_rel_load osd-targetd)
endif()

osd_add_check_test(NAME test_rel_limits
  SOURCES test_rel_limits.c rel_env.c ${PROJECT_SOURCE_DIR}/tests/common/daemon_wait.c
  LIBS osdfs_static osdtarget_static osd_static OpenSSL::Crypto
  TIMEOUT 240 LABELS reliability)
if(TARGET osd-targetd)
  target_compile_definitions(test_rel_limits PRIVATE
    OSD_TARGETD_PATH="$<TARGET_FILE:osd-targetd>")
  add_dependencies(test_rel_limits osd-targetd)
endif()
