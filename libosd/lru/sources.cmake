# The hash table with an LRU list behind every bounded cache (osdfs blocks
# and inodes, the target's capability keys): in osd_wire for the shared
# libraries, and in libosd.a so the static libraries find it too.
list(APPEND LIBOSD_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/lru.c)
list(APPEND OSD_WIRE_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/lru.c)
