//===- LowerPagedCache.cpp - Paged caches to linalg on tensors ------------===//
//
// mha.paged_cache_append becomes a loop over the sequences and their new
// rows that copies each row into its page (with its int8 form, each row's
// codes and scale, quantized as the dense int8 append quantizes them);
// mha.paged_view becomes a gather
// (a generic that reads the table, then the pool). Both test every index
// against the table's and the pool's bounds before they use it, so a wrong
// length or table entry writes nothing and reads zeros. The fused attention
// never reaches the view: it reads each key block from its page.
//
//===----------------------------------------------------------------------===//

#include "compiler/lowering/LowerToLinalg.h"
#include "compiler/utils/QuantizedCache.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::mha;

/// Whether `page` (index) is a page of a pool of `pages` (index) pages.
static Value isPoolPage(OpBuilder &builder, Location loc, Value page,
                        Value pages) {
  Value zero = arith::ConstantIndexOp::create(builder, loc, 0);
  Value notNegative = arith::CmpIOp::create(
      builder, loc, arith::CmpIPredicate::sge, page, zero);
  Value below = arith::CmpIOp::create(builder, loc, arith::CmpIPredicate::slt,
                                      page, pages);
  return arith::AndIOp::create(builder, loc, notNegative, below);
}

/// table[b, j] as an index.
static Value loadPage(OpBuilder &builder, Location loc, Value table, Value b,
                      Value j) {
  Value entry =
      tensor::ExtractOp::create(builder, loc, table, ValueRange{b, j});
  return arith::IndexCastOp::create(builder, loc, builder.getIndexType(),
                                    entry);
}

/// for b: if 0 <= lengths[b] <= M·P - T: for t: the row r = lengths[b] + t
/// of each of `updates` ([B, Hkv, T(, d)]) into page table[b, r / P] of its
/// pool in `pools` ([N, Hkv, P(, d)]) at row r mod P, where that page is in
/// the pool. Returns the pools after the writes.
static SmallVector<Value>
buildPagedAppendLoop(OpBuilder &b, Location loc, int64_t pageSize, Value table,
                     Value lengths, ValueRange updates, ValueRange pools) {
  auto index = [&](int64_t value) -> Value {
    return arith::ConstantIndexOp::create(b, loc, value);
  };
  auto sizeOf = [&](Value value, int64_t dim) {
    return getValueOrCreateConstantIndexOp(
        b, loc, tensor::getMixedSize(b, loc, value, dim));
  };
  Value update = updates.front();
  Value batch = sizeOf(update, 0), rows = sizeOf(update, 2);
  Value pages = sizeOf(pools.front(), 0);
  // M·P - T in i64: the largest length after which the rows still fit.
  Type i64 = b.getI64Type();
  Value capacity =
      arith::MulIOp::create(b, loc, sizeOf(table, 1), index(pageSize));
  Value room = arith::IndexCastOp::create(
      b, loc, i64, arith::SubIOp::create(b, loc, capacity, rows));
  Value zeroI64 = arith::ConstantIntOp::create(b, loc, i64, 0);

  // Row t of sequence `seq` of `rowsOf` into `into` at row `within` of
  // `page`: a linalg.copy, as mha.cache_append's, vectorized into whole
  // rows, where a bare insert_slice became a scalar memref.copy.
  auto copyRow = [&](OpBuilder &tb, Location tloc, Value rowsOf, Value into,
                     Value seq, Value t, Value page, Value within) -> Value {
    int64_t rank = cast<RankedTensorType>(into.getType()).getRank();
    OpFoldResult zero = tb.getIndexAttr(0);
    SmallVector<OpFoldResult> from(rank, zero), at(rank, zero);
    from[0] = seq;
    from[2] = t;
    at[0] = page;
    at[2] = within;
    SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(tb, tloc, rowsOf);
    sizes[0] = sizes[2] = tb.getIndexAttr(1);
    SmallVector<OpFoldResult> strides(rank, tb.getIndexAttr(1));
    Value source =
        tensor::ExtractSliceOp::create(tb, tloc, rowsOf, from, sizes, strides);
    Value target =
        tensor::ExtractSliceOp::create(tb, tloc, into, at, sizes, strides);
    Value copied =
        linalg::CopyOp::create(tb, tloc, source, target).getResult(0);
    return tensor::InsertSliceOp::create(tb, tloc, copied, into, at, sizes,
                                         strides);
  };

  auto writeRow = [&](OpBuilder &nb, Location nloc, Value seq, Value length,
                      Value t, ValueRange into) -> ValueRange {
    Value row = arith::AddIOp::create(
        nb, nloc,
        arith::IndexCastOp::create(nb, nloc, nb.getIndexType(), length), t);
    Value size = arith::ConstantIndexOp::create(nb, nloc, pageSize);
    Value page = loadPage(nb, nloc, table, seq,
                          arith::DivUIOp::create(nb, nloc, row, size));
    Value within = arith::RemUIOp::create(nb, nloc, row, size);
    auto ifOp = scf::IfOp::create(
        nb, nloc, isPoolPage(nb, nloc, page, pages),
        [&](OpBuilder &tb, Location tloc) {
          SmallVector<Value> written;
          for (auto [rowsOf, pool] : llvm::zip_equal(updates, into))
            written.push_back(
                copyRow(tb, tloc, rowsOf, pool, seq, t, page, within));
          scf::YieldOp::create(tb, tloc, written);
        },
        [&](OpBuilder &eb, Location eloc) {
          scf::YieldOp::create(eb, eloc, into);
        });
    return ifOp.getResults();
  };

  auto loop = scf::ForOp::create(
      b, loc, index(0), batch, index(1), pools,
      [&](OpBuilder &nb, Location nloc, Value seq, ValueRange carried) {
        Value length =
            tensor::ExtractOp::create(nb, nloc, lengths, ValueRange{seq});
        Value fits = arith::AndIOp::create(
            nb, nloc,
            arith::CmpIOp::create(nb, nloc, arith::CmpIPredicate::sge, length,
                                  zeroI64),
            arith::CmpIOp::create(nb, nloc, arith::CmpIPredicate::sle, length,
                                  room));
        auto ifOp = scf::IfOp::create(
            nb, nloc, fits,
            [&](OpBuilder &tb, Location tloc) {
              auto rowLoop = scf::ForOp::create(
                  tb, tloc, arith::ConstantIndexOp::create(tb, tloc, 0), rows,
                  arith::ConstantIndexOp::create(tb, tloc, 1), carried,
                  [&](OpBuilder &rb, Location rloc, Value t, ValueRange into) {
                    scf::YieldOp::create(
                        rb, rloc, writeRow(rb, rloc, seq, length, t, into));
                  });
              scf::YieldOp::create(tb, tloc, rowLoop.getResults());
            },
            [&](OpBuilder &eb, Location eloc) {
              scf::YieldOp::create(eb, eloc, carried);
            });
        scf::YieldOp::create(nb, nloc, ifOp.getResults());
      });
  return SmallVector<Value>(loop.getResults());
}

namespace {
/// The update's rows into their pages (buildPagedAppendLoop).
struct LowerPagedCacheAppend : OpConversionPattern<PagedCacheAppendOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(PagedCacheAppendOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOp(
        op, buildPagedAppendLoop(rewriter, op.getLoc(),
                                 op.getPool().getType().getDimSize(2),
                                 adaptor.getTable(), adaptor.getLengths(),
                                 adaptor.getUpdate(), adaptor.getPool()));
    return success();
  }
};

/// Each new row's scale and codes (buildQuantizedRows, as the dense int8
/// append makes them), then both into their pages.
struct LowerPagedCacheAppendQuantized
    : OpConversionPattern<PagedCacheAppendQuantizedOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(PagedCacheAppendQuantizedOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto [codes, scales] =
        buildQuantizedRows(rewriter, op.getLoc(), adaptor.getUpdate());
    rewriter.replaceOp(
        op,
        buildPagedAppendLoop(
            rewriter, op.getLoc(), op.getCodes().getType().getDimSize(2),
            adaptor.getTable(), adaptor.getLengths(), ValueRange{codes, scales},
            ValueRange{adaptor.getCodes(), adaptor.getScales()}));
    return success();
  }
};

/// result[b, g, j(, i)] = pool[table[b, j / P], g, j mod P(, i)], 0 where
/// the table entry is not a page of the pool.
struct LowerPagedView : OpConversionPattern<PagedViewOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(PagedViewOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value pool = adaptor.getPool(), table = adaptor.getTable();
    RankedTensorType type = op.getResult().getType();
    int64_t rank = type.getRank(), pageSize = op.getPageSize();
    SmallVector<Value> dynamicSizes;
    if (type.isDynamicDim(0))
      dynamicSizes.push_back(tensor::DimOp::create(rewriter, loc, table, 0));
    if (type.isDynamicDim(2))
      dynamicSizes.push_back(arith::MulIOp::create(
          rewriter, loc, tensor::DimOp::create(rewriter, loc, table, 1),
          arith::ConstantIndexOp::create(rewriter, loc, pageSize)));
    Value init = tensor::EmptyOp::create(rewriter, loc, type, dynamicSizes);
    Value pages = tensor::DimOp::create(rewriter, loc, pool, 0);
    auto generic = linalg::GenericOp::create(
        rewriter, loc, TypeRange{type}, ValueRange{}, ValueRange{init},
        ArrayRef<AffineMap>{rewriter.getMultiDimIdentityMap(rank)},
        SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel),
        [&](OpBuilder &nb, Location nloc, ValueRange) {
          SmallVector<Value> at;
          for (int64_t dim = 0; dim < rank; ++dim)
            at.push_back(linalg::IndexOp::create(nb, nloc, dim));
          Value size = arith::ConstantIndexOp::create(nb, nloc, pageSize);
          Value page = loadPage(nb, nloc, table, at[0],
                                arith::DivUIOp::create(nb, nloc, at[2], size));
          Value inPool = isPoolPage(nb, nloc, page, pages);
          // The read goes to page 0 where the entry is not a page (and is
          // then replaced by 0); a pool has at least one page (checked by
          // the tools).
          SmallVector<Value> from = at;
          from[0] = arith::SelectOp::create(
              nb, nloc, inPool, page,
              arith::ConstantIndexOp::create(nb, nloc, 0));
          from[2] = arith::RemUIOp::create(nb, nloc, at[2], size);
          Value element = tensor::ExtractOp::create(nb, nloc, pool, from);
          Value zero = arith::ConstantOp::create(
              nb, nloc, nb.getZeroAttr(type.getElementType()));
          linalg::YieldOp::create(nb, nloc,
                                  ValueRange{arith::SelectOp::create(
                                      nb, nloc, inPool, element, zero)});
        });
    rewriter.replaceOp(op, generic.getResults());
    return success();
  }
};
} // namespace

void mlir::mha::populatePagedCacheToLinalgPatterns(
    RewritePatternSet &patterns) {
  patterns.add<LowerPagedCacheAppend, LowerPagedCacheAppendQuantized,
               LowerPagedView>(patterns.getContext());
}
