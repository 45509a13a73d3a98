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
# Each .cgraph also gets its companion CUDA file, NAME_graph_templates.cu,
# which defines the template kernels its graphs use (a comment alone when
# there are none).  It is compiled into TARGET when CUDA is an enabled
# language, with the .cgraph's directory and INCLUDE_DIRS on its include
# path, where its #include of each template's header is found.
#
# Other targets that include the headers (a library of kernels) link the
# INTERFACE library TARGET_graphs, which cgc_add_graph makes: it carries the
# headers' directory and the runtime's, and has the headers generated
# first.  The directory is also TARGET's property CGC_GENERATED_DIR.
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
    # cgc runs beside the .cgraph, so messages and the generated code name
    # it as the user does.
    add_custom_command(
      OUTPUT ${out_c} ${out_h} ${out_cu}
      COMMAND ${CMAKE_COMMAND} -E make_directory ${dir}
      COMMAND $<TARGET_FILE:cgc::cgc> -o ${out_c} --templates ${out_cu} --depfile ${dep} ${flags}
              ${src_name}
      WORKING_DIRECTORY ${src_dir}
      DEPENDS ${src} cgc::cgc $<TARGET_FILE:cgc::cgc> ${ARG_DEPENDS}
      DEPFILE ${dep}
      COMMENT "cgc ${src_name}"
      VERBATIM)
    # One target runs cgc; TARGET and whatever links TARGET_graphs follow
    # it, so two targets never run the same command at once.
    add_custom_target(${target}_cgc_${name} DEPENDS ${out_c} ${out_h} ${out_cu})
    add_dependencies(${headers} ${target}_cgc_${name})
    add_dependencies(${target} ${target}_cgc_${name})
    target_sources(${target} PRIVATE ${out_c} ${out_h})
    if(CUDA IN_LIST languages)
      target_sources(${target} PRIVATE ${out_cu})
      set_source_files_properties(${out_cu} TARGET_DIRECTORY ${target} PROPERTIES
                                  INCLUDE_DIRECTORIES "${src_dir};${incs}")
    endif()
  endforeach()
  target_include_directories(${target} PRIVATE ${dir})
  target_link_libraries(${target} PRIVATE cgc::cgrt)
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
