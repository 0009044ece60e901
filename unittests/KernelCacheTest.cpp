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

#include "mlir/Bytecode/BytecodeWriter.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
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

/// Sets a file's modification time `secondsAgo` seconds in the past.
void age(llvm::StringRef path, int secondsAgo) {
  int fd = -1;
  ASSERT_FALSE(llvm::sys::fs::openFileForWrite(
      path, fd, llvm::sys::fs::CD_OpenExisting, llvm::sys::fs::OF_Append));
  auto then = std::chrono::time_point_cast<std::chrono::nanoseconds>(
      std::chrono::system_clock::now() - std::chrono::seconds(secondsAgo));
  EXPECT_FALSE(llvm::sys::fs::setLastAccessAndModificationTime(fd, then));
  ::close(fd);
}

uint64_t fileSize(llvm::StringRef path) {
  uint64_t size = 0;
  EXPECT_FALSE(llvm::sys::fs::file_size(path, size)) << path.str();
  return size;
}

TEST(DiskCache, EvictsTheLeastRecentlyUsedBeyondTheBound) {
  TempDir tmp;
  std::string payload(1000, 'p');
  // Measure one entry, then bound the directory to two and a half of them.
  uint64_t entryBytes;
  {
    DiskCache probe(tmp.sub("probe"));
    ASSERT_FALSE(static_cast<bool>(probe.store("key A", payload)));
    entryBytes = fileSize(probe.pathFor("key A"));
  }
  DiskCache cache(tmp.path, entryBytes * 5 / 2);
  ASSERT_FALSE(static_cast<bool>(cache.store("key A", payload)));
  ASSERT_FALSE(static_cast<bool>(cache.store("key B", payload)));
  age(cache.pathFor("key A"), 300);
  age(cache.pathFor("key B"), 200);
  // Files that are not entries are never touched; a temporary abandoned
  // by a dead writer (hours old) is deleted, a fresh one (being written)
  // is not.
  writeFile(tmp.sub("notes.txt"), std::string(5000, 'n'));
  age(tmp.sub("notes.txt"), 9000);
  writeFile(tmp.sub("tmp-abandoned"), "partial");
  age(tmp.sub("tmp-abandoned"), 7200);
  writeFile(tmp.sub("tmp-writing"), "partial");

  // A hit makes A the most recently used: storing C evicts B, the older.
  EXPECT_EQ(cache.load("key A").value_or(""), payload);
  ASSERT_FALSE(static_cast<bool>(cache.store("key C", payload)));
  EXPECT_TRUE(cache.load("key A").has_value());
  EXPECT_FALSE(llvm::sys::fs::exists(cache.pathFor("key B")));
  EXPECT_TRUE(cache.load("key C").has_value());
  EXPECT_TRUE(llvm::sys::fs::exists(tmp.sub("notes.txt")));
  EXPECT_FALSE(llvm::sys::fs::exists(tmp.sub("tmp-abandoned")));
  EXPECT_TRUE(llvm::sys::fs::exists(tmp.sub("tmp-writing")));

  // The entry just stored stays even when it alone exceeds the bound.
  DiskCache tiny(tmp.path, 10);
  ASSERT_FALSE(static_cast<bool>(tiny.store("key D", payload)));
  EXPECT_EQ(tiny.load("key D").value_or(""), payload);
  EXPECT_FALSE(tiny.load("key A").has_value());
  EXPECT_FALSE(tiny.load("key C").has_value());

  // 0: no bound.
  DiskCache unbounded(tmp.path, 0);
  for (const char *key : {"key E", "key F", "key G"})
    ASSERT_FALSE(static_cast<bool>(unbounded.store(key, payload)));
  for (const char *key : {"key D", "key E", "key F", "key G"})
    EXPECT_TRUE(unbounded.load(key).has_value()) << key;
}

TEST(DiskCache, ConcurrentEvictionIsNeverAnError) {
  // Threads standing in for processes store and load in one small
  // directory, evicting each other's entries: a store always succeeds, a
  // load is a hit with the right payload or a plain miss, never a warning.
  TempDir tmp;
  constexpr int kThreads = 4, kKeys = 40;
  std::vector<std::string> failures(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      DiskCache cache(tmp.path, 8 * 1024);
      for (int i = 0; i < kKeys; ++i) {
        std::string key = "key " + std::to_string((i * 7 + t) % kKeys);
        std::string payload(1000, char('a' + (i * 7 + t) % kKeys));
        if (llvm::Error error = cache.store(key, payload))
          failures[t] += llvm::toString(std::move(error)) + "\n";
        for (int j = 0; j < kKeys; j += 5) {
          std::string other = "key " + std::to_string(j);
          std::string warning;
          std::optional<std::string> loaded = cache.load(other, &warning);
          if (!warning.empty())
            failures[t] += warning + "\n";
          if (loaded && *loaded != std::string(1000, char('a' + j)))
            failures[t] += "wrong payload for " + other + "\n";
        }
      }
    });
  for (std::thread &thread : threads)
    thread.join();
  for (int t = 0; t < kThreads; ++t)
    EXPECT_TRUE(failures[t].empty()) << failures[t];
  // A last store brings the directory within the bound.
  DiskCache cache(tmp.path, 8 * 1024);
  ASSERT_FALSE(static_cast<bool>(cache.store("last", "x")));
  uint64_t total = 0;
  std::error_code ec;
  for (llvm::sys::fs::directory_iterator it(tmp.path, ec), end;
       !ec && it != end; it.increment(ec))
    total += fileSize(it->path());
  EXPECT_LE(total, 8u * 1024);
}

TEST(DiskCache, EntryDeletedByAnotherProcessIsAPlainMiss) {
  TempDir tmp;
  DiskCache cache(tmp.path);
  ASSERT_FALSE(static_cast<bool>(cache.store("key", "payload")));
  ASSERT_FALSE(llvm::sys::fs::remove(cache.pathFor("key")));
  std::string warning;
  EXPECT_FALSE(cache.load("key", &warning).has_value());
  EXPECT_TRUE(warning.empty()) << warning;
  EXPECT_EQ(cache.evict(), 0u);
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

TEST(KernelCache, EntryWhoseFunctionDiffersFromTheSpecIsRecompiled) {
  // A module stamped with this convolution's key (checksum and all) whose
  // function takes other parameters (here: no bias) must not be called:
  // its signature is checked against the spec before the first call.
  TempDir tmp;
  ConvSpec spec = smallSpec();
  ConvSpec noBias = smallSpec();
  noBias.hasBias = false;
  CompileOptions options;
  CacheOptions cache;
  cache.directory = tmp.path;
  DiskCache disk(tmp.path);
  Engine probe(CacheOptions{});
  std::string key = probe.cacheKey(spec, options);
  {
    Engine engine(cache);
    ASSERT_TRUE(static_cast<bool>(engine.compile(noBias, options)));
  }
  std::optional<std::string> bytes = disk.load(probe.cacheKey(noBias, options));
  ASSERT_TRUE(bytes.has_value());
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceString<mlir::ModuleOp>(
          *bytes, mlir::ParserConfig(&probe.getContext()));
  ASSERT_TRUE(module);
  (*module)->setAttr(
      "conv3d.cache_key",
      mlir::StringAttr::get(&probe.getContext(), DiskCache::entryName(key)));
  std::string restamped;
  llvm::raw_string_ostream os(restamped);
  ASSERT_TRUE(mlir::succeeded(mlir::writeBytecodeToFile(*module, os)));
  ASSERT_FALSE(static_cast<bool>(disk.store(key, restamped)));

  Engine engine(cache);
  auto compiled = engine.compile(spec, options);
  ASSERT_TRUE(static_cast<bool>(compiled))
      << llvm::toString(compiled.takeError());
  EXPECT_EQ((*compiled)->getStats().source, CacheSource::Compiled);
  const std::string &warning = (*compiled)->getStats().cacheWarning;
  EXPECT_NE(warning.find(disk.pathFor(key)), std::string::npos) << warning;
  EXPECT_NE(warning.find("function 'conv3d' does not match its spec"),
            std::string::npos)
      << warning;
  EXPECT_LT(runAndCheck(**compiled, 27), defaultTolerance(spec.outputType));
  Engine third(cache);
  auto loaded = third.compile(spec, options);
  ASSERT_TRUE(static_cast<bool>(loaded));
  EXPECT_EQ((*loaded)->getStats().source, CacheSource::Disk);
}

TEST(KernelCache, EngineBoundsTheDirectory) {
  // Three convolutions in a directory bounded to about two entries: the
  // least recently used is evicted, and compiling it again works.
  TempDir tmp;
  ConvSpec specs[3] = {smallSpec(), smallSpec(), smallSpec()};
  specs[1].geometry.filters = 16;
  specs[2].geometry.filters = 20;
  CompileOptions options;
  Engine probe(CacheOptions{});
  DiskCache disk(tmp.path);
  CacheOptions cache;
  cache.directory = tmp.path;
  cache.inMemory = false;
  {
    Engine engine(cache);
    ASSERT_TRUE(static_cast<bool>(engine.compile(specs[0], options)));
  }
  uint64_t entryBytes =
      fileSize(disk.pathFor(probe.cacheKey(specs[0], options)));
  cache.maxBytes = entryBytes * 5 / 2;
  Engine engine(cache);
  ASSERT_TRUE(static_cast<bool>(engine.compile(specs[1], options)));
  age(disk.pathFor(probe.cacheKey(specs[0], options)), 100);
  ASSERT_TRUE(static_cast<bool>(engine.compile(specs[2], options)));
  EXPECT_FALSE(
      llvm::sys::fs::exists(disk.pathFor(probe.cacheKey(specs[0], options))));
  for (int i : {1, 2}) {
    auto loaded = engine.compile(specs[i], options);
    ASSERT_TRUE(static_cast<bool>(loaded));
    EXPECT_EQ((*loaded)->getStats().source, CacheSource::Disk) << i;
  }
  auto again = engine.compile(specs[0], options);
  ASSERT_TRUE(static_cast<bool>(again)) << llvm::toString(again.takeError());
  EXPECT_EQ((*again)->getStats().source, CacheSource::Compiled);
  EXPECT_LT(runAndCheck(**again, 28), defaultTolerance(specs[0].outputType));
}

TEST(CacheOptions, MaxMBFromEnvironment) {
  const char *saved = getenv("CONV3D_CACHE_MAX_MB");
  std::string savedValue = saved ? saved : "";
  unsetenv("CONV3D_CACHE_MAX_MB");
  EXPECT_EQ(CacheOptions::fromEnvironment().maxBytes, uint64_t(1) << 30);
  setenv("CONV3D_CACHE_MAX_MB", "5", 1);
  EXPECT_EQ(CacheOptions::fromEnvironment().maxBytes, uint64_t(5) << 20);
  EXPECT_TRUE(CacheOptions::fromEnvironment().warning.empty());
  setenv("CONV3D_CACHE_MAX_MB", "0", 1);
  EXPECT_EQ(CacheOptions::fromEnvironment().maxBytes, 0u);
  for (const char *bad : {"lots", "-1", "1.5", "99999999999999999999"}) {
    setenv("CONV3D_CACHE_MAX_MB", bad, 1);
    CacheOptions options = CacheOptions::fromEnvironment();
    EXPECT_EQ(options.maxBytes, CacheOptions::kDefaultMaxBytes) << bad;
    EXPECT_NE(options.warning.find(std::string("got '") + bad + "'"),
              std::string::npos)
        << options.warning;
  }
  if (saved)
    setenv("CONV3D_CACHE_MAX_MB", savedValue.c_str(), 1);
  else
    unsetenv("CONV3D_CACHE_MAX_MB");
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
  o.qslice = QSliceStrategy::Fused;
  add(spec, o);
  o = options;
  o.quantPlacement = QuantPlacement::Prepass;
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
