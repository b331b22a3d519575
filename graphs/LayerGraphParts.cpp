//===- LayerGraphParts.cpp - What the layer graph builders share ----------===//

#include "graphs/LayerGraphParts.h"

#include "dialects/MhaOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

using namespace mlir;

namespace mha::graphs {

/// Adds `@mha(args) -> resultTypes` to `module`, each argument named by its
/// `mha.name`, and returns its body; `named` maps the names to the
/// arguments. The builder is left at the module's end.
Block *createLayerFunction(OpBuilder &builder, ModuleOp module, Location loc,
                           ArrayRef<std::pair<StringRef, Type>> args,
                           TypeRange resultTypes,
                           llvm::StringMap<Value> &named) {
  SmallVector<Type> argTypes = llvm::map_to_vector(
      args, [](const std::pair<StringRef, Type> &arg) { return arg.second; });
  builder.setInsertionPointToEnd(module.getBody());
  auto func = func::FuncOp::create(
      builder, loc, "mha", builder.getFunctionType(argTypes, resultTypes));
  Block *body = func.addEntryBlock();
  for (auto [index, arg] : llvm::enumerate(args)) {
    func.setArgAttr(index, mlir::mha::MhaDialect::NameAttrHelper::getNameStr(),
                    builder.getStringAttr(arg.first));
    named[arg.first] = body->getArgument(index);
  }
  return body;
}

/// Appends the weights and biases of the four projections, of element type
/// `data`, to `args` in the order every layer graph takes them.
void addWeightArguments(SmallVectorImpl<std::pair<StringRef, Type>> &args,
                        const LayerConfig &c, Type data) {
  auto add = [&](StringRef name, ArrayRef<int64_t> shape) {
    args.push_back({name, RankedTensorType::get(shape, data)});
  };
  if (c.splitFirst) {
    add("w_q", {c.numHeads, c.modelDim / c.numHeads, c.headDim});
    add("w_k", {c.numKvHeads, c.kvDim / c.numKvHeads, c.headDim});
    add("w_v", {c.numKvHeads, c.kvDim / c.numKvHeads, c.valueDim});
  } else {
    add("w_q", {c.modelDim, c.numHeads * c.headDim});
    add("w_k", {c.kvDim, c.numKvHeads * c.headDim});
    add("w_v", {c.kvDim, c.numKvHeads * c.valueDim});
  }
  add("w_o", {c.numHeads * c.valueDim, c.outDim});
  if (c.bias) {
    add("b_q", {c.numHeads * c.headDim});
    add("b_k", {c.numKvHeads * c.headDim});
    add("b_v", {c.numKvHeads * c.valueDim});
    add("b_o", {c.outDim});
  }
}

/// Appends the arguments of the variants (all f32, static but for the `?`
/// sizes of a score bias) to `args`: rope_inv_freq [R/2], q_norm and k_norm
/// [dk], alibi_slopes and sinks [H], attn_bias [B or 1, H or 1, T or 1, S].
void addVariantArguments(SmallVectorImpl<std::pair<StringRef, Type>> &args,
                         const LayerConfig &c, Type f32, int64_t batchSize,
                         int64_t queries, int64_t keys) {
  const LayerVariants &v = c.variants;
  auto add = [&](StringRef name, ArrayRef<int64_t> shape) {
    args.push_back({name, RankedTensorType::get(shape, f32)});
  };
  if (v.ropeInvFreq)
    add("rope_inv_freq", {v.rotaryDim / 2});
  if (v.qkNorm) {
    add("q_norm", {c.headDim});
    add("k_norm", {c.headDim});
  }
  if (v.alibi)
    add("alibi_slopes", {c.numHeads});
  if (v.sinks)
    add("sinks", {c.numHeads});
  if (v.attnBias)
    add("attn_bias",
        {v.attnBiasFull[0] ? batchSize : 1, v.attnBiasFull[1] ? c.numHeads : 1,
         v.attnBiasFull[2] ? queries : 1, keys});
}

} // namespace mha::graphs
