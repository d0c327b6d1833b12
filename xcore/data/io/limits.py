"""Size limits that every loader enforces, so an upload cannot exhaust memory.

`DEFAULT_LIMITS` applies unless a loader gets ``limits=Limits(...)``. Raise them for big local
files; keep them for browser uploads.
"""

from __future__ import annotations

from dataclasses import dataclass

MB = 1024 * 1024


@dataclass(frozen=True)
class Limits:
    """Upper bounds on input size.

    `max_file_bytes` bounds one file (also one zip member after decompression),
    `max_total_bytes` all files of a folder or zip together, `max_members` the number of files
    in a folder or zip, `max_manifest_bytes` a manifest (YAML/JSON) file, and
    `max_predicates` the predicates of one dataset (table columns, relations, ...).
    """

    max_file_bytes: int = 50 * MB
    max_total_bytes: int = 200 * MB
    max_members: int = 2000
    max_manifest_bytes: int = 1 * MB
    max_predicates: int = 2000


DEFAULT_LIMITS = Limits()
"""The limits used when a loader is not given any."""
