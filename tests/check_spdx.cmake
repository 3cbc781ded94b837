# SPDX-License-Identifier: MIT
# Driver of license.spdx: every C++ file, CMake file and script of the project names its license
# in its first lines, and the license's text is at the top.
if(NOT EXISTS ${ROOT}/LICENSE)
  message(FATAL_ERROR "LICENSE is missing")
endif()
set(patterns)
foreach(dir src include apps examples tests cmake scripts .ci)
  list(APPEND patterns ${ROOT}/${dir}/*.cpp ${ROOT}/${dir}/*.hpp ${ROOT}/${dir}/CMakeLists.txt
       ${ROOT}/${dir}/*.cmake ${ROOT}/${dir}/*.sh)
endforeach()
file(GLOB_RECURSE files ${patterns})
list(APPEND files ${ROOT}/CMakeLists.txt ${ROOT}/scripts/cluster ${ROOT}/scripts/docs
     ${ROOT}/scripts/plot ${ROOT}/scripts/sloc ${ROOT}/scripts/format ${ROOT}/scripts/tidy
     ${ROOT}/.ci/run)
set(missing)
foreach(f IN LISTS files)
  file(STRINGS ${f} head LIMIT_COUNT 3)
  if(NOT head MATCHES "SPDX-License-Identifier: MIT")
    list(APPEND missing ${f})
  endif()
endforeach()
list(LENGTH files checked)
if(missing)
  list(JOIN missing "\n  " text)
  message(FATAL_ERROR "files without `SPDX-License-Identifier: MIT` in their first lines:\n  ${text}")
endif()
message(STATUS "${checked} files carry their license")
