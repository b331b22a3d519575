"""Decoding with a paged key/value cache: mha.layer(kv_cache=C, paged_kv=P).

The layer reads and writes pools k_pool, v_pool [N, Hkv, P, d] (with
cache_dtype="int8", the int8 codes, and their scales k_scales, v_scales
[N, Hkv, P], one per row of a page) through a block table [B, M] (int32,
M = ceil(C / P)): entry m of row b is the pool page that holds rows m*P to
m*P + P - 1 of sequence b. A PagedDecodeSession
keeps the table and a free list of the pool's pages, gives each sequence
the pages its new tokens need at each step and takes them back when the
sequence is freed, so that a finished sequence's pages serve another, as a
server's cache manager does (vLLM's, OpenVINO's).
"""
import numbers

import numpy

from . import _mha

# The pools a paged layer updates in place: f32 and bf16 caches, int8 ones.
_POOLS = ("k_pool", "v_pool")
_INT8_POOLS = ("k_pool", "k_scales", "v_pool", "v_scales")
# The session's own arguments of the layer.
_OWN = _INT8_POOLS + ("block_table", "cache_lengths")
# The array element of each element type the pools may have.
_ELEMENTS = {"float32": numpy.float32, "bfloat16": numpy.uint16,
             "int8": numpy.int8}
# A table entry that holds no page.
_NO_PAGE = -1


def _shape_text(shape):
    return "[%s]" % ", ".join(map(str, shape))


def _positive(name, value):
    if (not isinstance(value, numbers.Integral) or isinstance(value, bool)
            or value < 1):
        raise ValueError("%s must be a positive integer, got %r"
                         % (name, value))
    return int(value)


class PagedDecodeSession:
    """Decodes with a paged cache graph: owns or borrows the pools
    [N, Hkv, P, d] (float32, uint16 bfloat16 bits where the layer's caches
    are bf16, or int8 codes with their float32 scales [N, Hkv, P]), keeps
    the block table [B, M] (int32, -1 where a sequence holds no page), the
    free pages and the lengths [B] (int64). Made by Layer.session(batch=...,
    pages=...) of a paged layer; `pages` defaults to the borrowed k_pool's,
    else to the layer's, else to B * M."""

    def __init__(self, layer, batch=None, pages=None, k_pool=None,
                 v_pool=None, k_scales=None, v_scales=None):
        args = {name: (shape, dtype) for name, shape, dtype in layer.arguments}
        pools = tuple(name for name in _INT8_POOLS if name in layer.updated)
        if (set(layer.updated) not in (set(_POOLS), set(_INT8_POOLS))
                or "block_table" not in args):
            raise ValueError(
                "a paged decode session drives a graph with a paged cache "
                "(k_pool and v_pool updated in place, a block_table, as "
                "mha.layer(kv_cache=..., paged_kv=...) builds); @%s takes: %s"
                % (layer.entry, ", ".join(args)))
        self.layer = layer
        table_shape = args["block_table"][0]
        self.page_size = args["k_pool"][0][2]
        self.pages_per_sequence = table_shape[1]
        declared_batch, declared_pages = table_shape[0], args["k_pool"][0][0]
        if batch is None:
            batch = declared_batch if declared_batch is not None else 1
        batch = _positive("batch", batch)
        if declared_batch is not None and batch != declared_batch:
            raise ValueError("batch %d: the layer's batch is %d"
                             % (batch, declared_batch))
        if pages is None and isinstance(k_pool, numpy.ndarray) and k_pool.ndim:
            pages = k_pool.shape[0]  # borrowed pools say how many they hold
        if pages is None:
            pages = (declared_pages if declared_pages is not None
                     else batch * self.pages_per_sequence)
        pages = _positive("pages", pages)
        if declared_pages is not None and pages != declared_pages:
            raise ValueError("pages %d: the layer's pools hold %d pages"
                             % (pages, declared_pages))
        given = {"k_pool": k_pool, "v_pool": v_pool, "k_scales": k_scales,
                 "v_scales": v_scales}
        for name, array in given.items():
            if array is not None and name not in pools:
                raise ValueError("%s: the layer's caches have no %s (they "
                                 "are %s)" % (name, name, args["k_pool"][1]))
        self._pools = {}
        for name in pools:
            wanted = (pages,) + tuple(args[name][0][1:])
            element = _ELEMENTS.get(args[name][1], numpy.float32)
            self._pools[name] = self._pool(name, given[name], wanted, element)
        lent = [name for name in pools if given[name] is not None]
        if len(lent) > 1:
            _mha.check_disjoint(lent, [given[name] for name in lent])
        self.batch, self.pages = batch, pages
        self._table = numpy.full((batch, self.pages_per_sequence), _NO_PAGE,
                                 numpy.int32)
        self._lengths = numpy.zeros(batch, numpy.int64)
        # A stack: the last page freed is the first given out again.
        self._free = list(range(pages - 1, -1, -1))

    @staticmethod
    def _pool(name, array, wanted, element):
        if array is None:
            return numpy.zeros(wanted, element)
        if not isinstance(array, numpy.ndarray):
            raise TypeError("%s: expected a NumPy array, got %s"
                            % (name, type(array).__name__))
        if array.shape != wanted:
            raise ValueError("%s: expected shape %s, found %s"
                             % (name, _shape_text(wanted),
                                _shape_text(array.shape)))
        if array.dtype != element:
            raise ValueError("%s: expected dtype %s, found %s"
                             % (name, numpy.dtype(element), array.dtype))
        if not (array.flags.c_contiguous and array.flags.writeable):
            raise ValueError("%s: the session writes the pool in place, so "
                             "it must be a writeable C-contiguous array"
                             % name)
        return array

    @property
    def k_pool(self):
        return self._pools["k_pool"]

    @property
    def v_pool(self):
        return self._pools["v_pool"]

    @property
    def k_scales(self):
        """An int8 pool's scales [N, Hkv, P] (None for other pools)."""
        return self._pools.get("k_scales")

    @property
    def v_scales(self):
        return self._pools.get("v_scales")

    @property
    def capacity(self):
        """The most tokens a sequence holds: M pages of P rows."""
        return self.pages_per_sequence * self.page_size

    @property
    def block_table(self):
        """The block table [B, M] (a copy): -1 where no page is held."""
        return self._table.copy()

    @property
    def lengths(self):
        """The tokens each sequence holds (a copy)."""
        return self._lengths.copy()

    @property
    def free_pages(self):
        """How many of the pool's pages no sequence holds."""
        return len(self._free)

    def _check_sequence(self, sequence):
        if (not isinstance(sequence, numbers.Integral)
                or isinstance(sequence, bool)
                or not 0 <= sequence < self.batch):
            raise ValueError("sequence must be an integer from 0 to %d, "
                             "got %r" % (self.batch - 1, sequence))
        return int(sequence)

    def free(self, sequence):
        """Ends sequence `sequence`: its pages go back to the free list and
        its length to 0; the next step starts a new sequence there."""
        b = self._check_sequence(sequence)
        held = [int(p) for p in self._table[b] if p != _NO_PAGE]
        self._free.extend(reversed(held))
        self._table[b] = _NO_PAGE
        self._lengths[b] = 0

    def reset(self):
        """Frees every sequence. The pools are not cleared: the layer never
        reads a row before it writes it."""
        for b in range(self.batch):
            self.free(b)

    def _allocate(self, tokens):
        """The (sequence, entry) pairs given a page for `tokens` more
        tokens of every sequence, taken from the free list; ValueError,
        with nothing taken, where a sequence would pass its capacity or the
        pool has too few free pages."""
        wanted = []
        for b, length in enumerate(self._lengths.tolist()):
            if length + tokens > self.capacity:
                raise ValueError(
                    "sequence %d holds %d tokens; %d more do not fit in its "
                    "%d pages of %d rows (capacity %d)"
                    % (b, length, tokens, self.pages_per_sequence,
                       self.page_size, self.capacity))
            held = -(-length // self.page_size)
            needed = -(-(length + tokens) // self.page_size)
            wanted.extend((b, entry) for entry in range(held, needed))
        if len(wanted) > len(self._free):
            # The first sequence that the free pages do not serve.
            b = wanted[len(self._free)][0]
            before = sum(1 for s, _ in wanted if s < b)
            missing = sum(1 for s, _ in wanted if s == b) - (
                len(self._free) - before)
            raise ValueError(
                "the pool is full: sequence %d needs %d more page(s) of %d "
                "rows for its %d new token(s); %d page(s) are free, %d of "
                "them taken by the sequences before it; free a finished "
                "sequence (session.free) or give the pool more pages"
                % (b, missing, self.page_size, tokens, len(self._free),
                   before))
        for b, entry in wanted:
            self._table[b, entry] = self._free.pop()
        return wanted

    def step(self, x, **arrays):
        """Runs the layer on the new tokens x [B, T, D] (every sequence
        gets T tokens), after giving each sequence the pages they need;
        returns y [B, T, D'] and advances every length by T. `arrays` are
        the layer's other arguments, those prepare() did not bind."""
        for name in _OWN:
            if name in arrays:
                raise TypeError("argument '%s' is the session's; it passes "
                                "it itself" % name)
        shape = getattr(x, "shape", ())
        if len(shape) != 3 or shape[0] != self.batch:
            raise ValueError("x: expected [%d, T, D] (one row of tokens per "
                             "sequence), found %s"
                             % (self.batch, _shape_text(shape)))
        tokens = int(shape[1])
        given = self._allocate(tokens)
        try:
            y = self.layer(x, block_table=self._table,
                           cache_lengths=self._lengths, **self._pools,
                           **arrays)
        except BaseException:
            for b, entry in reversed(given):
                self._free.append(int(self._table[b, entry]))
                self._table[b, entry] = _NO_PAGE
            raise
        self._lengths += tokens
        return y

    def __repr__(self):
        return ("PagedDecodeSession(batch=%d, pages=%d of %d rows, free %d, "
                "lengths=%s)" % (self.batch, self.pages, self.page_size,
                                 len(self._free), self._lengths.tolist()))
