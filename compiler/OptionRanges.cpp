//===- OptionRanges.cpp - Ranges of the numeric options -------------------===//

#include "compiler/OptionRanges.h"

#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace mlir::mha;

llvm::Error mlir::mha::checkOptionRange(llvm::StringRef name, int64_t value,
                                        int64_t min, int64_t max) {
  if (value >= min && value <= max)
    return llvm::Error::success();
  return llvm::createStringError(
      llvm::formatv("{0} must be between {1} and {2}, got {3}", name, min, max,
                    value)
          .str());
}

llvm::Error
mlir::mha::checkAttentionTileRequest(const AttentionTileRequest &request,
                                     llvm::StringRef prefix) {
  if (auto error = checkOptionRange((prefix + "query-tile").str(),
                                    request.queryTile, 0, kMaxTileSize))
    return error;
  if (auto error = checkOptionRange((prefix + "key-tile").str(),
                                    request.keyTile, 0, kMaxTileSize))
    return error;
  return checkOptionRange((prefix + "key-splits").str(), request.keySplits, 1,
                          kMaxKeySplits);
}

llvm::Error mlir::mha::checkRegisterBlockOptions(int64_t rows, int64_t cols,
                                                 int64_t unroll,
                                                 llvm::StringRef prefix) {
  if (auto error = checkOptionRange((prefix + "register-rows").str(), rows, 0,
                                    kMaxRegisterBlock))
    return error;
  if (auto error = checkOptionRange((prefix + "register-cols").str(), cols, 0,
                                    kMaxRegisterBlock))
    return error;
  return checkOptionRange((prefix + "register-unroll").str(), unroll, 0,
                          kMaxRegisterUnroll);
}

llvm::Error
mlir::mha::checkTileProjectionsOptions(const MhaTileProjectionsOptions &options,
                                       llvm::StringRef prefix) {
  if (auto error = checkOptionRange((prefix + "row-tile").str(),
                                    options.rowTile, 0, kMaxTileSize))
    return error;
  return checkOptionRange((prefix + "col-tile").str(), options.colTile, 0,
                          kMaxTileSize);
}
