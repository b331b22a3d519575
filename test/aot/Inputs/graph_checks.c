/* Calls a library of a graph whose result is no new computation of x (a
 * constant, or x seen as another type) three times and prints its result:
 * the compiled code returns a global's copy or x's own buffer, which the
 * wrapper must copy into the caller's result and must not free. Compiled
 * with -DCONSTANT for the constant graph. */
#include "layer.h"

#include <stdio.h>
#include <string.h>

int main(void) {
  float x[24], kept[24], y[24];
  for (int i = 0; i < 24; ++i)
    x[i] = kept[i] = (float)i - 7.5f;
  const int64_t shape[3] = {2, 3, 4};
  int64_t result_shape[3] = {0, 0, 0};
  int right = 1;
  for (int call = 0; call < 3; ++call) {
    memset(y, 0, sizeof y);
    int status = layer_run(x, shape, y, 24, result_shape);
    if (status != LAYER_OK) {
      printf("status %d: %s\n", status, layer_last_error());
      return 1;
    }
    for (int i = 0; i < 24; ++i) {
#ifdef CONSTANT
      right &= y[i] == 1.0f;
#else
      right &= memcmp(&y[i], &kept[i], sizeof(float)) == 0;
#endif
    }
  }
  printf("result [%lld, %lld, %lld]: %s; x unchanged: %s\n",
         (long long)result_shape[0], (long long)result_shape[1],
         (long long)result_shape[2], right ? "right" : "WRONG",
         memcmp(x, kept, sizeof x) == 0 ? "yes" : "NO");
  return 0;
}
