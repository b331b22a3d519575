"""Contenders timed in one process, in rounds of alternating blocks of calls.

The machines `make bench` runs on are shared, and have slow spells of a few
seconds (docs/performance.md, 2026-11-28). Timed one process after another,
a spell falls on one contender and not on the other, and a ratio of the two
moves by a third from one run to the next. In one process, each round runs
every contender in several short blocks, in an order that rotates from
round to round, so that a spell falls on all of them alike; each round
gives each contender's median call, and the ratios are taken per round.

The first call of a block, made right after another contender's block
(whose data evicted this one's from the caches), is not counted: a server
calls one layer after another of its own, and each is measured so, in its
steady state. Standard library only (bind_random_weights takes NumPy's
generator from its caller).
"""

import statistics
import time


def interleaved_rounds(calls, rounds, calls_per_round, blocks):
    """{name: [median ms per call, one per round]} for `calls`, a dict of
    name -> function of no arguments (its order is the first round's).
    Each round makes `calls_per_round` counted calls of each contender (an
    int, or a dict name -> int for contenders of different lengths), cut
    into `blocks` blocks that alternate; each block has at least one."""
    names = list(calls)
    counts = calls_per_round if isinstance(calls_per_round, dict) \
        else {name: calls_per_round for name in names}
    clock = time.perf_counter
    medians = {name: [] for name in names}
    blocks = max(1, min(blocks, min(counts.values())))
    for round_index in range(rounds):
        shift = round_index % len(names)
        order = names[shift:] + names[:shift]
        times = {name: [] for name in names}
        for block in range(blocks):
            for name in order:
                call = calls[name]
                size = counts[name] // blocks + \
                    (block < counts[name] % blocks)
                call()  # after another contender's block: not counted
                for _ in range(size):
                    start = clock()
                    call()
                    times[name].append((clock() - start) * 1e3)
        for name in names:
            medians[name].append(statistics.median(times[name]))
    return medians


# Arguments of a layer that change from call to call; prepare() binds the
# others (weights and biases) once.
ACTIVATIONS = ("x", "kv", "key", "value", "mask")


def bind_random_weights(layer, rng, skip=()):
    """Binds every argument of the package's `layer` but its ACTIVATIONS
    (and those named in `skip`, such as a decode session's caches) to
    uniform random float32 values on the scale mha-run --random gives them
    (tools/mha-run/InputBinding.cpp): a weight [K, N] within 1/sqrt(K), as
    nn.Linear starts, a bias within 0.1, so that the scores stay in
    softmax's usual range. `rng` is a numpy.random.Generator."""
    weights = {}
    for name, dims, _ in layer.arguments:
        if name in ACTIVATIONS or name in skip:
            continue
        bound = dims[-2] ** -0.5 if len(dims) >= 2 else 0.1
        weights[name] = rng.uniform(-bound, bound, dims).astype("float32")
    layer.prepare(**weights)
