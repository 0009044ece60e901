//===- PtxAssembler.cpp - assemble emitted PTX with ptxas -----------------===//

#include "PtxAssembler.h"

#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>

using namespace conv3d_sweep;

llvm::StringRef conv3d_sweep::stringifyKernelKind(KernelKind kind) {
  switch (kind) {
  case KernelKind::Tcgen05Cta1:
    return "tcgen05-cta1";
  case KernelKind::Tcgen05Cta2:
    return "tcgen05-cta2";
  case KernelKind::BlockScaled:
    return "block-scaled";
  case KernelKind::Wgmma:
    return "wgmma";
  case KernelKind::MmaSync:
    return "mma.sync";
  case KernelKind::NoMma:
    return "no-mma";
  }
  return "unknown";
}

static KernelKind classify(llvm::StringRef ptx) {
  if (ptx.contains("kind::mxf4nvf4"))
    return KernelKind::BlockScaled;
  if (ptx.contains("tcgen05.mma.cta_group::2"))
    return KernelKind::Tcgen05Cta2;
  if (ptx.contains("tcgen05.mma.cta_group::1"))
    return KernelKind::Tcgen05Cta1;
  if (ptx.contains("wgmma.mma_async"))
    return KernelKind::Wgmma;
  if (ptx.contains("mma.sync"))
    return KernelKind::MmaSync;
  return KernelKind::NoMma;
}

/// A new temporary file's path (the caller removes it).
static llvm::Expected<std::string> temporaryFile(llvm::StringRef suffix) {
  llvm::SmallString<128> path;
  if (std::error_code ec =
          llvm::sys::fs::createTemporaryFile("conv3d-sweep", suffix, path))
    return llvm::createStringError(ec, "cannot create a temporary file");
  return std::string(path);
}

/// Assembles one module; an error names what went wrong.
static llvm::Error assembleOne(llvm::StringRef name, llvm::StringRef ptx,
                               llvm::StringRef ptxas, llvm::StringRef chip,
                               AssembledKernel &kernel) {
  std::string paths[3];
  for (auto [path, suffix] :
       {std::pair{&paths[0], "ptx"}, std::pair{&paths[1], "cubin"},
        std::pair{&paths[2], "log"}}) {
    llvm::Expected<std::string> created = temporaryFile(suffix);
    if (!created)
      return created.takeError();
    *path = *created;
  }
  llvm::scope_exit cleanup([&] {
    for (const std::string &path : paths)
      llvm::sys::fs::remove(path);
  });
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(paths[0], ec);
    if (ec)
      return llvm::createStringError(ec, "cannot write " + paths[0]);
    os << ptx;
  }
  std::string arch = ("-arch=" + chip).str();
  llvm::SmallVector<llvm::StringRef> args = {ptxas, arch, paths[0], "-o",
                                             paths[1]};
  std::optional<llvm::StringRef> redirects[] = {std::nullopt, paths[2],
                                                paths[2]};
  std::string error;
  int status = llvm::sys::ExecuteAndWait(ptxas, args, /*Env=*/std::nullopt,
                                         redirects, /*SecondsToWait=*/300,
                                         /*MemoryLimit=*/0, &error);
  std::string log;
  if (llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buffer =
          llvm::MemoryBuffer::getFile(paths[2]))
    log = (*buffer)->getBuffer().trim().str();
  if (status != 0)
    return llvm::createStringError(
        "ptxas " + arch + " failed on " + name.str() + " (status " +
        std::to_string(status) + (error.empty() ? "" : ", " + error) +
        "): " + log);
  llvm::SmallVector<llvm::StringRef> lines;
  llvm::StringRef(log).split(lines, '\n', -1, false);
  // "Potential Performance Loss" (C7510-C7520): wgmmas serialized, which
  // the sm90 kernel must never be.
  for (llvm::StringRef line : lines)
    if (line.contains_insensitive("warning") ||
        line.contains("Potential Performance Loss"))
      return llvm::createStringError("ptxas " + arch + " warns on " +
                                     name.str() + ": " + line.trim().str());
  uint64_t bytes = 0;
  if (std::error_code ec = llvm::sys::fs::file_size(paths[1], bytes);
      ec || bytes == 0)
    return llvm::createStringError("ptxas " + arch + " wrote no cubin for " +
                                   name.str());
  kernel.name = name.str();
  kernel.kind = classify(ptx);
  kernel.cubinBytes = bytes;
  return llvm::Error::success();
}

llvm::Expected<std::vector<AssembledKernel>>
conv3d_sweep::assemblePtxModules(llvm::StringRef emitted, llvm::StringRef ptxas,
                                 llvm::StringRef chip) {
  constexpr llvm::StringLiteral kMarker = "// conv3d: gpu.module @";
  std::vector<AssembledKernel> kernels;
  size_t at = emitted.find(kMarker);
  while (at != llvm::StringRef::npos) {
    llvm::StringRef rest = emitted.drop_front(at + kMarker.size());
    auto [name, body] = rest.split('\n');
    size_t next = body.find(kMarker);
    llvm::StringRef ptx = body.take_front(next);
    AssembledKernel kernel;
    if (llvm::Error error = assembleOne(name.trim(), ptx, ptxas, chip, kernel))
      return std::move(error);
    kernels.push_back(std::move(kernel));
    at = next == llvm::StringRef::npos
             ? next
             : size_t(body.data() - emitted.data()) + next;
  }
  if (kernels.empty())
    return llvm::createStringError("no PTX module in the emitted code");
  return kernels;
}
