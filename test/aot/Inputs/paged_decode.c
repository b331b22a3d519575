/* paged_decode.c: a paged cache graph's library (mha-gen --kv-cache 40
 * --paged-kv 16, mha-compile) serving three sequences from pools of 7 pages
 * that the caller owns, with the library's block table helpers: every call
 * reserves the pages of each sequence's new tokens (layer_pages_reserve),
 * the pool runs full, sequence 1 is released (layer_pages_release) and a
 * new sequence starts in its slot on its pages. The tokens are
 * DIR/x.npy [4, 40, D] (sequences 0, 1, the new 1 and 2) and the weights
 * DIR/w_q.npy ...; every output row goes to OUT ([4, 40, D] float32, raw,
 * zero past a sequence's rows) for paged_decode.py to compare with NumPy's
 * float64 layer. Pools of bf16 bits with -DBF16; the sizes as macros
 * (-DKV_HEADS=2 -DKEY_DIM=8).
 *
 *   paged_decode DIR OUT
 */
#include "layer.h"
#include "npy_float32.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef BF16
typedef uint16_t Element;
#else
typedef float Element;
#endif

enum { BATCH = 3, POOL = 7, TOKENS = 40 };

static float *y_all;
static const Array *x_all;
static Element *k_pool, *v_pool;
static int32_t table[BATCH * LAYER_PAGES_PER_SEQUENCE];
static int64_t lengths[BATCH];
/* Which sequence of x and y each slot decodes. */
static int64_t source[BATCH] = {0, 1, 3};

/* Reserves `count` tokens of every slot and runs them; the status. */
static int step(layer_handle *handle, layer_pages *pages, int64_t count) {
  int64_t width = x_all->shape[2];
  for (int64_t b = 0; b < BATCH; ++b) {
    int status = layer_pages_reserve(pages, b, lengths[b], count);
    if (status != LAYER_OK)
      return status;
  }
  float x[BATCH * 16 * 64], y[BATCH * 16 * 64];
  for (int64_t b = 0; b < BATCH; ++b)
    memcpy(x + b * count * width,
           x_all->data + (source[b] * TOKENS + lengths[b]) * width,
           sizeof(float) * count * width);
  int64_t x_shape[3] = {BATCH, count, width};
  int64_t k_shape[4] = {POOL, KV_HEADS, LAYER_PAGE_ROWS, KEY_DIM};
  int64_t v_shape[4] = {POOL, KV_HEADS, LAYER_PAGE_ROWS, KEY_DIM};
  int64_t table_shape[2] = {BATCH, LAYER_PAGES_PER_SEQUENCE};
  int64_t lengths_shape[1] = {BATCH}, y_shape[3];
  int status = layer_call(handle, x, x_shape, k_pool, k_shape, v_pool, v_shape,
                          table, table_shape, lengths, lengths_shape, y,
                          (int64_t)(sizeof y / sizeof *y), y_shape);
  if (status != LAYER_OK)
    return status;
  for (int64_t b = 0; b < BATCH; ++b) {
    memcpy(y_all + (source[b] * TOKENS + lengths[b]) * width,
           y + b * count * width, sizeof(float) * count * width);
    lengths[b] += count;
  }
  return LAYER_OK;
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: paged_decode DIR OUT\n");
    return 2;
  }
  const char *names[] = {"x",   "w_q", "w_k", "w_v", "w_o",
                         "b_q", "b_k", "b_v", "b_o"};
  Array a[9];
  for (int i = 0; i < 9; ++i)
    if (!load_npy("paged_decode", argv[1], names[i], &a[i]))
      return 2;
  x_all = &a[0];
  layer_handle *handle = layer_create(
      a[1].data, a[1].shape, a[2].data, a[2].shape, a[3].data, a[3].shape,
      a[4].data, a[4].shape, a[5].data, a[5].shape, a[6].data, a[6].shape,
      a[7].data, a[7].shape, a[8].data, a[8].shape);
  if (!handle) {
    fprintf(stderr, "paged_decode: error: %s\n", layer_last_error());
    return 2;
  }
  size_t pool_count = (size_t)POOL * KV_HEADS * LAYER_PAGE_ROWS * KEY_DIM;
  k_pool = calloc(pool_count, sizeof(Element));
  v_pool = calloc(pool_count, sizeof(Element));
  y_all = calloc((size_t)a[0].count, sizeof(float));
  int32_t free_pages[POOL];
  layer_pages pages;
  int status = layer_pages_init(&pages, table, BATCH, free_pages, POOL);
  printf("init: status %d, %lld pages free\n", status,
         (long long)pages.free_count);

  status = step(handle, &pages, 12);
  for (int n = 0; status == LAYER_OK && n < 20; ++n)
    status = step(handle, &pages, 1);
  printf("32 tokens each: status %d, %lld pages free\n", status,
         (long long)pages.free_count);
  status = step(handle, &pages, 1);
  printf("a full pool: status %d: %s\n", status, layer_last_error());

  int32_t freed[LAYER_PAGES_PER_SEQUENCE];
  memcpy(freed, table + LAYER_PAGES_PER_SEQUENCE, sizeof freed);
  status = layer_pages_release(&pages, 1);
  lengths[1] = 0;
  source[1] = 2;
  printf("release 1: status %d, %lld pages free, row %d %d %d\n", status,
         (long long)pages.free_count, table[3], table[4], table[5]);
  /* Sequence 0 kept the page it reserved before the pool ran full. */
  for (int n = 0; status == LAYER_OK && n < 8; ++n)
    status = step(handle, &pages, 1);
  int reused = table[LAYER_PAGES_PER_SEQUENCE] >= 0;
  for (int e = 0; e < LAYER_PAGES_PER_SEQUENCE; ++e) {
    int32_t page = table[LAYER_PAGES_PER_SEQUENCE + e], found = page < 0;
    for (int f = 0; f < LAYER_PAGES_PER_SEQUENCE; ++f)
      found |= page == freed[f];
    reused &= found;
  }
  printf("8 more: status %d, lengths %lld %lld %lld, %lld pages free; the "
         "new sequence 1 on freed pages: %s\n",
         status, (long long)lengths[0], (long long)lengths[1],
         (long long)lengths[2], (long long)pages.free_count,
         reused ? "yes" : "no");

  FILE *out = fopen(argv[2], "wb");
  if (!out || fwrite(y_all, sizeof(float), (size_t)a[0].count, out) !=
                  (size_t)a[0].count)
    return 2;
  fclose(out);
  layer_destroy(handle);
  free(k_pool);
  free(v_pool);
  free(y_all);
  for (int i = 0; i < 9; ++i)
    free(a[i].data);
  return status == LAYER_OK ? 0 : 1;
}
