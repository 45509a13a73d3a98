# cgc_add_graph(TARGET GRAPHS file.cgraph... [INCLUDE_DIRS dir...] [DEFINES NAME=VALUE...]
#               [DEPENDS file...] [OPTIONS option...])
#
# OPTIONS go to cgc as they are: -Werror, -Wno-block-size, --prefix=P.
#
# Runs cgc (cgc::cgc) at build time on each .cgraph file and adds the
# generated C and header (NAME_graph.c, NAME_graph.h, in the build tree's
# cgc_generated/TARGET, so that targets may compile one .cgraph with other
# DEFINES) to TARGET, which also gets the runtime library (cgc::cgrt).  A
# depfile makes editing the .cgraph, a file it includes, a module or
# template header it names, or a new cgc regenerate the C; cgc leaves an
# output whose bytes would not change as it is, so an edit that changes
# only the C (a comment) rebuilds nothing that includes the header.
# DEPENDS names files cgc reads that are made by the build (a module
# compiled by another custom command), so that they exist before cgc
# first runs.
#
# Where the directory has C enabled the C is NAME_graph.c; where it has
# only C++ (project(x LANGUAGES CXX CUDA)) it is NAME_graph.cpp, the same
# C compiled as C++.  With neither, this is an error.
#
# A .cgraph whose graphs use template kernels (kernel K = T<...>(...), in
# it or in a file it includes) also gets its companion CUDA file,
# NAME_graph_templates.cu, which defines them.  It is compiled into TARGET
# when CUDA is an enabled language, with the .cgraph's directory and
# INCLUDE_DIRS on its include path, where its #include of each template's
# header is found.  Whether a .cgraph uses them is read from its text when
# CMake runs; a .cgraph that has come to use them since (cgc then writes
# the companion) fails its build once, saying so, and the next build runs
# CMake again, which finds them.
#
# Other targets that include the headers (a library of kernels) link the
# INTERFACE library TARGET_graphs, which cgc_add_graph makes: it carries the
# headers' directory and the runtime's, and has the headers generated
# first.  The directory is also TARGET's property CGC_GENERATED_DIR.
# _cgc_uses_templates(VAR FILE INCLUDE_DIR...): VAR is ON when FILE, or a
# file it includes (found as cgc finds it: beside the including file, then
# in the include directories), declares a template kernel, "kernel K =
# T<".  A comment that reads so counts too: the companion is then compiled
# holding only a comment.
function(_cgc_uses_templates var file)
  set(todo ${file})
  set(seen)
  set(uses OFF)
  set(s "[ \t\r\n]*")
  set(id "[A-Za-z_][A-Za-z0-9_]*")
  while(todo AND NOT uses)
    list(POP_FRONT todo f)
    if(f IN_LIST seen)
      continue()
    endif()
    list(APPEND seen ${f})
    file(READ ${f} text)
    if(text MATCHES "kernel${s}${id}${s}=${s}${id}${s}<")
      set(uses ON)
    endif()
    get_filename_component(f_dir ${f} DIRECTORY)
    string(REGEX MATCHALL "include${s}\"[^\";]*\"" includes "${text}")
    foreach(inc ${includes})
      string(REGEX REPLACE "^include${s}\"(.*)\"$" "\\1" inc_name "${inc}")
      foreach(d ${f_dir} ${ARGN})
        if(EXISTS ${d}/${inc_name})
          list(APPEND todo ${d}/${inc_name})
          break()
        endif()
      endforeach()
    endforeach()
  endwhile()
  set(${var} ${uses} PARENT_SCOPE)
endfunction()

function(cgc_add_graph target)
  cmake_parse_arguments(PARSE_ARGV 1 ARG "" "" "GRAPHS;INCLUDE_DIRS;DEFINES;DEPENDS;OPTIONS")
  if(NOT ARG_GRAPHS)
    message(FATAL_ERROR "cgc_add_graph(${target}): no GRAPHS given")
  endif()
  if(NOT TARGET ${target})
    message(FATAL_ERROR "cgc_add_graph(${target}): there is no target '${target}'")
  endif()
  # The generated file compiles as C or as C++; a language enabled only in
  # another directory does not count here.
  if(CMAKE_C_COMPILER_LOADED)
    set(ext c)
  elseif(CMAKE_CXX_COMPILER_LOADED)
    set(ext cpp)
  else()
    message(FATAL_ERROR
            "cgc_add_graph(${target}): the generated C needs the C or CXX language, and this "
            "directory enables neither; add C or CXX to project(... LANGUAGES ...), or call "
            "enable_language(C)")
  endif()
  set(dir ${CMAKE_CURRENT_BINARY_DIR}/cgc_generated/${target})
  set(flags)
  set(incs)
  foreach(inc ${ARG_INCLUDE_DIRS})
    get_filename_component(inc ${inc} ABSOLUTE)
    list(APPEND flags -I ${inc})
    list(APPEND incs ${inc})
  endforeach()
  foreach(def ${ARG_DEFINES})
    list(APPEND flags -D ${def})
  endforeach()
  list(APPEND flags ${ARG_OPTIONS})
  get_property(languages GLOBAL PROPERTY ENABLED_LANGUAGES)
  set(headers ${target}_graphs)
  if(NOT TARGET ${headers})
    add_library(${headers} INTERFACE)
    target_include_directories(${headers} INTERFACE ${dir})
    target_link_libraries(${headers} INTERFACE cgc::cgrt) # the header includes cgrt.h
    set_target_properties(${target} PROPERTIES CGC_GENERATED_DIR ${dir})
  endif()
  foreach(graph ${ARG_GRAPHS})
    get_filename_component(src ${graph} ABSOLUTE)
    get_filename_component(src_dir ${src} DIRECTORY)
    get_filename_component(src_name ${src} NAME)
    get_filename_component(name ${src} NAME_WE)
    set(out_c ${dir}/${name}_graph.${ext})
    set(out_h ${dir}/${name}_graph.h)
    set(out_cu ${dir}/${name}_graph_templates.cu)
    set(dep ${dir}/${name}_graph.d)
    _cgc_uses_templates(templates ${src} ${incs})
    if(templates)
      set(outputs ${out_c} ${out_h} ${out_cu})
      set(companion --templates ${out_cu})
      set(remove_companion)
      set(check_companion)
    else()
      # Without template kernels there is no companion to compile; should
      # the .cgraph come to use them, cgc writes one, and this says so and
      # makes the next build run CMake again (the stamp is a configure
      # dependency), which finds them.
      set(outputs ${out_c} ${out_h})
      set(stamp ${dir}/${name}_graph.templates-stamp)
      if(NOT EXISTS ${stamp})
        file(WRITE ${stamp} "")
      endif()
      set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${stamp})
      # A companion left from when the .cgraph used them is not this one.
      set(remove_companion COMMAND ${CMAKE_COMMAND} -E rm -f ${out_cu})
      set(companion)
      set(check_companion COMMAND ${CMAKE_COMMAND} -DCGC_COMPANION=${out_cu} -DCGC_STAMP=${stamp}
                                  -DCGC_GRAPH=${src_name} -P ${CMAKE_CURRENT_FUNCTION_LIST_FILE})
    endif()
    # cgc runs beside the .cgraph, so messages and the generated code name
    # it as the user does.
    add_custom_command(
      OUTPUT ${outputs}
      COMMAND ${CMAKE_COMMAND} -E make_directory ${dir}
      ${remove_companion}
      COMMAND $<TARGET_FILE:cgc::cgc> -o ${out_c} ${companion} --depfile ${dep} ${flags}
              ${src_name}
      ${check_companion}
      WORKING_DIRECTORY ${src_dir}
      DEPENDS ${src} cgc::cgc $<TARGET_FILE:cgc::cgc> ${ARG_DEPENDS}
      DEPFILE ${dep}
      COMMENT "cgc ${src_name}"
      VERBATIM)
    # One target runs cgc; TARGET and whatever links TARGET_graphs follow
    # it, so two targets never run the same command at once.
    add_custom_target(${target}_cgc_${name} DEPENDS ${outputs})
    add_dependencies(${headers} ${target}_cgc_${name})
    add_dependencies(${target} ${target}_cgc_${name})
    target_sources(${target} PRIVATE ${out_c} ${out_h})
    if(templates AND CUDA IN_LIST languages)
      target_sources(${target} PRIVATE ${out_cu})
      set_source_files_properties(${out_cu} TARGET_DIRECTORY ${target} PROPERTIES
                                  INCLUDE_DIRECTORIES "${src_dir};${incs}")
    endif()
  endforeach()
  target_include_directories(${target} PRIVATE ${dir})
  target_link_libraries(${target} PRIVATE cgc::cgrt)
  # TARGET's CUDA files compile through this file's check (the end of the
  # file), which says which parameter of a kernel's definition differs from
  # the .cgraph when one fails; a launcher set before comes after it.
  get_target_property(launcher ${target} CUDA_COMPILER_LAUNCHER)
  if(NOT launcher)
    set(launcher)
  endif()
  if(NOT "${CMAKE_CURRENT_FUNCTION_LIST_FILE}" IN_LIST launcher)
    set_target_properties(${target} PROPERTIES CUDA_COMPILER_LAUNCHER
      "${CMAKE_COMMAND};-DCGC_CHECK_DIR=${dir};-P;${CMAKE_CURRENT_FUNCTION_LIST_FILE};--;${launcher}")
  endif()
endfunction()

# cgc_cuda_arch(VAR): the first CUDA architecture the build compiles for, as
# a number (90 for "90-real"; "native", "all" and "all-major" read CMake's
# lists of them), for modules made with nvcc -cubin -arch=sm_${VAR}.
function(cgc_cuda_arch var)
  set(archs ${CMAKE_CUDA_ARCHITECTURES})
  if(archs STREQUAL "native")
    set(archs ${CMAKE_CUDA_ARCHITECTURES_NATIVE})
  elseif(archs STREQUAL "all")
    set(archs ${CMAKE_CUDA_ARCHITECTURES_ALL})
  elseif(archs STREQUAL "all-major")
    set(archs ${CMAKE_CUDA_ARCHITECTURES_ALL_MAJOR})
  endif()
  list(GET archs 0 first)
  string(REGEX MATCH "^[0-9]+" first "${first}")
  if(NOT first)
    message(FATAL_ERROR "cgc_cuda_arch: no CUDA architecture in '${CMAKE_CUDA_ARCHITECTURES}'")
  endif()
  set(${var} ${first} PARENT_SCOPE)
endfunction()

# cmake -DCGC_COMPANION=FILE -DCGC_STAMP=FILE -DCGC_GRAPH=NAME -P CgcGraph.cmake:
# run after cgc for a .cgraph that used no template kernels when CMake ran.
# If cgc wrote a companion, the .cgraph uses them now: the companion is
# removed, the stamp touched so that the next build runs CMake again, and
# the build fails saying so.
if(CMAKE_SCRIPT_MODE_FILE AND DEFINED CGC_COMPANION)
  if(EXISTS ${CGC_COMPANION})
    file(REMOVE ${CGC_COMPANION})
    file(TOUCH ${CGC_STAMP})
    message(FATAL_ERROR "cgc_add_graph: ${CGC_GRAPH} now uses template kernels, which were not "
                        "there when CMake ran; build again: CMake runs again and compiles "
                        "their companion file")
  endif()
endif()

# cmake -DCGC_CHECK_DIR=DIR -P CgcGraph.cmake -- COMPILER ARGS...: the
# launcher of a cgc_add_graph target's CUDA files.  It runs the compile; if
# that fails, it compiles the file again after `#define CGC_KERNEL_CHECK`,
# where the generated headers declare no kernel, then includes each header
# of DIR again with CGC_KERNEL_CHECK_END, which compares the parameters of
# each kernel the file defines with the .cgraph (doc/language.md, section
# 6.1), and prints what that check says.
if(CMAKE_SCRIPT_MODE_FILE AND DEFINED CGC_CHECK_DIR)
  set(cmd)
  set(check)
  set(after OFF)
  set(skip OFF)
  set(next)
  math(EXPR last "${CMAKE_ARGC} - 1")
  foreach(i RANGE ${last})
    set(arg "${CMAKE_ARGV${i}}")
    if(NOT after)
      if(arg STREQUAL "--")
        set(after ON)
      endif()
      continue()
    endif()
    list(APPEND cmd "${arg}")
    # The check's command: the compile's, less its depfile, on the check's
    # file into an object of its own.
    if(skip)
      set(skip OFF)
    elseif(next STREQUAL "c")
      get_filename_component(src "${arg}" ABSOLUTE)
      list(APPEND check "@CHECK_SOURCE@")
      set(next)
    elseif(next STREQUAL "o")
      get_filename_component(obj "${arg}" ABSOLUTE)
      list(APPEND check "${obj}.cgc-check.o")
      set(next)
    elseif(arg STREQUAL "-c")
      list(APPEND check "${arg}")
      set(next c)
    elseif(arg STREQUAL "-o")
      list(APPEND check "${arg}")
      set(next o)
    elseif(arg MATCHES "^(-MT|-MF|--dependency-output|-odir)$")
      set(skip ON)
    elseif(NOT arg MATCHES "^(-MD|-MMD|--generate-dependencies-with-compile|--generate-nonsystem-dependencies-with-compile)$")
      list(APPEND check "${arg}")
    endif()
  endforeach()
  execute_process(COMMAND ${cmd} RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    if(src AND obj)
      list(TRANSFORM check REPLACE "^@CHECK_SOURCE@$" "${obj}.cgc-check.cu")
      set(text "#define CGC_KERNEL_CHECK 1\n#include \"${src}\"\n#define CGC_KERNEL_CHECK_END 1\n")
      file(GLOB headers ${CGC_CHECK_DIR}/*.h)
      foreach(h ${headers})
        file(STRINGS ${h} first LIMIT_COUNT 1)
        if(first MATCHES "^// Code generated by cgc ")
          string(APPEND text "#include \"${h}\"\n")
        endif()
      endforeach()
      file(WRITE ${obj}.cgc-check.cu "${text}")
      execute_process(COMMAND ${check} OUTPUT_VARIABLE out ERROR_VARIABLE out)
      file(REMOVE ${obj}.cgc-check.cu ${obj}.cgc-check.o)
      string(REGEX MATCHALL "static assertion failed with \"kernel '[^\n]*\"" found "${out}")
      foreach(f ${found})
        string(REGEX REPLACE "^static assertion failed with \"(.*)\"$" "\\1" f "${f}")
        message(NOTICE "${src}: error: ${f}")
      endforeach()
    endif()
    message(FATAL_ERROR "compiling ${src} failed")
  endif()
endif()
