//===- LayerGraphParts.h - What the layer graph builders share --*- C++ -*-===//
//
// Private to graphs/: the arguments and the function that both layer graphs
// (LayerGraph.cpp's, and CacheLayerGraph.cpp's decoding layer) build, and
// the attributes of the variants.
//
//===----------------------------------------------------------------------===//

#ifndef MHA_GRAPHS_LAYERGRAPHPARTS_H
#define MHA_GRAPHS_LAYERGRAPHPARTS_H

#include "graphs/LayerGraph.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/StringMap.h"

namespace mha::graphs {

/// Adds `@mha(args) -> resultTypes` to `module`, each argument named by its
/// `mha.name`, and returns its body; `named` maps the names to the
/// arguments. The builder is left at the module's end.
mlir::Block *createLayerFunction(
    mlir::OpBuilder &builder, mlir::ModuleOp module, mlir::Location loc,
    llvm::ArrayRef<std::pair<llvm::StringRef, mlir::Type>> args,
    mlir::TypeRange resultTypes, llvm::StringMap<mlir::Value> &named);

/// Appends the weights and biases of the four projections, of element type
/// `data`, to `args` in the order every layer graph takes them.
void addWeightArguments(
    llvm::SmallVectorImpl<std::pair<llvm::StringRef, mlir::Type>> &args,
    const LayerConfig &c, mlir::Type data);

/// Appends the arguments of the variants (all f32, static but for the `?`
/// sizes of a score bias) to `args`: rope_inv_freq [R/2], q_norm and k_norm
/// [dk], alibi_slopes and sinks [H], attn_bias [B or 1, H or 1, T or 1, S].
void addVariantArguments(
    llvm::SmallVectorImpl<std::pair<llvm::StringRef, mlir::Type>> &args,
    const LayerConfig &c, mlir::Type f32, int64_t batchSize, int64_t queries,
    int64_t keys);

/// The attributes of the variants, for mha.attention and the decoding
/// layer's ops; an option not given stays null (the op's default).
struct VariantAttrs {
  mlir::FloatAttr scale, softcap, ropeBase, ropeScale, ropeMscale, qkNormEps;
  mlir::IntegerAttr window, rotaryDim;
  mlir::StringAttr rope;

  VariantAttrs(mlir::OpBuilder &builder, const LayerConfig &c) {
    const LayerVariants &v = c.variants;
    auto f32 = [&](std::optional<double> value) {
      return value ? builder.getF32FloatAttr(*value) : mlir::FloatAttr();
    };
    auto f64 = [&](std::optional<double> value) {
      return value ? builder.getF64FloatAttr(*value) : mlir::FloatAttr();
    };
    scale = f32(v.scale);
    softcap = f32(v.softcap);
    window =
        v.window ? builder.getI64IntegerAttr(*v.window) : mlir::IntegerAttr();
    if (v.rope.empty())
      return;
    rope = builder.getStringAttr(v.rope);
    // The rotary dimension is printed only where it is not dk.
    if (v.rotaryDim != c.headDim)
      rotaryDim = builder.getI64IntegerAttr(v.rotaryDim);
    ropeBase = f64(v.ropeBase);
    ropeScale = f64(v.ropeScale);
    ropeMscale = f64(v.ropeMscale);
  }
};

/// The decoding layer of `buildLayerGraph` (`c.kvCache` set; the key/value
/// width is the model width and the weights are not split first).
mlir::OwningOpRef<mlir::ModuleOp>
buildCacheLayerGraph(mlir::MLIRContext &context, const LayerConfig &c);

} // namespace mha::graphs

#endif // MHA_GRAPHS_LAYERGRAPHPARTS_H
