/* bf16_rounding.c: calls a library of Inputs/widen-bf16.mlir, whose result
 * is its bf16 argument widened to float32, on floats whose rounding to bf16
 * is known, through widen_run and the handle API (widen_call, twice: the
 * second call reuses the handle's scratch block), and prints every value
 * whose result differs from the bf16 value written here by hand. */
#include "widen.h"

#include <stdio.h>
#include <string.h>

typedef struct {
  const char *what;
  uint32_t input; /* float32 bits */
  uint32_t bf16;  /* the expected bf16 bits, round to nearest, ties to even */
} Case;

static const Case cases[16] = {
    {"1", 0x3f800000u, 0x3f80u},
    {"1 + 2^-8 (a tie, to even: down)", 0x3f808000u, 0x3f80u},
    {"1 + 3 * 2^-8 (a tie, to even: up)", 0x3f818000u, 0x3f82u},
    {"just above the tie 1 + 2^-8", 0x3f808001u, 0x3f81u},
    {"-(1 + 2^-8)", 0xbf808000u, 0xbf80u},
    {"-0", 0x80000000u, 0x8000u},
    /* Cutting the payload would leave an infinity; the NaN stays a NaN,
       quiet, its sign kept. */
    {"NaN with only low payload bits", 0x7f800001u, 0x7fc0u},
    {"-NaN, quiet", 0xffc00000u, 0xffc0u},
    {"infinity", 0x7f800000u, 0x7f80u},
    {"-infinity", 0xff800000u, 0xff80u},
    {"the largest float (past the largest bf16)", 0x7f7fffffu, 0x7f80u},
    {"the largest bf16", 0x7f7f0000u, 0x7f7fu},
    {"the tie above the largest bf16 (to infinity)", 0xff7f8000u, 0xff80u},
    /* Subnormals round as any other value: not flushed to zero. */
    {"the smallest bf16 subnormal", 0x00010000u, 0x0001u},
    {"a subnormal tie (to even: up)", 0x00018000u, 0x0002u},
    {"a subnormal below half the smallest bf16", 0x00007fffu, 0x0000u},
};

static int check(const char *how, const float *result, const int64_t *shape) {
  int wrong = 0;
  if (shape[0] != 16) {
    printf("%s: result shape [%lld], expected [16]\n", how,
           (long long)shape[0]);
    return 1;
  }
  for (int i = 0; i < 16; ++i) {
    uint32_t bits;
    memcpy(&bits, &result[i], sizeof bits);
    if (bits != cases[i].bf16 << 16) {
      printf("%s: %s: 0x%08x rounded to 0x%08x, expected 0x%08x\n", how,
             cases[i].what, cases[i].input, bits, cases[i].bf16 << 16);
      ++wrong;
    }
  }
  printf("%s: %d of 16 rounded as expected\n", how, 16 - wrong);
  return wrong;
}

int main(void) {
  float x[16], before[16], result[16];
  int64_t x_shape[1] = {16}, result_shape[1];
  for (int i = 0; i < 16; ++i)
    memcpy(&x[i], &cases[i].input, sizeof x[i]);
  memcpy(before, x, sizeof x);
  int wrong = 0;
  int status = widen_run(x, x_shape, result, 16, result_shape);
  printf("widen_run: status %d%s%s\n", status, status ? ": " : "",
         widen_last_error());
  wrong += status != WIDEN_OK || check("widen_run", result, result_shape);
  widen_handle *handle = widen_create();
  for (int call = 1; call <= 2; ++call) {
    char how[32];
    snprintf(how, sizeof how, "widen_call %d", call);
    memset(result, 0, sizeof result);
    status = widen_call(handle, x, x_shape, result, 16, result_shape);
    printf("%s: status %d%s%s\n", how, status, status ? ": " : "",
           widen_last_error());
    wrong += status != WIDEN_OK || check(how, result, result_shape);
  }
  widen_destroy(handle);
  /* The library rounds into its own buffers, never the caller's. */
  printf("the caller's floats unchanged: %s\n",
         memcmp(x, before, sizeof x) == 0 ? "yes" : "NO");
  return wrong != 0;
}
