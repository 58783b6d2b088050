# Backend tests (libosdfs/backends). Included by tests/fs/CMakeLists.txt.
osd_add_check_test(NAME test_backend_api
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_backend_api.c
  LIBS osdfs_static TIMEOUT 60 LABELS fs backend)
osd_add_check_test(NAME test_backend_mem
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_backend_mem.c
  LIBS osdfs_static TIMEOUT 60 LABELS fs backend)
# Allocation-failure injection: the test wraps the library's allocator calls.
target_link_options(test_backend_mem PRIVATE
  -Wl,--wrap=malloc -Wl,--wrap=calloc -Wl,--wrap=realloc)

# One conformance suite; argv[1] picks the backend. The executable's own test
# (no argument) runs the mem backend; the osd variants are added below.
osd_add_check_test(NAME test_backend_conformance
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_backend_conformance.c
          ${CMAKE_CURRENT_LIST_DIR}/backend_factory.c
  LIBS osdfs_static TIMEOUT 120 LABELS fs backend)
target_link_libraries(test_backend_conformance PRIVATE osdtarget_static)
target_compile_definitions(test_backend_conformance PRIVATE OSDFS_TEST_OSD)
foreach(v osd1 osd2 osd2-evloop)
  add_test(NAME test_backend_conformance_${v} COMMAND test_backend_conformance ${v})
  set_tests_properties(test_backend_conformance_${v} PROPERTIES TIMEOUT 120
    ENVIRONMENT "CK_DEFAULT_TIMEOUT=120;OSD_SOURCE_DIR=${PROJECT_SOURCE_DIR}"
    SKIP_RETURN_CODE 77 LABELS "fs;backend")
endforeach()
# The layout backend (libosdfs/layout): RAID 5 over four mem devices and
# over three OSD-2 loopback targets.
foreach(v layout layout-osd2)
  add_test(NAME test_backend_conformance_${v} COMMAND test_backend_conformance ${v})
  set_tests_properties(test_backend_conformance_${v} PROPERTIES TIMEOUT 120
    ENVIRONMENT "CK_DEFAULT_TIMEOUT=120;OSD_SOURCE_DIR=${PROJECT_SOURCE_DIR}"
    SKIP_RETURN_CODE 77 LABELS "fs;backend;layout")
endforeach()

osd_add_check_test(NAME test_backend_osd
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_backend_osd.c
          ${CMAKE_CURRENT_LIST_DIR}/backend_factory.c
  LIBS osdfs_static osdtarget_static TIMEOUT 60 LABELS fs backend)
target_compile_definitions(test_backend_osd PRIVATE OSDFS_TEST_OSD)

# The filesystem suites (test_fs_*, defined in CMakeLists.txt after this file)
# on the layout backend: RAID 5 over four mem devices.
foreach(t ops dir format faults lease)
  add_test(NAME test_fs_${t}_layout COMMAND test_fs_${t})
  set_tests_properties(test_fs_${t}_layout PROPERTIES TIMEOUT 300
    ENVIRONMENT "OSDFS_TEST_BACKEND=layout;CK_DEFAULT_TIMEOUT=300"
    SKIP_RETURN_CODE 77 LABELS "fs;layout")
endforeach()
