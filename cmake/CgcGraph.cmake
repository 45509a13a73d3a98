# cgc_add_graph(TARGET GRAPHS file.cgraph... [INCLUDE_DIRS dir...] [DEFINES NAME=VALUE...])
#
# Runs cgc (cgc::cgc) at build time on each .cgraph file and adds the
# generated C and header (NAME_graph.c, NAME_graph.h, in the build tree's
# cgc_generated/TARGET, so that targets may compile one .cgraph with other
# DEFINES) to TARGET, which also gets the runtime library (cgc::cgrt).  A depfile makes
# editing the .cgraph, a file it includes, or a new cgc regenerate the C.
function(cgc_add_graph target)
  cmake_parse_arguments(PARSE_ARGV 1 ARG "" "" "GRAPHS;INCLUDE_DIRS;DEFINES")
  if(NOT ARG_GRAPHS)
    message(FATAL_ERROR "cgc_add_graph(${target}): no GRAPHS given")
  endif()
  set(dir ${CMAKE_CURRENT_BINARY_DIR}/cgc_generated/${target})
  set(flags)
  foreach(inc ${ARG_INCLUDE_DIRS})
    get_filename_component(inc ${inc} ABSOLUTE)
    list(APPEND flags -I ${inc})
  endforeach()
  foreach(def ${ARG_DEFINES})
    list(APPEND flags -D ${def})
  endforeach()
  foreach(graph ${ARG_GRAPHS})
    get_filename_component(src ${graph} ABSOLUTE)
    get_filename_component(src_dir ${src} DIRECTORY)
    get_filename_component(src_name ${src} NAME)
    get_filename_component(name ${src} NAME_WE)
    set(out_c ${dir}/${name}_graph.c)
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
    target_sources(${target} PRIVATE ${out_c} ${out_h})
  endforeach()
  target_include_directories(${target} PRIVATE ${dir})
  target_link_libraries(${target} PRIVATE cgc::cgrt)
endfunction()
