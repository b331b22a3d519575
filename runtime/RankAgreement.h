/*===- RankAgreement.h - The ranks agree before they add up -----*- C -*-===//
 *
 * What every split run does before the one all-reduce of its partial
 * outputs (docs/distributed.md): each rank says whether it is ready, how
 * large its output is and what it was given, and the all-reduce runs only
 * when every rank is ready with the same output shape from the same inputs.
 * Every rank makes this exchange whatever happened to it, so that a rank
 * that failed makes the others return an error instead of waiting in the
 * all-reduce for it.
 *
 * Plain C on MPI's C API: mha-run (tools/mha-run/Communicator.cpp), the
 * Python module and the wrappers of mha-compile's split libraries, which
 * embed this file, share it.
 *
 *===----------------------------------------------------------------------===*/

#ifndef MHA_RUNTIME_RANKAGREEMENT_H
#define MHA_RUNTIME_RANKAGREEMENT_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* What one rank tells the others before an all-reduce. */
typedef struct {
  /* 0: ready to add up its output; 1 + code: stopped with `code`. */
  uint64_t state;
  /* The elements of its output, and a hash of its output's shape. */
  uint64_t elements, shape_hash;
  /* A hash of the inputs, which every rank must have been given alike. */
  uint64_t input_hash;
} mha_rank_state;

/* Why the ranks do not agree. */
typedef enum {
  MHA_RANKS_AGREE = 0,
  MHA_RANK_STOPPED,
  MHA_RANK_OTHER_INPUTS,
  MHA_RANK_OTHER_SHAPE,
  MHA_RANK_MPI_FAILED
} mha_rank_reason;

/* The first rank, in rank order, that stopped or differs from rank 0. */
typedef struct {
  mha_rank_reason reason;
  /* That rank (-1 when they agree), and its code when it stopped. */
  int rank;
  uint64_t code;
} mha_rank_disagreement;

/* All-gathers every rank's `mine` over `comm` and returns the first rank
 * that stopped, or whose output or inputs differ from rank 0's; every rank
 * gets the same answer. MHA_RANK_MPI_FAILED when the exchange itself fails
 * (an error handler that returns). */
mha_rank_disagreement mha_rank_agree(MPI_Comm comm, const mha_rank_state *mine);

/* Replaces `values` on every rank by their sum over `comm` (MPI_Allreduce,
 * MPI_SUM, in pieces of at most INT_MAX elements); returns MPI's code. */
int mha_rank_sum(MPI_Comm comm, float *values, int64_t count);

/* Folds `bytes` into `hash` (64-bit FNV-1a over 8-byte words): a hash of
 * inputs that two processes compute alike. */
uint64_t mha_rank_hash(uint64_t hash, const void *bytes, size_t size);

#ifdef __cplusplus
}
#endif

#endif /* MHA_RUNTIME_RANKAGREEMENT_H */
