"""Handle: binds the current CUDA device and carries the stream, the pointer mode and the workspace."""

import ctypes

from . import _lib
from ._device import device_buffer
from ._enums import PointerMode, Status

WORKSPACE_MIN_BYTES = 64 << 20
"""The smallest workspace Handle.set_workspace takes (MACKO_WORKSPACE_MIN_BYTES): the size of the handle's own."""


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
    _workspace = None  # the caller's workspace (set_workspace), kept alive while the handle may use it

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
        """macko_destroy; further use raises ValueError. Safe to call twice. A workspace of the caller's is let go
        after macko_destroy, which waits for the work that may still use it."""
        if self._ptr is not None:
            ptr, self._ptr = self._ptr, None
            try:
                _lib.call("macko_destroy", ctypes.c_void_p(ptr))
            finally:
                self._workspace = None

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

    def set_workspace(self, workspace):
        """Gives the handle a device workspace of the caller's (macko_set_workspace, as cublasSetWorkspace), or with
        None the handle's own again.

        `workspace` is a contiguous device buffer of the handle's device: a CUDA torch tensor (any dtype; e.g.
        ``torch.empty(256 << 20, dtype=torch.uint8, device="cuda")``), a CuPy array or anything exposing
        ``__cuda_array_interface__``, or a ``cupy.cuda.MemoryPointer``. Its size in bytes is the workspace's size:
        at least ``macko.WORKSPACE_MIN_BYTES`` (MACKO_WORKSPACE_MIN_BYTES, 64 MiB, the size of the handle's own), and
        its address 256-byte aligned (torch's and CuPy's allocators give that at the start of a buffer). A larger
        workspace lets the fp16/bf16 products of n <= 512 columns use taller dense panels, which is faster on large
        matrices; every other path uses as much of it as of the handle's own, so its choices and results do not
        change.

        The handle holds `workspace` (``h.workspace``) until another one is set, ``set_workspace(None)`` or ``close()``
        (which lets it go after macko_destroy). When it is replaced, the previous buffer is let go at once: work queued
        on the handle's stream that may still use it must be ordered before the buffer's next use (it is when the buffer
        was made on that stream, as torch's and CuPy's allocators reuse memory on its stream; otherwise synchronize
        first), and CUDA graphs captured with it keep using it: keep a reference of your own while they are replayed.
        Two handles whose calls may run at once must not share one. A buffer the library refuses raises MackoError
        (INVALID_VALUE: position 2 for an address that is not 256-byte aligned device memory of the handle's device,
        position 3 for a size below the minimum) and leaves the handle as it was; a host array raises TypeError, a
        non-contiguous or empty one ValueError."""
        if workspace is None:
            ptr, nbytes = 0, 0
        else:
            ptr, nbytes = device_buffer(workspace, "workspace")
            if not ptr:
                raise ValueError("workspace holds no device memory (an empty array?); pass None for the handle's own "
                                 "workspace")
        _lib.call("macko_set_workspace", self, ctypes.c_void_p(ptr), ctypes.c_size_t(nbytes))
        self._workspace = workspace

    @property
    def workspace(self):
        """The caller's workspace the handle holds (set_workspace), or None when it uses its own."""
        return self._workspace

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
