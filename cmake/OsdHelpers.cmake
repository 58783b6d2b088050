# osd_add_library(NAME <name> SOURCES ... [SHARED_STATIC_LIBS <lib>...]
#                 [PUBLIC_LIBS ...] [PRIVATE_LIBS ...]
#                 PC_DESCRIPTION <text> [PC_REQUIRES ...] [PC_REQUIRES_PRIVATE ...])
#
# Builds <name> three ways from one object library: <name>_obj (for tests and
# fuzzers, which reach internals), a shared library with hidden symbols and a
# versioned SONAME, and a static library. Installs both, exports them to the
# osd:: namespace, and generates lib<name>.pc.
function(osd_add_library)
  cmake_parse_arguments(A "" "NAME;PC_DESCRIPTION;VERSION_SCRIPT"
    "SOURCES;SHARED_STATIC_LIBS;PUBLIC_LIBS;PRIVATE_LIBS;PC_REQUIRES;PC_REQUIRES_PRIVATE;PC_LIBS_PRIVATE" ${ARGN})
  set(n ${A_NAME})
  if(NOT A_SOURCES)
    message(FATAL_ERROR "library ${n} has no sources")
  endif()
  add_library(${n}_obj OBJECT ${A_SOURCES})
  target_include_directories(${n}_obj PUBLIC
    $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>
    $<BUILD_INTERFACE:${OSD_GENERATED_INCLUDE_DIR}>
    $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>
    PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
  target_compile_definitions(${n}_obj PRIVATE OSD_BUILDING_LIBRARY _GNU_SOURCE)
  target_link_libraries(${n}_obj PUBLIC ${A_PUBLIC_LIBS} PRIVATE ${A_PRIVATE_LIBS})

  add_library(${n} SHARED $<TARGET_OBJECTS:${n}_obj>)
  # Internal static libraries linked into the shared library only (hidden
  # there); the static library finds the same code in libosd.a.
  foreach(l ${A_SHARED_STATIC_LIBS})
    target_link_libraries(${n} PRIVATE $<BUILD_INTERFACE:${l}>)
  endforeach()
  add_library(${n}_static STATIC $<TARGET_OBJECTS:${n}_obj>)
  # The static library is static all the way down: it depends on the static
  # variants of this project's libraries (osd -> osd_static).
  set(static_public)
  foreach(l ${A_PUBLIC_LIBS})
    if(TARGET ${l}_static)
      list(APPEND static_public ${l}_static)
    else()
      list(APPEND static_public ${l})
    endif()
  endforeach()
  target_link_libraries(${n} PUBLIC ${A_PUBLIC_LIBS} PRIVATE ${A_PRIVATE_LIBS})
  target_link_libraries(${n}_static PUBLIC ${static_public} PRIVATE ${A_PRIVATE_LIBS})
  foreach(t ${n} ${n}_static)
    target_include_directories(${t} PUBLIC
      $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>
      $<BUILD_INTERFACE:${OSD_GENERATED_INCLUDE_DIR}>
      $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
    set_target_properties(${t} PROPERTIES OUTPUT_NAME ${n})
  endforeach()
  set_target_properties(${n} PROPERTIES VERSION ${PROJECT_VERSION} SOVERSION ${OSD_SOVERSION}
    # Installed beside each other: one library finds another from its own directory.
    INSTALL_RPATH "\$ORIGIN")
  if(A_VERSION_SCRIPT)
    target_link_options(${n} PRIVATE -Wl,--version-script=${A_VERSION_SCRIPT})
    set_target_properties(${n} PROPERTIES LINK_DEPENDS ${A_VERSION_SCRIPT})
  endif()
  add_library(osd::${n} ALIAS ${n})
  install(TARGETS ${n} ${n}_static EXPORT osdTargets
    LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
    ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
    RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})

  # Relocatable .pc: the prefix is found relative to the file itself.
  file(RELATIVE_PATH PC_PREFIX_FROM_PCDIR
    /prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig /prefix)
  string(REGEX REPLACE "/$" "" PC_PREFIX_FROM_PCDIR "${PC_PREFIX_FROM_PCDIR}")
  set(PC_NAME lib${n})
  set(PC_LIB ${n})
  set(PC_DESCRIPTION "${A_PC_DESCRIPTION}")
  string(REPLACE ";" ", " PC_REQUIRES "${A_PC_REQUIRES}")
  string(REPLACE ";" ", " PC_REQUIRES_PRIVATE "${A_PC_REQUIRES_PRIVATE}")
  string(REPLACE ";" " " PC_LIBS_PRIVATE "${A_PC_LIBS_PRIVATE}")
  configure_file(${PROJECT_SOURCE_DIR}/cmake/pkgconfig.pc.in
    ${PROJECT_BINARY_DIR}/lib${n}.pc @ONLY)
  install(FILES ${PROJECT_BINARY_DIR}/lib${n}.pc
    DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
endfunction()

# osd_install_program(<target> [LIBEXEC])
#
# Installs a program into bin/ (or, with LIBEXEC, the suite's helper
# directory libexec/osd/, which the tools search) with a RUNPATH relative to
# the program, so an installed tree runs from any prefix without
# LD_LIBRARY_PATH or ldconfig.
set(OSD_INSTALL_HELPERDIR ${CMAKE_INSTALL_LIBEXECDIR}/osd)
function(osd_install_program t)
  cmake_parse_arguments(A "LIBEXEC" "" "" ${ARGN})
  set(dir ${CMAKE_INSTALL_BINDIR})
  if(A_LIBEXEC)
    set(dir ${OSD_INSTALL_HELPERDIR})
  endif()
  if(IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}" OR IS_ABSOLUTE "${dir}")
    set(rpath "${CMAKE_INSTALL_FULL_LIBDIR}")
  else()
    file(RELATIVE_PATH rel /prefix/${dir} /prefix/${CMAKE_INSTALL_LIBDIR})
    set(rpath "\$ORIGIN/${rel}")
  endif()
  set_target_properties(${t} PROPERTIES INSTALL_RPATH "${rpath}")
  install(TARGETS ${t} RUNTIME DESTINATION ${dir})
endfunction()

# osd_add_check_test(NAME <name> SOURCES ... LIBS ... [TIMEOUT s] [LABELS ...])
function(osd_add_check_test)
  cmake_parse_arguments(A "" "NAME;TIMEOUT" "SOURCES;LIBS;LABELS" ${ARGN})
  add_executable(${A_NAME} ${A_SOURCES})
  # osd_wire: the internals no library exports (PDU codec, CRC32C, iovec
  # helpers), for tests that reach them; only what a test uses is linked.
  target_link_libraries(${A_NAME} PRIVATE ${A_LIBS} osd_wire PkgConfig::CHECK Threads::Threads)
  target_compile_definitions(${A_NAME} PRIVATE _GNU_SOURCE)
  target_include_directories(${A_NAME} PRIVATE ${PROJECT_SOURCE_DIR}/tests/common)
  add_test(NAME ${A_NAME} COMMAND ${A_NAME})
  if(NOT A_TIMEOUT)
    set(A_TIMEOUT 300)
  endif()
  set_tests_properties(${A_NAME} PROPERTIES TIMEOUT ${A_TIMEOUT}
    ENVIRONMENT "CK_DEFAULT_TIMEOUT=${A_TIMEOUT};OSD_SOURCE_DIR=${PROJECT_SOURCE_DIR}"
    SKIP_RETURN_CODE 77)
  if(A_LABELS)
    set_tests_properties(${A_NAME} PROPERTIES LABELS "${A_LABELS}")
  endif()
endfunction()
