// narrowConstantMaskStores (runtime/LLVMOptimizer.h): which masked stores
// become plain stores, and what those store.

#include "runtime/LLVMOptimizer.h"

#include "llvm/AsmParser/Parser.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/IntrinsicInst.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Verifier.h"
#include "llvm/Support/SourceMgr.h"

#include <gtest/gtest.h>

using namespace llvm;

namespace {

/// One function per case, each storing %v to %p under one mask.
constexpr const char *kModule = R"(
declare void @llvm.masked.store.v16f32.p0(<16 x float>, ptr, <16 x i1>)

define void @one_lane(<16 x float> %v, ptr %p) {
  call void @llvm.masked.store.v16f32.p0(<16 x float> %v, ptr align 64 %p,
      <16 x i1> <i1 true, i1 false, i1 false, i1 false, i1 false, i1 false, i1 false, i1 false,
                 i1 false, i1 false, i1 false, i1 false, i1 false, i1 false, i1 false, i1 false>)
  ret void
}

define void @three_lanes(<16 x float> %v, ptr %p) {
  call void @llvm.masked.store.v16f32.p0(<16 x float> %v, ptr align 4 %p,
      <16 x i1> <i1 true, i1 true, i1 true, i1 false, i1 false, i1 false, i1 false, i1 false,
                 i1 false, i1 false, i1 false, i1 false, i1 false, i1 false, i1 false, i1 false>)
  ret void
}

define void @all_lanes(<16 x float> %v, ptr %p) {
  call void @llvm.masked.store.v16f32.p0(<16 x float> %v, ptr align 64 %p,
      <16 x i1> splat (i1 true))
  ret void
}

define void @no_lane(<16 x float> %v, ptr %p) {
  call void @llvm.masked.store.v16f32.p0(<16 x float> %v, ptr align 64 %p,
      <16 x i1> zeroinitializer)
  ret void
}

define void @gap(<16 x float> %v, ptr %p) {
  call void @llvm.masked.store.v16f32.p0(<16 x float> %v, ptr align 64 %p,
      <16 x i1> <i1 true, i1 false, i1 true, i1 false, i1 false, i1 false, i1 false, i1 false,
                 i1 false, i1 false, i1 false, i1 false, i1 false, i1 false, i1 false, i1 false>)
  ret void
}

define void @suffix(<16 x float> %v, ptr %p) {
  call void @llvm.masked.store.v16f32.p0(<16 x float> %v, ptr align 64 %p,
      <16 x i1> <i1 false, i1 true, i1 true, i1 true, i1 true, i1 true, i1 true, i1 true,
                 i1 true, i1 true, i1 true, i1 true, i1 true, i1 true, i1 true, i1 true>)
  ret void
}

define void @variable(<16 x float> %v, ptr %p, <16 x i1> %m) {
  call void @llvm.masked.store.v16f32.p0(<16 x float> %v, ptr align 64 %p,
      <16 x i1> %m)
  ret void
}
)";

struct Stores {
  unsigned masked = 0;
  SmallVector<StoreInst *> plain;
};

Stores storesOf(Function &function) {
  Stores stores;
  for (Instruction &instruction : instructions(function)) {
    if (auto *call = dyn_cast<IntrinsicInst>(&instruction);
        call && call->getIntrinsicID() == Intrinsic::masked_store)
      ++stores.masked;
    if (auto *store = dyn_cast<StoreInst>(&instruction))
      stores.plain.push_back(store);
  }
  return stores;
}

class LLVMOptimizerTest : public ::testing::Test {
protected:
  void SetUp() override {
    SMDiagnostic error;
    module = parseAssemblyString(kModule, error, context);
    ASSERT_TRUE(module) << error.getMessage().str();
    rewritten = mha::runtime::narrowConstantMaskStores(*module);
    ASSERT_FALSE(verifyModule(*module, &errs()));
  }

  Stores stores(StringRef name) { return storesOf(*module->getFunction(name)); }

  LLVMContext context;
  std::unique_ptr<Module> module;
  unsigned rewritten = 0;
};

TEST_F(LLVMOptimizerTest, RewritesOnlyConstantPrefixMasks) {
  // one_lane, three_lanes, all_lanes, no_lane.
  EXPECT_EQ(rewritten, 4u);
  EXPECT_EQ(stores("gap").masked, 1u);
  EXPECT_EQ(stores("suffix").masked, 1u);
  EXPECT_EQ(stores("variable").masked, 1u);
}

TEST_F(LLVMOptimizerTest, OneLaneIsAScalarStoreOfLaneZero) {
  Stores one = stores("one_lane");
  ASSERT_EQ(one.masked, 0u);
  ASSERT_EQ(one.plain.size(), 1u);
  StoreInst *store = one.plain.front();
  EXPECT_TRUE(store->getValueOperand()->getType()->isFloatTy());
  auto *lane = dyn_cast<ExtractElementInst>(store->getValueOperand());
  ASSERT_TRUE(lane);
  EXPECT_EQ(lane->getVectorOperand(),
            module->getFunction("one_lane")->getArg(0));
  auto *index = dyn_cast<ConstantInt>(lane->getIndexOperand());
  ASSERT_TRUE(index);
  EXPECT_EQ(index->getZExtValue(), 0u);
  EXPECT_EQ(store->getPointerOperand(),
            module->getFunction("one_lane")->getArg(1));
  EXPECT_EQ(store->getAlign().value(), 64u);
}

TEST_F(LLVMOptimizerTest, APrefixStoresItsFirstLanes) {
  Stores three = stores("three_lanes");
  ASSERT_EQ(three.masked, 0u);
  ASSERT_EQ(three.plain.size(), 1u);
  StoreInst *store = three.plain.front();
  auto *type = dyn_cast<FixedVectorType>(store->getValueOperand()->getType());
  ASSERT_TRUE(type);
  EXPECT_EQ(type->getNumElements(), 3u);
  auto *shuffle = dyn_cast<ShuffleVectorInst>(store->getValueOperand());
  ASSERT_TRUE(shuffle);
  EXPECT_EQ(shuffle->getShuffleMask(), ArrayRef<int>({0, 1, 2}));
  EXPECT_EQ(store->getAlign().value(), 4u);
}

TEST_F(LLVMOptimizerTest, AllLanesStoreTheVectorAndNoLaneNothing) {
  Stores all = stores("all_lanes");
  ASSERT_EQ(all.masked, 0u);
  ASSERT_EQ(all.plain.size(), 1u);
  EXPECT_EQ(all.plain.front()->getValueOperand(),
            module->getFunction("all_lanes")->getArg(0));
  Stores none = stores("no_lane");
  EXPECT_EQ(none.masked, 0u);
  EXPECT_TRUE(none.plain.empty());
}

} // namespace
