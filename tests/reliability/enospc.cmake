# A full host filesystem that heals: the store on a small tmpfs (root only,
# in a private mount namespace; skipped otherwise).
osd_add_check_test(NAME test_rel_enospc
  SOURCES test_rel_enospc.c ${PROJECT_SOURCE_DIR}/tests/target/harness.c
  LIBS osdtarget osd
  TIMEOUT 120 LABELS reliability)
target_include_directories(test_rel_enospc PRIVATE ${PROJECT_SOURCE_DIR}/libosd)
