# `cmake --install build --prefix P`: headers, libConv3d.so, the tools, the
# Python package and the CMake package Conv3dMLIR (see
# Conv3dMLIRConfig.cmake.in). Included at the end of the top-level
# CMakeLists.txt, once every target exists.
include(CMakePackageConfigHelpers)

set(CONV3D_INSTALL_CMAKE_DIR lib/cmake/Conv3dMLIR)

target_include_directories(Conv3d INTERFACE
  $<INSTALL_INTERFACE:${CONV3D_INSTALL_INCLUDE_DIR}>)
target_compile_features(Conv3d INTERFACE cxx_std_17)

install(TARGETS Conv3d EXPORT Conv3dMLIRTargets
  LIBRARY DESTINATION ${CONV3D_INSTALL_LIB_DIR})
install(TARGETS conv3d-opt conv3d-run conv3d-sweep conv3d-gpu-info
  RUNTIME DESTINATION ${CONV3D_INSTALL_BIN_DIR})

install(DIRECTORY include/conv3d include/conv3d-c
  DESTINATION ${CONV3D_INSTALL_INCLUDE_DIR}
  FILES_MATCHING PATTERN "*.h" PATTERN "*.td")
install(DIRECTORY ${PROJECT_BINARY_DIR}/include/conv3d
  DESTINATION ${CONV3D_INSTALL_INCLUDE_DIR}
  FILES_MATCHING PATTERN "*.inc"
  PATTERN "CMakeFiles" EXCLUDE)

install(DIRECTORY python/conv3d DESTINATION ${CONV3D_INSTALL_PYTHON_DIR}
  PATTERN "__pycache__" EXCLUDE)

install(EXPORT Conv3dMLIRTargets NAMESPACE Conv3dMLIR::
  DESTINATION ${CONV3D_INSTALL_CMAKE_DIR})
configure_package_config_file(cmake/Conv3dMLIRConfig.cmake.in
  ${PROJECT_BINARY_DIR}/cmake/Conv3dMLIRConfig.cmake
  INSTALL_DESTINATION ${CONV3D_INSTALL_CMAKE_DIR}
  PATH_VARS CONV3D_INSTALL_BIN_DIR CONV3D_INSTALL_PYTHON_DIR)
write_basic_package_version_file(
  ${PROJECT_BINARY_DIR}/cmake/Conv3dMLIRConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/cmake/Conv3dMLIRConfig.cmake
  ${PROJECT_BINARY_DIR}/cmake/Conv3dMLIRConfigVersion.cmake
  DESTINATION ${CONV3D_INSTALL_CMAKE_DIR})
