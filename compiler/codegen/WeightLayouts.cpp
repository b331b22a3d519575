//===- WeightLayouts.cpp - Projection weights stored as the blocks read them //
//
// A projection's register block reads, at each reduction step, one row of
// its weight panel (32 or 64 floats) and then the row a whole weight row
// further on. When that stride is a multiple of 1 KiB the panel's rows fall
// into a few sets of the L1 and L2 caches and evict each other, and past
// 2 KiB the CPU's stride prefetchers no longer follow it: the packed
// Q|K|V weight of d_model 512 has rows of 6 KiB, that of d_model 1024 of
// 12 KiB, the output projection's weight of d_model 1024 of 4 KiB. The
// weights are the compiled code's to lay out: a prepare function computes
// them once (mha-prepare-weights) into a flat buffer that only it and the
// layer read. So this pass stores each projection weight as its blocks read
// it best:
//
// - `[D, H, d]` read by heads (the Q|K|V projections): head by head,
//   `[H, D, d]`, each head's panel one contiguous block, `d` floats a step;
// - `[..., N]` read along the columns N with a bad stride (the output
//   projection): in panels of P columns (`panel-columns`, the projections'
//   column tile), `[N/P, ..., P]`, each panel one contiguous block as a
//   head's is. The prepare function packs it (`linalg.pack`, lowered by
//   `linalg::lowerPack`); the contraction is packed along its columns by
//   `linalg::pack` and `linalg::packTranspose`, so that its tiles read one
//   panel each. Where P does not divide N, rows padded to N + 16 floats
//   instead, one cache line more, so that consecutive rows fall into
//   consecutive cache sets (strides past 2 KiB remain).
//
// A weight that a prepare function computes already gets the new layout in
// that function; a weight argument that the layer reads as it is gets a
// prepare function of its own.
//
//===----------------------------------------------------------------------===//

#include "compiler/Passes.h"
#include "compiler/strategy/Strategy.h"
#include "dialects/MhaOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::mha {
#define GEN_PASS_DEF_MHAWEIGHTLAYOUTS
#include "compiler/Passes.h.inc"
} // namespace mlir::mha

using namespace mlir;
using namespace mlir::mha;

namespace {
/// How a weight is stored.
enum class Layout { AsIs, HeadMajor, Panels, PaddedRows };

/// `map` with its first two results swapped: the same element of the
/// operand stored with its first two dimensions exchanged.
AffineMap swapFirstTwoResults(AffineMap map) {
  SmallVector<AffineExpr> results(map.getResults());
  std::swap(results[0], results[1]);
  return AffineMap::get(map.getNumDims(), map.getNumSymbols(), results,
                        map.getContext());
}

/// Whether the contraction `generic` can read its weight operand `use`
/// ([..., N], N its last loop dimension n) in panels: n is also the
/// result's last dimension and nothing else reads it, one result, and a
/// body that does not read its indices (readPanels then only packs n).
bool canSplitColumns(linalg::GenericOp generic, OpOperand &use) {
  if (generic.getNumDpsInits() != 1 ||
      !generic.getBody()->getOps<linalg::IndexOp>().empty())
    return false;
  AffineExpr column = generic.getMatchingIndexingMap(&use).getResults().back();
  for (OpOperand &operand : generic->getOpOperands()) {
    AffineMap map = generic.getMatchingIndexingMap(&operand);
    bool isResult = generic.isDpsInit(&operand);
    if (&operand == &use || isResult) {
      if (map.getNumResults() == 0 || map.getResults().back() != column ||
          llvm::count(map.getResults(), column) != 1)
        return false;
      continue;
    }
    if (map.isFunctionOfDim(cast<AffineDimExpr>(column).getPosition()))
      return false;
  }
  return true;
}

/// The layout that suits a projection's weight read through `use` as
/// `type`: the weight operand (input 1) of a contraction of
/// mha-lower-to-linalg (`mha.projection`). Panels of `panelColumns`
/// (0: none) where they divide the columns.
Layout layoutOfRead(OpOperand &use, RankedTensorType type,
                    int64_t panelColumns) {
  auto generic = dyn_cast<linalg::GenericOp>(use.getOwner());
  if (!generic || use.getOperandNumber() != 1 ||
      generic.getNumDpsInputs() < 2 ||
      !generic->hasAttr(MhaDialect::ProjectionAttrHelper::getNameStr()) ||
      !type.hasStaticShape() || !type.getElementType().isF32())
    return Layout::AsIs;
  AffineMap map = generic.getMatchingIndexingMap(&use);
  if (!map.isProjectedPermutation() || map.getNumResults() != type.getRank())
    return Layout::AsIs;
  SmallVector<utils::IteratorType> iterators = generic.getIteratorTypesArray();
  auto isReduction = [&](AffineExpr expr) {
    return iterators[cast<AffineDimExpr>(expr).getPosition()] ==
           utils::IteratorType::reduction;
  };
  ArrayRef<AffineExpr> results = map.getResults();
  // Rows whose stride is no multiple of 1 KiB spread over the cache sets
  // already (and small weights stay in cache anyway).
  auto conflicts = [](int64_t rowFloats) {
    return (rowFloats * 4) % 1024 == 0;
  };
  // [D, H, d]: reduction, head, column.
  if (type.getRank() == 3 && isReduction(results[0]) &&
      !isReduction(results[1]) && !isReduction(results[2]) &&
      type.getDimSize(1) > 1 &&
      conflicts(type.getDimSize(1) * type.getDimSize(2)))
    return Layout::HeadMajor;
  // [..., N]: reductions, then the columns.
  int64_t columns = type.getShape().back();
  if (type.getRank() >= 2 && !isReduction(results.back()) &&
      llvm::all_of(results.drop_back(), isReduction) && conflicts(columns))
    return panelColumns > 0 && columns > panelColumns &&
                   columns % panelColumns == 0 && canSplitColumns(generic, use)
               ? Layout::Panels
               : Layout::PaddedRows;
  return Layout::AsIs;
}

/// How the layer reads `weight`: through views (expand_shape) of one type,
/// or itself, and only as projection weights of one layout.
struct WeightReads {
  RankedTensorType type;
  Layout layout = Layout::AsIs;
  /// Columns per panel (Layout::Panels).
  int64_t panelColumns = 0;
  /// Floats added to each row (Layout::PaddedRows).
  int64_t rowPadding = 0;
  SmallVector<OpOperand *> uses;
};

std::optional<WeightReads> analyzeReads(Value weight, int64_t panelColumns) {
  WeightReads reads;
  reads.panelColumns = panelColumns;
  auto addRead = [&](OpOperand &use, RankedTensorType type) {
    Layout layout = layoutOfRead(use, type, panelColumns);
    if (layout == Layout::AsIs || (reads.type && reads.type != type) ||
        (reads.uses.size() && reads.layout != layout))
      return false;
    reads.type = type;
    reads.layout = layout;
    reads.uses.push_back(&use);
    return true;
  };
  if (weight.use_empty())
    return std::nullopt;
  for (OpOperand &use : weight.getUses()) {
    if (auto expand = dyn_cast<tensor::ExpandShapeOp>(use.getOwner())) {
      if (expand->use_empty())
        return std::nullopt;
      for (OpOperand &viewUse : expand->getUses())
        if (!addRead(viewUse, expand.getResultType()))
          return std::nullopt;
      continue;
    }
    auto type = dyn_cast<RankedTensorType>(weight.getType());
    if (!type || !addRead(use, type))
      return std::nullopt;
  }
  return reads;
}

/// Whether a pack or unpack `op` of `rank` unpacked dimensions only tiles
/// the innermost one, of static size `size`, by a static tile that divides
/// it, with no outer permutation: then it is a reshape.
template <typename PackOrUnPack>
bool packsInnermostExactly(PackOrUnPack op, int64_t rank, int64_t size) {
  ArrayRef<int64_t> outer = op.getOuterDimsPerm();
  ArrayRef<int64_t> inner = op.getInnerDimsPos();
  // getStaticTiles returns a new vector: kept, not viewed.
  SmallVector<int64_t> tiles = op.getStaticTiles();
  return (outer.empty() || isIdentityPermutation(outer)) && inner.size() == 1 &&
         inner[0] == rank - 1 && tiles.size() == 1 &&
         ShapedType::isStatic(tiles[0]) && ShapedType::isStatic(size) &&
         size % tiles[0] == 0;
}

/// [0], ..., [rank - 2], [rank - 1, rank]: the innermost dimension split
/// into (tile, element).
SmallVector<ReassociationIndices> innermostSplit(int64_t rank) {
  SmallVector<ReassociationIndices> groups;
  for (int64_t dim = 0; dim + 1 < rank; ++dim)
    groups.push_back({dim});
  groups.push_back({rank - 1, rank});
  return groups;
}

/// The result's pack that linalg::pack makes for panels: an expand_shape.
/// Upstream's SimplifyPackToExpandShape refuses it where the result has
/// `?` sizes, since linalg::pack then adds a padding value, which a tile
/// that divides the dimension never uses.
struct InnermostPackIsExpandShape : OpRewritePattern<linalg::PackOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(linalg::PackOp pack,
                                PatternRewriter &rewriter) const override {
    RankedTensorType source = pack.getSourceType();
    if (!packsInnermostExactly(pack, source.getRank(),
                               source.getShape().back()))
      return rewriter.notifyMatchFailure(pack, "not a reshape");
    rewriter.replaceOpWithNewOp<tensor::ExpandShapeOp>(
        pack, pack.getDestType(), pack.getSource(),
        innermostSplit(source.getRank()));
    return success();
  }
};

/// The result's unpack: a collapse_shape (SimplifyUnPackToCollapseShape
/// takes static shapes only).
struct InnermostUnPackIsCollapseShape : OpRewritePattern<linalg::UnPackOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(linalg::UnPackOp unpack,
                                PatternRewriter &rewriter) const override {
    RankedTensorType dest = unpack.getDestType();
    if (!packsInnermostExactly(unpack, dest.getRank(), dest.getShape().back()))
      return rewriter.notifyMatchFailure(unpack, "not a reshape");
    rewriter.replaceOpWithNewOp<tensor::CollapseShapeOp>(
        unpack, dest, unpack.getSource(), innermostSplit(dest.getRank()));
    return success();
  }
};

/// The type in which `reads` are stored.
RankedTensorType storedType(const WeightReads &reads) {
  SmallVector<int64_t> shape(reads.type.getShape());
  switch (reads.layout) {
  case Layout::HeadMajor:
    std::swap(shape[0], shape[1]);
    break;
  case Layout::Panels: // [N/P, ..., P]
    shape.back() /= reads.panelColumns;
    shape.insert(shape.begin(), shape.back());
    shape.back() = reads.panelColumns;
    break;
  default:
    shape.back() += reads.rowPadding;
  }
  return RankedTensorType::get(shape, reads.type.getElementType());
}

/// The outer dimensions of a panel pack: [..., N/P] read as [N/P, ...].
SmallVector<int64_t> panelsFirst(int64_t rank) {
  SmallVector<int64_t> permutation = {rank - 1};
  llvm::append_range(permutation, llvm::seq<int64_t>(0, rank - 1));
  return permutation;
}

/// `generic` rewritten by linalg::pack to read its weight operand
/// `weightOperand` from `panels` ([N/P, ..., P]): its column loop n packed
/// by P (a new innermost loop, the column in the panel), the weight's pack
/// transposed to put the panels first (linalg::packTranspose) and replaced
/// by the stored buffer. The result's pack and unpack, pure reshapes, are
/// left to InnermostPackIsExpandShape and InnermostUnPackIsCollapseShape.
LogicalResult readPanels(RewriterBase &rewriter, linalg::GenericOp generic,
                         unsigned weightOperand, Value panels,
                         int64_t columns) {
  Value weight = generic->getOperand(weightOperand);
  unsigned column =
      cast<AffineDimExpr>(
          generic.getMatchingIndexingMap(&generic->getOpOperand(weightOperand))
              .getResults()
              .back())
          .getPosition();
  SmallVector<OpFoldResult> sizes(generic.getNumLoops(),
                                  rewriter.getIndexAttr(0));
  sizes[column] = rewriter.getIndexAttr(columns);
  // The new generic keeps the marker (mha.projection) that tiles it.
  DictionaryAttr marks = generic->getDiscardableAttrDictionary();
  rewriter.setInsertionPoint(generic);
  FailureOr<linalg::PackResult> packed = linalg::pack(rewriter, generic, sizes);
  if (failed(packed))
    return failure();
  auto weightPack = llvm::find_if(packed->packOps, [&](linalg::PackOp pack) {
    return pack.getSource() == weight;
  });
  if (weightPack == packed->packOps.end())
    return failure();
  FailureOr<linalg::PackTransposeResult> transposed = linalg::packTranspose(
      rewriter, *weightPack, packed->packedLinalgOp, nullptr,
      panelsFirst(cast<RankedTensorType>(weight.getType()).getRank()), {});
  if (failed(transposed) ||
      transposed->transposedPackOp.getType() != panels.getType())
    return failure();
  rewriter.replaceOp(transposed->transposedPackOp, panels);
  transposed->transposedLinalgOp->setDiscardableAttrs(marks);
  return success();
}

SmallVector<ReassociationIndices> allInOne(int64_t rank) {
  return {llvm::to_vector(llvm::seq<int64_t>(0, rank))};
}

/// The offsets, sizes and strides of the read type's elements inside the
/// padded stored layout: its top-left corner.
std::tuple<SmallVector<OpFoldResult>, SmallVector<OpFoldResult>,
           SmallVector<OpFoldResult>>
unpaddedSlice(OpBuilder &builder, const WeightReads &reads) {
  int64_t rank = reads.type.getRank();
  SmallVector<OpFoldResult> offsets(rank, builder.getIndexAttr(0));
  SmallVector<OpFoldResult> strides(rank, builder.getIndexAttr(1));
  SmallVector<OpFoldResult> sizes = llvm::map_to_vector(
      reads.type.getShape(),
      [&](int64_t size) -> OpFoldResult { return builder.getIndexAttr(size); });
  return {offsets, sizes, strides};
}

/// `value` (of the read type) in the stored layout, flattened; an error at
/// `loc` where a panel pack could not be lowered (nothing later lowers it).
FailureOr<Value> storeFlat(OpBuilder &builder, Location loc, Value value,
                           const WeightReads &reads) {
  RankedTensorType stored = storedType(reads);
  Value empty = tensor::EmptyOp::create(builder, loc, stored.getShape(),
                                        stored.getElementType());
  Value result;
  if (reads.layout == Layout::Panels) {
    // linalg.pack, lowered here to the expand_shape and transpose it is:
    // the prepare functions run once, through no pack-specific pass.
    int64_t rank = reads.type.getRank();
    auto pack =
        linalg::PackOp::create(builder, loc, value, empty, {rank - 1},
                               {builder.getIndexAttr(reads.panelColumns)},
                               std::nullopt, panelsFirst(rank));
    IRRewriter rewriter(builder);
    FailureOr<linalg::LowerPackResult> lowered =
        linalg::lowerPack(rewriter, pack);
    if (failed(lowered))
      return emitError(loc, "mha-weight-layouts: could not pack a weight in "
                            "panels (linalg::lowerPack)");
    result = lowered->transposeOp->getResult(0);
  } else if (reads.layout == Layout::HeadMajor) {
    SmallVector<int64_t> permutation = {1, 0};
    llvm::append_range(permutation,
                       llvm::seq<int64_t>(2, reads.type.getRank()));
    result =
        linalg::TransposeOp::create(builder, loc, value, empty, permutation)
            ->getResult(0);
  } else {
    Value zero = arith::ConstantOp::create(
        builder, loc, builder.getZeroAttr(stored.getElementType()));
    Value zeros =
        linalg::FillOp::create(builder, loc, zero, empty)->getResult(0);
    auto [offsets, sizes, strides] = unpaddedSlice(builder, reads);
    result = tensor::InsertSliceOp::create(builder, loc, value, zeros, offsets,
                                           sizes, strides);
  }
  auto flatType =
      RankedTensorType::get({stored.getNumElements()}, stored.getElementType());
  return tensor::CollapseShapeOp::create(builder, loc, flatType, result,
                                         allInOne(stored.getRank()))
      .getResult();
}

/// The layer reads `flat` (the stored layout) instead of the weight.
LogicalResult readStored(OpBuilder &builder, Location loc, Value flat,
                         const WeightReads &reads) {
  RankedTensorType stored = storedType(reads);
  Value view = tensor::ExpandShapeOp::create(builder, loc, stored, flat,
                                             allInOne(stored.getRank()));
  if (reads.layout == Layout::PaddedRows) {
    auto [offsets, sizes, strides] = unpaddedSlice(builder, reads);
    view = tensor::ExtractSliceOp::create(builder, loc, reads.type, view,
                                          offsets, sizes, strides);
  }
  for (OpOperand *use : reads.uses) {
    auto generic = cast<linalg::GenericOp>(use->getOwner());
    if (reads.layout == Layout::Panels) {
      OpBuilder::InsertionGuard guard(builder);
      IRRewriter rewriter(builder);
      if (failed(readPanels(rewriter, generic, use->getOperandNumber(), view,
                            reads.panelColumns)))
        return failure();
      continue;
    }
    if (reads.layout == Layout::HeadMajor) {
      SmallVector<AffineMap> maps = generic.getIndexingMapsArray();
      unsigned number = use->getOperandNumber();
      maps[number] = swapFirstTwoResults(maps[number]);
      generic.setIndexingMapsAttr(builder.getAffineMapArrayAttr(maps));
    }
    use->set(view);
  }
  return success();
}

struct MhaWeightLayoutsPass
    : mha::impl::MhaWeightLayoutsBase<MhaWeightLayoutsPass> {
  using MhaWeightLayoutsBase::MhaWeightLayoutsBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    SmallVector<func::FuncOp> layers;
    // The layers as mha-prepare-weights sees them (prepare functions have
    // no projections, so nothing in them changes).
    for (auto function : module.getOps<func::FuncOp>())
      if (function.isPublic() && !function.isExternal() &&
          function.getBody().hasOneBlock())
        layers.push_back(function);
    for (func::FuncOp layer : layers)
      if (failed(relayout(layer, symbols)))
        return signalPassFailure();
    // The packs and unpacks of the results that read panels are reshapes.
    RewritePatternSet patterns(&getContext());
    patterns.add<InnermostPackIsExpandShape, InnermostUnPackIsCollapseShape>(
        &getContext());
    if (failed(applyPatternsGreedily(module, std::move(patterns))))
      return signalPassFailure();
  }

  /// The padding of `reads` with padded rows: the option where set, else
  /// the layer's record (mha-strategy: one vector of f32, so that rows
  /// whose bytes are a multiple of 4 KiB do not all start at one L1 set
  /// and each row's vectors stay aligned).
  LogicalResult setRowPadding(func::FuncOp layer, WeightReads &reads) {
    if (reads.layout != Layout::PaddedRows)
      return success();
    FailureOr<int64_t> padding = getOptionOrRecorded(
        layer, "mha-weight-layouts", rowPadding, "row-padding",
        [](CodegenSizesAttr sizes) { return sizes.getRowPadding(); });
    if (failed(padding))
      return failure();
    reads.rowPadding = *padding;
    return success();
  }

  LogicalResult relayout(func::FuncOp layer, SymbolTable &symbols) {
    MLIRContext *context = layer.getContext();
    MhaDialect::PrepareFunctionsAttrHelper helper(context);
    SmallVector<Attribute> prepareFunctions;
    if (ArrayAttr listed = helper.getAttr(layer))
      llvm::append_range(prepareFunctions, listed.getValue());
    // The prepared buffers are the last arguments, in the list's order; the
    // prepare functions take the others.
    unsigned numInputs = layer.getNumArguments() - prepareFunctions.size();
    FunctionType inputsType = FunctionType::get(
        context, layer.getArgumentTypes().take_front(numInputs), {});
    OpBuilder builder(context);
    // The panels are the projections' column tiles, recorded on the layer
    // (mha-strategy), else the option.
    int64_t panelColumns = this->panelColumns;
    if (CodegenSizesAttr sizes = getRecordedCodegenSizes(layer))
      panelColumns = sizes.getProjectionCols();

    // Buffers that a prepare function computes: it stores them anew.
    for (auto [index, symbol] : llvm::enumerate(prepareFunctions)) {
      BlockArgument prepared = layer.getArgument(numInputs + index);
      auto prepare = symbols.lookup<func::FuncOp>(
          cast<FlatSymbolRefAttr>(symbol).getValue());
      std::optional<WeightReads> reads = analyzeReads(prepared, panelColumns);
      if (!prepare || prepare.isExternal() || !reads)
        continue;
      if (failed(setRowPadding(layer, *reads)))
        return failure();
      auto returnOp =
          dyn_cast<func::ReturnOp>(prepare.getBody().back().getTerminator());
      if (!returnOp || returnOp.getNumOperands() != 1)
        continue;
      Location loc = returnOp.getLoc();
      builder.setInsertionPoint(returnOp);
      Value logical = tensor::ExpandShapeOp::create(
          builder, loc, reads->type, returnOp.getOperand(0),
          allInOne(reads->type.getRank()));
      FailureOr<Value> flat = storeFlat(builder, loc, logical, *reads);
      if (failed(flat))
        return failure();
      returnOp.setOperand(0, *flat);
      prepare.setFunctionType(FunctionType::get(
          context, prepare.getArgumentTypes(), {flat->getType()}));
      if (failed(replaceReads(layer, prepared, flat->getType(), *reads)))
        return failure();
    }

    // Weight arguments that the layer reads as they are: a prepare function
    // of their own.
    for (unsigned position = 0; position < numInputs; ++position) {
      BlockArgument weight = layer.getArgument(position);
      std::optional<WeightReads> reads = analyzeReads(weight, panelColumns);
      if (!reads)
        continue;
      if (failed(setRowPadding(layer, *reads)))
        return failure();
      std::string name =
          (layer.getSymName() + "_prepare" + Twine(prepareFunctions.size()))
              .str();
      if (symbols.lookup(name))
        continue;
      Location loc = weight.getLoc();
      builder.setInsertionPointAfter(layer);
      auto prepare = func::FuncOp::create(builder, loc, name, inputsType);
      // Cold code, small rather than fast (as mha-prepare-weights makes it).
      prepare->setAttr(
          "passthrough",
          builder.getStrArrayAttr({"cold", "minsize", "noinline", "optsize"}));
      for (unsigned input = 0; input < numInputs; ++input)
        prepare.setArgAttrs(input, layer.getArgAttrDict(input));
      symbols.insert(prepare);
      Block *body = prepare.addEntryBlock();
      builder.setInsertionPointToStart(body);
      Value logical = body->getArgument(position);
      if (logical.getType() != reads->type)
        logical = tensor::ExpandShapeOp::create(
            builder, loc, reads->type,
            tensor::CollapseShapeOp::create(
                builder, loc,
                RankedTensorType::get({reads->type.getNumElements()},
                                      reads->type.getElementType()),
                logical,
                allInOne(cast<RankedTensorType>(logical.getType()).getRank())),
            allInOne(reads->type.getRank()));
      FailureOr<Value> flat = storeFlat(builder, loc, logical, *reads);
      if (failed(flat))
        return failure();
      func::ReturnOp::create(builder, loc, *flat);
      prepare.setFunctionType(FunctionType::get(context, inputsType.getInputs(),
                                                {flat->getType()}));

      unsigned argument = layer.getNumArguments();
      if (failed(layer.insertArgument(
              argument, flat->getType(),
              builder.getDictionaryAttr(
                  builder.getNamedAttr(MhaDialect::NameAttrHelper::getNameStr(),
                                       builder.getStringAttr(name))),
              loc)))
        return failure();
      prepareFunctions.push_back(FlatSymbolRefAttr::get(prepare));
      if (failed(replaceReads(layer, layer.getArgument(argument),
                              flat->getType(), *reads)))
        return failure();
    }
    if (!prepareFunctions.empty())
      helper.setAttr(layer, builder.getArrayAttr(prepareFunctions));
    return success();
  }

  /// Makes the layer read `prepared`, given the type `flatType`, in the
  /// stored layout wherever `reads` read the weight.
  LogicalResult replaceReads(func::FuncOp layer, BlockArgument prepared,
                             Type flatType, const WeightReads &reads) {
    SmallVector<Operation *> views;
    for (OpOperand *use : reads.uses)
      if (auto expand = use->get().getDefiningOp<tensor::ExpandShapeOp>())
        views.push_back(expand);
    if (prepared.getType() != flatType) {
      prepared.setType(flatType);
      SmallVector<Type> inputs(layer.getArgumentTypes());
      inputs[prepared.getArgNumber()] = flatType;
      layer.setFunctionType(FunctionType::get(layer.getContext(), inputs,
                                              layer.getResultTypes()));
    }
    OpBuilder builder(layer.getContext());
    builder.setInsertionPointToStart(&layer.getBody().front());
    if (failed(readStored(builder, prepared.getLoc(), prepared, reads)))
      return layer.emitError("mha-weight-layouts: could not read a weight in "
                             "panels (linalg::pack)");
    for (Operation *view : views)
      if (view->use_empty())
        view->erase();
    return success();
  }
};
} // namespace
