/*===- mha_pages.c - The fixed part of a paged cache library ------*- C -*-===*
 *
 * A paged cache graph (mha-gen --paged-kv) reads and writes its pools
 * through the caller's block table, whose entries the compiled code trusts.
 * NAME_check_pages checks a call's table and lengths before it runs (the
 * generated checks call it); NAME_pages_init, NAME_pages_reserve and
 * NAME_pages_release keep the caller's table and a free list of the pool's
 * pages (the library's header documents them). mha_library.c includes this
 * file where the graph is paged (MHA_LIBRARY_PAGED); the header defines
 * NAME_PAGE_ROWS and NAME_PAGES_PER_SEQUENCE.
 *
 *===----------------------------------------------------------------------===*/

#define MHA_PAGE_ROWS MHA_UPPER(PAGE_ROWS)
#define MHA_PER_SEQUENCE MHA_UPPER(PAGES_PER_SEQUENCE)

static int MHA_NAME(check_pages)(const int32_t *table,
                                 const int64_t table_shape[2],
                                 int64_t pool_pages, const int64_t *lengths,
                                 int64_t tokens) {
  int64_t batch = table_shape[0];
  int64_t rows = (int64_t)MHA_PER_SEQUENCE * MHA_PAGE_ROWS;
  for (int64_t b = 0; b < batch; ++b)
    if (lengths[b] < 0 || lengths[b] > rows - tokens)
      return MHA_NAME(fail)(
          MHA_UPPER(BAD_ARGUMENT),
          "cache_lengths[%lld] is %lld: sequence %lld would hold %lld + %lld "
          "rows, outside the %d * %d rows of its block_table row",
          (long long)b, (long long)lengths[b], (long long)b,
          (long long)lengths[b], (long long)tokens, MHA_PER_SEQUENCE,
          MHA_PAGE_ROWS);
  /* One bit per page of the pools: taken by a sequence before. */
  unsigned char *taken = calloc((size_t)(pool_pages + 7) / 8, 1);
  if (!taken)
    return MHA_NAME(fail)(MHA_UPPER(BAD_ARGUMENT),
                          "out of memory for the check of %lld pages",
                          (long long)pool_pages);
  int status = MHA_UPPER(OK);
  for (int64_t b = 0; b < batch && status == MHA_UPPER(OK); ++b) {
    int64_t held = lengths[b] + tokens;
    int64_t used = (held + MHA_PAGE_ROWS - 1) / MHA_PAGE_ROWS;
    for (int64_t e = 0; e < used && status == MHA_UPPER(OK); ++e) {
      int64_t page = table[b * MHA_PER_SEQUENCE + e];
      if (page < 0 || page >= pool_pages) {
        status = MHA_NAME(fail)(
            MHA_UPPER(BAD_ARGUMENT),
            "block_table[%lld, %lld] is %lld, not a page of the pools (0 to "
            "%lld); sequence %lld holds %lld rows after the call, in its "
            "first %lld pages",
            (long long)b, (long long)e, (long long)page,
            (long long)(pool_pages - 1), (long long)b, (long long)held,
            (long long)used);
      } else if (taken[page / 8] & (1u << (page % 8))) {
        /* The sequence that took it first, for the message. */
        int64_t first = b;
        for (int64_t s = 0; s < b; ++s) {
          int64_t count =
              (lengths[s] + tokens + MHA_PAGE_ROWS - 1) / MHA_PAGE_ROWS;
          for (int64_t f = 0; f < count; ++f)
            if (table[s * MHA_PER_SEQUENCE + f] == page)
              first = s, s = b, f = count;
        }
        if (first == b)
          status = MHA_NAME(fail)(
              MHA_UPPER(BAD_ARGUMENT),
              "block_table gives page %lld twice to sequence %lld: its rows "
              "there would overwrite each other",
              (long long)page, (long long)b);
        else
          status = MHA_NAME(fail)(
              MHA_UPPER(BAD_ARGUMENT),
              "block_table gives page %lld to sequence %lld and to sequence "
              "%lld: each would write the other's rows",
              (long long)page, (long long)first, (long long)b);
      } else {
        taken[page / 8] |= (unsigned char)(1u << (page % 8));
      }
    }
  }
  free(taken);
  return status;
}

int MHA_NAME(pages_init)(MHA_PAGES *pages, int32_t *block_table, int64_t batch,
                         int32_t *free_pages, int64_t pool_pages) {
  MHA_NAME(error_text)[0] = 0;
  if (!pages || !block_table || !free_pages)
    return MHA_NAME(fail)(MHA_UPPER(BAD_ARGUMENT), "%s: null pointer",
                          !pages         ? "pages"
                          : !block_table ? "block_table"
                                         : "free_pages");
  if (batch < 1 || pool_pages < 1 || pool_pages > INT32_MAX)
    return MHA_NAME(fail)(
        MHA_UPPER(BAD_ARGUMENT),
        "batch must be at least 1 and pool_pages from 1 to %d, got %lld and "
        "%lld",
        INT32_MAX, (long long)batch, (long long)pool_pages);
  pages->block_table = block_table;
  pages->batch = batch;
  pages->free_pages = free_pages;
  pages->pool_pages = pool_pages;
  for (int64_t i = 0; i < batch * MHA_PER_SEQUENCE; ++i)
    block_table[i] = -1;
  /* A stack whose top is page 0: pages go out in order. */
  for (int64_t i = 0; i < pool_pages; ++i)
    free_pages[i] = (int32_t)(pool_pages - 1 - i);
  pages->free_count = pool_pages;
  return MHA_UPPER(OK);
}

/* NAME_BAD_ARGUMENT unless `pages` holds a table and `sequence` is one of
   its rows. */
static int MHA_NAME(check_sequence)(const MHA_PAGES *pages, int64_t sequence) {
  MHA_NAME(error_text)[0] = 0;
  if (!pages || !pages->block_table || !pages->free_pages)
    return MHA_NAME(fail)(MHA_UPPER(BAD_ARGUMENT),
                          "pages: null pointer, or not made by %s_pages_init",
                          MHA_NAME_STRING);
  if (sequence < 0 || sequence >= pages->batch)
    return MHA_NAME(fail)(MHA_UPPER(BAD_ARGUMENT),
                          "sequence must be from 0 to %lld, got %lld",
                          (long long)(pages->batch - 1), (long long)sequence);
  return MHA_UPPER(OK);
}

/* NAME_BAD_ARGUMENT unless the first `count` entries of row `sequence` of
   the table are pages of the pools or -1 (no page). */
static int MHA_NAME(check_entries)(const MHA_PAGES *pages, int64_t sequence,
                                   int64_t count) {
  const int32_t *row = pages->block_table + sequence * MHA_PER_SEQUENCE;
  for (int64_t e = 0; e < count; ++e)
    if (row[e] >= pages->pool_pages || row[e] < -1)
      return MHA_NAME(fail)(MHA_UPPER(BAD_ARGUMENT),
                            "block_table[%lld, %lld] is %lld, neither a page "
                            "of the pools (0 to %lld) nor -1 (no page)",
                            (long long)sequence, (long long)e,
                            (long long)row[e],
                            (long long)(pages->pool_pages - 1));
  return MHA_UPPER(OK);
}

int MHA_NAME(pages_reserve)(MHA_PAGES *pages, int64_t sequence, int64_t length,
                            int64_t tokens) {
  int status = MHA_NAME(check_sequence)(pages, sequence);
  if (status != MHA_UPPER(OK))
    return status;
  int64_t capacity = (int64_t)MHA_PER_SEQUENCE * MHA_PAGE_ROWS;
  if (length < 0 || tokens < 0)
    return MHA_NAME(fail)(MHA_UPPER(BAD_ARGUMENT),
                          "length and tokens must not be negative, got %lld "
                          "and %lld",
                          (long long)length, (long long)tokens);
  if (tokens > capacity - length)
    return MHA_NAME(fail)(
        MHA_UPPER(CACHE_FULL),
        "sequence %lld holds %lld tokens; %lld more do not fit in its %d "
        "pages of %d rows (capacity %lld)",
        (long long)sequence, (long long)length, (long long)tokens,
        MHA_PER_SEQUENCE, MHA_PAGE_ROWS, (long long)capacity);
  int32_t *row = pages->block_table + sequence * MHA_PER_SEQUENCE;
  int64_t needed = (length + tokens + MHA_PAGE_ROWS - 1) / MHA_PAGE_ROWS;
  status = MHA_NAME(check_entries)(pages, sequence, needed);
  if (status != MHA_UPPER(OK))
    return status;
  int64_t missing = 0;
  for (int64_t e = 0; e < needed; ++e)
    missing += row[e] == -1;
  if (missing > pages->free_count)
    return MHA_NAME(fail)(
        MHA_UPPER(POOL_FULL),
        "the pool is full: sequence %lld needs %lld more page(s) of %d rows "
        "for %lld more token(s), and %lld are free; release a finished "
        "sequence's pages (%s_pages_release)",
        (long long)sequence, (long long)missing, MHA_PAGE_ROWS,
        (long long)tokens, (long long)pages->free_count, MHA_NAME_STRING);
  for (int64_t e = 0; e < needed; ++e)
    if (row[e] == -1)
      row[e] = pages->free_pages[--pages->free_count];
  return MHA_UPPER(OK);
}

int MHA_NAME(pages_release)(MHA_PAGES *pages, int64_t sequence) {
  int status = MHA_NAME(check_sequence)(pages, sequence);
  if (status != MHA_UPPER(OK))
    return status;
  int32_t *row = pages->block_table + sequence * MHA_PER_SEQUENCE;
  status = MHA_NAME(check_entries)(pages, sequence, MHA_PER_SEQUENCE);
  if (status != MHA_UPPER(OK))
    return status;
  int64_t held = 0;
  for (int64_t e = 0; e < MHA_PER_SEQUENCE; ++e)
    held += row[e] != -1;
  if (held > pages->pool_pages - pages->free_count)
    return MHA_NAME(fail)(
        MHA_UPPER(BAD_ARGUMENT),
        "sequence %lld holds %lld pages, but only %lld of the pool's %lld are "
        "out of the free list: a page is given twice",
        (long long)sequence, (long long)held,
        (long long)(pages->pool_pages - pages->free_count),
        (long long)pages->pool_pages);
  /* Pushed last page first: the next reserve takes them back in order. */
  for (int64_t e = MHA_PER_SEQUENCE - 1; e >= 0; --e)
    if (row[e] != -1) {
      pages->free_pages[pages->free_count++] = row[e];
      row[e] = -1;
    }
  return MHA_UPPER(OK);
}

#undef MHA_PAGE_ROWS
#undef MHA_PER_SEQUENCE
