# SPDX-License-Identifier: MIT
# Driver of headers.public: what is installed (include/mailroom) is the public API and only what
# its inline code needs.
#  - A header under include/ includes only headers under include/mailroom (or the system's and
#    the dependencies'): never one of src/, which is not installed.
#  - Every header of include/mailroom/detail is included, directly or not, by a public header:
#    one that only the library's sources use is internal and belongs in src/.
#  - Public headers name no src/ path and no header that does not exist.
#  - The detail/ headers installed are those of an explicit list (allowed_detail).
#  - No installed header is over 600 lines.
cmake_minimum_required(VERSION 3.20)
set(inc ${ROOT}/include/mailroom)
file(GLOB public RELATIVE ${inc} ${inc}/*.hpp)
file(GLOB_RECURSE all RELATIVE ${inc} ${inc}/*.hpp)
file(GLOB_RECURSE internal RELATIVE ${ROOT}/src ${ROOT}/src/*.hpp)
set(errors)
set(edges)
foreach(h IN LISTS all)
  file(STRINGS ${inc}/${h} lines REGEX "^[ \t]*#[ \t]*include[ \t]*\"")
  foreach(line IN LISTS lines)
    string(REGEX REPLACE "^[ \t]*#[ \t]*include[ \t]*\"([^\"]+)\".*" "\\1" target "${line}")
    if(target MATCHES "^mailroom/(.+)$")
      set(rel ${CMAKE_MATCH_1})
      if(NOT EXISTS ${inc}/${rel})
        list(APPEND errors "${h} includes \"${target}\", which is not under include/")
      else()
        list(APPEND edges "${h}>${rel}")
      endif()
    elseif(target IN_LIST internal)
      list(APPEND errors "${h} includes \"${target}\", an internal header of src/")
    else()
      list(APPEND errors "${h} includes \"${target}\": include mailroom's headers as "
                         "\"mailroom/...\" and others with <>")
    endif()
  endforeach()
endforeach()
# What the public headers reach.
set(reached ${public})
set(frontier ${public})
while(frontier)
  set(next)
  foreach(h IN LISTS frontier)
    foreach(e IN LISTS edges)
      if(e MATCHES "^(.+)>(.+)$" AND CMAKE_MATCH_1 STREQUAL h)
        set(to ${CMAKE_MATCH_2})
        if(NOT to IN_LIST reached)
          list(APPEND reached ${to})
          list(APPEND next ${to})
        endif()
      endif()
    endforeach()
  endforeach()
  set(frontier ${next})
endwhile()
foreach(h IN LISTS all)
  if(NOT h IN_LIST reached)
    list(APPEND errors "include/mailroom/${h} is installed but no public header needs it: "
                       "move it to src/")
  endif()
endforeach()
# The installed detail/ headers, by name, each for what public inline code needs of it: a new one
# is a decision made here (or an internal header to put in src/), not one made by an #include.
set(allowed_detail
    buffer.hpp           # a buffer's wire header, read by mailboxes' handler dispatch
    callback.hpp         # futures' continuations (future.hpp)
    conveyor_core.hpp    # the inline push paths of conveyors and mailboxes
    index_division.hpp   # the distributions' division of a global index (distribution.hpp)
    inplace.hpp          # a selector's mailboxes, held inside it (selector.hpp)
    lambda_registry.hpp  # lambda messages' handlers, registered by type (selector.hpp)
    mailboxes.hpp        # the mailbox classes behind a selector, and handler dispatch
    pieces.hpp           # large messages cut into pieces and reassembled (selector, mailboxes)
    records.hpp          # the record layout the inline push paths write (conveyor_core)
    reduce_cache.hpp     # message reductions: the sender's cache, on the send path (mailboxes)
    reduction.hpp        # the reduction operators of collectives and atomics
    scheduler.hpp        # mailbox and selector cores, what sends read of the scheduler
    send_context.hpp     # where the caller's sends come from, sender() (runtime.hpp, task.hpp)
    sends.hpp            # a selector's blocked sends and bound senders (selector.hpp)
    signature.hpp        # a mailbox's type signature, checked on arrival
    small_pool.hpp       # futures' shared states
    tasks.hpp            # the task pool's inline spawn and finish
    thread.hpp)          # which worker the caller is (sends, futures and tasks check it inline)
foreach(h IN LISTS all)
  if(h MATCHES "^detail/(.+)$" AND NOT CMAKE_MATCH_1 IN_LIST allowed_detail)
    list(APPEND errors "include/mailroom/${h} is installed but not in tests/check_headers.cmake's "
                       "allowed_detail: add it there with what public inline code needs of it, or "
                       "move it to src/")
  endif()
endforeach()
foreach(h IN LISTS allowed_detail)
  if(NOT EXISTS ${inc}/detail/${h})
    list(APPEND errors "allowed_detail names detail/${h}, which does not exist: remove it")
  endif()
endforeach()

# A header is a page a user (or a reader of the inline code) can take in: none over 600 lines.
set(max_lines 600)
foreach(h IN LISTS all)
  file(READ ${inc}/${h} text)
  string(REGEX MATCHALL "\n" newlines "${text}")
  list(LENGTH newlines n)
  if(n GREATER max_lines)
    list(APPEND errors "include/mailroom/${h} has ${n} lines (at most ${max_lines}): split it by "
                       "concept, or move what is not inline to src/")
  endif()
endforeach()

list(LENGTH public n_public)
list(LENGTH all n_all)
if(errors)
  list(JOIN errors "\n  " text)
  message(FATAL_ERROR "installed headers:\n  ${text}")
endif()
message(STATUS "${n_all} installed headers, ${n_public} public; none includes an internal one")
