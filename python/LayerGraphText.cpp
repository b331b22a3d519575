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

namespace {

/// Reads mha.layer()'s keyword arguments into LayerOptions fields, with
/// TypeErrors that name the option (pybind11's own cast error is a
/// RuntimeError without it).
class KeywordReader {
public:
  explicit KeywordReader(const py::kwargs &kwargs) : kwargs(kwargs) {}

  void size(const char *key, std::optional<int64_t> &field) const {
    if (!given(key))
      return;
    try {
      field = kwargs[key].cast<int64_t>();
    } catch (const py::cast_error &) {
      throw typeError(key, "an integer");
    }
  }

  /// A float option left out or None takes mha-gen's default; a str is not
  /// a number here, though float("50") would take it.
  void real(const char *key, std::optional<double> &field) const {
    if (!given(key))
      return;
    if (py::isinstance<py::str>(kwargs[key]))
      throw typeError(key, "a number");
    try {
      field = kwargs[key].cast<double>();
    } catch (const py::cast_error &) {
      throw typeError(key, "a number");
    }
  }

  /// A layout or shape: a str, "" as mha-gen's `--rope=` (a value that is
  /// not valid, not the option left out), None as the option left out.
  void word(const char *key, std::string &field) const {
    if (!given(key))
      return;
    if (!py::isinstance<py::str>(kwargs[key]))
      throw typeError(key, "a str");
    field = kwargs[key].cast<std::string>();
    if (field.empty())
      throw py::value_error(std::string(key) + " needs a value, got ''");
  }

  void flag(const char *key, bool &field) const {
    if (kwargs.contains(key))
      field = kwargs[key].cast<bool>();
  }

  /// Whether `key` is given and not None.
  bool given(const char *key) const {
    return kwargs.contains(key) && !kwargs[key].is_none();
  }

private:
  py::type_error typeError(const char *key, const char *what) const {
    return py::type_error(
        std::string(key) + " must be " + what + ", got " +
        py::str(py::type::handle_of(kwargs[key]).attr("__name__"))
            .cast<std::string>());
  }

  const py::kwargs &kwargs;
};

/// A TypeError for a keyword that mha.layer() does not know.
void checkKnownOptions(const py::kwargs &kwargs) {
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
                                "paged_kv",
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
}

/// mha-gen's options as the keywords give them.
::mha::graphs::LayerOptions readLayerOptions(const py::kwargs &kwargs) {
  checkKnownOptions(kwargs);
  KeywordReader read(kwargs);
  ::mha::graphs::LayerOptions o;
  read.size("batch", o.batch);
  read.size("seq", o.seqLen);
  read.size("kv_seq", o.kvSeqLen);
  read.size("d_model", o.modelDim);
  read.size("kv_dim", o.kvDim);
  read.size("heads", o.numHeads);
  read.size("kv_heads", o.numKvHeads);
  read.size("head_dim", o.headDim);
  read.size("value_dim", o.valueDim);
  read.size("out_dim", o.outDim);
  read.size("kv_cache", o.kvCache);
  read.word("cache_dtype", o.cacheDtype);
  read.size("paged_kv", o.pagedKv);
  read.flag("cross", o.cross);
  read.flag("causal", o.causal);
  read.flag("causal_bottom_right", o.causalBottomRight);
  read.flag("mask", o.mask);
  read.flag("mask_broadcast", o.maskBroadcast);
  read.flag("bias", o.bias);
  read.flag("split_first", o.splitFirst);
  // The served models' variants, mha-gen's --rope ... --attn-bias;
  // resolveLayerConfig checks them with mha-gen's rules and messages.
  read.real("scale", o.scale);
  read.real("softcap", o.softcap);
  read.size("window", o.window);
  read.word("rope", o.rope);
  read.size("rotary_dim", o.rotaryDim);
  read.real("rope_base", o.ropeBase);
  read.real("rope_scale", o.ropeScale);
  read.real("rope_mscale", o.ropeMscale);
  read.flag("rope_inv_freq", o.ropeInvFreq);
  read.flag("qk_norm", o.qkNorm);
  read.real("qk_norm_eps", o.qkNormEps);
  read.flag("alibi", o.alibi);
  read.flag("sinks", o.sinks);
  read.word("attn_bias", o.attnBias);
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
  o.dynamicBatch = !read.given("batch");
  o.dynamicSeq = !read.given("seq");
  o.dynamicKvSeq = !read.given("kv_seq");
  return o;
}

} // namespace

std::string layerGraph(const py::kwargs &kwargs) {
  ::mha::graphs::LayerOptions o = readLayerOptions(kwargs);
  auto config = ::mha::graphs::resolveLayerConfig(o, [](llvm::StringRef name) {
    std::string spelled = name.str();
    std::replace(spelled.begin(), spelled.end(), '-', '_');
    return spelled;
  });
  if (!config)
    throw py::value_error(message(config.takeError()));
  mlir::MLIRContext context;
  context.loadDialect<mlir::mha::MhaDialect, mlir::func::FuncDialect>();
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
