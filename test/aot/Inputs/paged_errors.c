/* paged_errors.c: the refused calls of a paged cache graph's library
 * (mha-gen --kv-cache 40 --paged-kv 16 --d-model 32 --heads 4 --kv-heads 2,
 * mha-compile) and of its block table helpers: each prints its status and
 * message, and the pools and the table are checked unchanged after them.
 */
#include "layer.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { D = 32, KV = 16, POOL = 4, M = LAYER_PAGES_PER_SEQUENCE };

static layer_handle *handle;
static float k_pool[POOL * 2 * 16 * 8], v_pool[POOL * 2 * 16 * 8];

/* One call of two sequences, one token each, on pools of `v_pages` value
   pages; prints its status and message. */
static void call(const char *what, const int32_t table[2 * M], int64_t length0,
                 int64_t length1, int64_t v_pages) {
  float x[2 * D] = {0}, y[2 * D];
  int64_t x_shape[3] = {2, 1, D}, y_shape[3];
  int64_t k_shape[4] = {POOL, 2, 16, 8}, v_shape[4] = {v_pages, 2, 16, 8};
  int64_t table_shape[2] = {2, M}, lengths_shape[1] = {2};
  int64_t lengths[2] = {length0, length1};
  int status =
      layer_call(handle, x, x_shape, k_pool, k_shape, v_pool, v_shape, table,
                 table_shape, lengths, lengths_shape, y, 2 * D, y_shape);
  printf("%s: status %d: %s\n", what, status, layer_last_error());
}

int main(void) {
  float w[D * D] = {0}, b[D] = {0};
  int64_t wq[2] = {D, D}, wkv[2] = {D, KV}, wo[2] = {D, D};
  int64_t bq[1] = {D}, bkv[1] = {KV}, bo[1] = {D};
  handle =
      layer_create(w, wq, w, wkv, w, wkv, w, wo, b, bq, b, bkv, b, bkv, b, bo);
  if (!handle) {
    fprintf(stderr, "paged_errors: error: %s\n", layer_last_error());
    return 2;
  }
  printf("page rows %d, pages per sequence %d\n", LAYER_PAGE_ROWS, M);

  /* The checks of a call, before the graph runs: after the good call, the
     pools hold values that the refused calls must leave. */
  int32_t good[2 * M] = {0, 1, -1, 2, -1, -1};
  call("good", good, 16, 3, POOL);
  for (size_t i = 0; i < sizeof k_pool / sizeof *k_pool; ++i)
    k_pool[i] = v_pool[i] = (float)i;
  int32_t outside[2 * M] = {0, 4, -1, 2, -1, -1};
  call("entry outside the pool", outside, 16, 3, POOL);
  call("-1 in a used entry", good, 32, 3, POOL);
  int32_t shared[2 * M] = {0, 1, -1, 1, -1, -1};
  call("page given twice", shared, 16, 3, POOL);
  call("length past M * P", good, 48, 3, POOL);
  call("negative length", good, 16, -1, POOL);
  call("v_pool of 2 pages", good, 16, 3, 2);
  int same = 1;
  for (size_t i = 0; i < sizeof k_pool / sizeof *k_pool; ++i)
    same &= k_pool[i] == (float)i && v_pool[i] == (float)i;
  printf("pools after the refused calls: %s\n", same ? "unchanged" : "CHANGED");

  /* The helpers. */
  int32_t table[2 * M], free_pages[POOL];
  layer_pages pages;
  /* Each status is taken before the printf that shows it: C leaves the
     order of a call's arguments open. */
  int s = layer_pages_init(&pages, NULL, 2, free_pages, POOL);
  printf("init NULL table: status %d: %s\n", s, layer_last_error());
  s = layer_pages_init(&pages, table, 2, free_pages, 0);
  printf("init 0 pages: status %d: %s\n", s, layer_last_error());
  s = layer_pages_init(&pages, table, 2, free_pages, POOL);
  printf("init: status %d\n", s);
  s = layer_pages_reserve(&pages, 2, 0, 1);
  printf("reserve sequence 2: status %d: %s\n", s, layer_last_error());
  s = layer_pages_reserve(&pages, 0, 0, 49);
  printf("reserve 49 tokens: status %d: %s\n", s, layer_last_error());
  s = layer_pages_reserve(&pages, 0, 0, 40);
  printf("reserve 40 tokens: status %d, row 0: %d %d %d, %lld free\n", s,
         table[0], table[1], table[2], (long long)pages.free_count);
  s = layer_pages_reserve(&pages, 1, 0, 17);
  printf("reserve 17 tokens of sequence 1: status %d: %s\n", s,
         layer_last_error());
  printf("after the refused reserve: row 1: %d %d %d, %lld free\n", table[3],
         table[4], table[5], (long long)pages.free_count);
  s = layer_pages_reserve(&pages, 1, 0, 16);
  printf("reserve 16 tokens of sequence 1: status %d, row 1: %d %d %d\n", s,
         table[3], table[4], table[5]);
  table[4] = 9;
  s = layer_pages_reserve(&pages, 1, 16, 1);
  printf("reserve past a bad entry: status %d: %s\n", s, layer_last_error());
  s = layer_pages_release(&pages, 1);
  printf("release past a bad entry: status %d: %s\n", s, layer_last_error());
  table[4] = table[0];
  s = layer_pages_release(&pages, 0);
  printf("release 0: status %d, %lld free\n", s, (long long)pages.free_count);
  s = layer_pages_release(&pages, 1);
  printf("release 1 holding a page of 0: status %d: %s\n", s,
         layer_last_error());
  table[4] = -1;
  s = layer_pages_release(&pages, 1);
  printf("release 1: status %d, %lld free\n", s, (long long)pages.free_count);
  s = layer_pages_release(NULL, 0);
  printf("release NULL: status %d: %s\n", s, layer_last_error());
  layer_destroy(handle);
  return 0;
}
