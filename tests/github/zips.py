"""Hostile artifact zips, as a runner someone else controls could upload them:
one entry with any name, mode and compression, and headers that lie."""

from __future__ import annotations

import io
import struct
import zipfile


def one_entry(
    name: str, data: bytes = b"x", mode: int | None = None, method: int = zipfile.ZIP_STORED
) -> bytes:
    """A zip of one entry `name` holding `data`, with Unix `mode` and `method`."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        info = zipfile.ZipInfo(name)
        info.compress_type = method
        if mode is not None:
            info.external_attr = mode << 16
        archive.writestr(info, data)
    return buffer.getvalue()


def lying(
    archive: bytes, *, size: int | None = None, crc: int | None = None, flags: int = 0
) -> bytes:
    """`archive` (one entry) with what its headers declare rewritten, in the local
    header and the central directory alike (PKWARE APPNOTE.TXT 4.3.7 and 4.3.12:
    flags at 6/8, CRC-32 at 14/16, uncompressed size at 22/24)."""
    data = bytearray(archive)
    end = data.rindex(b"PK\x05\x06")
    (central,) = struct.unpack_from("<I", data, end + 16)
    (local,) = struct.unpack_from("<I", data, central + 42)

    def put(fmt: str, at_local: int, at_central: int, value: int) -> None:
        struct.pack_into(fmt, data, local + at_local, value)
        struct.pack_into(fmt, data, central + at_central, value)

    if flags:
        put("<H", 6, 8, struct.unpack_from("<H", data, local + 6)[0] | flags)
    if crc is not None:
        put("<I", 14, 16, crc)
    if size is not None:
        put("<I", 22, 24, size)
    return bytes(data)


def bomb(size: int, declared: int, method: int = zipfile.ZIP_DEFLATED) -> bytes:
    """`size` bytes of `0` in a zip of kilobytes whose headers declare `declared`."""
    return lying(one_entry("verdict.json", b"0" * size, method=method), size=declared)
