# cgc_add_graph(TARGET GRAPHS file.cgraph... [INCLUDE_DIRS dir...] [DEFINES NAME=VALUE...]
#               [OPTIONS option...])
#
# OPTIONS go to cgc as they are: -Werror, -Wno-block-size.
#
# Runs cgc (cgc::cgc) at build time on each .cgraph file and adds the
# generated C and header (NAME_graph.c, NAME_graph.h, in the build tree) to
# TARGET, which also gets the runtime library (cgc::cgrt).  A depfile makes
# editing the .cgraph, a file it includes, or a new cgc regenerate the C;
# cgc leaves an output whose bytes would not change as it is, so an edit
# that changes only the C (a comment) rebuilds nothing that includes the
# header.
#
# Where the directory has C enabled the C is NAME_graph.c; where it has
# only C++ (project(x LANGUAGES CXX CUDA)) it is NAME_graph.cpp, the same
# C compiled as C++.  With neither, this is an error.
#
# Other targets that include the headers (a library of kernels) link the
# INTERFACE library TARGET_graphs, which cgc_add_graph makes: it carries the
# headers' directory and the runtime's, and has the headers generated first.  The directory is also
# TARGET's property CGC_GENERATED_DIR.
function(cgc_add_graph target)
  cmake_parse_arguments(PARSE_ARGV 1 ARG "" "" "GRAPHS;INCLUDE_DIRS;DEFINES;OPTIONS")
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
  set(dir ${CMAKE_CURRENT_BINARY_DIR}/cgc_generated)
  set(flags)
  foreach(inc ${ARG_INCLUDE_DIRS})
    get_filename_component(inc ${inc} ABSOLUTE)
    list(APPEND flags -I ${inc})
  endforeach()
  foreach(def ${ARG_DEFINES})
    list(APPEND flags -D ${def})
  endforeach()
  list(APPEND flags ${ARG_OPTIONS})
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
    set(dep ${dir}/${name}_graph.d)
    # cgc runs beside the .cgraph, so messages and the generated code name
    # it as the user does.
    add_custom_command(
      OUTPUT ${out_c} ${out_h}
      COMMAND ${CMAKE_COMMAND} -E make_directory ${dir}
      COMMAND $<TARGET_FILE:cgc::cgc> -o ${out_c} --depfile ${dep} ${flags} ${src_name}
      WORKING_DIRECTORY ${src_dir}
      DEPENDS ${src} cgc::cgc $<TARGET_FILE:cgc::cgc>
      DEPFILE ${dep}
      COMMENT "cgc ${src_name}"
      VERBATIM)
    # One target runs cgc; TARGET and whatever links TARGET_graphs follow
    # it, so two targets never run the same command at once.
    add_custom_target(${target}_cgc_${name} DEPENDS ${out_c} ${out_h})
    add_dependencies(${headers} ${target}_cgc_${name})
    add_dependencies(${target} ${target}_cgc_${name})
    target_sources(${target} PRIVATE ${out_c} ${out_h})
  endforeach()
  target_include_directories(${target} PRIVATE ${dir})
  target_link_libraries(${target} PRIVATE cgc::cgrt)
endfunction()
