//===- ReferenceGraphOps.cpp - The mha ops of ReferenceGraph --------------===//
//
// The layout ops, the projections, RMSNorm, RoPE and the cache append, each
// a plain loop over the description in dialects/MhaOps.td; the attention
// ops are in ReferenceGraphAttention.cpp.
//
//===----------------------------------------------------------------------===//

#include "runtime/ReferenceGraphOps.h"

#include "dialects/MhaOps.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/FormatVariadic.h"

#include <cmath>

using namespace mlir;
using llvm::Error;

namespace mha::runtime::graphref {

int64_t Tensor::numElements() const {
  int64_t count = 1;
  for (int64_t size : shape)
    count *= size;
  return count;
}

std::vector<float> Tensor::toFloats() const {
  return std::vector<float>(data.begin(), data.end());
}

std::string placeOf(Operation *op) {
  if (auto file = op->getLoc()->findInstanceOf<FileLineColLoc>())
    return llvm::formatv("{0}:{1}:{2}", file.getFilename().getValue(),
                         file.getLine(), file.getColumn())
        .str();
  std::string text;
  llvm::raw_string_ostream os(text);
  op->getLoc().print(os);
  return text;
}

Error operandError(Operation *op, const llvm::Twine &message) {
  return llvm::createStringError(
      llvm::formatv("the reference check cannot evaluate {0} ({1}): {2}",
                    op->getName().getStringRef(), placeOf(op), message.str()));
}

namespace {
/// The operands of one op and the result it builds.
struct OpEvaluation {
  Operation *op;
  OpContext &context;
  Tensor &result;

  const Tensor &operand(Value value) const { return *context.lookup(value); }
  /// Null for an absent optional operand.
  const Tensor *optional(Value value) const {
    return value ? context.lookup(value) : nullptr;
  }
  /// Sets the result's shape; true when its elements are to be computed
  /// (zeros to begin with).
  bool produce(std::vector<int64_t> shape) {
    result.shape = std::move(shape);
    if (context.shapesOnly)
      return false;
    result.data.assign(result.numElements(), 0.0);
    return true;
  }
  Error fail(const llvm::Twine &message) const {
    return operandError(op, message);
  }
};
} // namespace

/// "[2, 8, 4]".
static std::string shapeText(const Tensor &tensor) {
  return formatShape(tensor.shape);
}

/// out [rows, outDim] = in [rows, inDim] · w [inDim, outDim] + bias.
static void matmul(const double *in, int64_t rows, int64_t inDim,
                   const double *w, const double *bias, int64_t outDim,
                   double *out) {
  for (int64_t r = 0; r < rows; ++r) {
    double *outRow = out + r * outDim;
    for (int64_t j = 0; j < outDim; ++j)
      outRow[j] = bias ? bias[j] : 0.0;
    for (int64_t i = 0; i < inDim; ++i) {
      const double xi = in[r * inDim + i];
      const double *wRow = w + i * outDim;
      for (int64_t j = 0; j < outDim; ++j)
        outRow[j] += xi * wRow[j];
    }
  }
}

void moveHeads(const std::vector<double> &from, std::vector<double> &to,
               int64_t b, int64_t t, int64_t h, int64_t d, bool toHeads) {
  for (int64_t bi = 0; bi < b; ++bi)
    for (int64_t ti = 0; ti < t; ++ti)
      for (int64_t hi = 0; hi < h; ++hi) {
        int64_t tokens = ((bi * t + ti) * h + hi) * d;
        int64_t heads = ((bi * h + hi) * t + ti) * d;
        for (int64_t di = 0; di < d; ++di)
          to[toHeads ? heads + di : tokens + di] =
              from[toHeads ? tokens + di : heads + di];
      }
}

/// mha.project, shared ([D_in, D_out], with `heads(H)` into heads) or per
/// head ([H, w, d], from [B, H, T, w] or the unsplit [B, T, H·w]).
static Error evaluateProject(mlir::mha::ProjectOp op, OpEvaluation &e) {
  const Tensor &in = e.operand(op.getInput());
  const Tensor &w = e.operand(op.getWeight());
  const Tensor *bias = e.optional(op.getBias());
  const double *b = bias ? bias->data.data() : nullptr;
  if (!op.isPerHead()) {
    int64_t inDim = w.shape[0], outDim = w.shape[1];
    if (in.shape.empty() || in.shape.back() != inDim)
      return e.fail("input " + shapeText(in) + " does not fit weight " +
                    shapeText(w));
    std::vector<int64_t> shape = in.shape;
    shape.back() = outDim;
    int64_t rows = in.numElements() / inDim;
    e.context.flops += 2.0 * rows * inDim * outDim;
    std::optional<int64_t> heads = op.getNumHeads();
    if (heads && (shape.size() != 3 || outDim % *heads != 0))
      return e.fail("heads(" + llvm::Twine(*heads) + ") of input " +
                    shapeText(in) + " and weight " + shapeText(w));
    std::vector<int64_t> headShape =
        heads
            ? std::vector<int64_t>{shape[0], *heads, shape[1], outDim / *heads}
            : shape;
    if (!e.produce(headShape))
      return Error::success();
    std::vector<double> tokens(heads ? rows * outDim : 0);
    matmul(in.data.data(), rows, inDim, w.data.data(), b, outDim,
           heads ? tokens.data() : e.result.data.data());
    if (heads)
      moveHeads(tokens, e.result.data, shape[0], shape[1], *heads,
                outDim / *heads, /*toHeads=*/true);
    return Error::success();
  }
  int64_t h = w.shape[0], width = w.shape[1], d = w.shape[2];
  bool split = in.shape.size() == 4;
  if (split ? in.shape[1] != h || in.shape[3] != width
            : in.shape.size() != 3 || in.shape[2] != h * width)
    return e.fail("input " + shapeText(in) + " does not fit weight " +
                  shapeText(w));
  int64_t batch = in.shape[0], t = split ? in.shape[2] : in.shape[1];
  e.context.flops += 2.0 * batch * h * t * width * d;
  if (!e.produce({batch, h, t, d}))
    return Error::success();
  for (int64_t bi = 0; bi < batch; ++bi)
    for (int64_t hi = 0; hi < h; ++hi)
      for (int64_t ti = 0; ti < t; ++ti) {
        const double *row =
            in.data.data() + (split ? ((bi * h + hi) * t + ti) * width
                                    : (bi * t + ti) * h * width + hi * width);
        double *out = e.result.data.data() + ((bi * h + hi) * t + ti) * d;
        matmul(row, 1, width, w.data.data() + hi * width * d,
               b ? b + hi * d : nullptr, d, out);
      }
  return Error::success();
}

/// mha.split_heads [B, T, H·d] -> [B, H, T, d]; mha.concat_heads back.
static Error evaluateHeadLayout(Operation *op, OpEvaluation &e) {
  const Tensor &in = e.operand(op->getOperand(0));
  if (auto split = dyn_cast<mlir::mha::SplitHeadsOp>(op)) {
    int64_t h = split.getNumHeads();
    if (in.shape.size() != 3 || in.shape[2] % h != 0)
      return e.fail("input " + shapeText(in) + " does not split into " +
                    llvm::Twine(h) + " heads");
    int64_t b = in.shape[0], t = in.shape[1], d = in.shape[2] / h;
    if (e.produce({b, h, t, d}))
      moveHeads(in.data, e.result.data, b, t, h, d, /*toHeads=*/true);
    return Error::success();
  }
  if (in.shape.size() != 4)
    return e.fail("input " + shapeText(in) + " is not [B, H, T, d]");
  int64_t b = in.shape[0], h = in.shape[1], t = in.shape[2], d = in.shape[3];
  if (e.produce({b, t, h * d}))
    moveHeads(in.data, e.result.data, b, t, h, d, /*toHeads=*/false);
  return Error::success();
}

/// mha.rms_norm: x / sqrt(mean(x²) + eps) · weight over the last dimension.
static Error evaluateRmsNorm(mlir::mha::RmsNormOp op, OpEvaluation &e) {
  const Tensor &in = e.operand(op.getInput());
  const Tensor &weight = e.operand(op.getWeight());
  int64_t d = in.shape.empty() ? 0 : in.shape.back();
  if (weight.numElements() != d)
    return e.fail("weight " + shapeText(weight) + " does not fit input " +
                  shapeText(in));
  if (!e.produce(in.shape))
    return Error::success();
  const double eps = op.getEps().convertToDouble();
  for (int64_t start = 0; start < in.numElements(); start += d) {
    const double *row = &in.data[start];
    double sumSquares = 0.0;
    for (int64_t i = 0; i < d; ++i)
      sumSquares += row[i] * row[i];
    const double inverse = 1.0 / std::sqrt(sumSquares / double(d) + eps);
    for (int64_t i = 0; i < d; ++i)
      e.result.data[start + i] = row[i] * inverse * weight.data[i];
  }
  return Error::success();
}

/// mha.rope: pairs (i, i + R/2) or (2i, 2i + 1) of the first R features of
/// token t of sequence b, at p = t or offsets[b] + t, turned by
/// (p / scale) · frequency[i], cos and sin times mscale.
static Error evaluateRope(mlir::mha::RopeOp op, OpEvaluation &e) {
  const Tensor &in = e.operand(op.getInput());
  const Tensor *offsets = e.optional(op.getOffsets());
  const Tensor *invFreq = e.optional(op.getInvFreq());
  const int64_t r = op.getRotaryDim(), half = r / 2;
  if (in.shape.size() != 4 || r % 2 != 0 || r > in.shape[3] ||
      (offsets && offsets->numElements() != in.shape[0]) ||
      (invFreq && invFreq->numElements() != half))
    return e.fail("input " + shapeText(in) + " does not fit rotary_dim(" +
                  llvm::Twine(r) + "), its offsets or its frequencies");
  if (!e.produce(in.shape))
    return Error::success();
  e.result.data = in.data;
  const int64_t b = in.shape[0], h = in.shape[1], t = in.shape[2];
  const int64_t d = in.shape[3];
  const bool interleaved = op.isInterleaved();
  const double base = op.getBase().convertToDouble();
  const double scale = op.getScale().convertToDouble();
  const double mscale = op.getMscale().convertToDouble();
  std::vector<double> frequency(half);
  for (int64_t i = 0; i < half; ++i)
    frequency[i] = invFreq ? double(float(invFreq->data[i]))
                           : std::pow(base, -2.0 * double(i) / double(r));
  for (int64_t bi = 0; bi < b; ++bi)
    for (int64_t hi = 0; hi < h; ++hi)
      for (int64_t ti = 0; ti < t; ++ti) {
        int64_t p = ti + (offsets ? offsets->array->i64()[bi] : 0);
        double *row = &e.result.data[((bi * h + hi) * t + ti) * d];
        for (int64_t i = 0; i < half; ++i) {
          const double angle = (double(p) / scale) * frequency[i];
          const double c = std::cos(angle) * mscale;
          const double s = std::sin(angle) * mscale;
          double &u = row[interleaved ? 2 * i : i];
          double &v = row[interleaved ? 2 * i + 1 : i + half];
          const double u0 = u, v0 = v;
          u = u0 * c - v0 * s;
          v = v0 * c + u0 * s;
        }
      }
  return Error::success();
}

/// mha.output_project: [B, T, H·dv] or [B, H, T, dv] times [H·dv, D_out]
/// (+ bias) gives [B, T, D_out].
static Error evaluateOutputProject(mlir::mha::OutputProjectOp op,
                                   OpEvaluation &e) {
  const Tensor &in = e.operand(op.getInput());
  const Tensor &w = e.operand(op.getWeight());
  const Tensor *bias = e.optional(op.getBias());
  bool heads = in.shape.size() == 4;
  int64_t width = heads ? in.shape[1] * in.shape[3]
                        : (in.shape.size() == 3 ? in.shape[2] : -1);
  if (w.shape.size() != 2 || w.shape[0] != width)
    return e.fail("input " + shapeText(in) + " does not fit weight " +
                  shapeText(w));
  int64_t b = in.shape[0], t = heads ? in.shape[2] : in.shape[1];
  int64_t outDim = w.shape[1];
  e.context.flops += 2.0 * b * t * width * outDim;
  if (!e.produce({b, t, outDim}))
    return Error::success();
  std::vector<double> tokens;
  if (heads) {
    tokens.resize(in.data.size());
    moveHeads(in.data, tokens, b, t, in.shape[1], in.shape[3],
              /*toHeads=*/false);
  }
  matmul(heads ? tokens.data() : in.data.data(), b * t, width, w.data.data(),
         bias ? bias->data.data() : nullptr, outDim, e.result.data.data());
  return Error::success();
}

/// mha.cache_append: the cache, with rows lengths[b] ... of sequence b
/// replaced by the update's T rows where they fit (0 <= lengths[b] and
/// lengths[b] + T <= C; else that sequence's cache stays as it is).
static Error evaluateCacheAppend(mlir::mha::CacheAppendOp op, OpEvaluation &e) {
  const Tensor &update = e.operand(op.getUpdate());
  const Tensor &cache = e.operand(op.getCache());
  const Tensor &lengths = e.operand(op.getLengths());
  if (update.shape.size() != 4 || cache.shape.size() != 4 ||
      update.shape[0] != cache.shape[0] || update.shape[1] != cache.shape[1] ||
      update.shape[3] != cache.shape[3] ||
      lengths.numElements() != cache.shape[0])
    return e.fail("update " + shapeText(update) + ", cache " +
                  shapeText(cache) + " and lengths " + shapeText(lengths) +
                  " do not fit");
  if (!e.produce(cache.shape))
    return Error::success();
  e.result.data = cache.data;
  const int64_t b = cache.shape[0], h = cache.shape[1], c = cache.shape[2];
  const int64_t t = update.shape[2], d = cache.shape[3];
  for (int64_t bi = 0; bi < b; ++bi) {
    int64_t length = lengths.array->i64()[bi];
    if (length < 0 || length > c - t)
      continue;
    for (int64_t hi = 0; hi < h; ++hi)
      for (int64_t ti = 0; ti < t; ++ti)
        for (int64_t di = 0; di < d; ++di)
          e.result.data[((bi * h + hi) * c + length + ti) * d + di] =
              update.data[((bi * h + hi) * t + ti) * d + di];
  }
  return Error::success();
}

Error evaluateOp(Operation *op, OpContext &context, Tensor &result) {
  OpEvaluation e{op, context, result};
  return llvm::TypeSwitch<Operation *, Error>(op)
      .Case([&](mlir::mha::ProjectOp project) {
        return evaluateProject(project, e);
      })
      .Case<mlir::mha::SplitHeadsOp, mlir::mha::ConcatHeadsOp>(
          [&](Operation *layout) { return evaluateHeadLayout(layout, e); })
      .Case([&](mlir::mha::RmsNormOp norm) { return evaluateRmsNorm(norm, e); })
      .Case([&](mlir::mha::RopeOp rope) { return evaluateRope(rope, e); })
      .Case([&](mlir::mha::OutputProjectOp project) {
        return evaluateOutputProject(project, e);
      })
      .Case([&](mlir::mha::CacheAppendOp append) {
        return evaluateCacheAppend(append, e);
      })
      .Case<mlir::mha::SdpaOp, mlir::mha::AttentionWeightsOp>(
          [&](Operation *sdpa) { return evaluateSdpa(sdpa, context, result); })
      .Case([&](mlir::mha::AttentionOp layer) {
        return evaluateAttentionLayer(layer, context, result);
      })
      .Default([&](Operation *other) {
        return operandError(other, "not an op the reference evaluates");
      });
}

} // namespace mha::runtime::graphref
