# Warning flags shared by every epsim target.
function(epsim_target_options target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wshadow -Wconversion
                                           -Wno-sign-conversion)
  if(EPSIM_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()

# epsim_library(NAME SOURCES ... LINKS ...): one library per folder, include root = project root so
# includes read "sim/core/time.hpp", "hardware/roofline.hpp".
function(epsim_library name)
  cmake_parse_arguments(ARG "" "" "SOURCES;LINKS" ${ARGN})
  add_library(${name} STATIC ${ARG_SOURCES})
  target_include_directories(${name} PUBLIC ${PROJECT_SOURCE_DIR} ${PROJECT_BINARY_DIR}/generated)
  target_link_libraries(${name} PUBLIC ${ARG_LINKS})
  epsim_target_options(${name})
endfunction()

# epsim_embed_presets(TARGET NAME KIND FILES ...): compiles shipped TOML presets into the library so the
# binary works from any directory. Generates <name>_embedded.cpp defining
#   std::span<const epsim::core::EmbeddedFile> <namespace>::embedded_<name>()
function(epsim_embed_presets target)
  cmake_parse_arguments(ARG "" "NAME;NAMESPACE" "FILES" ${ARGN})
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
            "-DFILES=${abs_files}" -P ${PROJECT_SOURCE_DIR}/cmake/embed_files.cmake
    DEPENDS ${abs_files} ${PROJECT_SOURCE_DIR}/cmake/embed_files.cmake
    COMMENT "Embedding ${ARG_NAME} presets"
    VERBATIM)
  target_sources(${target} PRIVATE ${out})
  # Vega's bundles are longer than the 64 KiB ISO C++ asks compilers to support in one literal; GCC and
  # Clang take them.
  set_source_files_properties(${out} PROPERTIES COMPILE_OPTIONS -Wno-overlength-strings)
endfunction()
