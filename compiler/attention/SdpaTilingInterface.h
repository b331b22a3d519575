//===- SdpaTilingInterface.h - mha.sdpa as a TilingInterface op -*- C++ -*-===//
//
// `mha.sdpa` implements MLIR's `TilingInterface` through an external model
// (as upstream attaches it to linalg), so that `scf::tileUsingSCF` and the
// transform dialect make its loops: the iteration domain is (batch, head,
// query, key), the first three parallel, the keys a reduction that is not
// tiled here. A tile of one (batch, head) and any query rows is the fused
// attention of those rows (`SdpaTiling::buildTile`: the online softmax over
// key blocks), written into the loop's shared output.
//
// It also implements `PartialReductionOpInterface` for the keys, so that
// tileUsingSCF's `PartialReductionOuterParallel` splits them (SplitKeys.cpp):
// the partial states of a split are acc [P, B, H, T, dv], m and l
// [P, B, H, T] (P the splits, the forall's threads on the key dimension),
// and `mergeReductions` is `combineKeySplits`.
//
//===----------------------------------------------------------------------===//

#ifndef MHA_COMPILER_ATTENTION_SDPATILINGINTERFACE_H
#define MHA_COMPILER_ATTENTION_SDPATILINGINTERFACE_H

#include "mlir/IR/DialectRegistry.h"

namespace mlir {
namespace mha {

struct SdpaTiling;

/// The key dimension of mha.sdpa's iteration domain (batch, head, query,
/// key), the reduction.
constexpr unsigned kSdpaKeyDim = 3;

/// Attaches `TilingInterface`, `PartialReductionOpInterface` and
/// `ReifyRankedShapedTypeOpInterface` to `mha.sdpa`.
void registerSdpaTilingInterfaceExternalModels(DialectRegistry &registry);

/// What the tiled implementation of an `mha.sdpa` shares between its tiles
/// while this scope lives (in this thread): the keys transposed or packed
/// once for every tile (values made before the loops, which no attribute
/// can carry), and the sizes read once. Without one, a tile reads the op's
/// operands itself. The tile sizes in it are the op's `mha.tiles`
/// (AttentionStrategy.h), which a tile without a scope reads too.
class SdpaTilingScope {
public:
  explicit SdpaTilingScope(const SdpaTiling &tiling);
  ~SdpaTilingScope();
  SdpaTilingScope(const SdpaTilingScope &) = delete;
  SdpaTilingScope &operator=(const SdpaTilingScope &) = delete;

  /// The tiling of the innermost live scope, or null.
  static const SdpaTiling *getCurrent();

private:
  const SdpaTiling *previous;
};

} // namespace mha
} // namespace mlir

#endif // MHA_COMPILER_ATTENTION_SDPATILINGINTERFACE_H
