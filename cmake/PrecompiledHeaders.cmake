# Precompiled headers: MLIR's headers (cmake/Conv3dPrecompiled.h) parsed once
# instead of in every file. Parsing them was most of the build's CPU time:
# 10-40 s a file, 1-9 s with the precompiled header (docs/testing.md has the
# measurements). Included at the end of the top-level CMakeLists.txt, once
# every target exists.
#
# A precompiled header must be compiled with its users' flags (clang refuses
# one whose optimization level or position independence differs), so it is
# compiled once, by a stub target with the object libraries' flags (-fPIC),
# and every target below reuses it. The executables among them are compiled
# with -fPIC too (LLVM's options add it to every file; CMake would add -fPIE
# after it for an executable) instead of compiling a second copy: they still
# link as position-independent executables. Targets whose files use few of
# these headers are left out: they gain nothing.
#
# -DCONV3D_PRECOMPILED_HEADERS=OFF builds without them, e.g. to check that
# every file includes what it uses.
option(CONV3D_PRECOMPILED_HEADERS
  "Precompile MLIR's headers once (cmake/Conv3dPrecompiled.h)" ON)
if(NOT CONV3D_PRECOMPILED_HEADERS)
  return()
endif()

set(conv3d_pch_header ${PROJECT_SOURCE_DIR}/cmake/Conv3dPrecompiled.h)
set(conv3d_pch_stub ${PROJECT_SOURCE_DIR}/cmake/Conv3dPrecompiled.cpp)

# Without a timestamp in the precompiled header, ccache can cache both it
# and the files compiled with it.
set(conv3d_pch_options "SHELL:-Xclang -fno-pch-timestamp")

add_library(Conv3dPrecompiled OBJECT ${conv3d_pch_stub})
target_compile_options(Conv3dPrecompiled PRIVATE ${conv3d_pch_options})
target_precompile_headers(Conv3dPrecompiled PRIVATE ${conv3d_pch_header})

foreach(target Conv3dIR Conv3dTransforms Conv3dConversion Conv3dPipelines
    Conv3dRegistration Conv3dRuntime Conv3dCAPI)
  if(TARGET ${target})
    target_precompile_headers(${target} REUSE_FROM Conv3dPrecompiled)
  endif()
endforeach()
foreach(target conv3d-sweep Conv3dUnitTests conv3d-pass-fuzzer)
  if(TARGET ${target})
    set_target_properties(${target} PROPERTIES POSITION_INDEPENDENT_CODE OFF)
    target_precompile_headers(${target} REUSE_FROM Conv3dPrecompiled)
  endif()
endforeach()
