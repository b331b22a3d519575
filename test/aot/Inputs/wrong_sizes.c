/* wrong_sizes.c: calls a compiled layer (mha-gen, d_model 4, 2 heads) with
 * seeded random sizes, most of them wrong, and checks that the library
 * refuses every call whose sizes do not fit and runs every call whose sizes
 * do, with the result of a plain C reference. Each buffer is exactly as large
 * as its claimed shape and ends at a PROT_NONE page, so that a read past it
 * faults even in the uninstrumented compiled code.
 *
 * Built once per library, all named `layer`: -DCROSS (x and kv), -DMASK (a
 * mask [B or 1, T, S]), -DSTATIC_X (x is [2, 3, 4], kv and mask are `?`).
 *
 *   wrong_sizes SEED CALLS
 *
 * Every call is made twice: with layer_run, and through a handle
 * (layer_create with the weights, layer_call with the rest), which must
 * refuse the same calls and compute the same bits.
 *
 * Prints the fixed cases and a summary; exit status 1 on the first call the
 * library gets wrong. */
#define _DEFAULT_SOURCE
#include "layer.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#ifdef CROSS
#define NUM_INPUTS 2
#else
#define NUM_INPUTS 1
#endif
#ifdef MASK
#define MASK_ARG (NUM_INPUTS)
#define NUM_ARGS (NUM_INPUTS + 9)
#else
#define NUM_ARGS (NUM_INPUTS + 8)
#endif
#define W_ARG (NUM_ARGS - 8) /* w_q w_k w_v w_o b_q b_k b_v b_o */
#define D 4
#define HEADS 2

/* The shapes of one call and the buffers that hold exactly that much. */
typedef struct {
  int rank[NUM_ARGS];
  int64_t shape[NUM_ARGS][3];
  void *data[NUM_ARGS];
  void *mapping[NUM_ARGS];
  size_t mapped[NUM_ARGS];
} Call;

static uint64_t rng_state;
static uint64_t next_random(void) {
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return rng_state;
}
static int64_t random_below(int64_t n) { return (int64_t)(next_random() % n); }

static int64_t count_of(const Call *call, int arg) {
  int64_t count = 1;
  for (int i = 0; i < call->rank[arg]; ++i)
    count *= call->shape[arg][i] > 0 ? call->shape[arg][i] : 0;
  return count;
}

/* Bytes end right before a PROT_NONE page. */
static void *guarded(size_t bytes, void **mapping, size_t *mapped) {
  size_t page = (size_t)sysconf(_SC_PAGESIZE);
  size_t pages = (bytes + page - 1) / page + 1;
  char *base = mmap(NULL, pages * page, PROT_READ | PROT_WRITE,
                    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (base == MAP_FAILED || mprotect(base + (pages - 1) * page, page,
                                     PROT_NONE) != 0) {
    perror("wrong_sizes: mmap");
    exit(2);
  }
  *mapping = base;
  *mapped = pages * page;
  return base + (pages - 1) * page - bytes;
}

/* Allocates every argument at its claimed size, with random data. */
static void allocate(Call *call) {
  for (int arg = 0; arg < NUM_ARGS; ++arg) {
    int64_t count = count_of(call, arg);
#ifdef MASK
    if (arg == MASK_ARG) {
      uint8_t *mask = guarded(count, &call->mapping[arg], &call->mapped[arg]);
      for (int64_t i = 0; i < count; ++i)
        mask[i] = random_below(5) != 0;
      call->data[arg] = mask;
      continue;
    }
#endif
    float *data = guarded(count * sizeof(float), &call->mapping[arg],
                          &call->mapped[arg]);
    for (int64_t i = 0; i < count; ++i)
      data[i] = (float)random_below(2001) / 1000.0f - 1.0f;
    call->data[arg] = data;
  }
}

static void release(Call *call) {
  for (int arg = 0; arg < NUM_ARGS; ++arg)
    munmap(call->mapping[arg], call->mapped[arg]);
}

/* A call with sizes that fit: x [B, T, D], kv [B, S, D], mask [B or 1, T, S],
 * weights [D, D], biases [D]. */
static void right_shapes(Call *call) {
  int64_t batch = 1 + random_below(3), queries = 1 + random_below(4);
  int64_t keys = 1 + random_below(4);
#ifdef STATIC_X
  batch = 2;
  queries = 3;
#endif
#ifndef CROSS
  keys = queries;
#endif
  int64_t x[3] = {batch, queries, D}, kv[3] = {batch, keys, D};
  memcpy(call->shape[0], x, sizeof x);
  call->rank[0] = 3;
#ifdef CROSS
  memcpy(call->shape[1], kv, sizeof kv);
  call->rank[1] = 3;
#endif
#ifdef MASK
  int64_t mask[3] = {random_below(3) ? batch : 1, queries, keys};
  memcpy(call->shape[MASK_ARG], mask, sizeof mask);
  call->rank[MASK_ARG] = 3;
#endif
  (void)kv;
  for (int i = 0; i < 8; ++i) {
    call->rank[W_ARG + i] = i < 4 ? 2 : 1;
    call->shape[W_ARG + i][0] = D;
    call->shape[W_ARG + i][1] = D;
  }
}

/* The layer's rules, written out independently of the library. */
static int fits(const Call *call) {
  for (int arg = 0; arg < NUM_ARGS; ++arg)
    for (int i = 0; i < call->rank[arg]; ++i)
      if (call->shape[arg][i] < 1)
        return 0;
  const int64_t *x = call->shape[0];
  const int64_t *kv = call->shape[NUM_INPUTS - 1];
  if (x[2] != D || kv[2] != D || kv[0] != x[0])
    return 0;
#ifdef STATIC_X
  if (x[0] != 2 || x[1] != 3)
    return 0;
#endif
#ifdef MASK
  const int64_t *mask = call->shape[MASK_ARG];
  if ((mask[0] != 1 && mask[0] != x[0]) || mask[1] != x[1] || mask[2] != kv[1])
    return 0;
#endif
  for (int i = 0; i < 8; ++i)
    if (call->shape[W_ARG + i][0] != D ||
        (i < 4 && call->shape[W_ARG + i][1] != D))
      return 0;
  return 1;
}

/* softmax((x Wq + bq)(kv Wk + bk)^T / sqrt(d)) (kv Wv + bv) per head, then
 * times Wo plus bo; a fully masked row attends to nothing (b_o). */
static void reference(const Call *call, float *y) {
  const float *x = call->data[0], *kv = call->data[NUM_INPUTS - 1];
  const float *const *w = (const float *const *)&call->data[W_ARG];
  int64_t B = call->shape[0][0], T = call->shape[0][1];
  int64_t S = call->shape[NUM_INPUTS - 1][1], dh = D / HEADS;
  float q[16][D], k[16][D], v[16][D], o[16][D], p[16];
  for (int64_t b = 0; b < B; ++b) {
    for (int64_t t = 0; t < T; ++t)
      for (int j = 0; j < D; ++j) {
        q[t][j] = w[4][j];
        for (int i = 0; i < D; ++i)
          q[t][j] += x[(b * T + t) * D + i] * w[0][i * D + j];
      }
    for (int64_t s = 0; s < S; ++s)
      for (int j = 0; j < D; ++j) {
        k[s][j] = w[5][j];
        v[s][j] = w[6][j];
        for (int i = 0; i < D; ++i) {
          k[s][j] += kv[(b * S + s) * D + i] * w[1][i * D + j];
          v[s][j] += kv[(b * S + s) * D + i] * w[2][i * D + j];
        }
      }
    for (int h = 0; h < HEADS; ++h)
      for (int64_t t = 0; t < T; ++t) {
        float top = -INFINITY, sum = 0;
        for (int64_t s = 0; s < S; ++s) {
          p[s] = -INFINITY;
#ifdef MASK
          const uint8_t *mask = call->data[MASK_ARG];
          int64_t mb = call->shape[MASK_ARG][0] == 1 ? 0 : b;
          if (!mask[(mb * T + t) * S + s])
            continue;
#endif
          p[s] = 0;
          for (int j = 0; j < dh; ++j)
            p[s] += q[t][h * dh + j] * k[s][h * dh + j];
          p[s] /= sqrtf((float)dh);
          top = p[s] > top ? p[s] : top;
        }
        for (int64_t s = 0; s < S; ++s) {
          p[s] = p[s] == -INFINITY ? 0 : expf(p[s] - top);
          sum += p[s];
        }
        for (int j = 0; j < dh; ++j) {
          o[t][h * dh + j] = 0;
          for (int64_t s = 0; s < S; ++s)
            o[t][h * dh + j] += sum > 0 ? p[s] / sum * v[s][h * dh + j] : 0;
        }
      }
    for (int64_t t = 0; t < T; ++t)
      for (int j = 0; j < D; ++j) {
        y[(b * T + t) * D + j] = w[7][j];
        for (int i = 0; i < D; ++i)
          y[(b * T + t) * D + j] += o[t][i] * w[3][i * D + j];
      }
  }
}

static int run(Call *call, float *result, int64_t capacity,
               int64_t *result_shape) {
  void *const *a = call->data;
  int64_t(*s)[3] = call->shape;
  return layer_run(a[0], s[0],
#ifdef CROSS
                   a[1], s[1],
#endif
#ifdef MASK
                   a[MASK_ARG], s[MASK_ARG],
#endif
                   a[W_ARG], s[W_ARG], a[W_ARG + 1], s[W_ARG + 1],
                   a[W_ARG + 2], s[W_ARG + 2], a[W_ARG + 3], s[W_ARG + 3],
                   a[W_ARG + 4], s[W_ARG + 4], a[W_ARG + 5], s[W_ARG + 5],
                   a[W_ARG + 6], s[W_ARG + 6], a[W_ARG + 7], s[W_ARG + 7],
                   result, capacity, result_shape);
}

/* The same call through a handle: the weights to layer_create, the rest to
 * layer_call; a handle that cannot be created counts as a refused call. */
static int run_handle(Call *call, float *result, int64_t capacity,
                      int64_t *result_shape) {
  void *const *w = &call->data[W_ARG];
  int64_t(*ws)[3] = &call->shape[W_ARG];
  layer_handle *handle = layer_create(w[0], ws[0], w[1], ws[1], w[2], ws[2],
                                      w[3], ws[3], w[4], ws[4], w[5], ws[5],
                                      w[6], ws[6], w[7], ws[7]);
  if (!handle)
    return LAYER_BAD_ARGUMENT;
  void *const *a = call->data;
  int64_t(*s)[3] = call->shape;
  int status = layer_call(handle, a[0], s[0],
#ifdef CROSS
                          a[1], s[1],
#endif
#ifdef MASK
                          a[MASK_ARG], s[MASK_ARG],
#endif
                          result, capacity, result_shape);
  layer_destroy(handle);
  return status;
}

static void describe(const Call *call, char *text, size_t room) {
  size_t used = 0;
  for (int arg = 0; arg < NUM_ARGS && used < room; ++arg) {
    used += snprintf(text + used, room - used, "[");
    for (int i = 0; i < call->rank[arg] && used < room; ++i)
      used += snprintf(text + used, room - used, i ? ",%lld" : "%lld",
                       (long long)call->shape[arg][i]);
    used += snprintf(text + used, room - used, "] ");
  }
}

/* Makes one call and checks it; returns 1 if it was a wrong-size call. */
static int check_call(Call *call) {
  allocate(call);
  int right = fits(call);
  int64_t count = right ? call->shape[0][0] * call->shape[0][1] * D : 1;
  void *mapping;
  size_t mapped;
  float *result = guarded(count * sizeof(float), &mapping, &mapped);
  int64_t result_shape[3] = {0};
  int status = run(call, result, count, result_shape);
  char text[512];
  describe(call, text, sizeof text);
  if (!right && status != LAYER_BAD_ARGUMENT) {
    printf("FAIL: wrong sizes %s: status %d (%s)\n", text, status,
           layer_last_error());
    exit(1);
  }
  /* The handle refuses what layer_run refuses and computes the same bits. */
  float *handle_result = malloc(count * sizeof(float));
  int handle_status = run_handle(call, handle_result, count, result_shape);
  if (handle_status != status) {
    printf("FAIL: %s: layer_run status %d, handle status %d (%s)\n", text,
           status, handle_status, layer_last_error());
    exit(1);
  }
  if (right && memcmp(handle_result, result, count * sizeof(float)) != 0) {
    printf("FAIL: right sizes %s: the handle's result differs from "
           "layer_run's\n", text);
    exit(1);
  }
  free(handle_result);
  if (right) {
    float *expected = malloc(count * sizeof(float));
    reference(call, expected);
    if (status != LAYER_OK) {
      printf("FAIL: right sizes %s: status %d: %s\n", text, status,
             layer_last_error());
      exit(1);
    }
    for (int64_t i = 0; i < count; ++i)
      if (!(fabsf(result[i] - expected[i]) <= 1e-4f + 1e-4f * fabsf(expected[i]))) {
        printf("FAIL: right sizes %s: result[%lld] = %g, reference %g\n", text,
               (long long)i, result[i], expected[i]);
        exit(1);
      }
    free(expected);
  }
  munmap(mapping, mapped);
  release(call);
  return !right;
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: wrong_sizes SEED CALLS\n");
    return 2;
  }
  rng_state = strtoull(argv[1], NULL, 10) * 2654435761u + 1;
  int calls = atoi(argv[2]);

#ifdef MASK
  /* Fixed cases: a mask byte other than 0 or 1, a mask batch that is
   * neither 1 nor the batch. */
  Call call;
  right_shapes(&call);
  /* x [2, 3, 4], kv [2, 2, 4] (cross), mask [2, 3, S]: byte 2*3*S-1 is
   * the last. */
  call.shape[0][0] = call.shape[NUM_INPUTS - 1][0] = 2;
  call.shape[0][1] = 3;
  call.shape[NUM_INPUTS - 1][1] = NUM_INPUTS == 2 ? 2 : 3;
  call.shape[MASK_ARG][0] = 2;
  call.shape[MASK_ARG][1] = 3;
  call.shape[MASK_ARG][2] = call.shape[NUM_INPUTS - 1][1];
  allocate(&call);
  float out[64];
  int64_t out_shape[3];
  uint8_t *mask = call.data[MASK_ARG];
  mask[count_of(&call, MASK_ARG) - 1] = 2;
  int status = run(&call, out, 64, out_shape);
  printf("mask byte 2: status %d: %s\n", status, layer_last_error());
  mask[count_of(&call, MASK_ARG) - 1] = 255;
  status = run(&call, out, 64, out_shape);
  printf("mask byte 255: status %d: %s\n", status, layer_last_error());
  release(&call);
  call.shape[MASK_ARG][0] = 3;
  allocate(&call);
  status = run(&call, out, 64, out_shape);
  printf("mask batch: status %d: %s\n", status, layer_last_error());
  release(&call);
#endif

  int wrong = 0;
  for (int i = 0; i < calls; ++i) {
    Call call;
    right_shapes(&call);
    /* Three calls in four get one or more sizes changed, each by -2 to +2,
     * any dimension of any argument. */
    int changes = random_below(4) ? 1 + (int)random_below(3) : 0;
    for (int c = 0; c < changes; ++c) {
      int arg = (int)random_below(NUM_ARGS);
      int dim = (int)random_below(call.rank[arg]);
      int64_t delta = random_below(5) - 2;
      call.shape[arg][dim] += delta ? delta : 1;
    }
    wrong += check_call(&call);
  }
  printf("%d calls: %d with wrong sizes refused, %d with right sizes ok\n",
         calls, wrong, calls - wrong);
  return 0;
}
