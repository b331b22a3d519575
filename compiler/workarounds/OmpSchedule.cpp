//===- OmpSchedule.cpp - The schedule of the parallel loops ---------------===//
//
// convert-scf-to-openmp gives every `omp.wsloop` the default schedule,
// static: each thread gets a fixed, contiguous share of the iterations, and
// a call takes as long as its slowest share. A thread that starts late (a
// sleeping OpenMP thread woken by the first parallel region of a call, as
// between the calls of a Python program that also runs PyTorch) or that
// shares its core with another process then delays the whole loop. With a
// dynamic schedule the threads take iterations as they come free, so the
// others absorb such delays. Every iteration still writes its own tile, in
// its own order, so results do not depend on which thread ran it.
// Upstream's conversion has no option for the schedule (LLVM 22), hence
// this pass.
//
// Retired by: a schedule option of convert-scf-to-openmp.
//
//===----------------------------------------------------------------------===//

#include "compiler/Passes.h"

#include "mlir/Dialect/OpenMP/OpenMPDialect.h"

namespace mlir::mha {
#define GEN_PASS_DEF_MHAOMPSCHEDULE
#include "compiler/Passes.h.inc"
} // namespace mlir::mha

using namespace mlir;

namespace {
struct MhaOmpSchedulePass : mha::impl::MhaOmpScheduleBase<MhaOmpSchedulePass> {
  using Base::Base;

  /// Refuses a schedule that is none where the option is parsed
  /// (`mha-opt --mha-omp-schedule=schedule=sometimes`).
  LogicalResult initializeOptions(
      StringRef text,
      function_ref<LogicalResult(const Twine &)> errorHandler) override {
    if (failed(Base::initializeOptions(text, errorHandler)))
      return failure();
    if (!getKind())
      return errorHandler("mha-omp-schedule expects schedule=static, "
                          "dynamic, guided or runtime, got '" +
                          schedule + "'");
    return success();
  }

  /// `schedule` as OpenMP's kind, if it is one this pass sets.
  std::optional<omp::ClauseScheduleKind> getKind() const {
    std::optional<omp::ClauseScheduleKind> kind =
        omp::symbolizeClauseScheduleKind(schedule);
    if (kind && (*kind == omp::ClauseScheduleKind::Static ||
                 *kind == omp::ClauseScheduleKind::Dynamic ||
                 *kind == omp::ClauseScheduleKind::Guided ||
                 *kind == omp::ClauseScheduleKind::Runtime))
      return kind;
    return std::nullopt;
  }

  void runOnOperation() override {
    // Options set in C++ are not parsed: the same check.
    std::optional<omp::ClauseScheduleKind> kind = getKind();
    if (!kind) {
      emitError(getOperation().getLoc())
          << "mha-omp-schedule expects schedule=static, dynamic, guided or "
             "runtime, got '"
          << schedule << "'";
      return signalPassFailure();
    }
    getOperation().walk([&](omp::WsloopOp loop) {
      loop.setScheduleKindAttr(
          omp::ClauseScheduleKindAttr::get(&getContext(), *kind));
    });
  }
};
} // namespace
