# SPDX-License-Identifier: Apache-2.0
# Which Python the module is built for. The package needs numpy at run time, and a module only loads in
# the interpreter whose headers built it; so, unless -DPython3_EXECUTABLE names one, take the first of
# `python3` on PATH and /usr/bin/python3 that imports numpy. A pyenv or other Python ahead of Debian's on
# PATH, without numpy, would otherwise get a module that no test or user can import.
if(DEFINED Python3_EXECUTABLE OR DEFINED CACHE{Python3_EXECUTABLE})
  return()
endif()
find_program(epsim_path_python3 NAMES python3 NO_CACHE)
foreach(candidate IN ITEMS "${epsim_path_python3}" /usr/bin/python3)
  if(candidate AND EXISTS "${candidate}")
    execute_process(COMMAND "${candidate}" -c "import numpy" RESULT_VARIABLE numpy_missing
                    OUTPUT_QUIET ERROR_QUIET)
    if(numpy_missing EQUAL 0)
      set(Python3_EXECUTABLE "${candidate}" CACHE FILEPATH "Python interpreter (one that imports numpy)")
      message(STATUS "Python for the module: ${candidate} (imports numpy)")
      return()
    endif()
  endif()
endforeach()
message(STATUS "No python3 on PATH or at /usr/bin imports numpy: the Python module's default is off")
set(epsim_python_without_numpy TRUE)
