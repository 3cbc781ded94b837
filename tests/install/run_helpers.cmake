# SPDX-License-Identifier: MIT
# What the install tests' drivers (run.cmake, run_subproject.cmake) share: run(), which runs a
# command and stops the test with its output if it fails.
function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${ARGN}\n${out}\n${err}")
  endif()
endfunction()
