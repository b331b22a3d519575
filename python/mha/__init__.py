"""mha: compile multi-head attention graphs and call them on NumPy arrays.

    import mha, numpy as np
    layer = mha.layer(d_model=512, heads=8)          # batch and seq are `?`
    layer.prepare(w_q=..., w_k=..., w_v=..., w_o=..., b_q=..., ...)
    y = layer(x)                                     # x: float32 [B, T, 512]

python/README.md describes the API; docs/tutorial.md shows it run.
"""
import numbers
import os

# The compiled code runs its parallel loops on LLVM's libomp, whose idle
# threads spin for 200 ms after each parallel region by default. In a
# process that also runs PyTorch (libgomp, OpenBLAS's own threads), that
# spinning takes the cores from them between our calls; with
# OMP_WAIT_POLICY=passive instead, each of a layer's parallel regions must
# wake sleeping threads again. A spin of 200 us keeps the threads awake
# through one call and frees the cores soon after it (docs/performance.md,
# "From Python"). libomp reads it when it starts, at the first call; a value
# the user set wins.
os.environ.setdefault("KMP_BLOCKTIME", "200us")

from . import _mha  # noqa: E402 (after the environment it reads)

__all__ = ["compile", "layer", "layer_graph", "Layer", "DecodeSession",
           "set_num_threads", "get_num_threads", "to_bf16_bits",
           "from_bf16_bits"]

#: A compiled layer (mha._mha.Layer): call it, prepare() it.
Layer = _mha.Layer

# mha-run's defaults, which differ from the pipeline's own: the projections
# of one input packed into one, the packing done once by prepare().
_RUN_DEFAULTS = {"fuse-projections": "true", "prepare-weights": "true"}

# The options of mha.layer_graph (the rest of mha.layer's go to compile).
_GRAPH_OPTIONS = ("batch", "seq", "kv_seq", "d_model", "kv_dim", "heads",
                  "kv_heads", "head_dim", "value_dim", "out_dim", "cross",
                  "causal", "causal_bottom_right", "mask", "mask_broadcast",
                  "bias", "split_first", "kv_cache", "cache_dtype", "paged_kv",
                  "dtype", "scale",
                  "softcap", "window", "rope", "rotary_dim", "rope_base",
                  "rope_scale", "rope_mscale", "rope_inv_freq", "qk_norm",
                  "qk_norm_eps", "alibi", "sinks", "attn_bias")


def _option_text(options):
    """`key=value ...` for MhaPipelineOptions's parser, mha-run's defaults
    first: query_tile=32 is "query-tile=32", True is "true"."""
    merged = dict(_RUN_DEFAULTS)
    for key, value in options.items():
        # llvm::cl would print these to stderr; say them in the exception.
        if key == "attention" and value not in ("fused", "decomposed", "auto"):
            raise ValueError("attention must be 'fused', 'decomposed' or "
                             "'auto', got %r" % (value,))
        if isinstance(value, str) and " " in value:
            raise ValueError("%s: a value without spaces, got %r" % (key, value))
        if isinstance(value, bool):
            value = "true" if value else "false"
        merged[key.replace("_", "-")] = str(value)
    return " ".join("%s=%s" % item for item in merged.items())


def _is_text(graph):
    return "\n" in graph or "{" in graph or "(" in graph


def compile(graph, entry=None, comm=None, **pipeline_options):
    """Compiles `graph` (a path to a .mlir file, or a graph's text) with
    mha-run's pipeline and defaults and returns the callable Layer.

    pipeline_options are mha-run's compiler options with `_` for `-`, e.g.
    attention="fused", query_tile=32, prepare_weights=False. A bad option or
    graph is a ValueError; a graph that fails to lower, a RuntimeError.

    comm (an mpi4py communicator, or the int of MPI_Comm_c2f) splits the
    layer by heads among its ranks: a mha.parallel.SplitLayer, which every
    rank prepares and calls with the same full arrays
    (docs/distributed.md).
    """
    if isinstance(graph, os.PathLike):
        graph = os.fspath(graph)
    if not isinstance(graph, str):
        raise TypeError("mha.compile takes a path or a graph's text, got %s"
                        % type(graph).__name__)
    if comm is not None:
        from .parallel import SplitLayer
        if not _is_text(graph):
            with open(graph) as file:
                graph = file.read()
        return SplitLayer(graph, entry, _option_text(pipeline_options), comm)
    return _mha.Layer(graph, _is_text(graph), entry or "",
                      _option_text(pipeline_options))


def layer_graph(**options):
    """The text of one layer's graph, as mha-gen prints it: d_model=512,
    heads=8, batch=None, seq=None (None is `?`), kv_seq, kv_dim, kv_heads,
    head_dim, value_dim, out_dim, cross, causal, causal_bottom_right (the
    diagonal aligned bottom-right), mask, mask_broadcast,
    bias=True, split_first, kv_cache (the capacity C of a decoding layer:
    mha-gen --kv-cache), cache_dtype ("f32", "bf16" or "int8": how the
    caches store keys and values, mha-gen --cache-dtype), paged_kv (the
    rows P of a page: the caches are pools of pages that a block table
    hands out, mha-gen --paged-kv; Layer.session drives them), dtype
    ("f32", or
    "bf16": bf16 inputs, weights and
    biases, computed in float32, which a call takes as float32 arrays and
    rounds to nearest even); the served models' variants scale, softcap,
    window, rope ("half" or "interleaved"), rotary_dim, rope_base,
    rope_scale, rope_mscale, rope_inv_freq, qk_norm, qk_norm_eps, alibi,
    sinks, attn_bias ("B,H,T,S", each entry its letter or 1), as mha-gen's
    --rope ... --attn-bias; mha-gen's rules and messages."""
    return _mha.layer_graph(**options)


def layer(**options):
    """compile(layer_graph(...)): the options of layer_graph build the graph,
    the others (and comm) are compile's."""
    graph = {k: v for k, v in options.items() if k in _GRAPH_OPTIONS}
    pipeline = {k: v for k, v in options.items() if k not in _GRAPH_OPTIONS}
    return compile(layer_graph(**graph), **pipeline)


def set_num_threads(threads):
    """OpenMP threads of the compiled code (0: all cores), as mha-run's
    --threads."""
    _mha.set_num_threads(threads)


def get_num_threads():
    return _mha.get_num_threads()


def to_bf16_bits(array):
    """The bfloat16 bits (a uint16 array of the same shape) of a float32
    array, rounded to nearest even as the layer rounds its bf16 inputs: what
    a bf16 cache holds. A numpy.float32 scalar gives a numpy.uint16."""
    return _mha.to_bf16_bits(array)


def from_bf16_bits(bits):
    """The float32 values (exact) of bfloat16 bits held in a uint16 array,
    e.g. a bf16 cache's."""
    import numpy
    bits = numpy.asarray(bits)
    if bits.dtype != numpy.uint16:
        raise ValueError("from_bf16_bits: expected a uint16 array of "
                         "bfloat16 bits, got %s" % bits.dtype)
    # A uint32 shift: a 0-d array shifted by a Python int would widen to
    # int64, whose view as float32 NumPy refuses.
    shifted = bits.astype(numpy.uint32) << numpy.uint32(16)
    return shifted.view(numpy.float32)


# A session's arrays: the caches and, in an int8 cache, the scales of its
# rows, which a call updates in place.
_CACHES = ("k_cache", "v_cache")
_SCALES = ("k_scales", "v_scales")


class DecodeSession:
    """Decodes with a cache graph (mha.layer(kv_cache=C, ...)): owns or
    borrows the key/value caches [B, Hkv, C, d] (float32; uint16 bfloat16
    bits where the layer's caches are bf16; int8 codes with float32 scales
    k_scales, v_scales [B, Hkv, C] where they are int8) and the lengths [B]
    (int64, the tokens each sequence holds), calls the layer on the new
    tokens and advances the lengths. Made by Layer.session(batch=...)."""

    def __init__(self, layer, batch=None, k_cache=None, v_cache=None,
                 lengths=None, k_scales=None, v_scales=None):
        import numpy
        self._np = numpy
        self.layer = layer
        args = {name: (shape, dtype) for name, shape, dtype in layer.arguments}
        needed = ("x",) + _CACHES + ("cache_lengths",)
        if not all(name in args for name in needed):
            raise ValueError(
                "a decode session drives a graph with a key/value cache "
                "(arguments k_cache, v_cache and cache_lengths, as "
                "mha.layer(kv_cache=...) builds), but @%s has none (it "
                "takes: %s)" % (layer.entry,
                                ", ".join(name for name in args)))
        names = _CACHES + (_SCALES if all(n in args for n in _SCALES) else ())
        if set(layer.updated) != set(names):
            raise ValueError(
                "a decode session needs a graph that updates %s in place; "
                "@%s updates: %s" % (", ".join(names[:-1]) + " and " +
                                     names[-1], layer.entry,
                                     ", ".join(layer.updated) or "nothing"))
        given = {"k_cache": k_cache, "v_cache": v_cache,
                 "k_scales": k_scales, "v_scales": v_scales}
        for name in _SCALES:
            if given[name] is not None and name not in names:
                raise ValueError("%s: @%s has no int8 cache to scale"
                                 % (name, layer.entry))
        shapes = {name: args[name][0] for name in needed + names}
        declared_batch = shapes["k_cache"][0]
        if batch is None:
            batch = declared_batch if declared_batch is not None else 1
        if (not isinstance(batch, numbers.Integral) or isinstance(batch, bool)
                or batch < 1):
            raise ValueError("batch must be a positive integer, got %r"
                             % (batch,))
        if declared_batch is not None and batch != declared_batch:
            raise ValueError("batch %d: the layer's batch is %d"
                             % (batch, declared_batch))
        # bf16 caches hold the bits (zero bits are +0.0); int8 caches their
        # codes.
        dtypes = {"bfloat16": numpy.uint16, "int8": numpy.int8}
        self._arrays = {}
        for name in names:
            shape = shapes[name]
            for dim in range(1, len(shape)):
                if shape[dim] is None:
                    raise ValueError(
                        "the session allocates %s once, so its key/value "
                        "heads, capacity and head width must be static; "
                        "dimension %d of %s is `?`" % (name, dim, name))
            wanted = (batch,) + tuple(shape[1:])
            if given[name] is None:
                self._arrays[name] = numpy.zeros(
                    wanted, dtypes.get(args[name][1], numpy.float32))
                continue
            # Borrowed: the layer checks dtype and layout at each call; the
            # shape is checked here, once.
            if not isinstance(given[name], numpy.ndarray):
                raise TypeError("%s: expected a NumPy array, got %s"
                                % (name, type(given[name]).__name__))
            if given[name].shape != wanted:
                raise ValueError(
                    "%s: expected shape [%s], found [%s]"
                    % (name, ", ".join(map(str, wanted)),
                       ", ".join(map(str, given[name].shape))))
            self._arrays[name] = given[name]
        borrowed = [name for name in names if given[name] is not None]
        self._borrowed = bool(borrowed)
        if len(borrowed) > 1:
            _mha.check_disjoint(borrowed, [given[n] for n in borrowed])
        self.batch = int(batch)
        self.capacity = shapes["k_cache"][2]
        # The rows each sequence's cache holds: a length may go back to any
        # of them (ragged starts), never past them. Borrowed caches hold
        # what their owner says they hold.
        self._lengths = numpy.zeros(batch, numpy.int64)
        self._written = numpy.full(
            batch, self.capacity if self._borrowed else 0, numpy.int64)
        if lengths is not None:
            self.lengths = lengths

    @property
    def k_cache(self):
        return self._arrays["k_cache"]

    @property
    def v_cache(self):
        return self._arrays["v_cache"]

    @property
    def k_scales(self):
        """The keys' scales [B, Hkv, C] of an int8 cache (else None)."""
        return self._arrays.get("k_scales")

    @property
    def v_scales(self):
        """The values' scales [B, Hkv, C] of an int8 cache (else None)."""
        return self._arrays.get("v_scales")

    @property
    def lengths(self):
        """The tokens each sequence holds (a copy; assign to change)."""
        return self._lengths.copy()

    @lengths.setter
    def lengths(self, lengths):
        values = self._np.asarray(lengths)
        if values.ndim != 1 or (values.size and values.dtype.kind not in "iu"):
            raise ValueError("lengths: expected integers, one per sequence, "
                             "got %r" % (lengths,))
        if values.shape[0] != self.batch:
            raise ValueError("lengths gives %d lengths for a batch of %d "
                             "sequences; give one per sequence"
                             % (values.shape[0], self.batch))
        for b, (length, written) in enumerate(zip(values.tolist(),
                                                  self._written.tolist())):
            if length < 0 or length > written:
                raise ValueError(
                    "lengths: sequence %d would hold %d tokens; a length "
                    "must be between 0 and the %d tokens its cache holds"
                    % (b, length, written))
        self._lengths[:] = values

    def reset(self):
        """Empties every sequence (lengths 0). The caches are not cleared:
        the layer never reads a row before it writes it."""
        self._lengths[:] = 0
        if not self._borrowed:
            self._written[:] = 0

    def step(self, x, **arrays):
        """Runs the layer on the new tokens x [B, T, D] (a prefill, or one
        token per sequence), appends their keys and values to the caches
        and returns y [B, T, D']; then every length grows by T. `arrays`
        are the layer's other arguments, those prepare() did not bind."""
        for name in tuple(self._arrays) + ("cache_lengths",):
            if name in arrays:
                raise TypeError("argument '%s' is the session's; it passes "
                                "it itself" % name)
        y = self.layer(x, cache_lengths=self._lengths, **self._arrays,
                       **arrays)
        tokens = x.shape[1]
        self._lengths += tokens
        self._np.maximum(self._written, self._lengths, out=self._written)
        return y

    def __repr__(self):
        return "DecodeSession(batch=%d, capacity=%d, lengths=%s)" % (
            self.batch, self.capacity, self._lengths.tolist())


def _session(layer, batch=None, k_cache=None, v_cache=None, lengths=None,
             k_scales=None, v_scales=None, pages=None, k_pool=None,
             v_pool=None):
    """A DecodeSession over this cache graph: batch sequences, zeroed
    caches it allocates (or k_cache/v_cache arrays, and for an int8 cache
    k_scales/v_scales, that it borrows and updates in place), lengths 0 (or
    `lengths`). Over a paged cache graph (mha.layer(paged_kv=P)), a
    mha.paged.PagedDecodeSession: pools of `pages` pages (B * M unless
    given) that it allocates, or k_pool/v_pool (and an int8 pool's
    k_scales/v_scales) that it borrows."""
    if any(name == "block_table" for name, _, _ in layer.arguments):
        dense = {"k_cache": k_cache, "v_cache": v_cache, "lengths": lengths}
        for name, value in dense.items():
            if value is not None:
                raise ValueError(
                    "%s: @%s keeps its cache in pages (k_pool, v_pool and a "
                    "block_table); a paged session takes pages, k_pool and "
                    "v_pool (and an int8 pool's k_scales and v_scales), and "
                    "its lengths start at 0" % (name, layer.entry))
        from .paged import PagedDecodeSession
        return PagedDecodeSession(layer, batch=batch, pages=pages,
                                  k_pool=k_pool, v_pool=v_pool,
                                  k_scales=k_scales, v_scales=v_scales)
    for name, value in (("pages", pages), ("k_pool", k_pool),
                        ("v_pool", v_pool)):
        if value is not None:
            raise ValueError("%s: @%s has no paged cache" % (name,
                                                            layer.entry))
    return DecodeSession(layer, batch=batch, k_cache=k_cache,
                         v_cache=v_cache, lengths=lengths, k_scales=k_scales,
                         v_scales=v_scales)


Layer.session = _session


def __getattr__(name):
    # mha.torch and mha.nn import PyTorch, which takes seconds and may be
    # missing: `import mha` does not, and `mha.torch` (or `mha.nn`) imports
    # it at its first use. mha.paged (the paged cache session) is imported
    # the same way, by its first session or use.
    if name in ("torch", "nn", "paged"):
        import importlib
        return importlib.import_module("." + name, __name__)
    raise AttributeError("module 'mha' has no attribute %r" % name)
