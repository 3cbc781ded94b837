# SPDX-License-Identifier: MIT
# Runs mailroom-bench with bad arguments: passes when it exits with status 2 after printing one
# line that matches EXPECT.
# ARGS arrives as a CMake list: one element per argument.
execute_process(COMMAND ${CMD} ${ARGS} RESULT_VARIABLE rc OUTPUT_VARIABLE out
                ERROR_VARIABLE err TIMEOUT 30)
if(NOT rc EQUAL 2)
  message(FATAL_ERROR "expected exit status 2, got ${rc}\n${out}\n${err}")
endif()
string(STRIP "${err}" err)
if(err MATCHES "\n")
  message(FATAL_ERROR "expected one line on stderr, got:\n${err}")
endif()
if(NOT err MATCHES "${EXPECT}")
  message(FATAL_ERROR "stderr does not match '${EXPECT}': ${err}")
endif()
message(STATUS "status 2: ${err}")
