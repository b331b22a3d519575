/* npy_float32.h: the examples' reader of C-order little-endian float32 .npy
 * files (format 1.0 to 3.0), shared by run_layer.c and decode_layer.c. Plain
 * C11, no library: the examples show a library call with nothing else. */
#ifndef MHA_EXAMPLES_AOT_NPY_FLOAT32_H
#define MHA_EXAMPLES_AOT_NPY_FLOAT32_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A float32 array read from a .npy file. */
typedef struct {
  float *data;
  int64_t shape[8];
  int rank;
  int64_t count;
} Array;

/* Reads DIR/NAME.npy into `array` (data malloc'd); 0 after an error message
 * naming `program`. */
static int load_npy(const char *program, const char *dir, const char *name,
                    Array *array) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s.npy", dir, name);
  FILE *file = fopen(path, "rb");
  if (!file) {
    fprintf(stderr, "%s: error: cannot open %s\n", program, path);
    return 0;
  }
  unsigned char start[12];
  int ok =
      fread(start, 1, 10, file) == 10 && memcmp(start, "\x93NUMPY", 6) == 0;
  size_t header_length = 0;
  if (ok && start[6] == 1) {
    header_length = start[8] | (size_t)start[9] << 8;
  } else if (ok && fread(start + 10, 1, 2, file) == 2) {
    header_length = start[8] | (size_t)start[9] << 8 | (size_t)start[10] << 16 |
                    (size_t)start[11] << 24;
  }
  char *header = ok ? calloc(header_length + 1, 1) : NULL;
  ok = header && fread(header, 1, header_length, file) == header_length &&
       strstr(header, "'descr': '<f4'") &&
       strstr(header, "'fortran_order': False");
  const char *shape = ok ? strstr(header, "'shape': (") : NULL;
  array->rank = 0;
  array->count = 1;
  for (const char *p = shape ? shape + 10 : NULL;
       p && *p != ')' && array->rank < 8;) {
    char *end;
    long long size = strtoll(p, &end, 10);
    if (end == p)
      break;
    array->shape[array->rank++] = size;
    array->count *= size;
    p = end;
    while (*p == ',' || *p == ' ')
      ++p;
  }
  ok = ok && shape;
  array->data = ok ? malloc(sizeof(float) * array->count) : NULL;
  ok = ok && array->data &&
       fread(array->data, sizeof(float), array->count, file) ==
           (size_t)array->count;
  free(header);
  fclose(file);
  if (!ok)
    fprintf(stderr, "%s: error: %s is not a C-order float32 .npy file\n",
            program, path);
  return ok;
}

#endif /* MHA_EXAMPLES_AOT_NPY_FLOAT32_H */
