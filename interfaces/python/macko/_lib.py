"""Finding libmacko, the ctypes prototypes of include/macko.h, and MackoError."""

import ctypes
import ctypes.util
import os
import sys
import threading
from ctypes import POINTER, c_char_p, c_double, c_int, c_int64, c_size_t, c_void_p
from pathlib import Path

__all__ = ["MackoError", "lib", "library_path", "call", "has_symbol", "status_name", "status_string"]

_P = POINTER
_STATUS = c_int

# name -> (restype, argtypes), in the order of macko.h. Enumerations are C ints; data and device pointers c_void_p.
_PROTOTYPES = {
    "macko_get_version": (_STATUS, [_P(c_int), _P(c_int), _P(c_int)]),
    "macko_get_status_name": (c_char_p, [c_int]),
    "macko_get_status_string": (c_char_p, [c_int]),
    "macko_get_last_error_position": (c_int, []),
    "macko_get_last_error_message": (c_char_p, []),
    "macko_create": (_STATUS, [_P(c_void_p)]),
    "macko_destroy": (_STATUS, [c_void_p]),
    "macko_set_stream": (_STATUS, [c_void_p, c_void_p]),
    "macko_get_stream": (_STATUS, [c_void_p, _P(c_void_p)]),
    "macko_set_pointer_mode": (_STATUS, [c_void_p, c_int]),
    "macko_get_pointer_mode": (_STATUS, [c_void_p, _P(c_int)]),
    "macko_set_workspace": (_STATUS, [c_void_p, c_void_p, c_size_t]),
    "macko_mat_create_dense_host": (_STATUS, [_P(c_void_p), c_int64, c_int64, c_int, c_void_p, c_int64, c_int]),
    "macko_mat_create_csr_host": (_STATUS, [_P(c_void_p), c_int64, c_int64, c_int64, c_void_p, c_void_p, c_void_p,
                                            c_int, c_int, c_int]),
    "macko_mat_create_macko_host": (_STATUS, [_P(c_void_p), c_int64, c_int64, c_int, c_int64, c_void_p, c_void_p,
                                              c_void_p]),
    "macko_mat_destroy": (_STATUS, [c_void_p]),
    "macko_mat_get_macko_host": (_STATUS, [c_void_p, _P(c_void_p), _P(c_void_p), _P(c_void_p), _P(c_int),
                                           _P(c_int64), _P(c_int64)]),
    "macko_mat_get_info": (_STATUS, [c_void_p, _P(c_int64), _P(c_int64), _P(c_int64), _P(c_int)]),
    "macko_mat_get_storage": (_STATUS, [c_void_p, _P(c_int64), _P(c_int64), _P(c_int64), _P(c_double)]),
    "macko_mat_export_csr_host": (_STATUS, [c_void_p, c_void_p, c_void_p, c_void_p, c_int, c_int]),
    "macko_mat_export_dense_host": (_STATUS, [c_void_p, c_void_p, c_int64, c_int]),
    "macko_mat_serialized_size": (_STATUS, [c_void_p, _P(c_int64)]),
    "macko_mat_serialize": (_STATUS, [c_void_p, c_void_p, c_int64]),
    "macko_mat_deserialize": (_STATUS, [_P(c_void_p), c_void_p, c_int64]),
    "macko_mat_save": (_STATUS, [c_void_p, c_char_p]),
    "macko_mat_load": (_STATUS, [_P(c_void_p), c_char_p]),
    "macko_mat_upload": (_STATUS, [c_void_p, c_void_p]),
    "macko_mat_set_layout": (_STATUS, [c_void_p, c_int]),
    "macko_mat_get_layout": (_STATUS, [c_void_p, _P(c_int)]),
    "macko_mat_download": (_STATUS, [c_void_p, c_void_p]),
    "macko_mat_release_host": (_STATUS, [c_void_p]),
    "macko_mat_create_dense_device": (_STATUS, [c_void_p, _P(c_void_p), c_int64, c_int64, c_int, c_void_p, c_int64,
                                                c_int]),
    "macko_mat_create_csr_device": (_STATUS, [c_void_p, _P(c_void_p), c_int64, c_int64, c_int64, c_void_p, c_void_p,
                                              c_void_p, c_int, c_int, c_int]),
    "macko_analysis": (_STATUS, [c_void_p, c_int, c_void_p]),
    "macko_Hspmv": (_STATUS, [c_void_p, c_int, c_void_p, c_void_p, c_void_p, c_int64, c_void_p, c_void_p, c_int64]),
    "macko_Sspmv": (_STATUS, [c_void_p, c_int, c_void_p, c_void_p, c_void_p, c_int64, c_void_p, c_void_p, c_int64]),
    "macko_Hspmm": (_STATUS, [c_void_p, c_int, c_int64, c_void_p, c_void_p, c_void_p, c_int64, c_void_p, c_void_p,
                              c_int64]),
    "macko_Sspmm": (_STATUS, [c_void_p, c_int, c_int64, c_void_p, c_void_p, c_void_p, c_int64, c_void_p, c_void_p,
                              c_int64]),
    "macko_Hspmv_strided_batched": (_STATUS, [c_void_p, c_int, c_void_p, c_void_p, c_void_p, c_int64, c_int64,
                                              c_void_p, c_void_p, c_int64, c_int64, c_int64]),
    "macko_Sspmv_strided_batched": (_STATUS, [c_void_p, c_int, c_void_p, c_void_p, c_void_p, c_int64, c_int64,
                                              c_void_p, c_void_p, c_int64, c_int64, c_int64]),
    "macko_Dspmv": (_STATUS, [c_void_p, c_int, c_void_p, c_void_p, c_void_p, c_int64, c_void_p, c_void_p, c_int64]),
    "macko_Dspmm": (_STATUS, [c_void_p, c_int, c_int64, c_void_p, c_void_p, c_void_p, c_int64, c_void_p, c_void_p,
                              c_int64]),
    "macko_Dspmv_strided_batched": (_STATUS, [c_void_p, c_int, c_void_p, c_void_p, c_void_p, c_int64, c_int64,
                                              c_void_p, c_void_p, c_int64, c_int64, c_int64]),
    "macko_spmv_ex": (_STATUS, [c_void_p, c_int, c_void_p, c_void_p, c_void_p, c_int, c_int64, c_void_p, c_void_p,
                                c_int, c_int64, c_int]),
    "macko_spmm_ex": (_STATUS, [c_void_p, c_int, c_int64, c_void_p, c_void_p, c_void_p, c_int, c_int64, c_void_p,
                                c_void_p, c_int, c_int64, c_int]),
    "macko_mat_get_kind": (_STATUS, [c_void_p, _P(c_int)]),
    "macko_mat_create_quant_dense_host": (_STATUS, [_P(c_void_p), c_int64, c_int64, c_int, c_void_p, c_int64, c_int,
                                                    c_int, c_int, c_double]),
    "macko_mat_create_quant_host": (_STATUS, [_P(c_void_p), c_int64, c_int64, c_int, c_void_p, c_int64, c_void_p,
                                              c_void_p]),
    "macko_mat_get_quant_host": (_STATUS, [c_void_p, _P(c_int), _P(c_void_p), _P(c_int64), _P(c_int64),
                                           _P(c_void_p), _P(c_void_p)]),
    "macko_mat_create_nm_dense_host": (_STATUS, [_P(c_void_p), c_int64, c_int64, c_int, c_void_p, c_int64, c_int,
                                                 c_int, c_int, c_int]),
    "macko_mat_create_nm_dense_device": (_STATUS, [c_void_p, _P(c_void_p), c_int64, c_int64, c_int, c_void_p, c_int64,
                                                   c_int, c_int, c_int, c_int]),
    "macko_mat_create_nm_host": (_STATUS, [_P(c_void_p), c_int64, c_int64, c_int, c_int, c_int, c_int, c_void_p,
                                           c_void_p]),
    "macko_mat_get_nm_host": (_STATUS, [c_void_p, _P(c_int), _P(c_int), _P(c_int), _P(c_void_p), _P(c_void_p)]),
}


class MackoError(Exception):
    """A macko routine returned a status other than MACKO_STATUS_SUCCESS.

    Attributes: ``status`` (the number), ``status_name`` ("MACKO_STATUS_INVALID_VALUE"), ``position`` (1-based
    position of the first bad argument in the C signature, 0 when no single argument was at fault), ``message``
    (the library's message, naming the routine and the argument) and ``routine`` (the C routine called).
    """

    def __init__(self, status, status_name, position, message, routine=None):
        self.status = int(status)
        self.status_name = status_name
        self.position = int(position)
        self.message = message
        self.routine = routine
        text = message or (routine or "macko") + ": " + status_string(self.status)
        super().__init__("%s (%d): %s" % (status_name, self.status, text))


def _candidates():
    """Where libmacko may be, in the order tried (MACKO_LIBRARY is handled by _load)."""
    names = ("libmacko.so", "libmacko.so.0", "libmacko.dylib", "macko.dll")
    here = Path(__file__).resolve().parent
    # 1. inside the package: the wheel built by `pip install interfaces/python` ships macko/libmacko.so
    for d in (here, here / "lib"):
        for n in names:
            yield d / n
    # 2. the install prefixes of this Python and the usual system ones
    prefixes = []
    for p in (sys.prefix, sys.base_prefix, os.environ.get("CONDA_PREFIX"), "/usr/local", "/usr"):
        if p and p not in prefixes:
            prefixes.append(p)
    for p in prefixes:
        for sub in ("lib", "lib64", "lib/x86_64-linux-gnu", "lib/aarch64-linux-gnu"):
            for n in names:
                yield Path(p) / sub / n
    # 3. the dynamic loader's search path (ldconfig)
    found = ctypes.util.find_library("macko")
    if found:
        yield found
    # 4. a build tree of the source checkout this package lives in (interfaces/python/macko -> repo root); an
    #    installed package is not in a checkout
    if here.parent.name == "python" and here.parents[1].name == "interfaces":
        root = here.parents[2]
        builds = sorted(root.glob("build*/libmacko.so"), key=lambda q: q.stat().st_mtime, reverse=True)
        for b in builds:
            yield b


_lock = threading.Lock()
_state = {"lib": None, "path": None}


def _load():
    env = os.environ.get("MACKO_LIBRARY")
    if env:
        # An explicit choice is never second-guessed: failing to load it is an error.
        try:
            return ctypes.CDLL(env), env
        except OSError as e:
            raise OSError("MACKO_LIBRARY=%s cannot be loaded: %s" % (env, e)) from e
    tried = []
    for cand in _candidates():
        cand = str(cand)
        if os.sep in cand and not os.path.exists(cand):
            continue
        try:
            return ctypes.CDLL(cand), cand
        except OSError as e:
            tried.append("%s (%s)" % (cand, e))
    raise OSError("libmacko not found: install the package with `pip install interfaces/python` (the wheel "
                  "contains libmacko.so), set MACKO_LIBRARY to the path of libmacko.so, install macko "
                  "(cmake --install), or build it in <repo>/build. Tried: " + ("; ".join(tried) or "nothing found"))


def lib():
    """The loaded libmacko (a ctypes.CDLL), loading it on first use."""
    if _state["lib"] is None:
        with _lock:
            if _state["lib"] is None:
                handle, path = _load()
                for name, (restype, argtypes) in _PROTOTYPES.items():
                    fn = getattr(handle, name, None)
                    if fn is not None:
                        fn.restype = restype
                        fn.argtypes = argtypes
                _state["path"] = path
                _state["lib"] = handle
    return _state["lib"]


def library_path():
    """The path (or name) libmacko was loaded from."""
    lib()
    return _state["path"]


def has_symbol(name):
    """Whether the loaded library exports `name` (newer routines may be missing from an older libmacko)."""
    return getattr(lib(), name, None) is not None


def status_name(status):
    return lib().macko_get_status_name(int(status)).decode()


def status_string(status):
    return lib().macko_get_status_string(int(status)).decode()


def last_error():
    """(position, message) of this thread's last failed call."""
    L = lib()
    return L.macko_get_last_error_position(), L.macko_get_last_error_message().decode(errors="replace")


def call(name, *args):
    """Calls macko routine `name`; raises MackoError unless it returns MACKO_STATUS_SUCCESS."""
    fn = getattr(lib(), name, None)
    if fn is None:
        raise NotImplementedError("%s is not in %s (an older libmacko?)" % (name, library_path()))
    for a in args:
        if getattr(a, "closed", False) is True:  # a closed Handle or Matrix
            raise ValueError("%s: the %s is closed" % (name, type(a).__name__))
    st = fn(*args)
    if st != 0:
        pos, msg = last_error()
        raise MackoError(st, status_name(st), pos, msg, name)
    return st
