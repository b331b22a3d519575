/*===- mha_library.c - The fixed part of a library's C API --------*- C -*-===*
 *
 * Compiled into every library mha-compile writes, inside the generated
 * wrapper's translation unit: mha_library.h says what the wrapper defines
 * first. Nothing here depends on the graph beyond those macros.
 *
 *===----------------------------------------------------------------------===*/

#include "mha_library.h"

#ifdef MHA_LIBRARY_USES_AMX
#include "runtime/AMXTileData.h"
#endif

static _Thread_local char MHA_NAME(error_text)[512];

const char *MHA_NAME(last_error)(void) { return MHA_NAME(error_text); }

static int MHA_NAME(fail)(int status, const char *format, ...) {
  va_list args;
  va_start(args, format);
  vsnprintf(MHA_NAME(error_text), sizeof MHA_NAME(error_text), format, args);
  va_end(args);
  return status;
}

#ifdef MHA_LIBRARY_USES_AMX
/* AMX code raises SIGILL until Linux grants the process the tile data:
   asked once, before the graph first runs. */
static pthread_once_t MHA_NAME(amx_once) = PTHREAD_ONCE_INIT;
static int MHA_NAME(amx_errno);

static void MHA_NAME(request_amx)(void) {
  MHA_NAME(amx_errno) = mhaRequestAMXTileData();
}

static int MHA_NAME(amx_ready)(void) {
  pthread_once(&MHA_NAME(amx_once), MHA_NAME(request_amx));
  if (MHA_NAME(amx_errno))
    return MHA_NAME(fail)(
        MHA_UPPER(NO_AMX),
        "this library uses AMX, which Linux does not let this process use "
        "(arch_prctl(ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA) failed: %s)",
        strerror(MHA_NAME(amx_errno)));
  return 0;
}
#endif

/* Sizes come from the caller: the count checks for overflow. */
static int MHA_NAME(count)(int rank, const int64_t *shape, int64_t *count) {
  *count = 1;
  for (int i = 0; i < rank; ++i)
    if (shape[i] < 1 || __builtin_mul_overflow(*count, shape[i], count))
      return 0;
  return 1;
}

/* A null shape (an argument the prepare functions do not read) leaves the
   descriptor zero. */
static void MHA_NAME(describe)(const void *data, int rank, const int64_t *shape,
                               void **pointers, int64_t *sizes,
                               int64_t *strides) {
  pointers[0] = pointers[1] = (void *)data;
  int64_t stride = 1;
  for (int i = rank - 1; shape && i >= 0; --i) {
    sizes[i] = shape[i];
    strides[i] = stride;
    stride *= shape[i];
  }
}

/* The function boundary has the identity layout, so the result is one
   row-major block: one memcpy. A strided walk per element cost as much as a
   small layer. The walk stays for a layout the graph might choose. */
static int MHA_NAME(copy_result)(const void *aligned, int64_t offset, int rank,
                                 const int64_t *sizes, const int64_t *strides,
                                 float *result, int64_t result_capacity,
                                 int64_t *result_shape) {
  int64_t count;
  if (!MHA_NAME(count)(rank, sizes, &count) || count > result_capacity)
    return MHA_NAME(fail)(MHA_UPPER(RESULT_TOO_SMALL),
                          "result: needs %lld floats, room for %lld",
                          (long long)count, (long long)result_capacity);
  const float *base = (const float *)aligned + offset;
  int contiguous = 1;
  for (int64_t i = rank - 1, stride = 1; i >= 0; stride *= sizes[i], --i)
    contiguous &= sizes[i] == 1 || strides[i] == stride;
  if (contiguous) {
    memcpy(result, base, (size_t)count * sizeof(float));
  } else {
    /* Row-major order: the last index runs fastest. */
    for (int64_t linear = 0; linear < count; ++linear) {
      int64_t position = 0, rest = linear;
      for (int i = rank - 1; i >= 0; --i) {
        position += rest % sizes[i] * strides[i];
        rest /= sizes[i];
      }
      result[linear] = base[position];
    }
  }
  for (int i = 0; i < rank; ++i)
    result_shape[i] = sizes[i];
  return MHA_UPPER(OK);
}

#ifdef MHA_LIBRARY_HAS_BF16
/* float32 to bf16, compiled in rather than linked from mha's runtime: the
   library stays one object with libomp and libc as its only dependencies,
   and the C is the bit arithmetic of runtime/BFloat16.h. No AVX512_BF16
   conversion (vcvtneps2bf16): it flushes subnormal inputs to zero, which
   mha-run and the Python package do not. */

/* The bits of the bfloat16 nearest to each float (ties to even), as
   runtime/BFloat16.h rounds: NaN stays NaN (quiet, sign kept); a carry into
   the exponent rounds up, to infinity past the largest bf16. */
static void MHA_NAME(round_bf16)(const float *from, uint16_t *to,
                                 int64_t count) {
  for (int64_t i = 0; i < count; ++i) {
    uint32_t bits;
    memcpy(&bits, &from[i], sizeof bits);
    uint32_t nearest = (bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16;
    uint32_t nan = (bits >> 16) | 0x0040u;
    to[i] = (uint16_t)((bits & 0x7fffffffu) > 0x7f800000u ? nan : nearest);
  }
}

/* 64-byte aligned pieces of one block, as the handle's weights. */
static int MHA_NAME(add_bf16_room)(int64_t count, size_t *bytes) {
  size_t room;
  return !__builtin_mul_overflow((size_t)count, sizeof(uint16_t), &room) &&
         room <= SIZE_MAX - 63 &&
         !__builtin_add_overflow(*bytes, (room + 63) / 64 * 64, bytes);
}
#endif

/*===- The compiled code's allocation functions ---------------------------===*
 *
 * A cache of large blocks, as runtime/BufferCache keeps them for the JIT.
 * Without it, glibc maps every block of 128 KiB or more afresh on each call
 * and the kernel zeroes each page of it at its first touch. Hidden, so that
 * two libraries in one process keep their own.
 */

/* Blocks of at least this many bytes are kept for reuse (glibc's default
   mmap threshold); smaller ones reuse the heap anyway. */
#define MHA_MIN_CACHED ((size_t)128 << 10)
/* As runtime/BufferCache.cpp's: blocks of at least this many bytes start on
   a 2 MiB huge page and ask for transparent huge pages: fewer TLB misses
   where attention reads Kᵀ's rows far apart. */
#define MHA_HUGE_PAGE ((size_t)2 << 20)
#define MHA_SLOTS 256

typedef struct {
  void *pointer;
  size_t bytes, alignment;
  unsigned long long released; /* when it was kept: the oldest go first */
} MHA_NAME(block);

static pthread_mutex_t MHA_NAME(lock) = PTHREAD_MUTEX_INITIALIZER;
static MHA_NAME(block) MHA_NAME(live)[MHA_SLOTS], MHA_NAME(kept)[MHA_SLOTS];
static size_t MHA_NAME(live_bytes), MHA_NAME(peak_bytes), MHA_NAME(kept_bytes);
static unsigned long long MHA_NAME(releases);

/* Frees the least recently kept block; returns its slot, or -1. */
static int MHA_NAME(evict_oldest)(void) {
  int oldest = -1;
  for (int i = 0; i < MHA_SLOTS; ++i)
    if (MHA_NAME(kept)[i].pointer &&
        (oldest < 0 ||
         MHA_NAME(kept)[i].released < MHA_NAME(kept)[oldest].released))
      oldest = i;
  if (oldest >= 0) {
    free(MHA_NAME(kept)[oldest].pointer);
    MHA_NAME(kept)[oldest].pointer = NULL;
    MHA_NAME(kept_bytes) -= MHA_NAME(kept)[oldest].bytes;
  }
  return oldest;
}

/* A kept block of this size and alignment, or NULL. */
static void *MHA_NAME(take_kept)(size_t bytes, size_t alignment) {
  void *pointer = NULL;
  pthread_mutex_lock(&MHA_NAME(lock));
  for (int i = 0; i < MHA_SLOTS; ++i)
    if (MHA_NAME(kept)[i].pointer && MHA_NAME(kept)[i].bytes == bytes &&
        MHA_NAME(kept)[i].alignment == alignment) {
      pointer = MHA_NAME(kept)[i].pointer;
      MHA_NAME(kept)[i].pointer = NULL;
      MHA_NAME(kept_bytes) -= bytes;
      break;
    }
  pthread_mutex_unlock(&MHA_NAME(lock));
  return pointer;
}

/* Tracks a large block in use. A block without a free slot is not kept when
   freed; still correct. */
static void MHA_NAME(track_live)(void *pointer, size_t bytes,
                                 size_t alignment) {
  pthread_mutex_lock(&MHA_NAME(lock));
  for (int i = 0; i < MHA_SLOTS; ++i)
    if (!MHA_NAME(live)[i].pointer) {
      MHA_NAME(live)[i] = (MHA_NAME(block)){pointer, bytes, alignment, 0};
      MHA_NAME(live_bytes) += bytes;
      if (MHA_NAME(live_bytes) > MHA_NAME(peak_bytes))
        MHA_NAME(peak_bytes) = MHA_NAME(live_bytes);
      break;
    }
  pthread_mutex_unlock(&MHA_NAME(lock));
}

static void *MHA_NAME(allocate)(size_t bytes, size_t alignment) {
  void *pointer = NULL;
  if (bytes >= MHA_MIN_CACHED)
    pointer = MHA_NAME(take_kept)(bytes, alignment);
  if (!pointer && bytes >= MHA_HUGE_PAGE) {
    size_t huge = alignment > MHA_HUGE_PAGE ? alignment : MHA_HUGE_PAGE;
    pointer = aligned_alloc(huge, (bytes + huge - 1) / huge * huge);
#ifdef MADV_HUGEPAGE
    if (pointer)
      madvise(pointer, bytes, MADV_HUGEPAGE);
#endif
  }
  if (!pointer)
    pointer = alignment ? aligned_alloc(alignment, (bytes + alignment - 1) /
                                                       alignment * alignment)
                        : malloc(bytes);
  /* The compiled code does not check what it gets; a null pointer would be
     a crash at its first store instead of a message. */
  if (!pointer && bytes) {
    fprintf(stderr,
            MHA_NAME_STRING ": error: the compiled code could not allocate "
                            "%zu bytes: out of memory\n",
            bytes);
    abort();
  }
  if (bytes >= MHA_MIN_CACHED)
    MHA_NAME(track_live)(pointer, bytes, alignment);
  return pointer;
}

static void MHA_NAME(release)(void *pointer) {
  if (!pointer)
    return;
  /* No lock for the many small blocks: one with less room than the smallest
     kept size was never kept. */
  if (malloc_usable_size(pointer) >= MHA_MIN_CACHED) {
    pthread_mutex_lock(&MHA_NAME(lock));
    for (int i = 0; i < MHA_SLOTS; ++i) {
      if (MHA_NAME(live)[i].pointer != pointer)
        continue;
      MHA_NAME(block) block = MHA_NAME(live)[i];
      MHA_NAME(live)[i].pointer = NULL;
      MHA_NAME(live_bytes) -= block.bytes;
      /* Twice the peak: a call's blocks need not all be live at once. Where
         the kept blocks would exceed it, the least recently kept go (those
         of one-off work, such as the prepared weights'), so that the cache
         holds what the latest calls use. */
      while (MHA_NAME(kept_bytes) + block.bytes > 2 * MHA_NAME(peak_bytes) &&
             MHA_NAME(evict_oldest)() >= 0)
        ;
      int slot = -1;
      for (int j = 0; j < MHA_SLOTS && slot < 0; ++j)
        if (!MHA_NAME(kept)[j].pointer)
          slot = j;
      if (slot < 0)
        slot = MHA_NAME(evict_oldest)();
      block.released = ++MHA_NAME(releases);
      MHA_NAME(kept)[slot] = block;
      MHA_NAME(kept_bytes) += block.bytes;
      pthread_mutex_unlock(&MHA_NAME(lock));
      return;
    }
    pthread_mutex_unlock(&MHA_NAME(lock));
  }
  free(pointer);
}

void MHA_NAME(release_buffers)(void) {
  pthread_mutex_lock(&MHA_NAME(lock));
  for (int i = 0; i < MHA_SLOTS; ++i) {
    free(MHA_NAME(kept)[i].pointer);
    MHA_NAME(kept)[i].pointer = NULL;
  }
  MHA_NAME(kept_bytes) = 0;
  MHA_NAME(peak_bytes) = MHA_NAME(live_bytes);
  pthread_mutex_unlock(&MHA_NAME(lock));
}

__attribute__((visibility("hidden"))) void *
_mlir_memref_to_llvm_alloc(size_t bytes) {
  return MHA_NAME(allocate)(bytes, 0);
}
__attribute__((visibility("hidden"))) void *
_mlir_memref_to_llvm_aligned_alloc(size_t alignment, size_t bytes) {
  return MHA_NAME(allocate)(bytes, alignment);
}
__attribute__((visibility("hidden"))) void
_mlir_memref_to_llvm_free(void *pointer) {
  MHA_NAME(release)(pointer);
}

/*===- Overlapping buffers ------------------------------------------------===*
 *
 * A buffer the compiled code writes (a cache as it runs, the result after)
 * that shares bytes with another argument makes it read values it wrote, or
 * hands the caller a clobbered input: refused as a whole byte range, not as
 * equal pointers, since a view shifted by one element overlaps too.
 */

static size_t MHA_NAME(bytes)(int64_t count, size_t size) {
  size_t bytes;
  return count < 1                                             ? 0
         : __builtin_mul_overflow((size_t)count, size, &bytes) ? SIZE_MAX
                                                               : bytes;
}

/* Distances, not ends: an end past the address space cannot wrap. */
static int MHA_NAME(overlap)(const void *a, size_t a_bytes, const void *b,
                             size_t b_bytes) {
  uintptr_t x = (uintptr_t)a, y = (uintptr_t)b;
  return a_bytes && b_bytes && (x >= y ? x - y < b_bytes : y - x < a_bytes);
}

static int MHA_NAME(check_disjoint)(int count, const void *const *at,
                                    const size_t *bytes, const char *written,
                                    const char *const *names) {
  for (int i = 0; i < count; ++i)
    for (int j = i + 1; j < count; ++j)
      if ((written[i] || written[j]) &&
          MHA_NAME(overlap)(at[i], bytes[i], at[j], bytes[j]))
        return MHA_NAME(fail)(MHA_UPPER(BAD_ARGUMENT),
                              "%s and %s overlap in memory: an argument the "
                              "call writes must not share bytes with another",
                              names[i], names[j]);
  return MHA_UPPER(OK);
}

#ifdef MHA_LIBRARY_BF16_SCRATCH
/* NAME_call rounds its bf16 arguments into scratch blocks the handle keeps:
   a call takes one (a free one, or a new one when every block is in use by
   another thread), grows it only if it is too small, and gives it back. So
   calls of one size allocate nothing after the first, and one handle still
   serves several threads at once. */
static MHA_SCRATCH *MHA_NAME(take_scratch)(pthread_mutex_t *lock,
                                           MHA_SCRATCH **list, size_t bytes) {
  pthread_mutex_lock(lock);
  MHA_SCRATCH *scratch = *list;
  if (scratch)
    *list = scratch->next;
  pthread_mutex_unlock(lock);
  if (!scratch && !(scratch = calloc(1, sizeof *scratch)))
    return NULL;
  if (scratch->bytes < bytes) {
    free(scratch->data);
    scratch->data = aligned_alloc(64, bytes);
    scratch->bytes = scratch->data ? bytes : 0;
    if (!scratch->data) {
      free(scratch);
      return NULL;
    }
  }
  return scratch;
}

static void MHA_NAME(give_scratch)(pthread_mutex_t *lock, MHA_SCRATCH **list,
                                   MHA_SCRATCH *scratch) {
  pthread_mutex_lock(lock);
  scratch->next = *list;
  *list = scratch;
  pthread_mutex_unlock(lock);
}

static void MHA_NAME(free_scratch)(pthread_mutex_t *lock, MHA_SCRATCH *list) {
  while (list) {
    MHA_SCRATCH *next = list->next;
    free(list->data);
    free(list);
    list = next;
  }
  pthread_mutex_destroy(lock);
}
#endif

#ifdef MHA_LIBRARY_SESSION_ELEMENT
#include "mha_session.c"
#endif

#ifdef MHA_LIBRARY_PAGED
#include "mha_pages.c"
#endif
