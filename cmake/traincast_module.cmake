# One CMake library per source folder ("module"), with its dependencies written out, so that the
# folder graph of DESIGN.md §2 is the link graph: an include or a call that runs against it fails
# the layout.arrows test (tests/layout/check_arrows.py) and the layout.links test
# (tests/layout/check_links.py: a symbol a module's objects use must come from its dependencies).
#
# traincast_module(TARGET FOLDER [DEPS module-targets...] [LIBS other-targets...])
#   TARGET  the library's name, e.g. traincast_hardware
#   FOLDER  its folder relative to the repository root, e.g. models/hardware; every FOLDER/*.cc is
#           a source (a folder of headers only gives an INTERFACE library)
#   DEPS    the modules it may include and call (each another traincast_module TARGET)
#   LIBS    third-party targets (TBB::tbb, Eigen3::Eigen, ...)
function(traincast_module target folder)
  cmake_parse_arguments(PARSE_ARGV 2 M "" "" "DEPS;LIBS")
  file(GLOB srcs CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/${folder}/*.cc)
  list(FILTER srcs EXCLUDE REGEX ".*_fuzz\\.cc$")
  if(srcs)
    add_library(${target} ${srcs})
    target_link_libraries(${target} PUBLIC ${M_DEPS} ${M_LIBS})
  else()
    add_library(${target} INTERFACE)
    target_link_libraries(${target} INTERFACE ${M_DEPS} ${M_LIBS})
  endif()
  traincast_register_module(${target} ${folder})
endfunction()

# Records a library target made elsewhere (models/io builds its own, with generated protobuf code)
# as the module of FOLDER.
function(traincast_register_module target folder)
  set_property(GLOBAL APPEND PROPERTY TRAINCAST_MODULE_TARGETS ${target})
  set_property(TARGET ${target} PROPERTY TRAINCAST_MODULE_FOLDER ${folder})
endfunction()

# Writes FILE: one line `FOLDER: DEP_FOLDER...` per module, the dependencies read back from each
# module target's link libraries (so the test checks what the build declares, not a copy); and
# LIBS_FILE: one line `FOLDER: LIBRARY_FILE` per module built as a library (not the programs).
function(traincast_write_module_graph file libs_file)
  get_property(targets GLOBAL PROPERTY TRAINCAST_MODULE_TARGETS)
  set(text "# Module graph written by cmake/traincast_module.cmake: FOLDER: folders it may depend on\n")
  set(libs_text "# Module libraries written by cmake/traincast_module.cmake: FOLDER: library file\n")
  foreach(t IN LISTS targets)
    get_target_property(folder ${t} TRAINCAST_MODULE_FOLDER)
    get_target_property(type ${t} TYPE)
    if(type STREQUAL "INTERFACE_LIBRARY")
      get_target_property(libs ${t} INTERFACE_LINK_LIBRARIES)
    else()
      get_target_property(libs ${t} LINK_LIBRARIES)
      if(type STREQUAL "STATIC_LIBRARY" OR type STREQUAL "SHARED_LIBRARY")
        string(APPEND libs_text "${folder}: $<TARGET_FILE:${t}>\n")
      endif()
    endif()
    set(deps "")
    foreach(l IN LISTS libs)
      if(TARGET ${l})
        get_target_property(dep_folder ${l} TRAINCAST_MODULE_FOLDER)
        if(dep_folder)
          list(APPEND deps ${dep_folder})
        endif()
      endif()
    endforeach()
    list(JOIN deps " " deps_text)
    string(APPEND text "${folder}: ${deps_text}\n")
  endforeach()
  file(GENERATE OUTPUT ${file} CONTENT "${text}")
  file(GENERATE OUTPUT ${libs_file} CONTENT "${libs_text}")
endfunction()
