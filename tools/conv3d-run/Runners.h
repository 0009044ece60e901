//===- Runners.h - the modes of conv3d-run ----------------------*- C++ -*-===//

#ifndef CONV3D_TOOLS_CONV3D_RUN_RUNNERS_H
#define CONV3D_TOOLS_CONV3D_RUN_RUNNERS_H

#include "Flags.h"

namespace conv3d_run {

/// Compiles the spec, runs it on random or given data, checks and times it.
int runSpec(const RunRequest &request);

/// --pack-nvfp4: packs the spec's input to real NVFP4 on the target and
/// compares the bytes with the reference packer.
int runPackNVFP4(const RunRequest &request);

/// --list-configs: prints the heuristic's tile configuration and the
/// tuner's other candidates for the spec, without compiling or running.
int runListConfigs(const RunRequest &request);

/// Runs a function of an .mlir file on .npy arguments.
int runModule(const RunRequest &request);

/// Median of run times in milliseconds.
double median(std::vector<double> values);

} // namespace conv3d_run

#endif // CONV3D_TOOLS_CONV3D_RUN_RUNNERS_H
