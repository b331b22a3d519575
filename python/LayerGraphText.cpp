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
  // pybind11's own cast error is a RuntimeError without the option's name.
  auto typeError = [&](const char *key, const char *what) {
    return py::type_error(
        std::string(key) + " must be " + what + ", got " +
        py::str(py::type::handle_of(kwargs[key]).attr("__name__"))
            .cast<std::string>());
  };
  auto size = [&](const char *key, std::optional<int64_t> &field) {
    if (kwargs.contains(key) && !kwargs[key].is_none()) {
      try {
        field = kwargs[key].cast<int64_t>();
      } catch (const py::cast_error &) {
        throw typeError(key, "an integer");
      }
    }
  };
  // A float option left out or None takes mha-gen's default; a string or
  // another non-number is a TypeError from pybind11's cast.
  auto real = [&](const char *key, std::optional<double> &field) {
    if (!kwargs.contains(key) || kwargs[key].is_none())
      return;
    // A str is not a number here, though float("50") would take it.
    if (py::isinstance<py::str>(kwargs[key]))
      throw typeError(key, "a number");
    try {
      field = kwargs[key].cast<double>();
    } catch (const py::cast_error &) {
      throw typeError(key, "a number");
    }
  };
  // A layout or shape: a str, "" as mha-gen's `--rope=` (a value that is not
  // valid, not the option left out), None as the option left out.
  auto word = [&](const char *key, std::string &field) {
    if (!kwargs.contains(key) || kwargs[key].is_none())
      return;
    if (!py::isinstance<py::str>(kwargs[key]))
      throw typeError(key, "a str");
    field = kwargs[key].cast<std::string>();
    if (field.empty())
      throw py::value_error(std::string(key) + " needs a value, got ''");
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
                                "cache_dtype",
                                "dtype",
                                "scale",
                                "softcap",
                                "window",
                                "rope",
                                "rotary_dim",
                                "rope_base",
                                "rope_scale",
                                "rope_mscale",
                                "rope_inv_freq",
                                "qk_norm",
                                "qk_norm_eps",
                                "alibi",
                                "sinks",
                                "attn_bias"};
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
  word("cache_dtype", o.cacheDtype);
  flag("cross", o.cross);
  flag("causal", o.causal);
  flag("causal_bottom_right", o.causalBottomRight);
  flag("mask", o.mask);
  flag("mask_broadcast", o.maskBroadcast);
  flag("bias", o.bias);
  flag("split_first", o.splitFirst);
  // The served models' variants, mha-gen's --rope ... --attn-bias;
  // resolveLayerConfig checks them with mha-gen's rules and messages.
  real("scale", o.scale);
  real("softcap", o.softcap);
  size("window", o.window);
  word("rope", o.rope);
  size("rotary_dim", o.rotaryDim);
  real("rope_base", o.ropeBase);
  real("rope_scale", o.ropeScale);
  real("rope_mscale", o.ropeMscale);
  flag("rope_inv_freq", o.ropeInvFreq);
  flag("qk_norm", o.qkNorm);
  real("qk_norm_eps", o.qkNormEps);
  flag("alibi", o.alibi);
  flag("sinks", o.sinks);
  word("attn_bias", o.attnBias);
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
