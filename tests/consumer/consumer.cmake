# Run with cmake -P (see CMakeLists.txt). Installs BUILD_DIR into a fresh
# temporary prefix, then acts as a user of the installed package:
#   1. cc $(pkg-config --cflags --libs libosdtarget libosd) sync_client.c
#   2. a CMake project using find_package(osd) (project/CMakeLists.txt)
#   3. runs both clients (and the osdfs one) against temporary stores,
#      checking with ldd that they load the installed libraries
#   4. SONAMEs are lib<name>.so.0 and each library exports only its prefix.
#   5. the installed tools run from the prefix without LD_LIBRARY_PATH
#      (RUNPATH relative to the binary), the internal helper is under
#      libexec/osd, and open_path (osdfs_open_path()) reads a file of a CAPKEY
#      filesystem the installed osdfs made; a static build of it needs none
#      of the suite's shared libraries.
# Prints OSD-CONSUMER-SKIP (CTest: skipped) when pkg-config, nm or readelf is missing.
cmake_minimum_required(VERSION 3.16)

foreach(tool PKG_CONFIG NM READELF)
  if(NOT ${tool} OR NOT EXISTS "${${tool}}")
    # CTest reports the test as skipped (SKIP_REGULAR_EXPRESSION).
    message("OSD-CONSUMER-SKIP: ${tool} not found")
    return()
  endif()
endforeach()

if(DEFINED ENV{TMPDIR} AND IS_DIRECTORY "$ENV{TMPDIR}")
  set(tmp_base "$ENV{TMPDIR}")
else()
  set(tmp_base /tmp)
endif()
string(RANDOM LENGTH 10 suffix)
set(TMP "${tmp_base}/osd-consumer-${suffix}")
file(MAKE_DIRECTORY "${TMP}")
set(PREFIX "${TMP}/prefix")
set(LIB "${PREFIX}/${LIBDIR}")

# Fail: remove the temporary tree, then stop with the reason.
function(fail why)
  file(REMOVE_RECURSE "${TMP}")
  message(FATAL_ERROR "consumer test: ${why}")
endfunction()

# Run a command; fail with its output unless it exits 0. OUT gets stdout.
function(run out)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE o ERROR_VARIABLE e
    OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(NOT rc STREQUAL "0")
    string(REPLACE ";" " " cmd "${ARGN}")
    fail("'${cmd}' exited ${rc}\n${o}\n${e}")
  endif()
  set(${out} "${o}" PARENT_SCOPE)
endfunction()

# 0. Install everything, as a packager would.
run(o "${CMAKE_COMMAND}" --install "${BUILD_DIR}" --prefix "${PREFIX}")
foreach(f include/osd/osd.h include/osdtarget/target.h include/osdfs/osdfs.h
          ${LIBDIR}/pkgconfig/libosd.pc ${LIBDIR}/cmake/osd/osdConfig.cmake
          ${LIBDIR}/libosd.a ${LIBDIR}/libosdtarget.a ${LIBDIR}/libosdfs.a)
  if(NOT EXISTS "${PREFIX}/${f}")
    fail("${f} was not installed")
  endif()
endforeach()
if(MANDIR)
  foreach(page osdctl osdfs osdfs-mount osd-targetd osd-bench)
    if(NOT EXISTS "${PREFIX}/${MANDIR}/man1/${page}.1")
      fail("${MANDIR}/man1/${page}.1 was not installed")
    endif()
  endforeach()
endif()
message("installed into ${PREFIX}")

# 1. pkg-config, exactly as the documentation tells users.
set(ENV{PKG_CONFIG_PATH} "${LIB}/pkgconfig")
run(flags "${PKG_CONFIG}" --cflags --libs libosdtarget libosd)
separate_arguments(flags UNIX_COMMAND "${flags}")
separate_arguments(extra UNIX_COMMAND "${EXTRA_CFLAGS}")
run(o "${CC}" -std=c11 -Wall -Werror ${extra} "${EXAMPLES_DIR}/sync_client.c" ${flags}
  -o "${TMP}/pc_sync_client")
run(flags "${PKG_CONFIG}" --cflags --libs libosdfs)
separate_arguments(flags UNIX_COMMAND "${flags}")
run(o "${CC}" -std=c11 -Wall -Werror ${extra} "${EXAMPLES_DIR}/custom_backend.c" ${flags}
  -o "${TMP}/pc_custom_backend")
run(o "${CC}" -std=c11 -Wall -Werror ${extra} "${EXAMPLES_DIR}/open_path.c" ${flags}
  -o "${TMP}/pc_open_path")
message("built with pkg-config")

# 2. find_package(osd) from a separate CMake project.
run(o "${CMAKE_COMMAND}" -S "${PROJECT_DIR}" -B "${TMP}/cmake-build" -G "${GENERATOR}"
  "-DCMAKE_PREFIX_PATH=${PREFIX}" "-DCMAKE_C_COMPILER=${CC}"
  "-DCMAKE_C_FLAGS=${EXTRA_CFLAGS}"
  "-DOSD_EXAMPLES_DIR=${EXAMPLES_DIR}")
run(o "${CMAKE_COMMAND}" --build "${TMP}/cmake-build")
message("built with find_package(osd)")

# 5a. The installed tools start from the prefix alone: no LD_LIBRARY_PATH,
# no ldconfig (a RUNPATH relative to each binary finds the libraries).
unset(ENV{LD_LIBRARY_PATH})
set(tools osdctl osdfs osd-targetd osd-bench)
if(EXISTS "${PREFIX}/bin/osdfs-mount")
  list(APPEND tools osdfs-mount)
endif()
foreach(tool ${tools})
  if(NOT EXISTS "${PREFIX}/bin/${tool}")
    fail("bin/${tool} was not installed")
  endif()
  run(dyn "${READELF}" -d "${PREFIX}/bin/${tool}")
  if(NOT dyn MATCHES "RUNPATH\\)[^\n]*\\[\\$ORIGIN/")
    fail("bin/${tool} has no RUNPATH relative to itself:\n${dyn}")
  endif()
  run(o "${PREFIX}/bin/${tool}" --version)
  if(NOT o MATCHES "^${tool} [0-9]+\\.[0-9]+\\.[0-9]+")
    fail("bin/${tool} --version printed:\n${o}")
  endif()
endforeach()
# Internal helpers live under libexec/osd, never in bin/.
if(EXISTS "${PREFIX}/bin/osd-bench-passthrough")
  fail("the internal helper osd-bench-passthrough was installed into bin/")
endif()
if(EXISTS "${PREFIX}/bin/osdfs-mount" AND
   NOT EXISTS "${PREFIX}/libexec/osd/osd-bench-passthrough")
  fail("libexec/osd/osd-bench-passthrough was not installed")
endif()
message("installed tools run without LD_LIBRARY_PATH: ${tools}")
# The systemd unit names the daemon where this prefix put it.
set(unit "${PREFIX}/lib/systemd/system/osd-targetd.service")
if(NOT EXISTS "${unit}")
  fail("lib/systemd/system/osd-targetd.service was not installed")
endif()
file(READ "${unit}" text)
string(FIND "${text}" "\nExecStart=${PREFIX}/bin/osd-targetd --syslog " at)
if(at LESS 0)
  fail("the unit does not start ${PREFIX}/bin/osd-targetd --syslog:\n${text}")
endif()
string(FIND "${text}" "EnvironmentFile=-${PREFIX}/etc/default/osd-targetd\n" at)
if(at LESS 0)
  fail("the unit's environment file is not under the prefix:\n${text}")
endif()

# 5b. A CAPKEY filesystem made by the installed osdfs, read through
# osdfs_open_path() by the consumers (the static one before any
# LD_LIBRARY_PATH is set: it must need none of our shared libraries).
file(WRITE "${TMP}/root.key" "00112233445566778899aabbccddeeff00112233\n")
file(CHMOD "${TMP}/root.key" PERMISSIONS OWNER_READ OWNER_WRITE)
file(WRITE "${TMP}/hello" "hello from osdfs\n")
set(fs --target "${TMP}/capkey.store" --security capkey --key-file "${TMP}/root.key")
run(o "${PREFIX}/bin/osdfs" ${fs} mkfs)
run(o "${PREFIX}/bin/osdfs" ${fs} put "${TMP}/hello" /hello)
run(deps "${READELF}" -d "${TMP}/cmake-build/cmake_open_path_static")
if(deps MATCHES "NEEDED[^\n]*libosd")
  fail("osd::osdfs_static links a shared library of the suite:\n${deps}")
endif()
run(o "${TMP}/cmake-build/cmake_open_path_static" "${TMP}/capkey.store" capkey
  "${TMP}/root.key" /hello)
if(NOT o STREQUAL "hello from osdfs")
  fail("cmake_open_path_static read '${o}'")
endif()
message("osd::osdfs_static: static all the way down; read the CAPKEY filesystem")

# 3. Run them on the installed libraries only.
set(ENV{LD_LIBRARY_PATH} "${LIB}")
foreach(exe pc_sync_client cmake-build/cmake_sync_client)
  run(deps ldd "${TMP}/${exe}")
  if(NOT deps MATCHES "libosd\\.so\\.0 => ${LIB}/libosd\\.so\\.0" OR
     NOT deps MATCHES "libosdtarget\\.so\\.0 => ${LIB}/libosdtarget\\.so\\.0")
    fail("${exe} does not load the installed libraries:\n${deps}")
  endif()
  string(MAKE_C_IDENTIFIER "${exe}" store)
  run(o "${TMP}/${exe}" "${TMP}/${store}.store")
  if(NOT o MATCHES "sync_client: OK")
    fail("${exe} printed:\n${o}")
  endif()
endforeach()
foreach(exe pc_open_path cmake-build/cmake_open_path)
  run(o "${TMP}/${exe}" "${TMP}/capkey.store" capkey "${TMP}/root.key" /hello)
  if(NOT o STREQUAL "hello from osdfs")
    fail("${exe} read '${o}' from the CAPKEY filesystem osdfs made")
  endif()
endforeach()
foreach(exe pc_custom_backend cmake-build/cmake_custom_backend)
  run(o "${TMP}/${exe}")
  if(NOT o MATCHES "custom_backend: OK")
    fail("${exe} printed:\n${o}")
  endif()
endforeach()
message("ran the clients")

# 4. ABI hygiene: SONAME and exported names (plus the version node, type A).
foreach(pair "osd;osd_" "osdtarget;osd_target_" "osdfs;osdfs_")
  list(GET pair 0 name)
  list(GET pair 1 prefix)
  run(dyn "${READELF}" -d "${LIB}/lib${name}.so")
  if(NOT dyn MATCHES "Library soname: \\[lib${name}\\.so\\.0\\]")
    fail("lib${name}.so has the wrong SONAME:\n${dyn}")
  endif()
  run(syms "${NM}" -D --defined-only "${LIB}/lib${name}.so")
  string(REPLACE "\n" ";" syms "${syms}")
  set(count 0)
  foreach(line IN LISTS syms)
    if(NOT line MATCHES "^[0-9a-fA-F]* *([A-Za-z]) ([^@ ]+)")
      fail("unexpected nm line in lib${name}.so: ${line}")
    endif()
    set(type "${CMAKE_MATCH_1}")
    set(sym "${CMAKE_MATCH_2}")
    if(type STREQUAL "A" AND sym MATCHES "^LIB[A-Z]+_[0-9]+$")
      continue()
    endif()
    string(LENGTH "${prefix}" plen)
    string(SUBSTRING "${sym}" 0 ${plen} head)
    if(NOT head STREQUAL prefix)
      fail("lib${name}.so exports ${sym}, outside ${prefix}*")
    endif()
    math(EXPR count "${count} + 1")
  endforeach()
  if(count EQUAL 0)
    fail("lib${name}.so exports nothing")
  endif()
  message("lib${name}.so: SONAME lib${name}.so.0, ${count} ${prefix}* symbols")
endforeach()

file(REMOVE_RECURSE "${TMP}")
message("consumer test: OK")
