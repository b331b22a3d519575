//===- LowerQuantizedCache.cpp - int8 caches to linalg on tensors ---------===//
//
// mha.cache_append_quantized becomes two generics over the new rows (each
// row's scale, max|x| / 127, then its codes) and the loop over the sequences
// that every cache append shares, here with two caches: the codes and the
// scales. mha.dequantize becomes one elementwise generic; the fused
// attention never reaches it (it reads the codes and scales per key block).
//
//===----------------------------------------------------------------------===//

#include "compiler/lowering/LowerToLinalg.h"
#include "compiler/utils/AttentionMath.h"
#include "compiler/utils/QuantizedCache.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::mha;

SmallVector<Value> mlir::mha::buildCacheAppendLoop(OpBuilder &builder,
                                                   Location loc, Value lengths,
                                                   ValueRange updates,
                                                   ValueRange caches) {
  assert(!updates.empty() && updates.size() == caches.size() &&
         "expects one update per cache");
  Value update = updates.front(), cache = caches.front();
  Value batch = getValueOrCreateConstantIndexOp(
      builder, loc,
      getKnownSize(builder, loc, {{cache, 0}, {update, 0}, {lengths, 0}}));
  OpFoldResult rows = tensor::getMixedSize(builder, loc, update, 2);
  // C - T in i64: the largest length after which the rows still fit.
  Type i64 = builder.getI64Type();
  auto asI64 = [&](OpFoldResult size) -> Value {
    Value index = getValueOrCreateConstantIndexOp(builder, loc, size);
    return arith::IndexCastOp::create(builder, loc, i64, index);
  };
  Value room = arith::SubIOp::create(
      builder, loc, asI64(tensor::getMixedSize(builder, loc, cache, 2)),
      asI64(rows));
  Value zeroI64 = arith::ConstantIntOp::create(builder, loc, i64, 0);
  Value zero = arith::ConstantIndexOp::create(builder, loc, 0);
  Value one = arith::ConstantIndexOp::create(builder, loc, 1);
  auto loop = scf::ForOp::create(
      builder, loc, zero, batch, one, caches,
      [&](OpBuilder &nb, Location nloc, Value seq, ValueRange carried) {
        Value length =
            tensor::ExtractOp::create(nb, nloc, lengths, ValueRange{seq});
        Value notNegative = arith::CmpIOp::create(
            nb, nloc, arith::CmpIPredicate::sge, length, zeroI64);
        Value fits = arith::CmpIOp::create(nb, nloc, arith::CmpIPredicate::sle,
                                           length, room);
        Value ok = arith::AndIOp::create(nb, nloc, notNegative, fits);
        auto ifOp = scf::IfOp::create(
            nb, nloc, ok,
            [&](OpBuilder &tb, Location tloc) {
              Value offset = arith::IndexCastOp::create(
                  tb, tloc, tb.getIndexType(), length);
              SmallVector<Value> written;
              for (auto [rowsOf, into] : llvm::zip_equal(updates, carried)) {
                // [1, Hkv, T, (d)] of sequence `seq`, at (seq, 0, length,
                // (0)) in the cache.
                int64_t rank = cast<RankedTensorType>(into.getType()).getRank();
                OpFoldResult zeroAttr = tb.getIndexAttr(0);
                SmallVector<OpFoldResult> from(rank, zeroAttr),
                    at(rank, zeroAttr);
                from[0] = at[0] = seq;
                at[2] = offset;
                SmallVector<OpFoldResult> sizes =
                    tensor::getMixedSizes(tb, tloc, rowsOf);
                sizes[0] = tb.getIndexAttr(1);
                sizes[2] = rows;
                SmallVector<OpFoldResult> strides(rank, tb.getIndexAttr(1));
                Value rowsOfSeq = tensor::ExtractSliceOp::create(
                    tb, tloc, rowsOf, from, sizes, strides);
                // A linalg.copy into the cache's slice, not the bare
                // insert_slice: mha-vectorize makes it whole-row vector
                // reads and writes, where the insert_slice bufferized to a
                // memref.copy that became scalar loops. The slice is
                // written back where it was taken, in place.
                Value target = tensor::ExtractSliceOp::create(
                    tb, tloc, into, at, sizes, strides);
                Value copied =
                    linalg::CopyOp::create(tb, tloc, rowsOfSeq, target)
                        .getResult(0);
                written.push_back(tensor::InsertSliceOp::create(
                    tb, tloc, copied, into, at, sizes, strides));
              }
              scf::YieldOp::create(tb, tloc, written);
            },
            [&](OpBuilder &eb, Location eloc) {
              scf::YieldOp::create(eb, eloc, carried);
            });
        scf::YieldOp::create(nb, nloc, ifOp.getResults());
      });
  return SmallVector<Value>(loop.getResults());
}

namespace {
/// Each new row's scale, then its codes, appended by the sequences' loop.
struct LowerCacheAppendQuantized : OpConversionPattern<CacheAppendQuantizedOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(CacheAppendQuantizedOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto [codes, scales] =
        buildQuantizedRows(rewriter, op.getLoc(), adaptor.getUpdate());
    SmallVector<Value> appended = buildCacheAppendLoop(
        rewriter, op.getLoc(), adaptor.getLengths(), ValueRange{codes, scales},
        ValueRange{adaptor.getCodes(), adaptor.getScales()});
    rewriter.replaceOp(op, appended);
    return success();
  }
};

/// codes · scale, elementwise.
struct LowerDequantize : OpConversionPattern<DequantizeOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(DequantizeOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    GenericBuilder b(rewriter, op.getLoc());
    Value codes = adaptor.getCodes();
    Value result = b.generic(
        ValueRange{codes, adaptor.getScales()},
        b.empty(tensor::getMixedSizes(rewriter, op.getLoc(), codes)),
        {b.map(4, {0, 1, 2, 3}), b.map(4, {0, 1, 2}), b.map(4, {0, 1, 2, 3})},
        SmallVector<utils::IteratorType>(4, kParallel),
        [](OpBuilder &nb, Location nloc, ValueRange args) -> Value {
          return buildDequantizedElement(nb, nloc, args[0], args[1]);
        });
    rewriter.replaceOp(op, b.castTo(result, op.getType()));
    return success();
  }
};
} // namespace

void mlir::mha::populateQuantizedCacheToLinalgPatterns(
    RewritePatternSet &patterns) {
  patterns.add<LowerCacheAppendQuantized, LowerDequantize>(
      patterns.getContext());
}
