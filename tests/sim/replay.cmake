# SPDX-License-Identifier: MIT
# The same seed replays a simulated run; another seed changes the order of delivery.
# CMD: the sim_test program; SPEC: the machine without a seed (e.g. 64x8).
function(run_digest seed out_var)
  execute_process(COMMAND ${CMAKE_COMMAND} -E env MAILROOM_SIM=${SPEC},seed=${seed} ${CMD} order 200
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 120)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "seed ${seed}: exit ${rc}\n${out}\n${err}")
  endif()
  if(NOT out MATCHES "digest ([0-9a-f]+)")
    message(FATAL_ERROR "seed ${seed}: no digest in the output:\n${out}\n${err}")
  endif()
  set(${out_var} ${CMAKE_MATCH_1} PARENT_SCOPE)
endfunction()
run_digest(1 a)
run_digest(1 b)
run_digest(2 c)
if(NOT a STREQUAL b)
  message(FATAL_ERROR "seed 1 did not replay: digests ${a} and ${b}")
endif()
if(a STREQUAL c)
  message(FATAL_ERROR "seeds 1 and 2 handled every message in the same order (digest ${a})")
endif()
message(STATUS "seed 1 replayed (${a}); seed 2 differs (${c})")
