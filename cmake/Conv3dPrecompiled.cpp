// The stub that compiles cmake/Conv3dPrecompiled.h into a precompiled
// header (cmake/PrecompiledHeaders.cmake); it has no code of its own.
