"""Reading device arrays: torch CUDA tensors and anything exposing __cuda_array_interface__ (CuPy, Numba)."""

import collections

import numpy as np

from ._enums import bfloat16

DeviceArray = collections.namedtuple("DeviceArray", "ptr dtype shape strides readonly stream")
DeviceArray.__doc__ = """A device array seen through its interface: ptr (int), dtype (numpy), shape, strides in
elements, readonly, and stream: the CUDA stream (int, 0 = legacy default) its producer works on now, or None when the
producer does not say."""

_TORCH_DTYPES = None


def _is_torch_tensor(obj):
    mod = type(obj).__module__ or ""
    return mod.startswith("torch") and hasattr(obj, "data_ptr") and hasattr(obj, "is_cuda")


def _torch_dtype(t):
    global _TORCH_DTYPES
    if _TORCH_DTYPES is None:
        import torch

        # bfloat16 tensors are seen as macko.bfloat16 (uint16 bit patterns marked as bf16): numpy has no bf16
        _TORCH_DTYPES = {torch.float16: np.dtype(np.float16), torch.bfloat16: bfloat16,
                         torch.float32: np.dtype(np.float32),
                         torch.float64: np.dtype(np.float64), torch.int32: np.dtype(np.int32),
                         torch.int64: np.dtype(np.int64), torch.uint8: np.dtype(np.uint8),
                         torch.int16: np.dtype(np.int16), torch.int8: np.dtype(np.int8)}
    return _TORCH_DTYPES.get(t.dtype)


def device_array(obj, name):
    """The DeviceArray behind obj; TypeError/ValueError with `name` in the message when obj is not one."""
    if _is_torch_tensor(obj):
        if not obj.is_cuda:
            raise ValueError("%s must be a CUDA tensor, not one on %s" % (name, obj.device))
        dt = _torch_dtype(obj)
        if dt is None:
            raise ValueError("%s has unsupported dtype %s" % (name, obj.dtype))
        import torch

        stream = torch.cuda.current_stream(obj.device).cuda_stream
        return DeviceArray(int(obj.data_ptr()), dt, tuple(obj.shape), tuple(obj.stride()), False, int(stream))
    cai = getattr(obj, "__cuda_array_interface__", None)
    if cai is None:
        raise TypeError("%s must be a CUDA torch tensor or expose __cuda_array_interface__ (CuPy, Numba); "
                        "got %s (host arrays cannot be used by the compute routines)" % (name, type(obj).__name__))
    shape = tuple(int(s) for s in cai["shape"])
    dt = np.dtype(cai["typestr"])
    ptr, readonly = cai["data"]
    strides = cai.get("strides")
    if strides is None:
        elems = []
        acc = 1
        for s in reversed(shape):
            elems.append(acc)
            acc *= max(s, 1)
        elems = tuple(reversed(elems))
    else:
        elems = []
        for s, n in zip(strides, shape):
            if s % dt.itemsize and n > 1:
                raise ValueError("%s has a stride of %d bytes, not a multiple of its %d-byte elements"
                                 % (name, s, dt.itemsize))
            elems.append(s // dt.itemsize)
        elems = tuple(elems)
    stream = None
    if (type(obj).__module__ or "").startswith("cupy"):
        import cupy

        stream = int(cupy.cuda.get_current_stream().ptr)
    return DeviceArray(int(ptr or 0), dt, shape, elems, bool(readonly), stream)


def device_vector(obj, name, length, dtype, writable=False):
    """A 1-D device vector of `length` elements of `dtype` (None: any) -> (ptr, inc, stream); ValueError otherwise."""
    arr = device_array(obj, name)
    if len(arr.shape) != 1:
        raise ValueError("%s must be 1-D, got shape %s" % (name, arr.shape))
    if dtype is not None and arr.dtype != np.dtype(dtype):
        raise ValueError("%s must hold %s values to match the matrix, not %s"
                         % (name, np.dtype(dtype).name, arr.dtype.name))
    if arr.shape[0] != length:
        raise ValueError("%s has %d elements, the operation needs %d" % (name, arr.shape[0], length))
    inc = arr.strides[0] if arr.shape[0] > 1 else 1
    if inc < 1:
        raise ValueError("%s must have a positive stride, not %d" % (name, inc))
    if writable and arr.readonly:
        raise ValueError("%s is read-only" % name)
    return arr.ptr, inc, arr.stream


def _dense_block(shape, strides):
    """Whether elements of `shape` at `strides` (in elements) fill one block without gaps: C or Fortran order, or
    any other order of the dimensions."""
    expected = 1
    for stride, size in sorted((st, n) for st, n in zip(strides, shape) if n != 1):
        if size == 0:
            return True
        if stride != expected:
            return False
        expected *= size
    return True


def device_buffer(obj, name):
    """The contiguous device memory behind obj -> (ptr, nbytes): a CUDA torch tensor (any dtype), anything exposing
    __cuda_array_interface__ (CuPy, Numba) or a cupy.cuda.MemoryPointer-like object (an int .ptr into .mem, which has
    .ptr and .size: the bytes from ptr to the end of mem). TypeError/ValueError with `name` in the message otherwise."""
    if _is_torch_tensor(obj):
        if not obj.is_cuda:
            raise ValueError("%s must be a CUDA tensor, not one on %s" % (name, obj.device))
        if not _dense_block(tuple(obj.shape), tuple(obj.stride())):
            raise ValueError("%s must be contiguous" % name)
        return int(obj.data_ptr()), int(obj.numel()) * int(obj.element_size())
    if getattr(obj, "__cuda_array_interface__", None) is None:
        ptr, mem = getattr(obj, "ptr", None), getattr(obj, "mem", None)
        mem_ptr, mem_size = getattr(mem, "ptr", None), getattr(mem, "size", None)
        if all(isinstance(v, int) for v in (ptr, mem_ptr, mem_size)):
            if not mem_ptr <= ptr <= mem_ptr + mem_size:
                raise ValueError("%s points outside its memory" % name)
            return ptr, mem_ptr + mem_size - ptr
    arr = device_array(obj, name)
    if not _dense_block(arr.shape, arr.strides):
        raise ValueError("%s must be contiguous" % name)
    n = 1
    for s in arr.shape:
        n *= s
    return arr.ptr, n * arr.dtype.itemsize
