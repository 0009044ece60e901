//===- BenchmarkSuite.cpp - the JSON benchmark suite ----------------------===//

#include "conv3d/Runtime/BenchmarkSuite.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"

using namespace mlir;
using namespace mlir::conv3d;

static llvm::Expected<BenchmarkShape> parseShape(const llvm::json::Value &value,
                                                 size_t index) {
  auto fail = [&](const llvm::Twine &what) {
    return llvm::createStringError(
        llvm::formatv("shape #{0}: {1}", index, what.str()).str());
  };
  const llvm::json::Object *object = value.getAsObject();
  if (!object)
    return fail("not an object");
  BenchmarkShape shape;
  if (std::optional<llvm::StringRef> name = object->getString("name"))
    shape.name = name->str();
  else
    return fail("missing \"name\"");
  auto integer = [&](llvm::StringRef key, int64_t &out) -> llvm::Error {
    std::optional<int64_t> v = object->getInteger(key);
    if (!v)
      return fail("'" + shape.name + "' has no integer \"" + key + "\"");
    out = *v;
    return llvm::Error::success();
  };
  auto triple = [&](llvm::StringRef key,
                    std::array<int64_t, 3> &out) -> llvm::Error {
    const llvm::json::Array *array = object->getArray(key);
    if (!array || array->size() != 3)
      return fail("'" + shape.name + "' needs a 3-element \"" + key + "\"");
    for (unsigned i = 0; i < 3; ++i) {
      std::optional<int64_t> v = (*array)[i].getAsInteger();
      if (!v)
        return fail("'" + shape.name + "': \"" + key + "\" must hold integers");
      out[i] = *v;
    }
    return llvm::Error::success();
  };
  ConvGeometry &g = shape.geometry;
  std::array<int64_t, 3> pad;
  if (llvm::Error e = integer("N", g.batch))
    return std::move(e);
  if (llvm::Error e = integer("C", g.channels))
    return std::move(e);
  if (llvm::Error e = integer("D", g.inputSize[0]))
    return std::move(e);
  if (llvm::Error e = integer("H", g.inputSize[1]))
    return std::move(e);
  if (llvm::Error e = integer("W", g.inputSize[2]))
    return std::move(e);
  if (llvm::Error e = integer("F", g.filters))
    return std::move(e);
  if (llvm::Error e = triple("k", g.window))
    return std::move(e);
  if (llvm::Error e = triple("stride", g.strides))
    return std::move(e);
  if (llvm::Error e = triple("pad", pad))
    return std::move(e);
  g.padLow = pad;
  g.padHigh = pad;
  if (std::optional<std::string> problem = g.validate())
    return fail("'" + shape.name + "': " + *problem);
  return shape;
}

llvm::Expected<std::vector<BenchmarkShape>>
mlir::conv3d::loadBenchmarkSuite(llvm::StringRef path) {
  auto buffer = llvm::MemoryBuffer::getFile(path);
  if (!buffer)
    return llvm::createStringError("cannot read suite '" + path.str() +
                                   "': " + buffer.getError().message());
  llvm::Expected<llvm::json::Value> json =
      llvm::json::parse((*buffer)->getBuffer());
  if (!json)
    return llvm::createStringError(
        "suite '" + path.str() +
        "' is not valid JSON: " + llvm::toString(json.takeError()));
  const llvm::json::Object *root = json->getAsObject();
  const llvm::json::Array *shapes = root ? root->getArray("shapes") : nullptr;
  if (!shapes)
    return llvm::createStringError("suite '" + path.str() +
                                   "' has no \"shapes\" array");
  std::vector<BenchmarkShape> result;
  // A preset is looked up by name: two shapes of one name would make the
  // second unreachable.
  llvm::StringMap<size_t> indexOfName;
  for (auto [i, value] : llvm::enumerate(*shapes)) {
    llvm::Expected<BenchmarkShape> shape = parseShape(value, i);
    if (!shape)
      return shape.takeError();
    auto [it, inserted] = indexOfName.try_emplace(shape->name, i);
    if (!inserted)
      return llvm::createStringError(
          llvm::formatv("suite '{0}': shapes #{1} and #{2} are both named "
                        "'{3}'; names must be unique",
                        path, it->second, i, shape->name)
              .str());
    result.push_back(std::move(*shape));
  }
  return result;
}

llvm::Expected<BenchmarkShape>
mlir::conv3d::loadBenchmarkShape(llvm::StringRef path, llvm::StringRef name) {
  llvm::Expected<std::vector<BenchmarkShape>> suite = loadBenchmarkSuite(path);
  if (!suite)
    return suite.takeError();
  std::string names;
  for (BenchmarkShape &shape : *suite) {
    if (shape.name == name)
      return std::move(shape);
    names += (names.empty() ? "" : ", ") + shape.name;
  }
  return llvm::createStringError("no preset '" + name.str() + "' in '" +
                                 path.str() + "' (presets: " + names + ")");
}
