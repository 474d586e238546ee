"""libvkllm opened once, every function declared from _ffi, and the helpers the modules share
for calling it."""

import ctypes
import os
import subprocess

from . import _ffi

# The version these bindings were generated for: while the major is 0, a minor version may
# change the ABI (the SONAME carries both).
VERSION_MAJOR = _ffi.VKLLM_VERSION_MAJOR
VERSION_MINOR = _ffi.VKLLM_VERSION_MINOR
SONAME = f"libvkllm.so.{VERSION_MAJOR}.{VERSION_MINOR}"


def _pkg_config_libdir():
    try:
        out = subprocess.run(["pkg-config", "--variable=libdir", "vkllm"], capture_output=True,
                             text=True, check=False)
    except OSError:  # no pkg-config
        return None
    libdir = out.stdout.strip()
    return os.path.normpath(libdir) if out.returncode == 0 and libdir else None


def _open_library():
    # $VKLLM_LIBRARY, else the loader's own search (rpath, LD_LIBRARY_PATH, ldconfig's cache),
    # else where pkg-config says vkllm is installed, so a prefix on PKG_CONFIG_PATH suffices.
    tried = []
    explicit = os.environ.get("VKLLM_LIBRARY")
    if explicit:
        try:
            return ctypes.CDLL(explicit)
        except OSError as e:
            raise ImportError(f"VKLLM_LIBRARY={explicit} cannot be loaded: {e}") from None
    try:
        return ctypes.CDLL(SONAME)
    except OSError as e:
        tried.append(f"the loader's search path: {e}")
    libdir = _pkg_config_libdir()
    if libdir:
        path = os.path.join(libdir, SONAME)
        try:
            return ctypes.CDLL(path)
        except OSError as e:
            tried.append(f"pkg-config's libdir: {e}")
    else:
        tried.append("pkg-config: no vkllm.pc (or no pkg-config)")
    raise ImportError(
        f"libvkllm ({SONAME}) not found. Set VKLLM_LIBRARY to the library's path, add an "
        "installed prefix's lib/pkgconfig to PKG_CONFIG_PATH, or its lib directory to "
        "LD_LIBRARY_PATH (run ldconfig after installing to a system prefix). Tried "
        + "; ".join(tried))


def _load():
    lib = _open_library()
    # Checked before anything else is declared: another minor version may lack functions.
    lib.vkllm_version.restype = ctypes.c_uint32
    lib.vkllm_version.argtypes = []
    number = lib.vkllm_version()
    major, minor = number // 10000, number // 100 % 100
    if major != VERSION_MAJOR or (major == 0 and minor != VERSION_MINOR):
        raise ImportError(f"libvkllm version {major}.{minor}, these bindings need "
                          f"{VERSION_MAJOR}.{VERSION_MINOR}")
    return _ffi.declare(lib)


lib = _load()


def named(kind, value):
    """`value` as a member of the IntEnum `kind`, or the int itself when a newer library
    returns a value this module does not know."""
    try:
        return kind(value)
    except ValueError:
        return value


def text_field(field):
    """A read-only property giving a char-array field (the CField of a generated struct) as
    str."""
    return property(lambda self: field.__get__(self, type(self)).decode(errors="replace"))


def enum_field(field, kind):
    """A read-only property giving an enum field as a member of the IntEnum `kind`."""
    return property(lambda self: named(kind, field.__get__(self, type(self))))


def out_struct(cls):
    """An output struct with its struct_size set, for the library to fill."""
    s = cls()
    s.struct_size = ctypes.sizeof(cls)
    return s


def params(cls, init):
    """A params struct with the library's defaults. The *_init functions write the library's
    whole struct, which may be larger than these bindings' copy (a newer library): they write
    into a roomy buffer, and the struct keeps the fields it knows with its own struct_size,
    as an older caller's would (the library fills the rest with defaults)."""
    buf = ctypes.create_string_buffer(max(4096, ctypes.sizeof(cls)))
    init(ctypes.cast(buf, ctypes.POINTER(cls)))
    p = cls.from_buffer_copy(buf.raw[: ctypes.sizeof(cls)])
    p.struct_size = ctypes.sizeof(cls)
    return p


def int32s(values):
    return (ctypes.c_int32 * max(len(values), 1))(*values)


def uint32s(values):
    return (ctypes.c_uint32 * max(len(values), 1))(*values)


def encode(text):
    """str or None as the UTF-8 bytes (or NULL) a const char * takes."""
    return text.encode() if text is not None else None


def decode(data):
    return data.decode(errors="replace") if data is not None else None


def stop_strings(stop):
    """Stop strings (str or bytes) as the const char *const * array the library reads, and
    their count."""
    stops = [s.encode() if isinstance(s, str) else bytes(s) for s in stop]
    return (ctypes.c_char_p * max(len(stops), 1))(*stops), len(stops)


class Owned:
    """An object owning one library handle (`_handle`), destroyed once by its class's
    `_destroy` (the library's vkllm_*_destroy): by close(), at the end of a `with` block, or
    when it is collected."""

    _destroy = None

    def close(self):
        if getattr(self, "_handle", None):
            self._destroy(self._handle)
            self._handle = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        self.close()
