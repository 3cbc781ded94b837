# SPDX-License-Identifier: MIT
# Driver of shmem.mix: builds shmem_mix.cpp with OpenSHMEM's compiler wrapper (oshc++) against the
# built library, then runs it at 2 PEs with oshrun. Without OpenSHMEM it says so and is skipped.
if(NOT OSHCXX OR NOT OSHRUN)
  message("skipped: no OpenSHMEM here (oshc++ and oshrun, from Open MPI)")
  return()
endif()
function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${ARGN}\n${out}\n${err}")
  endif()
  message("${out}")
endfunction()
run(${OSHCXX} -std=c++20 -O2 -I${INCLUDE} ${SOURCE} -o ${OUT} ${LIB} ${FMT} -pthread)
run(${OSHRUN} -n 2 --oversubscribe ${OUT})
