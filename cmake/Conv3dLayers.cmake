# The project's layers, declared once, checked at every build.
#
# Each layer is an object library (conv3d_add_library) or a set of headers
# (conv3d_declare_layer), with the layers it may use (LAYER_DEPS, direct
# ones; what they use may be used too). The objects of every layer form
# libConv3d.so, the one library users link. Two checks make an upward
# dependency fail the build (conv3d_check_layers, at the end of lib/):
#
# - a link check: each layer is also linked as a shared object of its own
#   (build/lib/layers/, never installed) with -Wl,--no-undefined against
#   only its declared layers' objects and libMLIR/libLLVM, so a call into a
#   layer above is an undefined symbol;
# - an include check (cmake/check_layers.py): every `#include "conv3d/..."`
#   under include/ and lib/ must name a header of the including file's layer
#   or of a layer it depends on. This catches what links fine: a
#   header-only upward include (a struct, an inline function, a constant).
#
# The declared graph is written to build/layers.json for the include check
# and printed by `cmake --build build --target conv3d-layers`.

set_property(GLOBAL PROPERTY CONV3D_OBJECT_LIBS "")
set_property(GLOBAL PROPERTY CONV3D_LAYERS "")

# conv3d_declare_layer(<Layer> [LAYER_DEPS <layers>...] [PATHS <paths>...])
# A layer and the files it owns: PATHS relative to the source root (folders
# or files; the longest matching path decides a file's layer). Default
# paths: include/conv3d/<Layer> and lib/<Layer>.
function(conv3d_declare_layer layer)
  cmake_parse_arguments(ARG "" "" "LAYER_DEPS;PATHS" ${ARGN})
  if(NOT ARG_PATHS)
    set(ARG_PATHS include/conv3d/${layer} lib/${layer})
  endif()
  set_property(GLOBAL APPEND PROPERTY CONV3D_LAYERS ${layer})
  set_property(GLOBAL PROPERTY CONV3D_LAYER_${layer}_DEPS "${ARG_LAYER_DEPS}")
  set_property(GLOBAL PROPERTY CONV3D_LAYER_${layer}_PATHS "${ARG_PATHS}")
endfunction()

# conv3d_add_library(<target> LAYER <Layer> SOURCES <files>...
#                    [LAYER_DEPS <layers>...] [PATHS <paths>...]
#                    [DEPENDS <targets>...] [LINK_LIBS <libraries>...])
# An object library of libConv3d.so making up <Layer>. DEPENDS: targets to
# build first (TableGen); LINK_LIBS: what the layer's objects call besides
# the layers, libMLIR.so and libLLVM.so (e.g. libdl).
function(conv3d_add_library name)
  cmake_parse_arguments(ARG "" "LAYER"
    "SOURCES;DEPENDS;LAYER_DEPS;PATHS;LINK_LIBS" ${ARGN})
  if(NOT ARG_LAYER)
    message(FATAL_ERROR "conv3d_add_library(${name}): LAYER is required")
  endif()
  add_library(${name} OBJECT ${ARG_SOURCES})
  if(ARG_DEPENDS)
    add_dependencies(${name} ${ARG_DEPENDS})
  endif()
  set_property(GLOBAL APPEND PROPERTY CONV3D_OBJECT_LIBS ${name})
  set(paths "")
  if(ARG_PATHS)
    set(paths PATHS ${ARG_PATHS})
  endif()
  conv3d_declare_layer(${ARG_LAYER} LAYER_DEPS ${ARG_LAYER_DEPS} ${paths})
  set_property(GLOBAL PROPERTY CONV3D_LAYER_${ARG_LAYER}_TARGET ${name})
  set_property(GLOBAL PROPERTY CONV3D_LAYER_${ARG_LAYER}_LINK_LIBS
    "${ARG_LINK_LIBS}")
endfunction()

# The two checks, once every layer is declared.
function(conv3d_check_layers)
  get_property(layers GLOBAL PROPERTY CONV3D_LAYERS)
  set(json "{\n")
  set(first TRUE)
  foreach(layer ${layers})
    get_property(deps GLOBAL PROPERTY CONV3D_LAYER_${layer}_DEPS)
    get_property(paths GLOBAL PROPERTY CONV3D_LAYER_${layer}_PATHS)
    foreach(dep ${deps})
      if(NOT dep IN_LIST layers)
        message(FATAL_ERROR "layer ${layer} depends on undeclared layer ${dep}")
      endif()
    endforeach()
    list(TRANSFORM deps PREPEND "\"")
    list(TRANSFORM deps APPEND "\"")
    list(JOIN deps ", " deps)
    list(TRANSFORM paths PREPEND "\"")
    list(TRANSFORM paths APPEND "\"")
    list(JOIN paths ", " paths)
    if(NOT first)
      string(APPEND json ",\n")
    endif()
    set(first FALSE)
    string(APPEND json
      "  \"${layer}\": {\"deps\": [${deps}], \"paths\": [${paths}]}")
  endforeach()
  string(APPEND json "\n}\n")
  set(graph ${PROJECT_BINARY_DIR}/layers.json)
  file(WRITE ${graph}.tmp "${json}")
  # Rewritten only when it changed, so the include check reruns only then.
  configure_file(${graph}.tmp ${graph} COPYONLY)

  # The include check: reruns when a source or header changes.
  file(GLOB_RECURSE checked CONFIGURE_DEPENDS
    ${PROJECT_SOURCE_DIR}/include/*.h ${PROJECT_SOURCE_DIR}/lib/*.h
    ${PROJECT_SOURCE_DIR}/lib/*.cpp)
  set(stamp ${PROJECT_BINARY_DIR}/layers.checked)
  add_custom_command(OUTPUT ${stamp}
    COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/cmake/check_layers.py
      --graph ${graph} --root ${PROJECT_SOURCE_DIR} --stamp ${stamp}
    DEPENDS ${PROJECT_SOURCE_DIR}/cmake/check_layers.py ${graph} ${checked}
    COMMENT "Checking the #include lines against the declared layers"
    VERBATIM)
  add_custom_target(conv3d-check-layer-includes ALL DEPENDS ${stamp})
  add_custom_target(conv3d-layers
    COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/cmake/check_layers.py
      --graph ${graph} --print
    VERBATIM)

  # The link check. A sanitized build's shared objects leave the sanitizer
  # runtime's symbols undefined (the executables provide them): skipped.
  if(CONV3D_SANITIZE)
    return()
  endif()
  foreach(layer ${layers})
    get_property(target GLOBAL PROPERTY CONV3D_LAYER_${layer}_TARGET)
    if(NOT target)
      continue() # headers only
    endif()
    get_property(deps GLOBAL PROPERTY CONV3D_LAYER_${layer}_DEPS)
    get_property(libs GLOBAL PROPERTY CONV3D_LAYER_${layer}_LINK_LIBS)
    set(check Conv3dLayer${layer})
    add_library(${check} SHARED $<TARGET_OBJECTS:${target}>)
    set_target_properties(${check} PROPERTIES
      LIBRARY_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/lib/layers)
    foreach(dep ${deps})
      get_property(depTarget GLOBAL PROPERTY CONV3D_LAYER_${dep}_TARGET)
      if(depTarget)
        # PUBLIC: a layer's own layers are linked too (the closure).
        target_link_libraries(${check} PUBLIC Conv3dLayer${dep})
      endif()
    endforeach()
    mlir_target_link_libraries(${check} PUBLIC MLIRIR)
    target_link_libraries(${check} PUBLIC LLVM ${libs})
    target_link_options(${check} PRIVATE "LINKER:--no-undefined")
  endforeach()
endfunction()
