# SPDX-License-Identifier: Apache-2.0
# Script mode, run at every build (epsim_git_commit in epsim_helpers.cmake): writes OUT, a header holding
# k_commit, the short commit SOURCE_DIR is checked out at, "-dirty" appended when tracked files differ
# from it, or "unknown" when SOURCE_DIR is not the top of a git checkout (a tarball, even one unpacked
# inside another repository) or GIT is empty. OUT is rewritten only when its text changes, so a build
# with nothing new recompiles nothing.
set(commit "unknown")
if(NOT GIT STREQUAL "")
  execute_process(COMMAND "${GIT}" -C "${SOURCE_DIR}" rev-parse --show-toplevel
                  OUTPUT_VARIABLE top RESULT_VARIABLE rc OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  if(rc EQUAL 0)
    file(REAL_PATH "${top}" top)
    file(REAL_PATH "${SOURCE_DIR}" source)
    if(top STREQUAL source)
      execute_process(COMMAND "${GIT}" -C "${SOURCE_DIR}" rev-parse --short HEAD
                      OUTPUT_VARIABLE hash RESULT_VARIABLE rc OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
      # --no-optional-locks: a build must not take the index lock from a git command running beside it.
      execute_process(COMMAND "${GIT}" --no-optional-locks -C "${SOURCE_DIR}" status --porcelain
                              --untracked-files=no
                      OUTPUT_VARIABLE changes RESULT_VARIABLE status_rc ERROR_QUIET)
      if(rc EQUAL 0 AND status_rc EQUAL 0 AND hash MATCHES "^[0-9a-f]+$")
        set(commit "${hash}")
        if(NOT changes STREQUAL "")
          string(APPEND commit "-dirty")
        endif()
      endif()
    endif()
  endif()
endif()
set(text "// Generated at build time by cmake/git_commit.cmake; do not edit.\n#pragma once\n\n")
string(APPEND text "namespace epsim {\ninline constexpr const char* k_commit = \"${commit}\";\n}\n")
set(old "")
if(EXISTS "${OUT}")
  file(READ "${OUT}" old)
endif()
if(NOT old STREQUAL text)
  file(WRITE "${OUT}" "${text}")
endif()
