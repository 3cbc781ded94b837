# SPDX-License-Identifier: MIT
# Runs a job that must fail: passes when it exits non-zero and its output matches EXPECT (and,
# if FORBID is given, does not match FORBID).
# Under MPI: MPIEXEC, NP and FLAGS; without MPIEXEC the program runs by itself (the simulated
# machine), with SIM as MAILROOM_SIM.
separate_arguments(_flags UNIX_COMMAND "${FLAGS}")
if(MPIEXEC)
  set(_launch ${MPIEXEC} -n ${NP} ${_flags})
else()
  set(_launch ${CMAKE_COMMAND} -E env MAILROOM_SIM=${SIM})
endif()
# ARGS arrives as a CMake list: one element per argument.
execute_process(COMMAND ${_launch} ${CMD} ${ARGS}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 60)
if(rc EQUAL 0)
  message(FATAL_ERROR "expected a non-zero exit, got 0\n${out}\n${err}")
endif()
if(NOT "${out}${err}" MATCHES "${EXPECT}")
  message(FATAL_ERROR "exit ${rc}, but the output does not match '${EXPECT}':\n${out}\n${err}")
endif()
if(FORBID AND "${out}${err}" MATCHES "${FORBID}")
  message(FATAL_ERROR "exit ${rc}, but the output matches '${FORBID}':\n${out}\n${err}")
endif()
message(STATUS "exit ${rc} with the expected message")
