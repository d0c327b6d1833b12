"""Zip archives (browser uploads): safe extraction into memory, then format detection.

Guards: at most `Limits.max_members` files, each at most `max_file_bytes` and together at most
`max_total_bytes` *after decompression* (checked while reading, not trusted from the header),
and no absolute paths or ``..`` components. A single top-level folder is stripped.
"""

from __future__ import annotations

import io
import os
import re
import zipfile
import zlib
from pathlib import Path, PurePosixPath
from typing import Union

from xcore.data.io.files import FileSet, is_hidden, read_source
from xcore.data.io.limits import DEFAULT_LIMITS, Limits
from xcore.errors import DataError

ZipSource = Union[bytes, str, os.PathLike, tuple[str, bytes]]

_ZIP_ERRORS = (zipfile.BadZipFile, zipfile.LargeZipFile, NotImplementedError, RuntimeError, ValueError,
               EOFError, OSError, zlib.error, KeyError, IndexError, OverflowError)


def is_zip(data: bytes) -> bool:
    """Whether bytes start like a zip archive."""
    return data[:4] in (b"PK\x03\x04", b"PK\x05\x06")


def zip_bytes(source: ZipSource, limits: Limits | None) -> tuple[str, bytes]:
    """The (file name, bytes) of one zip given as bytes, a path or a (name, bytes) pair."""
    if isinstance(source, (bytes, bytearray, memoryview)):
        source = ("upload.zip", bytes(source))
    files = read_source(source, limits)
    if len(files) != 1:
        raise DataError("expected one zip file")
    (zip_name, data), = files.items()
    return zip_name, data


def read_zip(data: bytes, zip_name: str = "upload.zip", limits: Limits | None = None) -> FileSet:
    """Extract a zip into a file set ``{"<zip>/<member>": bytes}``, enforcing the limits."""
    limits = limits or DEFAULT_LIMITS
    try:
        zf = zipfile.ZipFile(io.BytesIO(data))
        infos = [i for i in zf.infolist() if not i.is_dir()]
    except _ZIP_ERRORS as e:
        raise DataError(f"not a readable zip file ({type(e).__name__}: {e})", file=zip_name) from None
    if len(infos) > limits.max_members:
        raise DataError(f"zip holds {len(infos):,} files, above the limit of {limits.max_members:,}",
                        file=zip_name)
    members: list[tuple[str, zipfile.ZipInfo]] = []
    for info in infos:
        rel = _safe_member_name(info.filename, zip_name)
        if not is_hidden(rel):
            members.append((rel, info))
    if not members:
        raise DataError("the zip file holds no data files", file=zip_name)
    prefix = _common_folder([rel for rel, _ in members])
    files: FileSet = {}
    total = 0
    for rel, info in members:
        shown = f"{zip_name}/{rel[len(prefix):]}"
        if info.file_size > limits.max_file_bytes:
            raise DataError(f"unpacks to {info.file_size:,} bytes, above the limit of "
                            f"{limits.max_file_bytes:,}", file=shown)
        try:
            with zf.open(info) as fh:
                content = fh.read(limits.max_file_bytes + 1)
        except _ZIP_ERRORS as e:
            raise DataError(f"cannot unpack ({type(e).__name__}: {e})", file=shown) from None
        if len(content) > limits.max_file_bytes:
            raise DataError(f"unpacks to more than {limits.max_file_bytes:,} bytes", file=shown)
        total += len(content)
        if total > limits.max_total_bytes:
            raise DataError(f"unpacks to more than {limits.max_total_bytes:,} bytes in total", file=zip_name)
        if shown in files:
            raise DataError("appears twice in the zip", file=shown)
        files[shown] = content
    return files


def _safe_member_name(name: str, zip_name: str) -> str:
    norm = name.replace("\\", "/")
    parts = PurePosixPath(norm).parts
    if (norm.startswith("/") or re.match(r"^[A-Za-z]:", norm) or ".." in parts or not parts
            or "\x00" in norm):
        raise DataError(f"unsafe path {name!r} in the zip (absolute or with '..')", file=zip_name)
    return "/".join(p for p in parts if p != ".")


def _common_folder(rels: list[str]) -> str:
    """``folder/`` when every member lies under the same top-level folder, else ``""``."""
    firsts = {r.split("/", 1)[0] for r in rels}
    if len(firsts) == 1 and all("/" in r for r in rels):
        return next(iter(firsts)) + "/"
    return ""


def write_zip(folder: str | os.PathLike, path: str | os.PathLike) -> Path:
    """Zip the files of a folder (e.g. one written by `write_psl_folder`) for download."""
    folder, path = Path(folder), Path(path)
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for f in sorted(folder.rglob("*")):
            if f.is_file():
                zf.write(f, f.relative_to(folder).as_posix())
    return path
