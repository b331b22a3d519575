//===- LayerGraphText.cpp - mha.layer(): one layer's graph text -----------===//

#include "python/LayerGraphText.h"
#include "python/ErrorMessages.h"

#include "dialects/MhaDialect.h"
#include "graphs/LayerGraph.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>

namespace mha::python {

std::string layerGraph(const py::kwargs &kwargs) {
  ::mha::graphs::LayerOptions o;
  auto size = [&](const char *key, std::optional<int64_t> &field) {
    if (kwargs.contains(key) && !kwargs[key].is_none())
      field = kwargs[key].cast<int64_t>();
  };
  auto flag = [&](const char *key, bool &field) {
    if (kwargs.contains(key))
      field = kwargs[key].cast<bool>();
  };
  static const char *known[] = {"batch",
                                "seq",
                                "kv_seq",
                                "d_model",
                                "kv_dim",
                                "heads",
                                "kv_heads",
                                "head_dim",
                                "value_dim",
                                "out_dim",
                                "cross",
                                "causal",
                                "mask",
                                "mask_broadcast",
                                "bias",
                                "split_first",
                                "causal_bottom_right",
                                "kv_cache",
                                "dtype"};
  for (auto [key, value] : kwargs) {
    std::string name = py::cast<std::string>(key);
    if (llvm::find(known, name) == std::end(known))
      throw py::type_error("mha.layer() has no option '" + name + "'");
  }
  size("batch", o.batch);
  size("seq", o.seqLen);
  size("kv_seq", o.kvSeqLen);
  size("d_model", o.modelDim);
  size("kv_dim", o.kvDim);
  size("heads", o.numHeads);
  size("kv_heads", o.numKvHeads);
  size("head_dim", o.headDim);
  size("value_dim", o.valueDim);
  size("out_dim", o.outDim);
  size("kv_cache", o.kvCache);
  flag("cross", o.cross);
  flag("causal", o.causal);
  flag("causal_bottom_right", o.causalBottomRight);
  flag("mask", o.mask);
  flag("mask_broadcast", o.maskBroadcast);
  flag("bias", o.bias);
  flag("split_first", o.splitFirst);
  // mha-gen's --dtype: "bf16" (or "bfloat16") for bf16 inputs, weights
  // and biases, computed in float32.
  if (kwargs.contains("dtype")) {
    std::string dtype = py::str(kwargs["dtype"]).cast<std::string>();
    if (dtype != "f32" && dtype != "float32" && dtype != "bf16" &&
        dtype != "bfloat16")
      throw py::value_error("dtype must be 'f32' or 'bf16', got '" + dtype +
                            "'");
    o.bf16 = dtype == "bf16" || dtype == "bfloat16";
  }
  // None is `?`: batch and seq default to it here.
  o.dynamicBatch = !kwargs.contains("batch") || kwargs["batch"].is_none();
  o.dynamicSeq = !kwargs.contains("seq") || kwargs["seq"].is_none();
  o.dynamicKvSeq = !kwargs.contains("kv_seq") || kwargs["kv_seq"].is_none();
  auto config = ::mha::graphs::resolveLayerConfig(o, [](llvm::StringRef name) {
    std::string spelled = name.str();
    std::replace(spelled.begin(), spelled.end(), '-', '_');
    return spelled;
  });
  if (!config)
    throw py::value_error(message(config.takeError()));
  mlir::MLIRContext context;
  context.loadDialect<mlir::mha::MhaDialect, mlir::func::FuncDialect>();
  std::string log;
  llvm::raw_string_ostream logStream(log);
  mlir::OwningOpRef<mlir::ModuleOp> module =
      ::mha::graphs::buildLayerGraph(context, *config);
  if (failed(mlir::verify(*module)))
    throw py::value_error("the generated graph does not verify");
  std::string text;
  llvm::raw_string_ostream os(text);
  module->print(os);
  os << "\n";
  return text;
}

} // namespace mha::python
