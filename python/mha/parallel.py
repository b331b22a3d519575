"""A layer split by heads across the ranks of an MPI communicator:
mha.compile(graph, comm=comm) and mha.layer(..., comm=comm)
(docs/distributed.md, python/README.md).

Every rank builds the same layer and passes the same full arrays, as every
rank of `mha-run --parallel heads` reads the same full inputs; each rank
compiles the graph of its share of the heads (mha-split-heads), calls it on
its slices of the arrays, and one all-reduce adds up the ranks' outputs:
every rank gets the whole output. Before it the ranks agree that each is
ready with the same arrays (runtime/RankAgreement.h), so that a rank that
fails makes the others raise instead of waiting for it.
"""
import hashlib

import numpy

from . import _mha

# runtime/RankAgreement.h's mha_rank_reason.
_AGREE, _STOPPED, _OTHER_INPUTS, _OTHER_SHAPE = 0, 1, 2, 3


def comm_handle(comm):
    """The Fortran handle of `comm`: an mpi4py communicator (its py2f()), or
    the int that MPI_Comm_c2f gives for a C communicator."""
    if hasattr(comm, "py2f"):
        return int(comm.py2f())
    if isinstance(comm, int) and not isinstance(comm, bool):
        return comm
    raise TypeError("comm: expected an mpi4py communicator or the int of "
                    "MPI_Comm_c2f, got %s" % type(comm).__name__)


def _hash(digest, arrays):
    """Folds the arrays of `arrays` (name: value), by name, into `digest`."""
    for name in sorted(arrays):
        array = numpy.ascontiguousarray(arrays[name])
        digest.update(("%s %s %s;" % (name, array.dtype.str,
                                      array.shape)).encode())
        digest.update(array.tobytes())
    return digest


class SplitLayer:
    """One rank's share of a layer (mha.compile with comm=): prepare() and
    calls as a Layer's, with the full arrays, on every rank at once and in
    the same order (they are collective)."""

    def __init__(self, text, entry, options, comm):
        self._handle = comm_handle(comm)
        self.rank, self.ranks = _mha.comm_rank_size(self._handle)
        text, shares = _mha.split_heads(text, entry or "", self.rank,
                                        self.ranks)
        self._shares = {share[0]: share[1:] for share in shares}
        self._layer = _mha.Layer(text, True, entry or "", options)
        self._weights = hashlib.sha256()
        # A prepare() that failed on some rank may have bound new weights on
        # others: no call runs until a prepare() works on every rank.
        self._failed_prepare = False

    @property
    def arguments(self):
        """This rank's arguments (name, shape, dtype): the split ones are
        its slices."""
        return self._layer.arguments

    def _cut(self, arrays):
        """This rank's slices of the full `arrays` (name: value); ValueError
        for an array that is not as large as the full layer's."""
        cut = {}
        for name, value in arrays.items():
            share = self._shares.get(name)
            if share is None:
                cut[name] = value
                continue
            value = numpy.asarray(value)
            dim, offset, size, full = share
            if value.ndim > dim and full >= 0 and value.shape[dim] != full:
                raise ValueError("input '%s': dimension %d must be %d, got %d"
                                 % (name, dim, full, value.shape[dim]))
            index = [slice(None)] * value.ndim
            if value.ndim > dim:
                index[dim] = slice(offset, offset + size)
            cut[name] = value[tuple(index)]
        return cut

    def _add_up(self, error, digest, result):
        """The ranks' agreement and sum; raises this rank's `error`, or an
        error naming the rank that failed or differs."""
        state = 0 if error is None else 2
        reason, rank, _ = _mha.rank_add_up(
            self._handle, state, int.from_bytes(digest.digest()[:8], "little"),
            result if error is None else None)
        if error is not None:
            raise error
        if reason == _STOPPED:
            raise RuntimeError("comm: rank %d failed before the ranks added "
                               "up their outputs: see its exception" % rank)
        if reason == _OTHER_INPUTS:
            raise ValueError("comm: rank %d was given other arguments than "
                             "rank 0; every rank must pass the same full "
                             "arrays" % rank)
        if reason == _OTHER_SHAPE:
            raise ValueError("comm: rank %d's output has another shape than "
                             "rank 0's" % rank)
        if reason != _AGREE:
            raise RuntimeError("comm: the ranks' exchange failed in MPI")
        return result

    def prepare(self, **weights):
        """Layer.prepare with the full weights, on every rank."""
        error = None
        try:
            self._layer.prepare(**self._cut(weights))
        except Exception as caught:  # noqa: BLE001 (the others must hear)
            error = caught
        digest = _hash(hashlib.sha256(), weights)
        self._failed_prepare = True
        self._add_up(error, digest.copy(), None)
        self._failed_prepare = False
        self._weights = digest

    def __call__(self, *args, **kwargs):
        """The layer's output: positional arguments in the graph's order of
        those prepare() did not bind, then keywords, all full arrays."""
        if self._failed_prepare:
            raise ValueError("comm: the last prepare() failed on a rank; "
                             "prepare the layer again on every rank")
        free = [a[0] for a in self._layer.arguments
                if a[0] not in self._layer.bound]
        arrays = dict(kwargs)
        error, result = None, None
        try:
            if len(args) > len(free):
                raise TypeError("the layer takes at most %d positional "
                                "arguments (those prepare() did not bind), "
                                "got %d" % (len(free), len(args)))
            for name, value in zip(free, args):
                if name in arrays:
                    raise TypeError("argument '%s' given twice" % name)
                arrays[name] = value
            result = self._layer(**self._cut(arrays))
        except Exception as caught:  # noqa: BLE001 (the others must hear)
            error = caught
        digest = _hash(self._weights.copy(), arrays)
        return self._add_up(error, digest, result)
