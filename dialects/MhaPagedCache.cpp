//===- MhaPagedCache.cpp - Verifiers of the paged cache ops ---------------===//
//
// mha.paged_cache_append (and its int8 form) and mha.paged_view: the pool's
// pages hold a static number of rows, its heads and row width are the
// update's (or the view's), and the table has one row per sequence.
//
//===----------------------------------------------------------------------===//

#include "dialects/InferredTypes.h"
#include "dialects/MhaOps.h"
#include "dialects/ShapeChecker.h"

using namespace mlir;
using namespace mlir::mha;

/// The pool's page size P is static, a multiple of 16 from 16 to 128 (so
/// that the fused attention's key blocks, of 16 rows or more, never straddle
/// a page), and its heads and row width (where it has rows, not scales) are
/// static.
static LogicalResult verifyPool(Operation *op, ShapeChecker &check, Value pool,
                                StringRef name = "pool") {
  if (failed(check.isStatic(pool, name, 1, "head count")) ||
      failed(check.isStatic(pool, name, 2, "page size")) ||
      (tensorType(pool).getRank() == 4 &&
       failed(check.isStatic(pool, name, 3, "row width"))))
    return failure();
  int64_t pageSize = tensorType(pool).getDimSize(2);
  if (pageSize < 16 || pageSize > 128 || pageSize % 16 != 0)
    return op->emitOpError()
           << "expects the page size (dimension 2 of " << name
           << ") to be a multiple of 16 from 16 to 128, got " << pageSize;
  return success();
}

/// M · P, the rows a table row holds (`?` where M is).
static int64_t tableRows(Value pool, Value table) {
  int64_t pages = tensorType(table).getDimSize(1);
  if (ShapedType::isDynamic(pages))
    return ShapedType::kDynamic;
  return pages * tensorType(pool).getDimSize(2);
}

//===----------------------------------------------------------------------===//
// PagedCacheAppendOp
//===----------------------------------------------------------------------===//

/// The update's rows fit the pool's pages: one table row and one length per
/// sequence, the pool's heads and row width, and at most the rows of an
/// empty sequence's pages (whether they fit after the rows it already has
/// is only known at run time).
static LogicalResult verifyPagedUpdate(Operation *op, ShapeChecker &check,
                                       Value update, Value pool, Value table,
                                       Value lengths) {
  if (failed(verifyPool(op, check, pool)) ||
      failed(check.isStatic(update, "update", 1, "head count")) ||
      failed(check.isStatic(update, "update", 3, "row width")))
    return failure();
  ArrayRef<int64_t> u = tensorType(update).getShape();
  ArrayRef<int64_t> p = tensorType(pool).getShape();
  ArrayRef<int64_t> t = tensorType(table).getShape();
  if (failed(check.dim("table rows (B)", u[0], t[0])) ||
      failed(check.dim("lengths size (B)", refineDim(u[0], t[0]),
                       tensorType(lengths).getDimSize(0))) ||
      failed(check.dim("update heads (Hkv)", p[1], u[1])) ||
      failed(check.dim("update row width (d)", p[3], u[3])))
    return failure();
  int64_t rows = tableRows(pool, table);
  if (!ShapedType::isDynamic(u[2]) && !ShapedType::isDynamic(rows) &&
      u[2] > rows)
    return op->emitOpError()
           << "expects the update length (T = " << u[2]
           << ") to be at most the rows of a table row (M * P = " << t[1]
           << " * " << p[2] << " = " << rows << ")";
  return success();
}

LogicalResult PagedCacheAppendOp::verify() {
  ShapeChecker check(*this);
  return verifyPagedUpdate(*this, check, getUpdate(), getPool(), getTable(),
                           getLengths());
}

//===----------------------------------------------------------------------===//
// PagedCacheAppendQuantizedOp
//===----------------------------------------------------------------------===//

LogicalResult PagedCacheAppendQuantizedOp::verify() {
  if (!getCodes().getType().getElementType().isInteger(8))
    return emitOpError() << "expects i8 codes, got "
                         << getCodes().getType().getElementType();
  ShapeChecker check(*this);
  if (failed(verifyPagedUpdate(*this, check, getUpdate(), getCodes(),
                               getTable(), getLengths())) ||
      failed(verifyPool(*this, check, getScales(), "scales")))
    return failure();
  ArrayRef<int64_t> c = getCodes().getType().getShape();
  ArrayRef<int64_t> s = getScales().getType().getShape();
  if (failed(check.dim("scales pages (N)", c[0], s[0])) ||
      failed(check.dim("scales heads (Hkv)", c[1], s[1])) ||
      failed(check.dim("scales page size (P)", c[2], s[2])))
    return failure();
  return success();
}

//===----------------------------------------------------------------------===//
// PagedViewOp
//===----------------------------------------------------------------------===//

LogicalResult PagedViewOp::verify() {
  ShapeChecker check(*this);
  if (failed(verifyPool(*this, check, getPool())))
    return failure();
  ArrayRef<int64_t> r = getResult().getType().getShape();
  ArrayRef<int64_t> p = getPool().getType().getShape();
  if (r.size() != p.size())
    return emitOpError() << "expects a result of the pool's rank (" << p.size()
                         << "), got rank " << r.size();
  if (failed(check.dim("result batch (B)", getTable().getType().getDimSize(0),
                       r[0])) ||
      failed(check.dim("result heads (Hkv)", p[1], r[1])) ||
      failed(check.dim("result rows (M * P)", tableRows(getPool(), getTable()),
                       r[2])) ||
      (p.size() == 4 && failed(check.dim("result row width (d)", p[3], r[3]))))
    return failure();
  return success();
}
