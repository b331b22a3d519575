//===- LowerPagedCache.cpp - Paged caches to linalg on tensors ------------===//
//
// mha.paged_cache_append becomes a loop over the sequences and their new
// rows that copies each row into its page; mha.paged_view becomes a gather
// (a generic that reads the table, then the pool). Both test every index
// against the table's and the pool's bounds before they use it, so a wrong
// length or table entry writes nothing and reads zeros. The fused attention
// never reaches the view: it reads each key block from its page.
//
//===----------------------------------------------------------------------===//

#include "compiler/lowering/LowerToLinalg.h"

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

namespace {
/// for b: if 0 <= lengths[b] <= M·P - T: for t: the row r = lengths[b] + t
/// into page table[b, r / P] at row r mod P, where that page is in the pool.
struct LowerPagedCacheAppend : OpConversionPattern<PagedCacheAppendOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(PagedCacheAppendOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value update = adaptor.getUpdate(), pool = adaptor.getPool(),
          table = adaptor.getTable(), lengths = adaptor.getLengths();
    int64_t pageSize = op.getPool().getType().getDimSize(2);
    OpBuilder &b = rewriter;
    auto index = [&](int64_t value) -> Value {
      return arith::ConstantIndexOp::create(b, loc, value);
    };
    auto sizeOf = [&](Value value, int64_t dim) {
      return getValueOrCreateConstantIndexOp(
          b, loc, tensor::getMixedSize(b, loc, value, dim));
    };
    Value batch = sizeOf(update, 0), rows = sizeOf(update, 2);
    Value pages = sizeOf(pool, 0);
    // M·P - T in i64: the largest length after which the rows still fit.
    Type i64 = b.getI64Type();
    Value capacity =
        arith::MulIOp::create(b, loc, sizeOf(table, 1), index(pageSize));
    Value room = arith::IndexCastOp::create(
        b, loc, i64, arith::SubIOp::create(b, loc, capacity, rows));
    Value zeroI64 = arith::ConstantIntOp::create(b, loc, i64, 0);
    SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(b, loc, update);
    sizes[0] = sizes[2] = b.getIndexAttr(1);
    SmallVector<OpFoldResult> strides(4, b.getIndexAttr(1));

    auto writeRow = [&](OpBuilder &nb, Location nloc, Value seq, Value length,
                        Value t, Value into) -> Value {
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
            OpFoldResult zero = tb.getIndexAttr(0);
            SmallVector<OpFoldResult> from = {seq, zero, t, zero},
                                      at = {page, zero, within, zero};
            Value source = tensor::ExtractSliceOp::create(tb, tloc, update,
                                                          from, sizes, strides);
            // A linalg.copy, as mha.cache_append's: vectorized into whole
            // rows, where a bare insert_slice became a scalar memref.copy.
            Value target = tensor::ExtractSliceOp::create(tb, tloc, into, at,
                                                          sizes, strides);
            Value copied =
                linalg::CopyOp::create(tb, tloc, source, target).getResult(0);
            scf::YieldOp::create(
                tb, tloc,
                ValueRange{tensor::InsertSliceOp::create(tb, tloc, copied, into,
                                                         at, sizes, strides)});
          },
          [&](OpBuilder &eb, Location eloc) {
            scf::YieldOp::create(eb, eloc, into);
          });
      return ifOp.getResult(0);
    };

    auto loop = scf::ForOp::create(
        b, loc, index(0), batch, index(1), ValueRange{pool},
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
                    [&](OpBuilder &rb, Location rloc, Value t,
                        ValueRange into) {
                      scf::YieldOp::create(
                          rb, rloc,
                          writeRow(rb, rloc, seq, length, t, into.front()));
                    });
                scf::YieldOp::create(tb, tloc, rowLoop.getResults());
              },
              [&](OpBuilder &eb, Location eloc) {
                scf::YieldOp::create(eb, eloc, carried);
              });
          scf::YieldOp::create(nb, nloc, ifOp.getResults());
        });
    rewriter.replaceOp(op, loop.getResults());
    return success();
  }
};

/// result[b, g, j, i] = pool[table[b, j / P], g, j mod P, i], 0 where the
/// table entry is not a page of the pool.
struct LowerPagedView : OpConversionPattern<PagedViewOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(PagedViewOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value pool = adaptor.getPool(), table = adaptor.getTable();
    RankedTensorType type = op.getResult().getType();
    int64_t pageSize = op.getPageSize();
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
        ArrayRef<AffineMap>{rewriter.getMultiDimIdentityMap(4)},
        SmallVector<utils::IteratorType>(4, utils::IteratorType::parallel),
        [&](OpBuilder &nb, Location nloc, ValueRange) {
          SmallVector<Value> at;
          for (int64_t dim = 0; dim < 4; ++dim)
            at.push_back(linalg::IndexOp::create(nb, nloc, dim));
          Value size = arith::ConstantIndexOp::create(nb, nloc, pageSize);
          Value page = loadPage(nb, nloc, table, at[0],
                                arith::DivUIOp::create(nb, nloc, at[2], size));
          Value inPool = isPoolPage(nb, nloc, page, pages);
          // The read goes to page 0 where the entry is not a page (and is
          // then replaced by 0); a pool has at least one page (checked by
          // the tools).
          Value safePage = arith::SelectOp::create(
              nb, nloc, inPool, page,
              arith::ConstantIndexOp::create(nb, nloc, 0));
          Value element = tensor::ExtractOp::create(
              nb, nloc, pool,
              ValueRange{safePage, at[1],
                         arith::RemUIOp::create(nb, nloc, at[2], size), at[3]});
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
  patterns.add<LowerPagedCacheAppend, LowerPagedView>(patterns.getContext());
}
