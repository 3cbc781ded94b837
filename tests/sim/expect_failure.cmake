# Runs a simulated job that must fail: passes when it exits non-zero and its output matches
# EXPECT. SPEC: MAILROOM_SIM; ARGS: a CMake list of arguments.
execute_process(COMMAND ${CMAKE_COMMAND} -E env MAILROOM_SIM=${SPEC} ${CMD} ${ARGS}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 120)
if(rc EQUAL 0)
  message(FATAL_ERROR "expected a non-zero exit, got 0\n${out}\n${err}")
endif()
if(NOT "${out}${err}" MATCHES "${EXPECT}")
  message(FATAL_ERROR "exit ${rc}, but the output does not match '${EXPECT}':\n${out}\n${err}")
endif()
message(STATUS "exit ${rc} with the expected message")
