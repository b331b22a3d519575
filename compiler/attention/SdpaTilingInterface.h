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

/// The key tile, the pre-transposed keys and the sizes that the tiled
/// implementation of an `mha.sdpa` uses while this scope lives (in this
/// thread); without one it reads them from the op with the default key tile.
/// `TilingInterface`'s methods take no options: IREE records them on the op
/// (`lowering_config`); mha.sdpa has no such attribute yet.
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
