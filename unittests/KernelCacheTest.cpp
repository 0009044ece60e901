//===- KernelCacheTest.cpp - memory and disk cache of compiled convs ------===//
//
// The disk format (round trip, misses on damaged or foreign entries), the
// engine's use of both caches (a second engine, standing in for a second
// process, loads what the first stored and computes the same correct
// result; a damaged entry is recompiled and replaced), the key's
// sensitivity to every input, and concurrent compile() calls.
//
//===----------------------------------------------------------------------===//

#include "conv3d/Runtime/KernelCache.h"
#include "conv3d/Reference/ReferenceConv.h"
#include "conv3d/Runtime/Engine.h"
#include "conv3d/Runtime/HostRunner.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <sys/stat.h>

#include <thread>

using namespace mlir::conv3d;

namespace {

/// A fresh directory, removed with its contents at the end of the test.
class TempDir {
public:
  TempDir() {
    llvm::SmallString<128> dir;
    EXPECT_FALSE(llvm::sys::fs::createUniqueDirectory("conv3d-cache", dir));
    path = std::string(dir);
  }
  ~TempDir() { llvm::sys::fs::remove_directories(path); }
  std::string sub(llvm::StringRef name) const {
    llvm::SmallString<128> p(path);
    llvm::sys::path::append(p, name);
    return std::string(p);
  }
  std::string path;
};

void writeFile(llvm::StringRef path, llvm::StringRef bytes) {
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec);
  ASSERT_FALSE(ec) << ec.message();
  os << bytes;
}

std::string readFile(llvm::StringRef path) {
  auto buffer = llvm::MemoryBuffer::getFile(path);
  return buffer ? (*buffer)->getBuffer().str() : std::string();
}

TEST(DiskCache, RoundTripCreatesTheDirectory) {
  TempDir tmp;
  DiskCache cache(tmp.sub("nested/dir"));
  EXPECT_FALSE(cache.load("key one").has_value());
  std::string payload("binary\0payload\nwith bytes", 25);
  ASSERT_FALSE(static_cast<bool>(cache.store("key one", payload)));
  std::optional<std::string> loaded = cache.load("key one");
  ASSERT_TRUE(loaded.has_value());
  EXPECT_EQ(*loaded, payload);
  EXPECT_FALSE(cache.load("key two").has_value());
  // Storing again replaces the entry.
  ASSERT_FALSE(static_cast<bool>(cache.store("key one", "second")));
  EXPECT_EQ(cache.load("key one").value_or(""), "second");
}

TEST(DiskCache, DamagedOrForeignEntriesAreMisses) {
  TempDir tmp;
  DiskCache cache(tmp.path);
  ASSERT_FALSE(static_cast<bool>(cache.store("key A", "payload A")));
  std::string entry = readFile(cache.pathFor("key A"));
  ASSERT_FALSE(entry.empty());

  // An entry whose stored key text differs (what a hash collision would
  // look like) is not returned for the other key.
  writeFile(cache.pathFor("key B"), entry);
  EXPECT_FALSE(cache.load("key B").has_value());
  // Truncated inside the key text, and garbage.
  writeFile(cache.pathFor("key A"), entry.substr(0, entry.find("key A") + 2));
  EXPECT_FALSE(cache.load("key A").has_value());
  writeFile(cache.pathFor("key A"), "not a cache entry");
  EXPECT_FALSE(cache.load("key A").has_value());
}

TEST(DiskCache, EveryBitFlipOfAnEntryIsAMiss) {
  TempDir tmp;
  DiskCache cache(tmp.path);
  std::string payload = "lowered module bytes \x01\x02\x03 of some length";
  ASSERT_FALSE(static_cast<bool>(cache.store("key A", payload)));
  std::string entry = readFile(cache.pathFor("key A"));
  // Flipping any bit of the stored entry never yields a different payload:
  // the header no longer parses, the key differs, or the checksum fails.
  for (size_t byte = 0; byte < entry.size(); ++byte)
    for (int bit = 0; bit < 8; ++bit) {
      std::string damaged = entry;
      damaged[byte] = char(damaged[byte] ^ (1 << bit));
      writeFile(cache.pathFor("key A"), damaged);
      std::optional<std::string> loaded = cache.load("key A");
      ASSERT_TRUE(!loaded || *loaded == payload)
          << "byte " << byte << " bit " << bit;
      EXPECT_FALSE(loaded.has_value()) << "byte " << byte << " bit " << bit;
    }
  // A damaged payload is reported with the file's name.
  std::string damaged = entry;
  damaged.back() ^= 1;
  writeFile(cache.pathFor("key A"), damaged);
  std::string warning;
  EXPECT_FALSE(cache.load("key A", &warning).has_value());
  EXPECT_NE(warning.find(cache.pathFor("key A")), std::string::npos);
  EXPECT_NE(warning.find("checksum mismatch"), std::string::npos);
}

TEST(DiskCache, OnlyRegularFilesAreRead) {
  TempDir tmp;
  DiskCache cache(tmp.path);
  // A FIFO would block a reader forever; a link to /dev/zero would be read
  // without end. Both are misses with a warning, at once.
  std::string fifo = cache.pathFor("fifo key");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  std::string warning;
  EXPECT_FALSE(cache.load("fifo key", &warning).has_value());
  EXPECT_NE(warning.find("not a regular file"), std::string::npos);
  std::string device = cache.pathFor("device key");
  ASSERT_FALSE(llvm::sys::fs::create_link("/dev/zero", device));
  warning.clear();
  EXPECT_FALSE(cache.load("device key", &warning).has_value());
  EXPECT_NE(warning.find("not a regular file"), std::string::npos);
  // A missing entry is a plain miss, without a warning.
  warning.clear();
  EXPECT_FALSE(cache.load("absent key", &warning).has_value());
  EXPECT_TRUE(warning.empty());
}

TEST(DiskCache, UnwritableDirectoryIsAnError) {
  TempDir tmp;
  std::string file = tmp.sub("a-file");
  writeFile(file, "x");
  DiskCache cache(file + "/below-a-file");
  llvm::Error error = cache.store("key", "payload");
  ASSERT_TRUE(static_cast<bool>(error));
  EXPECT_NE(llvm::toString(std::move(error)).find("cache directory"),
            std::string::npos);
}

ConvSpec smallSpec() {
  ConvSpec spec;
  ConvGeometry &g = spec.geometry;
  g.batch = 1;
  g.inputSize = {5, 6, 7};
  g.channels = 8;
  g.window = {3, 3, 3};
  g.filters = 12;
  g.padLow = {2, 1, 1};
  g.padHigh = {0, 1, 1};
  spec.inputType = ElementType::bf16;
  spec.outputType = ElementType::bf16;
  spec.hasBias = true;
  spec.activation = Activation::silu;
  return spec;
}

/// Runs `conv` on fresh random data (poisoned output) and returns its
/// relative L2 error against the double-precision reference.
double runAndCheck(const CompiledConv &conv, uint64_t seed) {
  const ConvSpec &spec = conv.getSpec();
  HostTensor input = HostTensor::zeros(spec.inputType, spec.inputShape());
  fillRandomNormal(input, seed, 1.0);
  HostTensor filter = HostTensor::zeros(spec.inputType, spec.filterShape());
  fillRandomNormal(filter, seed + 1, 0.2);
  HostTensor bias =
      HostTensor::zeros(ElementType::f32, {spec.geometry.filters});
  fillRandomNormal(bias, seed + 2, 0.5);
  HostTensor output = HostTensor::zeros(spec.outputType, spec.outputShape());
  fillPoison(output);
  HostConvBuffers buffers;
  buffers.input = &input;
  buffers.filter = &filter;
  buffers.bias = &bias;
  buffers.output = &output;
  if (llvm::Error error = runWithHostBuffers(conv, buffers)) {
    ADD_FAILURE() << llvm::toString(std::move(error));
    return INFINITY;
  }
  return relativeL2Error(
      referenceConv(referenceProblem(spec, buffers, /*init=*/nullptr)), output);
}

TEST(KernelCache, SecondEngineLoadsFromDisk) {
  TempDir tmp;
  ConvSpec spec = smallSpec();
  CompileOptions options;
  CacheOptions cache;
  cache.directory = tmp.path;
  double tolerance = defaultTolerance(spec.outputType);

  Engine first(cache);
  auto compiled = first.compile(spec, options);
  ASSERT_TRUE(static_cast<bool>(compiled))
      << llvm::toString(compiled.takeError());
  EXPECT_EQ((*compiled)->getStats().source, CacheSource::Compiled);
  EXPECT_TRUE((*compiled)->getStats().cacheWarning.empty());
  DiskCache disk(tmp.path);
  std::string key = first.cacheKey(spec, options);
  EXPECT_TRUE(llvm::sys::fs::exists(disk.pathFor(key)));
  EXPECT_LT(runAndCheck(**compiled, 11), tolerance);

  // The same engine answers from memory.
  auto again = first.compile(spec, options);
  ASSERT_TRUE(static_cast<bool>(again));
  EXPECT_EQ((*again)->getStats().source, CacheSource::Memory);
  EXPECT_LT(runAndCheck(**again, 12), tolerance);

  // A second engine (a second process) loads the lowered module from disk
  // and computes correctly on new data.
  Engine second(cache);
  auto loaded = second.compile(spec, options);
  ASSERT_TRUE(static_cast<bool>(loaded)) << llvm::toString(loaded.takeError());
  EXPECT_EQ((*loaded)->getStats().source, CacheSource::Disk);
  EXPECT_LT(runAndCheck(**loaded, 13), tolerance);

  // Other options are another entry.
  CompileOptions forced = options;
  forced.config = "tile_m=16,tile_n=8,tile_k=8";
  auto other = second.compile(spec, forced);
  ASSERT_TRUE(static_cast<bool>(other));
  EXPECT_EQ((*other)->getStats().source, CacheSource::Compiled);
  EXPECT_LT(runAndCheck(**other, 14), tolerance);
}

TEST(KernelCache, DamagedEntryIsRecompiledAndReplaced) {
  TempDir tmp;
  ConvSpec spec = smallSpec();
  CompileOptions options;
  CacheOptions cache;
  cache.directory = tmp.path;
  DiskCache disk(tmp.path);
  {
    Engine engine(cache);
    ASSERT_TRUE(static_cast<bool>(engine.compile(spec, options)));
  }
  Engine probe(CacheOptions{});
  std::string path = disk.pathFor(probe.cacheKey(spec, options));
  std::string entry = readFile(path);
  ASSERT_GT(entry.size(), 100u);
  // Keep the header and key, cut the bytecode short.
  writeFile(path, entry.substr(0, entry.size() - entry.size() / 3));

  Engine second(cache);
  auto recompiled = second.compile(spec, options);
  ASSERT_TRUE(static_cast<bool>(recompiled))
      << llvm::toString(recompiled.takeError());
  EXPECT_EQ((*recompiled)->getStats().source, CacheSource::Compiled);
  EXPECT_LT(runAndCheck(**recompiled, 21), defaultTolerance(spec.outputType));
  EXPECT_EQ(readFile(path), entry);

  Engine third(cache);
  auto loaded = third.compile(spec, options);
  ASSERT_TRUE(static_cast<bool>(loaded));
  EXPECT_EQ((*loaded)->getStats().source, CacheSource::Disk);
}

TEST(KernelCache, AnotherConvolutionsModuleIsRecompiled) {
  // A valid entry of another convolution (a larger one) stored under this
  // convolution's key, checksum and all: running it would read and write
  // past this convolution's buffers. The module's key stamp tells.
  TempDir tmp;
  ConvSpec spec = smallSpec();
  ConvSpec other = smallSpec();
  other.geometry.inputSize = {9, 10, 11};
  other.geometry.filters = 40;
  CompileOptions options;
  CacheOptions cache;
  cache.directory = tmp.path;
  DiskCache disk(tmp.path);
  {
    Engine engine(cache);
    ASSERT_TRUE(static_cast<bool>(engine.compile(other, options)));
  }
  Engine probe(CacheOptions{});
  std::string key = probe.cacheKey(spec, options);
  std::optional<std::string> otherModule =
      disk.load(probe.cacheKey(other, options));
  ASSERT_TRUE(otherModule.has_value());
  ASSERT_FALSE(static_cast<bool>(disk.store(key, *otherModule)));

  Engine engine(cache);
  auto compiled = engine.compile(spec, options);
  ASSERT_TRUE(static_cast<bool>(compiled))
      << llvm::toString(compiled.takeError());
  EXPECT_EQ((*compiled)->getStats().source, CacheSource::Compiled);
  EXPECT_NE((*compiled)->getStats().cacheWarning.find(
                "holds a module compiled for another convolution"),
            std::string::npos)
      << (*compiled)->getStats().cacheWarning;
  EXPECT_LT(runAndCheck(**compiled, 23), defaultTolerance(spec.outputType));
  // The entry was replaced by this convolution's own.
  Engine third(cache);
  auto loaded = third.compile(spec, options);
  ASSERT_TRUE(static_cast<bool>(loaded));
  EXPECT_EQ((*loaded)->getStats().source, CacheSource::Disk);
}

TEST(KernelCache, KeyCoversSpecOptionsAndCompiler) {
  Engine engine(CacheOptions{});
  ConvSpec spec = smallSpec();
  CompileOptions options;
  std::string base = engine.cacheKey(spec, options);
  EXPECT_NE(base.find(compilerIdentity().str()), std::string::npos);
  EXPECT_EQ(engine.cacheKey(spec, options), base);

  std::vector<std::string> keys = {base};
  auto add = [&](const ConvSpec &s, const CompileOptions &o) {
    keys.push_back(engine.cacheKey(s, o));
  };
  ConvSpec s = spec;
  s.geometry.strides[2] = 2;
  add(s, options);
  s = spec;
  s.outputType = ElementType::f32;
  add(s, options);
  s = spec;
  s.accumulate = true;
  add(s, options);
  s = spec;
  s.inputQuantBlockSize = 16;
  add(s, options);
  s = spec;
  s.filterLayout = FilterLayout::fqrsc;
  add(s, options);
  CompileOptions o = options;
  o.qslice = "fused";
  add(spec, o);
  o = options;
  o.quantPlacement = "prepass";
  add(spec, o);
  o = options;
  o.lowering = CpuLowering::Reference;
  add(spec, o);
  o = options;
  o.target = Target::sm80;
  o.gpuChip = "sm_80";
  add(spec, o);
  o.gpuChip = "sm_90";
  add(spec, o);
  o.cudaHome = "/nonexistent/cuda";
  add(spec, o);
  std::sort(keys.begin(), keys.end());
  EXPECT_EQ(std::unique(keys.begin(), keys.end()), keys.end())
      << "two different compilations share a cache key";
}

TEST(KernelCache, ConcurrentCompilesShareOneCompilation) {
  TempDir tmp;
  CacheOptions cache;
  cache.directory = tmp.path;
  Engine engine(cache);
  ConvSpec spec = smallSpec();
  constexpr int kThreads = 4;
  std::vector<std::shared_ptr<const CompiledConv>> results(kThreads);
  std::vector<std::string> errors(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      auto compiled = engine.compile(spec, CompileOptions());
      if (compiled)
        results[t] = *compiled;
      else
        errors[t] = llvm::toString(compiled.takeError());
    });
  for (std::thread &thread : threads)
    thread.join();
  int compiledCount = 0;
  for (int t = 0; t < kThreads; ++t) {
    ASSERT_TRUE(results[t]) << errors[t];
    compiledCount += results[t]->getStats().source == CacheSource::Compiled;
    EXPECT_NE(results[t]->getStats().source, CacheSource::Disk);
  }
  EXPECT_EQ(compiledCount, 1);
  for (int t = 0; t < kThreads; ++t)
    EXPECT_LT(runAndCheck(*results[t], 30 + t),
              defaultTolerance(spec.outputType));
}

TEST(CacheOptions, Environment) {
  auto withEnv = [](const char *name, const char *value) {
    if (value)
      setenv(name, value, 1);
    else
      unsetenv(name);
  };
  std::string saved[3];
  const char *names[3] = {"CONV3D_CACHE_DIR", "XDG_CACHE_HOME", "HOME"};
  bool had[3];
  for (int i = 0; i < 3; ++i) {
    const char *v = getenv(names[i]);
    had[i] = v != nullptr;
    saved[i] = v ? v : "";
  }
  withEnv("CONV3D_CACHE_DIR", "/some/dir");
  EXPECT_EQ(CacheOptions::fromEnvironment().directory, "/some/dir");
  withEnv("CONV3D_CACHE_DIR", "off");
  EXPECT_EQ(CacheOptions::fromEnvironment().directory, "");
  withEnv("CONV3D_CACHE_DIR", "");
  EXPECT_EQ(CacheOptions::fromEnvironment().directory, "");
  withEnv("CONV3D_CACHE_DIR", nullptr);
  withEnv("XDG_CACHE_HOME", "/xdg");
  EXPECT_EQ(CacheOptions::fromEnvironment().directory, "/xdg/conv3d-mlir");
  withEnv("XDG_CACHE_HOME", nullptr);
  withEnv("HOME", "/home/u");
  EXPECT_EQ(CacheOptions::fromEnvironment().directory,
            "/home/u/.cache/conv3d-mlir");
  withEnv("HOME", nullptr);
  EXPECT_EQ(CacheOptions::fromEnvironment().directory, "");
  for (int i = 0; i < 3; ++i)
    withEnv(names[i], had[i] ? saved[i].c_str() : nullptr);
}

} // namespace
