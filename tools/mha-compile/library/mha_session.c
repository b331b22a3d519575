/*===- mha_session.c - The fixed part of a library's sessions -----*- C -*-===*
 *
 * The session API of a cache graph (the library's header documents it), on
 * top of NAME_create and NAME_call, which check every size and length.
 * mha_library.c includes this file where the graph has the session API
 * (MHA_LIBRARY_SESSION_ELEMENT); the generated wrapper defines
 * NAME_session_create and NAME_session_step, which pass the weights and the
 * graph's arguments on, with the helpers here.
 *
 *===----------------------------------------------------------------------===*/

#define MHA_CAPACITY MHA_UPPER(CACHE_CAPACITY)

static MHA_SESSION *
MHA_NAME(session_open)(int64_t batch, MHA_LIBRARY_SESSION_ELEMENT *k_cache,
                       MHA_LIBRARY_SESSION_ELEMENT *v_cache) {
  MHA_NAME(error_text)[0] = 0;
  if (batch < 1)
    return MHA_NAME(fail)(MHA_UPPER(BAD_ARGUMENT),
                          "batch must be at least 1, got %lld",
                          (long long)batch),
           NULL;
#ifdef MHA_LIBRARY_SESSION_BATCH
  if (batch != MHA_LIBRARY_SESSION_BATCH)
    return MHA_NAME(fail)(MHA_UPPER(BAD_ARGUMENT),
                          "batch must be " MHA_STRINGIFY(
                              MHA_LIBRARY_SESSION_BATCH) ", got %lld",
                          (long long)batch),
           NULL;
#endif
  if (!k_cache != !v_cache)
    return MHA_NAME(fail)(
               MHA_UPPER(BAD_ARGUMENT),
               "give both caches or neither (NULL: the session allocates "
               "them)"),
           NULL;
  int64_t k_shape[4] = {batch, MHA_UPPER(KV_HEADS), MHA_CAPACITY,
                        MHA_UPPER(KEY_DIM)};
  int64_t v_shape[4] = {batch, MHA_UPPER(KV_HEADS), MHA_CAPACITY,
                        MHA_UPPER(VALUE_DIM)};
  int64_t k_count, v_count;
  size_t k_bytes, v_bytes;
  if (!MHA_NAME(count)(4, k_shape, &k_count) ||
      !MHA_NAME(count)(4, v_shape, &v_count) ||
      __builtin_mul_overflow((size_t)k_count,
                             sizeof(MHA_LIBRARY_SESSION_ELEMENT), &k_bytes) ||
      __builtin_mul_overflow((size_t)v_count,
                             sizeof(MHA_LIBRARY_SESSION_ELEMENT), &v_bytes))
    return MHA_NAME(fail)(MHA_UPPER(BAD_ARGUMENT),
                          "the caches of %lld sequences do not fit in memory",
                          (long long)batch),
           NULL;
  if (k_cache) {
    const void *at[2] = {k_cache, v_cache};
    size_t bytes[2] = {k_bytes, v_bytes};
    static const char written[2] = {1, 1};
    static const char *const names[2] = {"k_cache", "v_cache"};
    if (MHA_NAME(check_disjoint)(2, at, bytes, written, names) != MHA_UPPER(OK))
      return NULL;
  }
  MHA_SESSION *session = calloc(1, sizeof *session);
  if (!session)
    return MHA_NAME(fail)(MHA_UPPER(BAD_ARGUMENT),
                          "out of memory for the session"),
           NULL;
  session->batch = batch;
  memcpy(session->k_shape, k_shape, sizeof k_shape);
  memcpy(session->v_shape, v_shape, sizeof v_shape);
  session->lengths = calloc((size_t)batch, sizeof(int64_t));
  /* Borrowed caches hold what their owner says: any row may be kept. */
  session->written = calloc((size_t)batch, sizeof(int64_t));
  for (int64_t b = 0; k_cache && session->written && b < batch; ++b)
    session->written[b] = MHA_CAPACITY;
  return session;
}

static MHA_SESSION *
MHA_NAME(session_finish)(MHA_SESSION *session,
                         MHA_LIBRARY_SESSION_ELEMENT *k_cache,
                         MHA_LIBRARY_SESSION_ELEMENT *v_cache) {
  /* NAME_session_open checked that these do not overflow. */
  int64_t k_count, v_count;
  MHA_NAME(count)(4, session->k_shape, &k_count);
  MHA_NAME(count)(4, session->v_shape, &v_count);
  size_t k_bytes = (size_t)k_count * sizeof(MHA_LIBRARY_SESSION_ELEMENT);
  size_t v_bytes = (size_t)v_count * sizeof(MHA_LIBRARY_SESSION_ELEMENT);
  if (k_cache) {
    session->k_cache = k_cache;
    session->v_cache = v_cache;
  } else {
    session->owns_caches = 1;
    /* Rounded up to the alignment, as aligned_alloc requires. */
    session->k_cache = aligned_alloc(64, (k_bytes + 63) / 64 * 64);
    session->v_cache = aligned_alloc(64, (v_bytes + 63) / 64 * 64);
    if (session->k_cache && session->v_cache) {
      memset(session->k_cache, 0, k_bytes);
      memset(session->v_cache, 0, v_bytes);
    }
  }
  if (!session->handle || !session->lengths || !session->written ||
      !session->k_cache || !session->v_cache) {
    /* NAME_create's own message stays when it is the one that failed. */
    if (session->handle)
      MHA_NAME(fail)
    (MHA_UPPER(BAD_ARGUMENT), "out of memory for the caches (%zu + %zu bytes)",
     k_bytes, v_bytes);
    MHA_NAME(session_free)(session);
    return NULL;
  }
  return session;
}

static int MHA_NAME(session_check_step)(MHA_SESSION *session, const float *x,
                                        int64_t tokens, float *y,
                                        int64_t y_capacity) {
  MHA_NAME(error_text)[0] = 0;
  if (!session)
    return MHA_NAME(fail)(MHA_UPPER(BAD_ARGUMENT), "session: null pointer");
  if (!x || !y)
    return MHA_NAME(fail)(MHA_UPPER(BAD_ARGUMENT), "%s: null pointer",
                          x ? "y" : "x");
  if (tokens < 1)
    return MHA_NAME(fail)(MHA_UPPER(BAD_ARGUMENT),
                          "tokens must be at least 1, got %lld",
                          (long long)tokens);
  for (int64_t b = 0; b < session->batch; ++b)
    if (tokens > MHA_CAPACITY - session->lengths[b])
      return MHA_NAME(fail)(MHA_UPPER(CACHE_FULL),
                            "sequence %lld holds %lld tokens; %lld more do not "
                            "fit in the cache's capacity of %lld",
                            (long long)b, (long long)session->lengths[b],
                            (long long)tokens, (long long)MHA_CAPACITY);
  /* y's room before the graph runs: the graph appends to the caches in
     place, and a refused step must leave them as they were. */
  if (y_capacity < session->batch * tokens * MHA_UPPER(OUT_DIM))
    return MHA_NAME(fail)(
        MHA_UPPER(RESULT_TOO_SMALL), "result: needs %lld floats, room for %lld",
        (long long)(session->batch * tokens * MHA_UPPER(OUT_DIM)),
        (long long)y_capacity);
  return MHA_UPPER(OK);
}

static void MHA_NAME(session_advance)(MHA_SESSION *session, int64_t tokens) {
  for (int64_t b = 0; b < session->batch; ++b) {
    session->lengths[b] += tokens;
    if (session->written[b] < session->lengths[b])
      session->written[b] = session->lengths[b];
  }
}

int MHA_NAME(session_set_lengths)(MHA_SESSION *session,
                                  const int64_t *lengths) {
  MHA_NAME(error_text)[0] = 0;
  if (!session || !lengths)
    return MHA_NAME(fail)(MHA_UPPER(BAD_ARGUMENT), "%s: null pointer",
                          session ? "lengths" : "session");
  for (int64_t b = 0; b < session->batch; ++b)
    if (lengths[b] < 0 || lengths[b] > session->written[b])
      return MHA_NAME(fail)(
          MHA_UPPER(BAD_ARGUMENT),
          "lengths: sequence %lld would hold %lld tokens; a length must be "
          "between 0 and the %lld tokens its cache holds",
          (long long)b, (long long)lengths[b], (long long)session->written[b]);
  memcpy(session->lengths, lengths, (size_t)session->batch * sizeof(int64_t));
  return MHA_UPPER(OK);
}

int MHA_NAME(session_lengths)(const MHA_SESSION *session, int64_t *lengths) {
  MHA_NAME(error_text)[0] = 0;
  if (!session || !lengths)
    return MHA_NAME(fail)(MHA_UPPER(BAD_ARGUMENT), "%s: null pointer",
                          session ? "lengths" : "session");
  memcpy(lengths, session->lengths, (size_t)session->batch * sizeof(int64_t));
  return MHA_UPPER(OK);
}

void MHA_NAME(session_reset)(MHA_SESSION *session) {
  if (!session)
    return;
  memset(session->lengths, 0, (size_t)session->batch * sizeof(int64_t));
  if (session->owns_caches)
    memset(session->written, 0, (size_t)session->batch * sizeof(int64_t));
}

void MHA_NAME(session_free)(MHA_SESSION *session) {
  if (!session)
    return;
  MHA_NAME(destroy)(session->handle);
  if (session->owns_caches) {
    free(session->k_cache);
    free(session->v_cache);
  }
  free(session->lengths);
  free(session->written);
  free(session);
}

#undef MHA_CAPACITY
