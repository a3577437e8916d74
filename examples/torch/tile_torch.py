"""Tile kernels on PyTorch tensors, through DLPack, with no copy.

The kernels live in libtile_torch.so (tile_torch.cpp, built with tile-c++), whose C entry
points take DLPack tensors; this module calls them with ctypes, so one build serves any
Python. Tensors go over as torch.utils.dlpack capsules (views of their storage), CUDA
kernels run on the current torch stream of the tensors' device, and outputs are written
in place.

    import torch, tile_torch
    c = torch.empty(m, n)
    tile_torch.matmul(a, b, out=c)         # c = a @ b, in c's storage
    y = tile_torch.softmax(x)              # along the last dimension of a 2-D x

The library is $TILE_TORCH_LIBRARY, else libtile_torch.so next to this file.
"""

import ctypes
import os

import torch
import torch.utils.dlpack

__all__ = ["TileError", "matmul", "softmax", "library"]


class TileError(RuntimeError):
    """A failure in a tile kernel call; the message names the argument at fault."""


class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int), ("device_id", ctypes.c_int)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.c_void_p),
        ("device", _DLDevice),
        ("ndim", ctypes.c_int),
        ("dtype", _DLDataType),
        ("shape", ctypes.POINTER(ctypes.c_int64)),
        ("strides", ctypes.POINTER(ctypes.c_int64)),
        ("byte_offset", ctypes.c_uint64),
    ]


class _DLManagedTensor(ctypes.Structure):
    pass


_DLManagedTensor._fields_ = [
    ("dl_tensor", _DLTensor),
    ("manager_ctx", ctypes.c_void_p),
    ("deleter", ctypes.CFUNCTYPE(None, ctypes.POINTER(_DLManagedTensor))),
]

_capsule_get_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_capsule_get_pointer.restype = ctypes.c_void_p
_capsule_get_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
_capsule_new = ctypes.pythonapi.PyCapsule_New
_capsule_new.restype = ctypes.py_object
_capsule_new.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
_capsule_is_valid = ctypes.pythonapi.PyCapsule_IsValid
_capsule_is_valid.restype = ctypes.c_int
_capsule_is_valid.argtypes = [ctypes.py_object, ctypes.c_char_p]

_lib = None


def library():
    """The loaded libtile_torch.so (loaded on first use)."""
    global _lib
    if _lib is None:
        path = os.environ.get("TILE_TORCH_LIBRARY") or os.path.join(
            os.path.dirname(os.path.abspath(__file__)), "libtile_torch.so")
        lib = ctypes.CDLL(path)
        p, err = ctypes.c_void_p, ctypes.c_char_p
        size = ctypes.c_size_t
        lib.tile_torch_matmul.argtypes = [p, p, p, p, err, size]
        lib.tile_torch_softmax.argtypes = [p, p, p, err, size]
        lib.tile_torch_matmul_new.argtypes = [p, p, ctypes.POINTER(ctypes.c_void_p), p, err, size]
        for f in (lib.tile_torch_matmul, lib.tile_torch_softmax, lib.tile_torch_matmul_new):
            f.restype = ctypes.c_int
        _lib = lib
    return _lib


class _Borrowed:
    """A DLPack capsule of a tensor, held for the length of a call: the C side only borrows
    the DLManagedTensor; the capsule keeps its name 'dltensor', so torch calls the deleter
    when the capsule goes (which releases torch's reference to the storage)."""

    def __init__(self, t, name):
        if not isinstance(t, torch.Tensor):
            raise TypeError(f"{name}: expected a torch.Tensor, got {type(t).__name__}")
        try:
            self.capsule = torch.utils.dlpack.to_dlpack(t.detach())
        except RuntimeError as e:
            raise TileError(f"{name}: {e}") from e
        self.pointer = _capsule_get_pointer(self.capsule, b"dltensor")


def _stream(t):
    """The handle of the current torch stream of t's device (None on the CPU)."""
    if t.device.type == "cuda":
        return torch.cuda.current_stream(t.device).cuda_stream
    return None


def _call(entry, *args):
    err = ctypes.create_string_buffer(2048)
    if entry(*args, err, len(err)) != 0:
        raise TileError(err.value.decode("utf-8", "replace"))


def matmul(a, b, out=None):
    """a @ b for 2-D float32, float16 or bfloat16 tensors on one device. With `out`, the
    result is written into out's storage (no copy) and out is returned; else tile
    allocates the result and hands it to torch (tile::to_dlpack)."""
    ka, kb = _Borrowed(a, "a"), _Borrowed(b, "b")
    lib = library()
    if out is not None:
        kc = _Borrowed(out, "out")
        _call(lib.tile_torch_matmul, ka.pointer, kb.pointer, kc.pointer, _stream(a))
        return out
    result = ctypes.c_void_p()
    _call(lib.tile_torch_matmul_new, ka.pointer, kb.pointer, ctypes.byref(result), _stream(a))
    return _adopt(result.value)


def softmax(x, out=None):
    """softmax along the last dimension of a 2-D float32, float16 or bfloat16 tensor,
    written into `out` (no copy) or a new tensor like x."""
    if out is None:
        out = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    kx, ky = _Borrowed(x, "x"), _Borrowed(out, "out")
    _call(library().tile_torch_softmax, kx.pointer, ky.pointer, _stream(x))
    return out


def _adopt(pointer):
    """A torch tensor taking over the DLManagedTensor at `pointer` (made by tile::to_dlpack):
    torch calls its deleter when the tensor goes; if torch refuses it (the capsule keeps the
    name 'dltensor' that a consumer renames 'used_dltensor'), it is deleted here."""
    capsule = _capsule_new(pointer, b"dltensor", None)
    try:
        return torch.utils.dlpack.from_dlpack(capsule)
    except BaseException:
        managed = _DLManagedTensor.from_address(pointer)
        if _capsule_is_valid(capsule, b"dltensor") and managed.deleter:
            managed.deleter(ctypes.cast(pointer, ctypes.POINTER(_DLManagedTensor)))
        raise
