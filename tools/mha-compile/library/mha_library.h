/*===- mha_library.h - The fixed part of a library's C API --------*- C -*-===*
 *
 * Every library that mha-compile writes has a C wrapper around the graph's
 * memref-descriptor functions (tools/mha-compile/CInterface.h). Most of it
 * is the same for every graph: the error text, the element counts and
 * descriptors, the overlap test, the bf16 rounding, the allocation cache of
 * the compiled code, the AMX permission and most of the session API. That
 * part is mha_library.c; mha-compile embeds it (and this header) and
 * generates only what depends on the graph: the descriptor types, the size
 * checks, the argument lists and the functions that pass them on.
 *
 * The generated wrapper includes the library's own header, defines the
 * macros below and then includes mha_library.c, so that the fixed part is
 * compiled into the same translation unit. Every name it defines is either
 * static or carries the library's prefix (NAME_last_error,
 * NAME_release_buffers, the session functions), so two libraries can be
 * loaded into one process; their allocation functions are hidden.
 *
 * Defined by the generated wrapper:
 *   MHA_NAME(x)   NAME_x, the prefix of the library's functions and types.
 *   MHA_UPPER(x)  NAME_x in capitals: the header's status codes and sizes.
 *   MHA_NAME_STRING  "NAME", for the messages printed to stderr.
 *   MHA_LIBRARY_USES_AMX  if the compiled code has AMX instructions.
 *   MHA_LIBRARY_HAS_BF16  if any argument is rounded from float32 to bf16.
 *   MHA_LIBRARY_BF16_SCRATCH  if NAME_call rounds any (the handle keeps
 *     scratch blocks for them).
 *   MHA_LIBRARY_SESSION_ELEMENT  the caches' element type (float or
 *     uint16_t), if the graph has the session API; then also
 *     MHA_LIBRARY_SESSION_BATCH where the graph fixes the batch.
 *   MHA_LIBRARY_PAGED  if the graph keeps its caches in pages (pools and a
 *     block table: mha_pages.c).
 *
 *===----------------------------------------------------------------------===*/

#ifndef MHA_LIBRARY_H
#define MHA_LIBRARY_H

#if !defined(MHA_NAME) || !defined(MHA_UPPER) || !defined(MHA_NAME_STRING)
#error "the generated wrapper defines MHA_NAME, MHA_UPPER and MHA_NAME_STRING"
#endif

#include <malloc.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define MHA_STRINGIFY_(x) #x
#define MHA_STRINGIFY(x) MHA_STRINGIFY_(x)

/* The library's types (NAME_handle, declared by its header; NAME_scratch
   and NAME_session, defined below), by the names the fixed part uses. */
#define MHA_HANDLE MHA_NAME(handle)
#define MHA_SCRATCH MHA_NAME(scratch)
#define MHA_SESSION MHA_NAME(session)

/* Sets this thread's message (NAME_last_error) and returns `status`. */
static int MHA_NAME(fail)(int status, const char *format, ...);

#ifdef MHA_LIBRARY_USES_AMX
/* Whether the library may run its AMX code; else fails with NAME_NO_AMX. */
static int MHA_NAME(amx_ready)(void);
#endif

/* The product of `rank` sizes into *count; 0 if a size is not positive or
   the product overflows. */
static int MHA_NAME(count)(int rank, const int64_t *shape, int64_t *count);

/* Fills the allocated and aligned pointers, sizes and strides of a dense
   descriptor; a null shape leaves it zero. */
static void MHA_NAME(describe)(const void *data, int rank, const int64_t *shape,
                               void **pointers, int64_t *sizes,
                               int64_t *strides);

/* Copies the compiled code's result, described by `aligned`, `offset`,
   `sizes` and `strides`, into the caller's `result`; NAME_RESULT_TOO_SMALL
   if it does not fit. */
static int MHA_NAME(copy_result)(const void *aligned, int64_t offset, int rank,
                                 const int64_t *sizes, const int64_t *strides,
                                 float *result, int64_t result_capacity,
                                 int64_t *result_shape);

/* Gives a block of the compiled code's back to its allocation cache. */
static void MHA_NAME(release)(void *pointer);

/* The bytes of `count` elements of `size` bytes; SIZE_MAX on overflow. */
static size_t MHA_NAME(bytes)(int64_t count, size_t size);

/* Refuses the first two of `count` buffers that share a byte where one of
   them is written. */
static int MHA_NAME(check_disjoint)(int count, const void *const *at,
                                    const size_t *bytes, const char *written,
                                    const char *const *names);

#ifdef MHA_LIBRARY_HAS_BF16
/* Rounds `count` floats to the bits of the nearest bf16. */
static void MHA_NAME(round_bf16)(const float *from, uint16_t *to,
                                 int64_t count);

/* Adds the room of `count` bf16 values, rounded up to 64 bytes, to *bytes;
   0 if that overflows. */
static int MHA_NAME(add_bf16_room)(int64_t count, size_t *bytes);
#endif

#ifdef MHA_LIBRARY_BF16_SCRATCH
/* A block that NAME_call rounds its bf16 arguments into; a handle keeps the
   free ones in a list. */
typedef struct MHA_NAME(scratch) {
  void *data;
  size_t bytes;
  struct MHA_SCRATCH *next;
} MHA_NAME(scratch);

/* A free block of at least `bytes` bytes from `*list`, or a new one; NULL
   if out of memory. */
static MHA_SCRATCH *MHA_NAME(take_scratch)(pthread_mutex_t *lock,
                                           MHA_SCRATCH **list, size_t bytes);

/* Puts `scratch` back on `*list`. */
static void MHA_NAME(give_scratch)(pthread_mutex_t *lock, MHA_SCRATCH **list,
                                   MHA_SCRATCH *scratch);

/* Frees every block on `list` and the lock. */
static void MHA_NAME(free_scratch)(pthread_mutex_t *lock, MHA_SCRATCH *list);
#endif

#ifdef MHA_LIBRARY_SESSION_ELEMENT
struct MHA_NAME(session) {
  MHA_HANDLE *handle;
  int64_t batch;
  MHA_LIBRARY_SESSION_ELEMENT *k_cache, *v_cache;
  int owns_caches;
  int64_t *lengths;
  int64_t *written; /* rows each sequence's cache holds */
  int64_t k_shape[4], v_shape[4];
};

/* The first half of NAME_session_create: checks the batch and the caches
   and allocates the session and its lengths; NULL with a message. */
static MHA_SESSION *
    MHA_NAME(session_open)(int64_t batch, MHA_LIBRARY_SESSION_ELEMENT *k_cache,
                           MHA_LIBRARY_SESSION_ELEMENT *v_cache);

/* The second half, once session->handle is created: the caches (the
   caller's, or allocated), or NULL with a message and the session freed. */
static MHA_SESSION *
    MHA_NAME(session_finish)(MHA_SESSION *session,
                             MHA_LIBRARY_SESSION_ELEMENT *k_cache,
                             MHA_LIBRARY_SESSION_ELEMENT *v_cache);

/* What NAME_session_step checks before it calls the graph. */
static int MHA_NAME(session_check_step)(MHA_SESSION *session, const float *x,
                                        int64_t tokens, float *y,
                                        int64_t y_capacity);

/* Adds `tokens` to every length after a step. */
static void MHA_NAME(session_advance)(MHA_SESSION *session, int64_t tokens);
#endif

#ifdef MHA_LIBRARY_PAGED
/* The caller's block table and free list (NAME_pages, in the header). */
#define MHA_PAGES MHA_NAME(pages)

/* What a call of a paged cache graph checks once the sizes are: every
   sequence's rows after the call (lengths[b] + tokens) fit in its table row
   of NAME_PAGES_PER_SEQUENCE pages, and the entries of their pages are
   pages of the pools, [0, pool_pages), none given to two sequences. */
static int MHA_NAME(check_pages)(const int32_t *table,
                                 const int64_t table_shape[2],
                                 int64_t pool_pages, const int64_t *lengths,
                                 int64_t tokens);
#endif

#endif /* MHA_LIBRARY_H */
