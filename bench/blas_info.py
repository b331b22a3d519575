"""Which BLAS library this process loaded, for the peers of layer_vs_torch.py.

Debian's NumPy and PyTorch both call `libblas.so.3`, which the alternatives
system points at OpenBLAS when one of its packages is installed and at the
reference BLAS (libblas3, an order of magnitude slower) otherwise. The
environment variables of the tuned setting (OPENBLAS_CORETYPE, ...) only
matter for OpenBLAS, so the benchmark reports which one ran. Standard library
only; call it after importing NumPy or torch.
"""

import ctypes
import os


def loaded_blas():
    """Returns {'library', 'openblas', 'core', 'threads'} for the first BLAS
    mapped into this process, or None when none is.

    Opening the path that is already mapped gives the same copy of the
    library, so its OpenBLAS queries describe the one NumPy or torch use."""
    try:
        with open("/proc/self/maps") as maps:
            paths = [line.split()[-1] for line in maps
                     if line.rstrip().endswith(".so")
                     or ".so." in line.split()[-1]]
    except OSError:
        return None
    candidates = [p for p in dict.fromkeys(paths)
                  if any(word in os.path.basename(p).lower()
                         for word in ("blas", "mkl_rt"))]
    if not candidates:
        return None
    first = os.path.realpath(candidates[0])
    info = {"library": first, "openblas": "openblas" in first.lower(),
            "core": None, "threads": None}
    for path in candidates:
        try:
            library = ctypes.CDLL(path)
            library.openblas_get_corename.restype = ctypes.c_char_p
            library.openblas_get_num_threads.restype = ctypes.c_int
        except (OSError, AttributeError):
            continue
        info.update(library=os.path.realpath(path), openblas=True,
                    core=library.openblas_get_corename().decode(),
                    threads=library.openblas_get_num_threads())
        break
    return info


def set_blas_threads(count):
    """OpenBLAS has its own thread pool, which torch.set_num_threads() does
    not reach in Debian's build; OPENBLAS_NUM_THREADS in the environment is
    read at load time, this is for a library that is loaded already."""
    info = loaded_blas()
    if info and info["openblas"]:
        ctypes.CDLL(info["library"]).openblas_set_num_threads(int(count))
