# Precompiled headers: MLIR's headers (cmake/Conv3dPrecompiled.h) parsed once
# instead of in every file. Parsing them was most of the build's CPU time
# (10-35 s a file on the 2-core CI machine). Included at the end of the
# top-level CMakeLists.txt, once every target exists.
#
# A precompiled header must be compiled with its users' flags (clang refuses
# one whose optimization level or position-independence differs), so there
# are two, each compiled once by a stub target: Conv3dPrecompiled for the
# object libraries of libConv3d.so (-fPIC), Conv3dPrecompiledExe for the
# executables (-fPIE). Each target below reuses one of them. Targets whose
# files use none of these headers are left out: they gain nothing.
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

# Executables compile with -fPIE, after the -fPIC that LLVM's options add to
# every file; an object library given the same two flags compiles their
# precompiled header.
add_library(Conv3dPrecompiledExe OBJECT ${conv3d_pch_stub})
set_target_properties(Conv3dPrecompiledExe PROPERTIES POSITION_INDEPENDENT_CODE OFF)
target_compile_options(Conv3dPrecompiledExe PRIVATE -fPIE ${conv3d_pch_options})
target_precompile_headers(Conv3dPrecompiledExe PRIVATE ${conv3d_pch_header})

foreach(target Conv3dIR Conv3dTransforms Conv3dConversion Conv3dPipelines
    Conv3dRegistration Conv3dRuntime Conv3dCAPI)
  if(TARGET ${target})
    target_precompile_headers(${target} REUSE_FROM Conv3dPrecompiled)
  endif()
endforeach()
foreach(target conv3d-opt conv3d-sweep Conv3dUnitTests conv3d-pass-fuzzer)
  if(TARGET ${target})
    target_precompile_headers(${target} REUSE_FROM Conv3dPrecompiledExe)
  endif()
endforeach()
