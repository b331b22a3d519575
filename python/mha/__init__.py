"""mha: compile multi-head attention graphs and call them on NumPy arrays.

    import mha, numpy as np
    layer = mha.layer(d_model=512, heads=8)          # batch and seq are `?`
    layer.prepare(w_q=..., w_k=..., w_v=..., w_o=..., b_q=..., ...)
    y = layer(x)                                     # x: float32 [B, T, 512]

python/README.md describes the API; docs/tutorial.md shows it run.
"""
import os

from . import _mha

__all__ = ["compile", "layer", "layer_graph", "Layer", "set_num_threads",
           "get_num_threads"]

#: A compiled layer (mha._mha.Layer): call it, prepare() it.
Layer = _mha.Layer

# mha-run's defaults, which differ from the pipeline's own: the projections
# of one input packed into one, the packing done once by prepare().
_RUN_DEFAULTS = {"fuse-projections": "true", "prepare-weights": "true"}

# The options of mha.layer_graph (the rest of mha.layer's go to compile).
_GRAPH_OPTIONS = ("batch", "seq", "kv_seq", "d_model", "kv_dim", "heads",
                  "kv_heads", "head_dim", "value_dim", "out_dim", "cross",
                  "causal", "causal_bottom_right", "mask", "mask_broadcast",
                  "bias", "split_first")


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


def compile(graph, entry=None, **pipeline_options):
    """Compiles `graph` (a path to a .mlir file, or a graph's text) with
    mha-run's pipeline and defaults and returns the callable Layer.

    pipeline_options are mha-run's compiler options with `_` for `-`, e.g.
    attention="fused", query_tile=32, prepare_weights=False. A bad option or
    graph is a ValueError; a graph that fails to lower, a RuntimeError.
    """
    if isinstance(graph, os.PathLike):
        graph = os.fspath(graph)
    if not isinstance(graph, str):
        raise TypeError("mha.compile takes a path or a graph's text, got %s"
                        % type(graph).__name__)
    return _mha.Layer(graph, _is_text(graph), entry or "",
                      _option_text(pipeline_options))


def layer_graph(**options):
    """The text of one layer's graph, as mha-gen prints it: d_model=512,
    heads=8, batch=None, seq=None (None is `?`), kv_seq, kv_dim, kv_heads,
    head_dim, value_dim, out_dim, cross, causal, causal_bottom_right (the
    diagonal aligned bottom-right), mask, mask_broadcast,
    bias=True, split_first; mha-gen's rules and messages."""
    return _mha.layer_graph(**options)


def layer(**options):
    """compile(layer_graph(...)): the options of layer_graph build the graph,
    the others are compile's pipeline options."""
    graph = {k: v for k, v in options.items() if k in _GRAPH_OPTIONS}
    pipeline = {k: v for k, v in options.items() if k not in _GRAPH_OPTIONS}
    return compile(layer_graph(**graph), **pipeline)


def set_num_threads(threads):
    """OpenMP threads of the compiled code (0: all cores), as mha-run's
    --threads."""
    _mha.set_num_threads(threads)


def get_num_threads():
    return _mha.get_num_threads()
