//===- QuantizedCache.h - The arithmetic of int8 caches ---------*- C++ -*-===//
//
// The scalar math of mha.cache_append_quantized and mha.dequantize, one
// definition for every lowering of them: the decomposed path's generics
// (LowerQuantizedCache.cpp) and the fused attention, which dequantizes one
// key block at a time (OnlineAttentionBlock.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef MHA_COMPILER_UTILS_QUANTIZEDCACHE_H
#define MHA_COMPILER_UTILS_QUANTIZEDCACHE_H

#include "mlir/IR/Builders.h"

namespace mlir {
namespace mha {

/// The largest code of a symmetric int8 cache: scale = max|x| / 127.
constexpr double kInt8CacheMaxCode = 127.0;

/// `code · scale` in f32, for an i8 `code` and an f32 `scale`.
Value buildDequantizedElement(OpBuilder &builder, Location loc, Value code,
                              Value scale);

/// The i8 code of the f32 element `x` of a row whose scale is `scale`:
/// clamp(roundeven(x / scale), -127, 127), 0 where the scale is 0.
Value buildQuantizedCode(OpBuilder &builder, Location loc, Value x,
                         Value scale);

/// The codes `[B, Hkv, T, d]` (i8) and scales `[B, Hkv, T]` (f32) of the new
/// rows `update [B, Hkv, T, d]`: each row's max|x| / 127, then its codes
/// (buildQuantizedCode), as generics; what the dense and the paged int8
/// appends write.
std::pair<Value, Value> buildQuantizedRows(OpBuilder &builder, Location loc,
                                           Value update);

} // namespace mha
} // namespace mlir

#endif // MHA_COMPILER_UTILS_QUANTIZEDCACHE_H
