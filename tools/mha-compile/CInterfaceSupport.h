//===- CInterfaceSupport.h - What the header and wrapper share --*- C++ -*-===//
//
// How the C API sees a graph's arguments: their C types and names, which
// function takes which, the key/value cache of a cache graph. The header
// (CInterface.cpp) and the wrapper (CWrapper.cpp, CWrapperChecks.cpp) are
// written from these, so that declarations and definitions agree.
//
//===----------------------------------------------------------------------===//

#ifndef MHA_TOOLS_MHACOMPILE_CINTERFACESUPPORT_H
#define MHA_TOOLS_MHACOMPILE_CINTERFACESUPPORT_H

#include "tools/mha-compile/CInterface.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>
#include <string>

namespace mha::compile {

/// `[?, ?, 512]` as the header documents a declared shape.
std::string describeShape(mlir::RankedTensorType type);

bool isMask(const runtime::GraphArgument &argument);
bool isInt64(const runtime::GraphArgument &argument);

/// A bf16 key/value cache of a cache graph, which the C API takes as bf16
/// bits (`uint16_t *`) in every view.
bool isBF16Cache(const runtime::GraphArgument &argument);

/// A bf16 argument that the C API takes as float32 and rounds (every bf16
/// argument but a cache).
bool isBF16(const runtime::GraphArgument &argument);

/// Which arguments a C function takes.
enum class Arguments { All, Weights, Activations };

bool takes(const LibraryInterface &interface, Arguments which, unsigned index);

/// Whose view of an argument's data a C function has. Only bf16 arguments
/// differ: the caller passes float32 values (C has no bfloat16, nor has
/// NumPy), the compiled code reads the bf16 bits the wrapper rounded them
/// to, and the checks, which read no bf16 element, take either.
enum class View { Caller, Graph, Check };

/// How the header names an argument's element type: "float32",
/// "int8 (int8_t)", ...
std::string describeElementType(const runtime::GraphArgument &argument);

/// The element type of an argument in C, as `view` sees it.
std::string elementType(const runtime::GraphArgument &argument,
                        View view = View::Caller);

/// The key/value cache of a cache graph (mha-gen --kv-cache): its arguments
/// by name, and the sizes a session needs. The caches are written in place,
/// so the C API takes them without `const`.
struct CacheLayout {
  unsigned x = 0, keyCache = 0, valueCache = 0, lengths = 0;
  /// x's batch if static, else `?`; D; Hkv; C; dk; dv; D_out.
  int64_t batch = mlir::ShapedType::kDynamic, modelDim = 0, kvHeads = 0,
          capacity = 0, keyDim = 0, valueDim = 0, outDim = 0;
  /// Whether the session API can be written: every activation is one of
  /// x, the caches and the lengths, and the sizes it fixes are static.
  bool session = false;
  /// The C type of the caches' elements: `float`, `uint16_t` (bf16 bits)
  /// for bf16 caches, `int8_t` for the codes of int8 caches.
  std::string element = "float";
};

/// The cache of `interface`'s graph, if it is a cache graph.
std::optional<CacheLayout> findCache(const LibraryInterface &interface);

/// Whether the compiled code writes argument `index` (a cache) in place.
bool isWritten(const LibraryInterface &interface, unsigned index);

/// `const float *x, const int64_t x_shape[3], ...` for the arguments that
/// `which` selects; "" if none.
std::string argumentParameters(const LibraryInterface &interface,
                               Arguments which, View view = View::Caller);

/// The result's parameters.
std::string resultParameters(const LibraryInterface &interface);

/// The parameter list of NAME_run, shared by header and definition.
std::string parameterList(const LibraryInterface &interface);

/// `x, x_shape, handle->w_q, handle->w_q_shape, ...`: every argument, the
/// weights from `weights` (e.g. "handle->") and the others from the
/// parameters, or NULL where `activations` is false. With `rounded`, the
/// data of a bf16 argument that comes from the parameters is the local
/// `<id>_bf16` that the caller's floats were rounded into.
std::string argumentValues(const LibraryInterface &interface,
                           llvm::StringRef weights, bool activations,
                           bool rounded = false);

/// Whether any argument that `which` selects is rounded to bf16.
bool hasBF16(const LibraryInterface &interface, Arguments which);

/// `x, kv, w_q`: the names of the bf16 arguments that `which` selects.
llvm::SmallVector<std::string> bf16Names(const LibraryInterface &interface,
                                         Arguments which);

/// `x_shape[0]`: how the C code names one `?` size of an argument.
std::string dimName(const LibraryInterface &interface,
                    runtime::ArgumentDim dim);

/// The descriptor struct of one rank, as the LLVM lowering lays it out.
std::string descriptorType(llvm::StringRef name, int64_t rank);

/// Writes the size checks of the arguments that `which` selects (into a
/// function that has `int64_t count`): null pointers, positive sizes, the
/// static sizes, the relations between `?` sizes as far as those arguments
/// have them, mask bytes and a cache's lengths (CWrapperChecks.cpp).
void writeChecks(llvm::raw_ostream &os, const LibraryInterface &interface,
                 Arguments which);

/// Writes the end of NAME_check: no buffer the call writes may share bytes
/// with another argument.
void writeDisjointCheck(llvm::raw_ostream &os,
                        const LibraryInterface &interface);

} // namespace mha::compile

#endif // MHA_TOOLS_MHACOMPILE_CINTERFACESUPPORT_H
