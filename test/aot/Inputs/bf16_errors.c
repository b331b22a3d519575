/* bf16_errors.c: bad calls of bf16.test's bf16 layer: the library checks
 * pointers and sizes before it rounds anything, as for float32 arguments,
 * and says which argument is wrong. */
#include "layer.h"

#include <stdio.h>

static float x[2 * 3 * 16], kv[2 * 4 * 12], w_q[16 * 16], w_k[12 * 8],
    w_v[12 * 8], w_o[16 * 16], b_q[16], b_k[8], b_v[8], b_o[16], y[2 * 3 * 16];
static uint8_t mask[2 * 3 * 4];
static const int64_t w_q_shape[2] = {16, 16}, w_k_shape[2] = {12, 8},
                     w_v_shape[2] = {12, 8}, w_o_shape[2] = {16, 16},
                     b_q_shape[1] = {16}, b_k_shape[1] = {8},
                     b_v_shape[1] = {8}, b_o_shape[1] = {16};

int main(void) {
  int64_t x_shape[3] = {2, 3, 16}, kv_shape[3] = {2, 4, 12},
          mask_shape[3] = {2, 3, 4}, y_shape[3];
  int64_t bad_w_k_shape[2] = {12, 9};
  layer_handle *handle = layer_create(
      w_q, w_q_shape, NULL, w_k_shape, w_v, w_v_shape, w_o, w_o_shape, b_q,
      b_q_shape, b_k, b_k_shape, b_v, b_v_shape, b_o, b_o_shape);
  printf("create, w_k null: %s: %s\n", handle ? "handle" : "NULL",
         layer_last_error());
  handle = layer_create(w_q, w_q_shape, w_k, bad_w_k_shape, w_v, w_v_shape, w_o,
                        w_o_shape, b_q, b_q_shape, b_k, b_k_shape, b_v,
                        b_v_shape, b_o, b_o_shape);
  printf("create, w_k [12, 9]: %s: %s\n", handle ? "handle" : "NULL",
         layer_last_error());
  int status =
      layer_run(NULL, x_shape, kv, kv_shape, mask, mask_shape, w_q, w_q_shape,
                w_k, w_k_shape, w_v, w_v_shape, w_o, w_o_shape, b_q, b_q_shape,
                b_k, b_k_shape, b_v, b_v_shape, b_o, b_o_shape, y, 96, y_shape);
  printf("run, x null: status %d: %s\n", status, layer_last_error());
  handle = layer_create(w_q, w_q_shape, w_k, w_k_shape, w_v, w_v_shape, w_o,
                        w_o_shape, b_q, b_q_shape, b_k, b_k_shape, b_v,
                        b_v_shape, b_o, b_o_shape);
  status = layer_call(handle, x, x_shape, NULL, kv_shape, mask, mask_shape, y,
                      96, y_shape);
  printf("call, kv null: status %d: %s\n", status, layer_last_error());
  kv_shape[2] = 13;
  status = layer_call(handle, x, x_shape, kv, kv_shape, mask, mask_shape, y, 96,
                      y_shape);
  printf("call, kv [2, 4, 13]: status %d: %s\n", status, layer_last_error());
  kv_shape[2] = 12;
  status = layer_call(handle, x, x_shape, kv, kv_shape, mask, mask_shape, y, 95,
                      y_shape);
  printf("call, small result: status %d: %s\n", status, layer_last_error());
  status = layer_call(handle, x, x_shape, kv, kv_shape, mask, mask_shape, y, 96,
                      y_shape);
  printf("call: status %d%s\n", status, layer_last_error());
  layer_destroy(handle);
  return 0;
}
