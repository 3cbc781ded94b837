# SPDX-License-Identifier: MIT
# Test helpers: mailroom_add_mpi_test runs a program under mpiexec at several PE counts (one ctest
# entry each, with a timeout); mailroom_add_neg_test checks that a program fails to compile with
# the expected message.
include_guard()

# Which launcher runs the tests (MAILROOM_MPIEXEC_KIND: openmpi, mpich or other), and which MPI
# the library is built against (its mpi.h). They must be the same MPI: a program run by another
# MPI's mpiexec starts as N separate one-PE jobs, and most tests would pass that way.
execute_process(COMMAND ${MPIEXEC_EXECUTABLE} --version OUTPUT_VARIABLE _mailroom_mpiexec_version
                ERROR_QUIET)
if(_mailroom_mpiexec_version MATCHES "Open MPI|OpenRTE")
  set(MAILROOM_MPIEXEC_KIND openmpi)
elseif(_mailroom_mpiexec_version MATCHES "HYDRA")
  set(MAILROOM_MPIEXEC_KIND mpich)
else()
  set(MAILROOM_MPIEXEC_KIND other)
endif()
set(_mailroom_mpi_kind other)
if(EXISTS "${MPI_CXX_HEADER_DIR}/mpi.h")
  file(STRINGS "${MPI_CXX_HEADER_DIR}/mpi.h" _mailroom_mpi_h REGEX "#define (OPEN_MPI|MPICH_VERSION) ")
  if(_mailroom_mpi_h MATCHES "OPEN_MPI")
    set(_mailroom_mpi_kind openmpi)
  elseif(_mailroom_mpi_h MATCHES "MPICH_VERSION")
    set(_mailroom_mpi_kind mpich)
  endif()
endif()
if(NOT _mailroom_mpi_kind STREQUAL "other" AND NOT MAILROOM_MPIEXEC_KIND STREQUAL "other"
   AND NOT _mailroom_mpi_kind STREQUAL MAILROOM_MPIEXEC_KIND)
  message(FATAL_ERROR "mailroom is built against ${_mailroom_mpi_kind} (${MPI_CXX_HEADER_DIR}) but "
          "the tests would run under ${MAILROOM_MPIEXEC_KIND}'s launcher (${MPIEXEC_EXECUTABLE}): "
          "give the matching one with -DMPIEXEC_EXECUTABLE=")
endif()

# Open MPI needs --oversubscribe to run more ranks than cores, and refuses root unless told.
# (MPICH's hydra needs neither.)
set(MAILROOM_MPIEXEC_FLAGS "" CACHE STRING "Extra flags for mpiexec in tests")
if(MAILROOM_MPIEXEC_KIND STREQUAL "openmpi")
  set(_mailroom_oversubscribe --oversubscribe)
  set(_mailroom_mpi_env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
                        OMPI_MCA_rmaps_base_oversubscribe=1)
endif()

# mailroom_add_mpi_test(name SOURCES a.cpp ... | TARGET existing-target
#                       RANKS 1 2 3 4 [ARGS ...] [TIMEOUT s] [LIBS ...]
#                       [WILL_FAIL_WITH regex [FORBID regex]] [ENV VAR=value ...] [SERIAL])
# SERIAL: ctest runs it alone (a test whose PEs wait inside MPI for each other, which MPI may do
# by spinning: beside another job on few cores, each wait lasts until the other is scheduled).
function(mailroom_add_mpi_test name)
  cmake_parse_arguments(T "SERIAL" "TIMEOUT;WILL_FAIL_WITH;FORBID;TARGET"
                        "SOURCES;RANKS;ARGS;LIBS;ENV" ${ARGN})
  set(target ${name})
  if(T_TARGET)
    set(target ${T_TARGET})
  endif()
  if(NOT T_RANKS)
    set(T_RANKS 1 2 3 4)
  endif()
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 120)
  endif()
  if(MAILROOM_SANITIZE)
    math(EXPR T_TIMEOUT "${T_TIMEOUT} * 3")  # sanitized programs run several times slower
  endif()
  if(T_SOURCES)
    add_executable(${name} ${T_SOURCES})
    target_link_libraries(${name} PRIVATE mailroom::mailroom mailroom_options ${T_LIBS})
    # The shared precompiled mailroom.hpp (tests/CMakeLists.txt) needs the same flags: not with
    # other libraries, which may add definitions (clang refuses a header built without them).
    if(TARGET mailroom_test_pch AND NOT T_LIBS)
      target_precompile_headers(${name} REUSE_FROM mailroom_test_pch)
    endif()
  endif()
  # The test's runs at 3 PEs and more are labelled `many_pes` when it also runs at 1 or 2,
  # which take the same paths: the quicker tiers of scripts/test.sh (the MPICH and sanitizer
  # builds) leave them out. A test that runs only at 3 or more keeps all its runs.
  # Likewise its run at 1 PE is labelled `one_pe` when it also runs at 2: the 2-PE run sends to
  # its own PE too, and the MPICH and sanitizer builds' default tier runs that one only.
  set(_small FALSE)
  set(_two FALSE)
  foreach(np IN LISTS T_RANKS)
    if(np LESS_EQUAL 2)
      set(_small TRUE)
    endif()
    if(np EQUAL 2)
      set(_two TRUE)
    endif()
  endforeach()
  foreach(np IN LISTS T_RANKS)
    set(_labels mpi)
    if(_small AND np GREATER 2)
      list(APPEND _labels many_pes)
    endif()
    if(_two AND np EQUAL 1)
      list(APPEND _labels one_pe)
    endif()
    if(T_WILL_FAIL_WITH)
      # The job must fail and print the expected message. Failing includes the launcher dying
      # of a signal: MPICH's hydra may get SIGPIPE when a process stops before MPI_Init (an
      # error before the runtime exists), which ctest's WILL_FAIL would count as a test failure.
      add_test(NAME ${name}.np${np}
               COMMAND ${CMAKE_COMMAND} -DCMD=$<TARGET_FILE:${target}> -DNP=${np}
                       -DMPIEXEC=${MPIEXEC_EXECUTABLE} "-DFLAGS=${_mailroom_oversubscribe}"
                       "-DARGS=${T_ARGS}" "-DEXPECT=${T_WILL_FAIL_WITH}" "-DFORBID=${T_FORBID}"
                       -P ${PROJECT_SOURCE_DIR}/cmake/expect_failure.cmake)
    else()
      add_test(NAME ${name}.np${np}
               COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${np}
                       ${_mailroom_oversubscribe} ${MAILROOM_MPIEXEC_FLAGS} ${MPIEXEC_PREFLAGS}
                       $<TARGET_FILE:${target}> ${MPIEXEC_POSTFLAGS} ${T_ARGS})
    endif()
    set_tests_properties(${name}.np${np} PROPERTIES TIMEOUT ${T_TIMEOUT} PROCESSORS 1
                         ENVIRONMENT "${_mailroom_mpi_env};${T_ENV}" LABELS "${_labels}")
    if(T_SERIAL)
      set_tests_properties(${name}.np${np} PROPERTIES RUN_SERIAL TRUE)
    endif()
  endforeach()
endfunction()

# mailroom_add_neg_test(name SOURCE file.cpp EXPECT regex): the file must not compile, and the
# compiler must say EXPECT (the static_assert's message). The test runs the compiler itself, with
# the include directories, definitions and options a target linked to mailroom would get, and
# only checks (-fsyntax-only: a static_assert fails in the checking, before code is made): no
# build in the shared tree, so the tests run side by side.
function(mailroom_add_neg_test name)
  cmake_parse_arguments(T "" "SOURCE;EXPECT" "" ${ARGN})
  add_library(${name} INTERFACE)  # (carries the usage requirements the command reads)
  target_link_libraries(${name} INTERFACE mailroom::mailroom)
  # (without the compiler's own directories, as CMake leaves them out of its compile lines)
  set(implicit)
  foreach(dir IN LISTS CMAKE_CXX_IMPLICIT_INCLUDE_DIRECTORIES)
    string(REGEX REPLACE "([][+.*?^$()|\\])" "\\\\\\1" dir "${dir}")
    list(APPEND implicit "^${dir}$")
  endforeach()
  list(JOIN implicit "|" implicit)
  set(includes "$<TARGET_PROPERTY:${name},INTERFACE_INCLUDE_DIRECTORIES>")
  if(implicit)
    set(includes "$<FILTER:${includes},EXCLUDE,${implicit}>")
  endif()
  set(defines "$<TARGET_PROPERTY:${name},INTERFACE_COMPILE_DEFINITIONS>")
  add_test(NAME ${name}
           COMMAND ${CMAKE_CXX_COMPILER} ${CMAKE_CXX20_STANDARD_COMPILE_OPTION} -fsyntax-only
                   "$<$<BOOL:${includes}>:-I$<JOIN:${includes},;-I>>"
                   "$<$<BOOL:${defines}>:-D$<JOIN:${defines},;-D>>"
                   "$<TARGET_PROPERTY:${name},INTERFACE_COMPILE_OPTIONS>"
                   ${CMAKE_CURRENT_SOURCE_DIR}/${T_SOURCE}
           COMMAND_EXPAND_LISTS)
  set_tests_properties(${name} PROPERTIES PASS_REGULAR_EXPRESSION "${T_EXPECT}" LABELS neg)
endfunction()
