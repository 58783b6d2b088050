# Top-level files of libosdtarget; exec/, security/ and store/ list their own.
set(OSDTARGET_TOP_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/target.c
  ${CMAKE_CURRENT_LIST_DIR}/response.c
  ${CMAKE_CURRENT_LIST_DIR}/scsi.c
  ${CMAKE_CURRENT_LIST_DIR}/loopback.c
  ${CMAKE_CURRENT_LIST_DIR}/version.c
  ${CMAKE_CURRENT_LIST_DIR}/open.c)
# libosd's big-endian helpers (proto/byteorder.h), searched after our own folders.
set_property(SOURCE ${OSDTARGET_TOP_SOURCES} APPEND PROPERTY
  INCLUDE_DIRECTORIES ${PROJECT_SOURCE_DIR}/libosd)
list(APPEND OSDTARGET_SOURCES ${OSDTARGET_TOP_SOURCES})
