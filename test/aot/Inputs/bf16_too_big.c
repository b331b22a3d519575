/* bf16_too_big.c: calls of a bf16 self-attention layer (bf16.test: mha-gen
 * --dtype bf16 --dynamic --d-model 16 --heads 2) whose x sizes pass the
 * checks but whose bf16 copy cannot be made: larger than size_t (its room,
 * rounded up to 64 bytes, overflows) or than any address space. The library
 * refuses them before it reads x (whose array here is small). */
#include "layer.h"

#include <stdio.h>

/* x last, above every buffer the calls write: the bytes its claimed sizes
 * span then cover none of them, and the calls get past the overlap checks
 * to the bf16 copy's. */
static struct {
  float w[16 * 16], b[16], y[16];
  int64_t y_shape[3];
  float x[16];
} m;
static const int64_t w_shape[2] = {16, 16}, b_shape[1] = {16};

int main(void) {
  /* 16 * (2^59 - 1) elements fit in int64_t; twice as many bytes, rounded
     up to 64, do not fit in size_t. 2^54 elements fit in both, but 2^55
     bytes are more than any x86-64 address space. */
  const int64_t sizes[2][3] = {{1, (1ll << 59) - 1, 16},
                               {1ll << 20, 1ll << 30, 16}};
  for (int i = 0; i < 2; ++i) {
    int status = layer_run(m.x, sizes[i], m.w, w_shape, m.w, w_shape, m.w,
                           w_shape, m.w, w_shape, m.b, b_shape, m.b, b_shape,
                           m.b, b_shape, m.b, b_shape, m.y, 16, m.y_shape);
    printf("run, x [%lld, %lld, 16]: status %d: %s\n", (long long)sizes[i][0],
           (long long)sizes[i][1], status, layer_last_error());
  }
  layer_handle *handle =
      layer_create(m.w, w_shape, m.w, w_shape, m.w, w_shape, m.w, w_shape, m.b,
                   b_shape, m.b, b_shape, m.b, b_shape, m.b, b_shape);
  for (int i = 0; i < 2; ++i) {
    int status = layer_call(handle, m.x, sizes[i], m.y, 16, m.y_shape);
    printf("call, x [%lld, %lld, 16]: status %d: %s\n", (long long)sizes[i][0],
           (long long)sizes[i][1], status, layer_last_error());
  }
  /* The handle still works. */
  int64_t x_shape[3] = {1, 1, 16};
  int status = layer_call(handle, m.x, x_shape, m.y, 16, m.y_shape);
  printf("call, x [1, 1, 16]: status %d\n", status);
  layer_destroy(handle);
  return 0;
}
