//===- Registration.h - What the mha tools register -------------*- C++ -*-===//

#ifndef MHA_COMPILER_REGISTRATION_H
#define MHA_COMPILER_REGISTRATION_H

namespace mlir {
class DialectRegistry;

namespace mha {

/// Adds the mha dialect and the upstream dialects (and their bufferization
/// and inlining models) that the pipelines lower through.
void registerMhaDialects(DialectRegistry &registry);

/// Registers the mha passes, the named pipelines and the upstream passes the
/// pipelines use, so that each stage can be run on its own in `mha-opt`.
void registerMhaPasses();

/// Adds the transform dialect with the extensions that drive mha's op
/// interfaces from transform scripts (linalg's structured ops; scf, tensor
/// and func), and registers `--transform-interpreter`: what `mha-opt` needs
/// to test the interfaces as upstream does, which the compiling tools do
/// not.
void registerMhaTransformDialect(DialectRegistry &registry);

} // namespace mha
} // namespace mlir

#endif // MHA_COMPILER_REGISTRATION_H
