/*===- RankAgreement.c - The ranks agree before they add up ---------------===*/

#include "RankAgreement.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

mha_rank_disagreement mha_rank_agree(MPI_Comm comm,
                                     const mha_rank_state *mine) {
  mha_rank_disagreement found = {MHA_RANKS_AGREE, -1, 0};
  int size = 1;
  if (MPI_Comm_size(comm, &size) != MPI_SUCCESS) {
    found.reason = MHA_RANK_MPI_FAILED;
    return found;
  }
  uint64_t words[4] = {mine->state, mine->elements, mine->shape_hash,
                       mine->input_hash};
  uint64_t *all = malloc(sizeof words * (size_t)size);
  if (!all || MPI_Allgather(words, 4, MPI_UINT64_T, all, 4, MPI_UINT64_T,
                            comm) != MPI_SUCCESS) {
    free(all);
    found.reason = MHA_RANK_MPI_FAILED;
    return found;
  }
  for (int rank = 0; rank < size && found.rank < 0; ++rank) {
    const uint64_t *state = all + 4 * rank;
    if (state[0] != 0)
      found = (mha_rank_disagreement){MHA_RANK_STOPPED, rank, state[0] - 1};
    else if (state[3] != all[3])
      found = (mha_rank_disagreement){MHA_RANK_OTHER_INPUTS, rank, 0};
    else if (state[1] != all[1] || state[2] != all[2])
      found = (mha_rank_disagreement){MHA_RANK_OTHER_SHAPE, rank, 0};
  }
  free(all);
  return found;
}

int mha_rank_sum(MPI_Comm comm, float *values, int64_t count) {
  /* MPI counts are ints: every rank cuts the same pieces. */
  for (int64_t done = 0; done < count;) {
    int piece = count - done < INT_MAX ? (int)(count - done) : INT_MAX;
    int status = MPI_Allreduce(MPI_IN_PLACE, values + done, piece, MPI_FLOAT,
                               MPI_SUM, comm);
    if (status != MPI_SUCCESS)
      return status;
    done += piece;
  }
  return MPI_SUCCESS;
}

uint64_t mha_rank_hash(uint64_t hash, const void *bytes, size_t size) {
  const unsigned char *at = bytes;
  const uint64_t prime = 0x100000001b3ull;
  hash ^= size;
  hash *= prime;
  for (; size >= 8; at += 8, size -= 8) {
    uint64_t word;
    memcpy(&word, at, 8);
    hash = (hash ^ word) * prime;
    hash ^= hash >> 29;
  }
  for (; size; ++at, --size)
    hash = (hash ^ *at) * prime;
  return hash;
}
