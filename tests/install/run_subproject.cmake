# SPDX-License-Identifier: MIT
# Driver of install.add_subdirectory.*: configure the subproject (MODE configure), or also build
# and run it (MODE build).
include(${CMAKE_CURRENT_LIST_DIR}/run_helpers.cmake)
file(REMOVE_RECURSE ${CONSUMER_BUILD})
run(${CMAKE_COMMAND} -S ${SOURCE} -B ${CONSUMER_BUILD} -G ${GENERATOR}
    -DCMAKE_CXX_COMPILER=${CXX} -DMPI_CXX_COMPILER=${MPI_CXX_COMPILER}
    -DMAILROOM_SOURCE=${MAILROOM_SOURCE} -DCMAKE_BUILD_TYPE=Release)
if(MODE STREQUAL "build")
  run(${CMAKE_COMMAND} --build ${CONSUMER_BUILD})
  run(${CONSUMER_BUILD}/consumer)
endif()
message(STATUS "mailroom taken in with add_subdirectory: ${MODE} passed")
