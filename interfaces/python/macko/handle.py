"""Handle: binds the current CUDA device and carries the stream and the pointer mode."""

import ctypes

from . import _lib
from ._enums import PointerMode, Status


def _stream_pointer(stream):
    """None/0, an int cudaStream_t, a torch.cuda.Stream (.cuda_stream) or a CuPy stream (.ptr) -> int."""
    if stream is None:
        return 0
    for attr in ("cuda_stream", "ptr", "handle"):
        v = getattr(stream, attr, None)
        if isinstance(v, int):
            return v
    try:
        return int(stream)
    except (TypeError, ValueError):
        raise TypeError("stream must be None, an int cudaStream_t, a torch.cuda.Stream or a CuPy stream, not %s"
                        % type(stream).__name__) from None


class Handle:
    """A macko handle (macko_create / macko_destroy), usable as a context manager.

    Creating one needs a usable CUDA device: otherwise MackoError with status_name "MACKO_STATUS_NOT_INITIALIZED".
    A handle belongs to this process and its device and is used by one thread at a time: it cannot be pickled or
    copied (TypeError), like a lock or a CUDA stream; create another one where it is needed.
    """

    _ptr = None  # for an object whose __init__ failed: __del__ has nothing to destroy

    def __init__(self):
        ptr = ctypes.c_void_p()
        _lib.call("macko_create", ctypes.byref(ptr))
        self._ptr = ptr.value

    @property
    def _as_parameter_(self):
        if self._ptr is None:
            raise ValueError("the handle is closed")
        return ctypes.c_void_p(self._ptr)

    @property
    def closed(self):
        return self._ptr is None

    def close(self):
        """macko_destroy; further use raises ValueError. Safe to call twice."""
        if self._ptr is not None:
            ptr, self._ptr = self._ptr, None
            _lib.call("macko_destroy", ctypes.c_void_p(ptr))

    destroy = close

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:  # interpreter shutdown: the library may be gone already
            pass

    @property
    def stream(self):
        """The cudaStream_t (an int; 0 = the legacy default stream). Set it to an int, None, a torch.cuda.Stream
        or a CuPy stream."""
        s = ctypes.c_void_p()
        _lib.call("macko_get_stream", self, ctypes.byref(s))
        return s.value or 0

    @stream.setter
    def stream(self, stream):
        _lib.call("macko_set_stream", self, ctypes.c_void_p(_stream_pointer(stream)))

    @property
    def pointer_mode(self):
        """PointerMode.HOST (alpha/beta are Python numbers) or PointerMode.DEVICE (device scalars)."""
        m = ctypes.c_int()
        _lib.call("macko_get_pointer_mode", self, ctypes.byref(m))
        return PointerMode(m.value)

    @pointer_mode.setter
    def pointer_mode(self, mode):
        if isinstance(mode, str):
            mode = PointerMode[mode.upper()]
        _lib.call("macko_set_pointer_mode", self, int(mode))

    def __reduce_ex__(self, protocol):
        raise TypeError("cannot pickle 'macko.Handle' object: a handle holds CUDA resources of this process and "
                        "device; create a new macko.Handle() where it is needed (matrices pickle without theirs)")

    def __copy__(self):
        raise TypeError("cannot copy 'macko.Handle' object: share the handle itself (one thread at a time) or "
                        "create another macko.Handle()")

    def __deepcopy__(self, memo):
        raise TypeError("cannot deepcopy 'macko.Handle' object: share the handle itself (one thread at a time) or "
                        "create another macko.Handle()")

    def __repr__(self):
        return "<macko.Handle %s>" % ("closed" if self._ptr is None else hex(self._ptr))


def gpu_available():
    """True when macko_create succeeds (a usable CUDA device is present)."""
    ptr = ctypes.c_void_p()
    st = _lib.lib().macko_create(ctypes.byref(ptr))
    if st == Status.SUCCESS:
        _lib.lib().macko_destroy(ptr)
        return True
    return False
