# libosd/keys: the keyring (a root-key security manager) and opening a device
# by URL or on a transport with it.
list(APPEND LIBOSD_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/keyring.c
  ${CMAKE_CURRENT_LIST_DIR}/keyfile.c
  ${CMAKE_CURRENT_LIST_DIR}/open.c)
