# SPDX-License-Identifier: Apache-2.0
# Warning flags shared by every epsim target.
function(epsim_target_options target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wshadow -Wconversion
                                           -Wno-sign-conversion)
  if(EPSIM_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()

# epsim_read_layers(FILE): reads layers.txt into EPSIM_LAYERS (names, bottom up) and, per layer,
# EPSIM_LAYER_FOLDER_<name> and EPSIM_LAYER_USES_<name>; a layer may use only layers listed above it.
function(epsim_read_layers file)
  file(STRINGS ${file} lines REGEX "^[a-z]")
  set(names "")
  foreach(line IN LISTS lines)
    string(REGEX REPLACE "[ \t]+" ";" fields "${line}")
    list(POP_FRONT fields name folder)
    foreach(used IN LISTS fields)
      if(NOT used IN_LIST names)
        message(FATAL_ERROR "${file}: layer ${name} uses ${used}, which is not a layer listed above it")
      endif()
    endforeach()
    list(APPEND names ${name})
    set(EPSIM_LAYER_FOLDER_${name} ${folder} PARENT_SCOPE)
    set(EPSIM_LAYER_USES_${name} "${fields}" PARENT_SCOPE)
  endforeach()
  set(EPSIM_LAYERS ${names} PARENT_SCOPE)
endfunction()

# epsim_layer_library(SOURCES ... [LINKS ...]): the library epsim_<layer> of the folder being added
# (EPSIM_LAYER, set by the root from layers.txt), linked to the libraries of the layers it may use and
# to LINKS (third-party libraries only). Include root = project root: "core/time.hpp".
function(epsim_layer_library)
  cmake_parse_arguments(ARG "" "" "SOURCES;LINKS" ${ARGN})
  set(name epsim_${EPSIM_LAYER})
  add_library(${name} STATIC ${ARG_SOURCES})
  target_include_directories(${name} PUBLIC ${PROJECT_SOURCE_DIR} ${PROJECT_BINARY_DIR}/generated)
  foreach(used IN LISTS EPSIM_LAYER_USES_${EPSIM_LAYER})
    target_link_libraries(${name} PUBLIC epsim_${used})
  endforeach()
  target_link_libraries(${name} PUBLIC ${ARG_LINKS})
  epsim_target_options(${name})
endfunction()

# epsim_embed_presets(TARGET NAME KIND [BASE DIR] FILES ...): compiles shipped TOML presets into the library
# so the binary works from any directory. Generates <name>_embedded.cpp defining
#   std::span<const epsim::core::EmbeddedFile> <namespace>::embedded_<name>()
# Files are named by their stem, or by their path under BASE when it is given.
function(epsim_embed_presets target)
  cmake_parse_arguments(ARG "" "NAME;NAMESPACE;BASE" "FILES" ${ARGN})
  set(out ${PROJECT_BINARY_DIR}/generated/embedded_${ARG_NAME}.cpp)
  set(abs_files "")
  foreach(f ${ARG_FILES})
    if(IS_ABSOLUTE ${f})
      list(APPEND abs_files ${f})
    else()
      list(APPEND abs_files ${CMAKE_CURRENT_SOURCE_DIR}/${f})
    endif()
  endforeach()
  add_custom_command(
    OUTPUT ${out}
    COMMAND ${CMAKE_COMMAND} -DOUT=${out} -DNAME=${ARG_NAME} -DNAMESPACE=${ARG_NAMESPACE}
            "-DFILES=${abs_files}" "-DBASE=${ARG_BASE}" -P ${PROJECT_SOURCE_DIR}/cmake/embed_files.cmake
    DEPENDS ${abs_files} ${PROJECT_SOURCE_DIR}/cmake/embed_files.cmake
    COMMENT "Embedding ${ARG_NAME} presets"
    VERBATIM)
  target_sources(${target} PRIVATE ${out})
  # Vega's bundles are longer than the 64 KiB ISO C++ asks compilers to support in one literal; GCC and
  # Clang take them.
  set_source_files_properties(${out} PROPERTIES COMPILE_OPTIONS -Wno-overlength-strings)
endfunction()

# epsim_git_commit(TARGET): generated/epsim_commit.hpp (epsim::k_commit, cmake/git_commit.cmake) made
# before TARGET compiles and refreshed at every build, not only at configure, so the commit stays right
# when HEAD moves; an unchanged header leaves TARGET's objects alone.
function(epsim_git_commit target)
  find_package(Git QUIET)
  set(git "")
  if(GIT_FOUND)
    set(git ${GIT_EXECUTABLE})
  endif()
  set(header ${PROJECT_BINARY_DIR}/generated/epsim_commit.hpp)
  add_custom_target(${target}_commit
    COMMAND ${CMAKE_COMMAND} -DSOURCE_DIR=${PROJECT_SOURCE_DIR} -DOUT=${header} "-DGIT=${git}"
            -P ${CMAKE_CURRENT_FUNCTION_LIST_DIR}/git_commit.cmake
    BYPRODUCTS ${header}
    VERBATIM)
  add_dependencies(${target} ${target}_commit)
endfunction()
