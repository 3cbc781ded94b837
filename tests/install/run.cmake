# SPDX-License-Identifier: MIT
# Driver of install.find_package: install, configure the consumer, build it, run it.
include(${CMAKE_CURRENT_LIST_DIR}/run_helpers.cmake)
file(REMOVE_RECURSE ${PREFIX} ${CONSUMER_BUILD})
run(${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${PREFIX})
# Only the API is installed: every header an installed header includes is installed too, and the
# transport's (the MPI boundary, internal) is not.
if(EXISTS ${PREFIX}/include/mailroom/transport.hpp)
  message(FATAL_ERROR "the transport's header was installed")
endif()
file(GLOB_RECURSE installed RELATIVE ${PREFIX}/include ${PREFIX}/include/mailroom/*.hpp)
foreach(h IN LISTS installed)
  file(STRINGS ${PREFIX}/include/${h} lines REGEX "^#include \"")
  foreach(line IN LISTS lines)
    string(REGEX REPLACE "^#include \"([^\"]+)\".*" "\\1" inc "${line}")
    if(NOT EXISTS ${PREFIX}/include/${inc})
      message(FATAL_ERROR "${h} includes ${inc}, which is not installed")
    endif()
  endforeach()
endforeach()
# Nothing installed names the machine that built it: no path of the source or build tree.
file(GLOB_RECURSE every_file ${PREFIX}/*)
foreach(f IN LISTS every_file)
  if(f MATCHES "\\.(a|so)$")
    continue()
  endif()
  file(READ ${f} text)
  foreach(tree IN ITEMS ${SOURCE_DIR} ${BUILD_DIR})
    string(FIND "${text}" "${tree}" at)
    if(NOT at EQUAL -1)
      message(FATAL_ERROR "${f} names ${tree}, a path of the machine that built it")
    endif()
  endforeach()
endforeach()
run(${CMAKE_COMMAND} -S ${SOURCE} -B ${CONSUMER_BUILD} -G ${GENERATOR}
    -DCMAKE_CXX_COMPILER=${CXX} -DCMAKE_PREFIX_PATH=${PREFIX} -DMPI_CXX_COMPILER=${MPI_CXX_COMPILER})
run(${CMAKE_COMMAND} --build ${CONSUMER_BUILD})
run(${CONSUMER_BUILD}/consumer)
# mailroomConfigVersion.cmake refuses a version it is not: a newer minor (0.x releases may break
# the API) or major.
foreach(want 99.0 0.99)
  execute_process(COMMAND ${CMAKE_COMMAND} -S ${SOURCE} -B ${CONSUMER_BUILD}-${want}
                          -G ${GENERATOR} -DCMAKE_CXX_COMPILER=${CXX} -DCMAKE_PREFIX_PATH=${PREFIX}
                          -DMPI_CXX_COMPILER=${MPI_CXX_COMPILER} -DMAILROOM_WANT=${want}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(rc EQUAL 0 OR NOT "${err}" MATCHES "not suitable|compatible")
    message(FATAL_ERROR "find_package(mailroom ${want}) was not refused (${rc}):\n${out}\n${err}")
  endif()
  file(REMOVE_RECURSE ${CONSUMER_BUILD}-${want})
endforeach()
# pkg-config, with the MPI compiler wrapper, as a Makefile would.
set(ENV{PKG_CONFIG_PATH} ${PREFIX}/${LIBDIR}/pkgconfig)
execute_process(COMMAND pkg-config --cflags --libs mailroom RESULT_VARIABLE rc
                OUTPUT_VARIABLE flags ERROR_VARIABLE err OUTPUT_STRIP_TRAILING_WHITESPACE)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "pkg-config --cflags --libs mailroom failed: ${err}")
endif()
separate_arguments(flags UNIX_COMMAND "${flags}")
# The wrapper over the compiler mailroom was built with (Open MPI's and MPICH's wrappers obey these).
set(ENV{OMPI_CXX} ${CXX})
set(ENV{MPICH_CXX} ${CXX})
run(${MPI_CXX_COMPILER} ${SOURCE}/main.cpp -o ${CONSUMER_BUILD}/consumer_pc ${flags})
run(${CONSUMER_BUILD}/consumer_pc)
message(STATUS "installed mailroom found with find_package and with pkg-config, built against "
               "and run")
