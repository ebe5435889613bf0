# The portable build: one binary for any Linux with glibc 2.17 or newer and nothing else installed.
# libelf, libdrm, libzstd and zlib come from their static archives, cJSON is compiled in from its
# source (SC_CJSON_SOURCE, fetched by tools/release.sh), and src/portable/glibc_floor.c keeps every
# glibc symbol at 2.17 or older; tools/glibc-floor.sh checks the result.

set(SC_CJSON_SOURCE "" CACHE PATH "cJSON's source directory (cJSON.c and cJSON.h)")
set(SC_GLIBC_FLOOR 2.17)
if(NOT EXISTS "${SC_CJSON_SOURCE}/cJSON.c")
  message(FATAL_ERROR "SC_PORTABLE needs -DSC_CJSON_SOURCE=DIR with cJSON.c (tools/release.sh fetches it)")
endif()
add_compile_definitions(SC_PORTABLE_BUILD SC_GLIBC_FLOOR="${SC_GLIBC_FLOOR}")

# A third-party library from its static archive, with the directory of its header (and that
# directory's subdirectory, for libdrm's <drm.h> beside <xf86drm.h>).
function(sc_static_library name archive header)
  find_library(SC_${name}_ARCHIVE NAMES ${archive} REQUIRED)
  find_path(SC_${name}_INCLUDE ${header} REQUIRED)
  set(dirs ${SC_${name}_INCLUDE})
  foreach(sub ${ARGN})
    list(APPEND dirs ${SC_${name}_INCLUDE}/${sub})
  endforeach()
  add_library(sc_static_${name} STATIC IMPORTED)
  set_target_properties(sc_static_${name} PROPERTIES IMPORTED_LOCATION ${SC_${name}_ARCHIVE}
    INTERFACE_INCLUDE_DIRECTORIES "${dirs}")
endfunction()
sc_static_library(zlib libz.a zlib.h)
sc_static_library(zstd libzstd.a zstd.h)
sc_static_library(libelf libelf.a libelf.h)
sc_static_library(libdrm libdrm.a xf86drm.h libdrm)
set_target_properties(sc_static_libelf PROPERTIES INTERFACE_LINK_LIBRARIES
  "sc_static_zstd;sc_static_zlib")

# cJSON from source, reached as <cjson/cJSON.h> like Debian's libcjson-dev installs it. It is not
# our code: it builds with its own warnings, never as errors.
configure_file(${SC_CJSON_SOURCE}/cJSON.h ${CMAKE_BINARY_DIR}/cjson-include/cjson/cJSON.h COPYONLY)
add_library(sc_cjson STATIC ${SC_CJSON_SOURCE}/cJSON.c)
target_include_directories(sc_cjson PUBLIC ${CMAKE_BINARY_DIR}/cjson-include
  PRIVATE ${CMAKE_BINARY_DIR}/cjson-include/cjson)
target_compile_options(sc_cjson PRIVATE -w)
target_link_libraries(sc_cjson PRIVATE m)

set(sc_third_party sc_cjson sc_static_libdrm sc_static_libelf sc_static_zstd sc_static_zlib m)

# The glibc floor of an executable: glibc_floor.c defines __wrap_<symbol> for each symbol whose
# default version is newer than the floor, and each is linked with --wrap=<symbol>; the list is
# read from the source so the two cannot drift apart. dlopen and friends lived in libdl.so.2
# before glibc 2.34: it is linked by name, or an old loader reports "undefined symbol: dlopen,
# version GLIBC_2.2.5". (Nothing uses pthread; were it used, its GLIBC_2.34 symbols would need the
# same pins and libpthread.so.0, and tools/glibc-floor.sh would say so.)
set(sc_floor_source ${CMAKE_SOURCE_DIR}/src/portable/glibc_floor.c)
file(STRINGS ${sc_floor_source} sc_floor_lines REGEX "__wrap_[A-Za-z0-9_]+\\(")
set(sc_floor_wraps "")
foreach(line ${sc_floor_lines})
  string(REGEX MATCH "__wrap_[A-Za-z0-9_]+" wrapped "${line}")
  string(REPLACE "__wrap_" "" wrapped "${wrapped}")
  list(APPEND sc_floor_wraps "-Wl,--wrap=${wrapped}")
endforeach()
list(REMOVE_DUPLICATES sc_floor_wraps)

function(sc_portable_executable target)
  target_sources(${target} PRIVATE ${sc_floor_source})
  target_link_options(${target} PRIVATE ${sc_floor_wraps})
  target_link_libraries(${target} PRIVATE -Wl,--push-state,--no-as-needed -l:libdl.so.2
                        -Wl,--pop-state)
endfunction()

# The floor's own check, built the same way: tools/release-check.sh runs it on an older glibc.
set(sc_floor_check ${CMAKE_SOURCE_DIR}/tests/portable)
add_library(sc_floor_calls_64 OBJECT ${sc_floor_check}/floor_calls.c)
target_compile_definitions(sc_floor_calls_64 PRIVATE FLOOR_CALLS=floor_calls_64 _FILE_OFFSET_BITS=64)
add_executable(floor_check ${sc_floor_check}/floor_check.c ${sc_floor_check}/floor_calls.c
               $<TARGET_OBJECTS:sc_floor_calls_64>)
target_compile_definitions(floor_check PRIVATE FLOOR_CALLS=floor_calls)
sc_portable_executable(floor_check)
