//===- SizeRelations.cpp - The relations between `?` argument sizes -------===//
//
// The derivation below walks the mha ops as checkShapesFitTogether does
// (verify each op, then give its result the inferred type) but with symbolic
// sizes: a static number, one of the arguments' `?` sizes, or "any" (a `?`
// that checkShapesFitTogether leaves `?`, e.g. the declared result of
// mha.attention_weights, which agrees with every size). It states each
// verifier rule that can involve a `?` size: the equalities of
// ShapeChecker::dim (batch, sequence lengths, head counts), the mask's
// "batch is 1 or the layer's", and the declared result type of each op.
// Widths, head counts and head dimensions must be static for the verifiers
// anyway, so divisibility and products never involve a `?` size. When a
// verifier changes, this must follow: test/unit/SizeRelationsTest.cpp
// compares both on every graph of test/aot/Inputs/graphs.
//
//===----------------------------------------------------------------------===//

#include "runtime/GraphSignature.h"

#include "dialects/MhaOps.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using llvm::createStringError;

namespace mha::runtime {

namespace {
/// A size as the derivation sees it.
struct Size {
  enum Kind { kStatic, kSymbol, kAny } kind = kAny;
  /// The number (kStatic) or the argument size's index (kSymbol).
  int64_t value = 0;

  static Size fixed(int64_t value) { return {kStatic, value}; }
  static Size symbol(int64_t index) { return {kSymbol, index}; }
  static Size any() { return {}; }
};
using SymbolicShape = llvm::SmallVector<Size>;

class RelationDeriver {
public:
  explicit RelationDeriver(unsigned numSymbols)
      : parent(numSymbols), fixedSize(numSymbols) {
    for (unsigned i = 0; i < numSymbols; ++i)
      parent[i] = i;
  }

  /// The class representative of a symbol.
  unsigned find(unsigned symbol) {
    while (parent[symbol] != symbol)
      symbol = parent[symbol] = parent[parent[symbol]];
    return symbol;
  }

  /// Resolves a symbol whose class has a fixed size to that number.
  Size resolve(Size size) {
    if (size.kind != Size::kSymbol)
      return size;
    unsigned root = find(size.value);
    if (fixedSize[root])
      return Size::fixed(*fixedSize[root]);
    return Size::symbol(root);
  }

  /// ShapeChecker::dim: `a` and `b` agree unless one is `?` at run time.
  void equal(Size a, Size b) {
    a = resolve(a);
    b = resolve(b);
    if (a.kind == Size::kAny || b.kind == Size::kAny)
      return;
    if (a.kind == Size::kStatic && b.kind == Size::kStatic) {
      if (a.value != b.value && !conflict)
        conflict = llvm::formatv("{0} and {1}", a.value, b.value).str();
      return;
    }
    if (a.kind == Size::kStatic)
      std::swap(a, b);
    if (b.kind == Size::kStatic) {
      fixedSize[a.value] = b.value;
      return;
    }
    if (a.value != b.value)
      parent[b.value] = a.value;
  }

  /// verifyMask: a mask batch is 1 or equal to the layer's batch.
  void oneOrEqual(Size mask, Size batch) { pending.push_back({mask, batch}); }

  /// CacheAppendOp::verify: `a` is at most `b` (checked by the verifier
  /// once both are static, which they are for real argument shapes).
  void atMost(Size a, Size b) { bounds.push_back({a, b}); }

  /// The `a <= b` rules that involve an argument's `?` size, once settled;
  /// a rule between two numbers that fails is a conflict.
  std::vector<std::pair<Size, Size>> atMostRules() {
    std::vector<std::pair<Size, Size>> result;
    for (auto [a, b] : bounds) {
      Size lhs = resolve(a), rhs = resolve(b);
      if (lhs.kind == Size::kAny || rhs.kind == Size::kAny)
        continue;
      if (lhs.kind == Size::kStatic && rhs.kind == Size::kStatic) {
        if (lhs.value > rhs.value && !conflict)
          conflict =
              llvm::formatv("{0} and at most {1}", lhs.value, rhs.value).str();
        continue;
      }
      if (lhs.kind == Size::kSymbol && rhs.kind == Size::kSymbol &&
          lhs.value == rhs.value)
        continue;
      result.push_back({lhs, rhs});
    }
    return result;
  }

  /// The mask rules of verifyMask.
  void mask(const SymbolicShape &mask, Size batch, Size queries, Size keys) {
    oneOrEqual(mask[0], batch);
    equal(mask[1], queries);
    equal(mask[2], keys);
  }

  /// The rules of a score bias [B or 1, H or 1, T or 1, S]: a static 1
  /// broadcasts; any other size, `?` included, is the full one, as the
  /// verifier (verifyScoreSteps) and the compiled code read it. Unlike a
  /// mask's batch, a `?` bound to 1 at run time is no broadcast: the code
  /// would read past it as if it were full, so such an input must be refused
  /// here, where every caller (mha-run, the C library, Python) checks sizes.
  /// Its key size is the keys'. (The head count is static.)
  void scoreBias(const SymbolicShape &bias, Size batch, Size queries,
                 Size keys) {
    auto isOne = [](Size size) {
      return size.kind == Size::kStatic && size.value == 1;
    };
    if (!isOne(bias[0]))
      equal(bias[0], batch);
    if (!isOne(bias[2]))
      equal(bias[2], queries);
    equal(bias[3], keys);
  }

  /// Settles the broadcasts that turned out to be equalities (a mask batch
  /// fixed to a number other than 1), until none is left.
  void settle() {
    std::vector<bool> settled(pending.size());
    for (bool changed = true; changed;) {
      changed = false;
      for (auto [index, rule] : llvm::enumerate(pending)) {
        Size mask = resolve(rule.first);
        if (settled[index] || mask.kind != Size::kStatic || mask.value == 1)
          continue;
        equal(mask, rule.second);
        settled[index] = changed = true;
      }
    }
  }

  /// `?` sizes of mask batches that are 1 or something, once settled.
  std::vector<std::pair<Size, Size>> broadcasts() {
    std::vector<std::pair<Size, Size>> result;
    for (auto [mask, batch] : pending) {
      Size m = resolve(mask), b = resolve(batch);
      if (m.kind != Size::kSymbol || b.kind == Size::kAny ||
          (b.kind == Size::kSymbol && b.value == m.value))
        continue;
      result.push_back({m, b});
    }
    return result;
  }

  /// A conflict between two static sizes (no argument sizes fit).
  std::optional<std::string> conflict;

private:
  std::vector<unsigned> parent;
  std::vector<std::optional<int64_t>> fixedSize;
  std::vector<std::pair<Size, Size>> pending;
  std::vector<std::pair<Size, Size>> bounds;
};

/// The size a rule reads as a number (a width, a head count), or "any" when
/// it is not static (which the verifier refuses on its own).
int64_t staticOr(Size size, int64_t otherwise) {
  return size.kind == Size::kStatic ? size.value : otherwise;
}

/// refineDim: the more precise of two sizes that agree.
Size refine(Size a, Size b) { return a.kind == Size::kAny ? b : a; }

SymbolicShape fromType(RankedTensorType type) {
  SymbolicShape shape;
  for (int64_t dim : type.getShape())
    shape.push_back(ShapedType::isDynamic(dim) ? Size::any()
                                               : Size::fixed(dim));
  return shape;
}

/// The rules that mha.sdpa and mha.attention_weights share once their batch
/// (`batch`, the operands' agreed one) and key count (`keys`) are known: the
/// head dimensions of `query [B, H, T, dk]` and `key [B, Hkv, S, dk]`, the
/// mask and score bias against (B, T, S), and the positions against B.
void queryKeyRules(RelationDeriver &relations,
                   llvm::function_ref<SymbolicShape(Value)> shapeOf,
                   const SymbolicShape &q, const SymbolicShape &k, Size batch,
                   Size keys, Value mask, Value bias, Value positions) {
  relations.equal(q[3], k[3]);
  if (mask)
    relations.mask(shapeOf(mask), batch, q[2], keys);
  if (bias)
    relations.scoreBias(shapeOf(bias), batch, q[2], keys);
  if (positions)
    relations.equal(batch, shapeOf(positions)[0]);
}

/// verifyCacheAppendShapes' rules on `update [B, Hkv, T, d]`, `cache
/// [B, Hkv, C, d]` and `lengths [B]` (mha.cache_append, and the codes of
/// mha.cache_append_quantized); returns the cache's shape.
SymbolicShape cacheAppendRules(RelationDeriver &relations,
                               const SymbolicShape &u, const SymbolicShape &c,
                               const SymbolicShape &l) {
  relations.equal(c[0], u[0]);
  relations.equal(refine(c[0], u[0]), l[0]);
  relations.equal(c[1], u[1]);
  relations.equal(c[3], u[3]);
  relations.atMost(u[2], c[2]);
  return c;
}

/// verifyPagedUpdate's rules on `update [B, Hkv, T, d]`, `pool [N, Hkv, P,
/// d]`, `table [B, M]` and `lengths [B]` (mha.paged_cache_append, and the
/// codes of its int8 form): one table row and one length per sequence; the
/// pool's pages are only counted by the table's entries (checked by the
/// tools). Returns the pool's shape.
SymbolicShape pagedAppendRules(RelationDeriver &relations,
                               const SymbolicShape &u, const SymbolicShape &p,
                               const SymbolicShape &t, const SymbolicShape &l) {
  relations.equal(u[0], t[0]);
  relations.equal(refine(u[0], t[0]), l[0]);
  relations.equal(p[1], u[1]);
  relations.equal(p[3], u[3]);
  return p;
}

/// The result shape of one op of a key/value cache (dense, int8 or paged)
/// from its operands' symbolic shapes, after stating its verifier's rules;
/// std::nullopt for any other op.
std::optional<SymbolicShape>
deriveCacheOp(Operation &op, RelationDeriver &relations,
              llvm::function_ref<SymbolicShape(Value)> shapeOf) {
  auto any = Size::any();
  return llvm::TypeSwitch<Operation *, std::optional<SymbolicShape>>(&op)
      .Case(
          [&](mlir::mha::CacheAppendOp append) -> std::optional<SymbolicShape> {
            // The result has the cache's type (destination-style).
            return cacheAppendRules(relations, shapeOf(append.getUpdate()),
                                    shapeOf(append.getCache()),
                                    shapeOf(append.getLengths()));
          })
      .Case([&](mlir::mha::CacheAppendQuantizedOp append)
                -> std::optional<SymbolicShape> {
        // The codes' rules are mha.cache_append's; the scales have one
        // entry per row of the codes. (Result 1, the scales, has the
        // scales' shape: deriveSizeRelations records it.)
        SymbolicShape c = cacheAppendRules(
            relations, shapeOf(append.getUpdate()), shapeOf(append.getCodes()),
            shapeOf(append.getLengths()));
        SymbolicShape s = shapeOf(append.getScales());
        for (unsigned dim = 0; dim < 3; ++dim)
          relations.equal(c[dim], s[dim]);
        return c;
      })
      .Case([&](mlir::mha::PagedCacheAppendOp append)
                -> std::optional<SymbolicShape> {
        return pagedAppendRules(
            relations, shapeOf(append.getUpdate()), shapeOf(append.getPool()),
            shapeOf(append.getTable()), shapeOf(append.getLengths()));
      })
      .Case([&](mlir::mha::PagedCacheAppendQuantizedOp append)
                -> std::optional<SymbolicShape> {
        // The codes' rules are mha.paged_cache_append's; the scales pool
        // has one entry per row of the codes' pages. (Result 1, the
        // scales, has the scales' shape: deriveSizeRelations records it.)
        SymbolicShape c = pagedAppendRules(
            relations, shapeOf(append.getUpdate()), shapeOf(append.getCodes()),
            shapeOf(append.getTable()), shapeOf(append.getLengths()));
        SymbolicShape s = shapeOf(append.getScales());
        for (unsigned dim = 0; dim < 3; ++dim)
          relations.equal(c[dim], s[dim]);
        return c;
      })
      .Case([&](mlir::mha::PagedViewOp view) -> std::optional<SymbolicShape> {
        SymbolicShape p = shapeOf(view.getPool());
        SymbolicShape t = shapeOf(view.getTable());
        int64_t pages = staticOr(t[1], 0);
        SymbolicShape rows = {
            t[0], p[1], pages ? Size::fixed(pages * view.getPageSize()) : any};
        // A pool of rows [N, Hkv, P, d]; of an int8 cache's scales, [N,
        // Hkv, P].
        if (p.size() == 4)
          rows.push_back(p[3]);
        return rows;
      })
      .Case([&](mlir::mha::DequantizeOp dequantize)
                -> std::optional<SymbolicShape> {
        SymbolicShape c = shapeOf(dequantize.getCodes());
        SymbolicShape s = shapeOf(dequantize.getScales());
        for (unsigned dim = 0; dim < 3; ++dim)
          relations.equal(c[dim], s[dim]);
        return c;
      })
      .Default([](Operation *) { return std::nullopt; });
}

/// The result shape of one mha op from its operands' symbolic shapes, after
/// stating its verifier's rules (or of an elementwise op); std::nullopt for
/// any other op.
std::optional<SymbolicShape>
deriveOp(Operation &op, RelationDeriver &relations,
         llvm::function_ref<SymbolicShape(Value)> shapeOf) {
  // An elementwise op (the arith.extf and arith.truncf of a bf16 cache
  // graph) keeps its operand's shape.
  if (op.hasTrait<OpTrait::Elementwise>() && op.getNumOperands() == 1 &&
      op.getNumResults() == 1)
    return shapeOf(op.getOperand(0));
  if (std::optional<SymbolicShape> shape =
          deriveCacheOp(op, relations, shapeOf))
    return shape;
  auto any = Size::any();
  return llvm::TypeSwitch<Operation *, std::optional<SymbolicShape>>(&op)
      .Case([&](mlir::mha::ProjectOp project) -> std::optional<SymbolicShape> {
        SymbolicShape in = shapeOf(project.getInput());
        ArrayRef<int64_t> w = project.getWeight().getType().getShape();
        if (w.size() == 3 && in.size() == 3)
          return SymbolicShape{in[0], Size::fixed(w[0]), in[1],
                               Size::fixed(w[2])};
        if (auto heads = project.getNumHeads(); heads && *heads > 0)
          return SymbolicShape{in[0], Size::fixed(*heads), in[1],
                               Size::fixed(w[1] / *heads)};
        SymbolicShape result = in;
        if (w.size() == 3) {
          relations.equal(in[1], Size::fixed(w[0]));
          result[1] = refine(in[1], Size::fixed(w[0]));
        }
        result.back() = Size::fixed(w.back());
        return result;
      })
      // QK-norm and RoPE keep their input's shape; RoPE's offsets are one
      // per sequence.
      .Case([&](mlir::mha::RmsNormOp norm) -> std::optional<SymbolicShape> {
        return shapeOf(norm.getInput());
      })
      .Case([&](mlir::mha::RopeOp rope) -> std::optional<SymbolicShape> {
        SymbolicShape in = shapeOf(rope.getInput());
        if (Value offsets = rope.getOffsets())
          relations.equal(in[0], shapeOf(offsets)[0]);
        return in;
      })
      .Case([&](mlir::mha::SplitHeadsOp split) -> std::optional<SymbolicShape> {
        SymbolicShape in = shapeOf(split.getInput());
        int64_t heads = split.getNumHeads();
        int64_t width = staticOr(in[2], 0);
        return SymbolicShape{in[0], Size::fixed(heads), in[1],
                             width && heads > 0 ? Size::fixed(width / heads)
                                                : any};
      })
      .Case([&](mlir::mha::SdpaOp sdpa) -> std::optional<SymbolicShape> {
        SymbolicShape q = shapeOf(sdpa.getQuery());
        SymbolicShape k = shapeOf(sdpa.getKey());
        SymbolicShape v = shapeOf(sdpa.getValue());
        relations.equal(q[0], k[0]);
        relations.equal(refine(q[0], k[0]), v[0]);
        relations.equal(k[1], v[1]);
        relations.equal(k[2], v[2]);
        Size batch = refine(refine(q[0], k[0]), v[0]);
        queryKeyRules(relations, shapeOf, q, k, batch, refine(k[2], v[2]),
                      sdpa.getMask(), sdpa.getAttnBias(), sdpa.getPositions());
        return SymbolicShape{batch, q[1], q[2], v[3]};
      })
      .Case([&](mlir::mha::AttentionWeightsOp weights)
                -> std::optional<SymbolicShape> {
        SymbolicShape q = shapeOf(weights.getQuery());
        SymbolicShape k = shapeOf(weights.getKey());
        relations.equal(q[0], k[0]);
        queryKeyRules(relations, shapeOf, q, k, refine(q[0], k[0]), k[2],
                      weights.getMask(), weights.getAttnBias(),
                      weights.getPositions());
        // checkShapesFitTogether does not refine this result: it keeps its
        // declared type, whose `?` sizes agree with anything.
        return fromType(weights.getType());
      })
      .Case(
          [&](mlir::mha::ConcatHeadsOp concat) -> std::optional<SymbolicShape> {
            SymbolicShape in = shapeOf(concat.getInput());
            int64_t heads = staticOr(in[1], 0), dim = staticOr(in[3], 0);
            return SymbolicShape{in[0], in[2],
                                 heads && dim ? Size::fixed(heads * dim) : any};
          })
      .Case([&](mlir::mha::OutputProjectOp project)
                -> std::optional<SymbolicShape> {
        SymbolicShape in = shapeOf(project.getInput());
        Size columns = Size::fixed(project.getWeight().getType().getDimSize(1));
        return SymbolicShape{in[0], in.size() == 4 ? in[2] : in[1], columns};
      })
      .Case([&](mlir::mha::AttentionOp attention)
                -> std::optional<SymbolicShape> {
        SymbolicShape q = shapeOf(attention.getQuery());
        Size batch = q[0], keys = q[1];
        if (Value kv = attention.getKv()) {
          SymbolicShape k = shapeOf(kv);
          relations.equal(q[0], k[0]);
          batch = refine(q[0], k[0]);
          keys = k[1];
        }
        if (Value mask = attention.getMask())
          relations.mask(shapeOf(mask), batch, q[1], keys);
        if (Value bias = attention.getAttnBias())
          relations.scoreBias(shapeOf(bias), batch, q[1], keys);
        return SymbolicShape{
            batch, q[1],
            Size::fixed(attention.getWO().getType().getDimSize(1))};
      })
      .Default([](Operation *) { return std::nullopt; });
}
} // namespace

llvm::Expected<SizeRelations>
deriveSizeRelations(func::FuncOp func, const GraphSignature &signature) {
  // One symbol per `?` argument size, numbered in argument order.
  std::vector<ArgumentDim> symbols;
  DenseMap<Value, SymbolicShape> shapes;
  for (auto [index, argument] : llvm::enumerate(signature.arguments)) {
    SymbolicShape shape;
    for (auto [dim, size] : llvm::enumerate(argument.type.getShape())) {
      if (!ShapedType::isDynamic(size)) {
        shape.push_back(Size::fixed(size));
        continue;
      }
      shape.push_back(Size::symbol(symbols.size()));
      symbols.push_back({unsigned(index), unsigned(dim)});
    }
    shapes[func.getArgument(index)] = shape;
  }

  RelationDeriver relations(symbols.size());
  // A scalar (linalg.fill's value) has no sizes to relate.
  auto shapeOf = [&](Value value) {
    auto it = shapes.find(value);
    if (it != shapes.end())
      return it->second;
    auto type = dyn_cast<RankedTensorType>(value.getType());
    return type ? fromType(type) : SymbolicShape();
  };
  auto hasSymbol = [&](Value value) {
    return llvm::any_of(shapeOf(value),
                        [](Size size) { return size.kind == Size::kSymbol; });
  };
  for (Operation &op : func.getBody().front()) {
    if (isa<func::ReturnOp>(op))
      continue;
    std::optional<SymbolicShape> result = deriveOp(op, relations, shapeOf);
    if (!result) {
      // Another op's rules are unknown here; it may only see static sizes.
      if (llvm::any_of(op.getOperands(), hasSymbol))
        return createStringError(llvm::formatv(
            "cannot derive the relations between the '?' sizes of @{0}'s "
            "arguments: '{1}' is not an mha op",
            func.getSymName(), op.getName()));
      continue;
    }
    // The declared result type's static sizes must be met (check.result).
    auto declared = cast<RankedTensorType>(op.getResult(0).getType());
    if (declared.getRank() == int64_t(result->size()))
      for (auto [size, declaredSize] : llvm::zip(*result, declared.getShape()))
        if (!ShapedType::isDynamic(declaredSize))
          relations.equal(size, Size::fixed(declaredSize));
    shapes[op.getResult(0)] = *result;
    if (auto quantized = dyn_cast<mlir::mha::CacheAppendQuantizedOp>(op))
      shapes[quantized.getResultScales()] = shapeOf(quantized.getScales());
    if (auto quantized = dyn_cast<mlir::mha::PagedCacheAppendQuantizedOp>(op))
      shapes[quantized.getResultScales()] = shapeOf(quantized.getScales());
  }
  relations.settle();
  std::vector<std::pair<Size, Size>> atMostRules = relations.atMostRules();
  if (relations.conflict)
    return createStringError(llvm::formatv(
        "no sizes of @{0}'s '?' arguments fit its ops: a size would have to "
        "be both {1}",
        func.getSymName(), *relations.conflict));

  SizeRelations result;
  DenseMap<unsigned, unsigned> classOfRoot;
  auto classOf = [&](unsigned symbol) {
    unsigned root = relations.find(symbol);
    auto [it, inserted] = classOfRoot.try_emplace(root, result.classes.size());
    if (inserted) {
      result.classes.emplace_back();
      Size size = relations.resolve(Size::symbol(root));
      if (size.kind == Size::kStatic)
        result.classes.back().size = size.value;
    }
    return it->second;
  };
  for (auto [index, dim] : llvm::enumerate(symbols))
    result.classes[classOf(index)].members.push_back(dim);
  for (auto [mask, batch] : relations.broadcasts()) {
    SizeRelations::Broadcast broadcast;
    broadcast.mask = classOf(mask.value);
    if (batch.kind == Size::kSymbol)
      broadcast.target = classOf(batch.value);
    else
      broadcast.targetSize = batch.value;
    result.broadcasts.push_back(broadcast);
  }
  for (auto [lhs, rhs] : atMostRules) {
    SizeRelations::AtMost bound;
    if (lhs.kind == Size::kSymbol)
      bound.lhsClass = classOf(lhs.value);
    else
      bound.lhsSize = lhs.value;
    if (rhs.kind == Size::kSymbol)
      bound.rhsClass = classOf(rhs.value);
    else
      bound.rhsSize = rhs.value;
    result.bounds.push_back(bound);
  }
  return result;
}

} // namespace mha::runtime
