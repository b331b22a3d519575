/* split_library DIR B T D H HKV [CASE]: the functions of a library split
 * by heads (mha-compile --parallel heads --ranks 2 ... -o liblayer.so) on
 * every rank of the job, with the full arrays of DIR (x.npy, w_q.npy, ...,
 * float32, as split_library.py writes them). CASE `layer` (default) writes
 * each rank's output of layer_call to DIR/y.RANK.npy and checks that
 * layer_run's is the same; `errors` calls the library wrongly and prints
 * what each call returns. */
#include "layer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank;

/* The float32 data of DIR/NAME.npy, which must hold `count` elements. */
static float *load(const char *dir, const char *name, int64_t count) {
  char path[512];
  snprintf(path, sizeof path, "%s/%s.npy", dir, name);
  FILE *file = fopen(path, "rb");
  unsigned char head[10];
  if (!file || fread(head, 1, 10, file) != 10) {
    fprintf(stderr, "cannot read %s\n", path);
    exit(2);
  }
  fseek(file, 10 + head[8] + 256 * head[9], SEEK_SET);
  float *data = malloc(sizeof(float) * (size_t)count);
  if (fread(data, sizeof(float), (size_t)count, file) != (size_t)count) {
    fprintf(stderr, "%s: fewer than %lld floats\n", path, (long long)count);
    exit(2);
  }
  fclose(file);
  return data;
}

/* Writes `data` of shape [b, t, d] as DIR/y.RANK.npy. */
static void save(const char *dir, const float *data, const int64_t *shape) {
  char path[512], header[128];
  snprintf(path, sizeof path, "%s/y.%d.npy", dir, rank);
  int length =
      snprintf(header, sizeof header,
               "{'descr': '<f4', 'fortran_order': False, 'shape': "
               "(%lld, %lld, %lld), }",
               (long long)shape[0], (long long)shape[1], (long long)shape[2]);
  int pad = 64 - (10 + length + 1) % 64;
  FILE *file = fopen(path, "wb");
  unsigned char magic[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, 0, 0};
  magic[8] = (unsigned char)((length + pad + 1) & 255);
  magic[9] = (unsigned char)((length + pad + 1) >> 8);
  fwrite(magic, 1, 10, file);
  fwrite(header, 1, (size_t)length, file);
  for (int i = 0; i < pad; ++i)
    fputc(' ', file);
  fputc('\n', file);
  fwrite(data, sizeof(float), (size_t)(shape[0] * shape[1] * shape[2]), file);
  fclose(file);
}

static void report(const char *what, int status) {
  printf("rank %d: %s: status %d%s%s\n", rank, what, status, status ? ": " : "",
         status ? layer_last_error() : "");
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (argc < 7)
    return fprintf(stderr, "usage: split_library DIR B T D H HKV [CASE]\n"), 2;
  const char *dir = argv[1];
  int64_t b = atoll(argv[2]), t = atoll(argv[3]), d = atoll(argv[4]),
          h = atoll(argv[5]), hkv = atoll(argv[6]), kv = d / h * hkv;
  int errors = argc > 7 && strcmp(argv[7], "errors") == 0;
  int64_t x_shape[3] = {b, t, d}, wq_shape[2] = {d, d}, wk_shape[2] = {d, kv},
          wo_shape[2] = {d, d}, bq_shape[1] = {d}, bk_shape[1] = {kv},
          result_shape[3];
  float *x = load(dir, "x", b * t * d), *w_q = load(dir, "w_q", d * d),
        *w_k = load(dir, "w_k", d * kv), *w_v = load(dir, "w_v", d * kv),
        *w_o = load(dir, "w_o", d * d), *b_q = load(dir, "b_q", d),
        *b_k = load(dir, "b_k", kv), *b_v = load(dir, "b_v", kv),
        *b_o = load(dir, "b_o", d);
  float *y = calloc((size_t)(b * t * d), sizeof(float));
  float *again = calloc((size_t)(b * t * d), sizeof(float));
  int status;
  if (errors) {
    report("run before set_communicator",
           layer_run(x, x_shape, w_q, wq_shape, w_k, wk_shape, w_v, wk_shape,
                     w_o, wo_shape, b_q, bq_shape, b_k, bk_shape, b_v, bk_shape,
                     b_o, bq_shape, y, b * t * d, result_shape));
    report("set_communicator(MPI_COMM_SELF)",
           layer_set_communicator(MPI_COMM_SELF));
  }
  status = layer_set_communicator(MPI_COMM_WORLD);
  if (status)
    return report("set_communicator", status), 1;
  layer_handle *handle =
      layer_create(w_q, wq_shape, w_k, wk_shape, w_v, wk_shape, w_o, wo_shape,
                   b_q, bq_shape, b_k, bk_shape, b_v, bk_shape, b_o, bq_shape);
  if (!handle)
    return printf("rank %d: create: NULL: %s\n", rank, layer_last_error()), 1;
  if (errors) {
    /* Rank 1 alone gives another x, then an x of the wrong size. */
    float *other = malloc(sizeof(float) * (size_t)(b * t * d));
    memcpy(other, x, sizeof(float) * (size_t)(b * t * d));
    other[0] += 1;
    report("call, rank 1's x differs",
           layer_call(handle, rank == 1 ? other : x, x_shape, y, b * t * d,
                      result_shape));
    free(other);
    if (rank == 1)
      x_shape[2] = d + 1;
    report("call, rank 1's x too wide",
           layer_call(handle, x, x_shape, y, b * t * d, result_shape));
    x_shape[2] = d;
    /* Rank 0 alone gives w_q of the wrong width. */
    wq_shape[1] = rank == 0 ? d - 1 : d;
    layer_handle *bad = layer_create(
        w_q, wq_shape, w_k, wk_shape, w_v, wk_shape, w_o, wo_shape, b_q,
        bq_shape, b_k, bk_shape, b_v, bk_shape, b_o, bq_shape);
    printf("rank %d: create, rank 0's w_q narrow: %s: %s\n", rank,
           bad ? "handle" : "NULL", layer_last_error());
    wq_shape[1] = d;
  }
  status = layer_call(handle, x, x_shape, y, b * t * d, result_shape);
  report("call", status);
  status |= layer_run(x, x_shape, w_q, wq_shape, w_k, wk_shape, w_v, wk_shape,
                      w_o, wo_shape, b_q, bq_shape, b_k, bk_shape, b_v,
                      bk_shape, b_o, bq_shape, again, b * t * d, result_shape);
  printf("rank %d: run: %s call's\n", rank,
         memcmp(y, again, sizeof(float) * (size_t)(b * t * d))
             ? "differs from"
             : "bitwise equal to");
  if (!errors)
    save(dir, y, result_shape);
  layer_destroy(handle);
  MPI_Finalize();
  return status;
}
