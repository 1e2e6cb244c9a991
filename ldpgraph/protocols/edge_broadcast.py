r"""The bytes of a broadcast noisy graph (the triangle protocols, ``arr-triangles``, the clustering and
4-cycle protocols): a protocol encodes and decodes them; :mod:`ldpgraph.run` writes, signs and reads
the files (:func:`ldpgraph.run.files.write_broadcast`, :mod:`ldpgraph.run.trianglefiles`).

The noisy lower adjacency bits, packed, after a JSON header::

    # ldpgraph-broadcast-edges 2
    # {"bound": 3, "epsilon": 0.5, "n_edges": 2, "n_nodes": 4, "protocol": "two-round-triangles-dlap", ...}
    <ceil(C(n, 2) / 8) bytes>

two comment lines (format tag and version; the header with ``run_id``), then the bits of the
pairs: pair (j, k), j < k, at bit :math:`\binom k2 + j` (the lower triangle row by row, most
significant bit first in each byte, :func:`~ldpgraph.protocols.randomized_response.pack_pairs`,
the layout of ``edge-orient-triangles``' file in ids rather than ranks), the padding bits 0.
On Facebook at ε = 1 that is 1.0 MB where the edge list of version 1 took 29 MB. Version 1,
still read, and written when shorter (a sparse noisy graph: :func:`edge_list_bytes`), has one
text line ``u v`` (``u > v``) per noisy edge in increasing (u, v) order
after the same two lines::

    # ldpgraph-broadcast-edges 1
    # {...}
    1 0
    3 2

Decoding checks the tag, the version, the protocol, the body (version 2: its exact length and
zero padding; version 1: every line two canonical integers, ``0 <= v < u < n``, increasing: no
duplicates), the count against ``n_edges`` and the run id against the SHA-256 of header and
edges (an edited or truncated file is refused), naming the source (the file) and line.

Examples
--------
>>> from ldpgraph.protocols.deploy_triangles import DLAP_PROTOCOL, TriangleBroadcast
>>> b = TriangleBroadcast.build(DLAP_PROTOCOL, 4, 0.5, 3, [0, 5])
>>> data = encode_edge_broadcast(b)
>>> back = decode_triangle_broadcast(data, "b.txt")
>>> back.index.tolist(), back.run_id == b.run_id, len(data) - len(head_lines(b, 2))
([0, 5], True, 1)
"""

from __future__ import annotations

import io
import json
from typing import Any

import numpy as np

from .deploy_triangles import (
    MAX_NODES,
    TriangleBroadcast,
    broadcast_run_id,
    triangle_protocols,
    triangle_wire,
)
from .randomized_response import pack_pairs, pair_from_index, pair_index, unpack_pairs
from .reports import broadcast_header

__all__ = [
    "BROADCAST_EDGES_FORMAT",
    "BROADCAST_EDGES_VERSION",
    "BROADCAST_EDGES_TEXT_VERSION",
    "encode_edge_broadcast",
    "decode_edge_broadcast",
    "decode_triangle_broadcast",
    "edge_list_bytes",
    "head_lines",
]

BROADCAST_EDGES_FORMAT = "ldpgraph-broadcast-edges"
#: the version written: the noisy bits packed
BROADCAST_EDGES_VERSION = 2
#: the text edge list of the first version (read; written when shorter, or on request)
BROADCAST_EDGES_TEXT_VERSION = 1


def encode_edge_broadcast(broadcast: TriangleBroadcast, *, version: int | None = None) -> bytes:
    r"""The bytes of ``broadcast`` (the noisy graph and its JSON header) in the format ``version``
    of the module docstring: 2 packed bits, 1 the text edge list; None (default) the smaller body,
    packed unless the edge list is shorter (:func:`edge_list_bytes` :math:`<\lceil\binom n2/8\rceil`:
    a sparse noisy graph, e.g. ``arr-triangles``' sampled one on a large graph at a large ε)."""
    if version not in (None, BROADCAST_EDGES_VERSION, BROADCAST_EDGES_TEXT_VERSION):
        raise ValueError(f"{BROADCAST_EDGES_FORMAT} versions are {BROADCAST_EDGES_TEXT_VERSION} (edge list) "
                         f"and {BROADCAST_EDGES_VERSION} (packed bits), got {version!r}")
    n = broadcast.n_nodes
    if version is None:
        body = (n * (n - 1) // 2 + 7) // 8  # an edge line has at least 4 bytes ('1 0' and its line end)
        packed = 4 * broadcast.index.size >= body or edge_list_bytes(broadcast.index) >= body
        version = BROADCAST_EDGES_VERSION if packed else BROADCAST_EDGES_TEXT_VERSION
    out = io.BytesIO()
    out.write(head_lines(broadcast, version))
    if version == BROADCAST_EDGES_VERSION:
        out.write(pack_pairs(broadcast.index, n * (n - 1) // 2).tobytes())
        return out.getvalue()
    import pyarrow as pa
    import pyarrow.csv as pcsv

    u, v = pair_from_index(broadcast.index)
    opts = pcsv.WriteOptions(include_header=False, delimiter=" ", quoting_style="none")
    if u.size:
        pcsv.write_csv(pa.table({"u": u, "v": v}), out, write_options=opts)
    return out.getvalue()


def edge_list_bytes(index: Any) -> int:
    """The bytes of the edge lines ``u v`` of the pairs ``index`` (version 1's body): per pair the
    decimal digits of u and v, a space and a line end.

    >>> edge_list_bytes([0, 5, 45])  # '1 0', '3 2', '10 0'
    13
    """
    u, v = pair_from_index(np.asarray(index, dtype=np.int64))
    powers = 10 ** np.arange(1, 19, dtype=np.int64)
    digits = np.searchsorted(powers, u, side="right") + np.searchsorted(powers, v, side="right") + 2
    return int(digits.sum() + 2 * u.size)


def head_lines(broadcast: TriangleBroadcast, version: int) -> bytes:
    """The two header lines of ``broadcast`` in format ``version``."""
    return (f"# {BROADCAST_EDGES_FORMAT} {version}\n# "
            + json.dumps(broadcast.header(), sort_keys=True) + "\n").encode()


def decode_triangle_broadcast(data: bytes, source: str = "broadcast") -> TriangleBroadcast:
    """Decode and fully check a broadcast noisy graph, either version (see the module docstring);
    errors name ``source`` (the file)."""
    header, index, run_id = decode_edge_broadcast(data, triangle_protocols(), source)
    bound = header.get("bound")
    if isinstance(bound, bool) or not isinstance(bound, int) or bound < 1:
        raise ValueError(f"{source} line 2: bound must be a non-negative integer, got {bound!r}")
    projection = header.get("projection", False)
    if not isinstance(projection, bool):
        raise ValueError(f"{source} line 2: projection must be true or false, got {projection!r}")
    low = triangle_wire(header["protocol"])[1].min_bound
    if bound < low:
        raise ValueError(f"{source} line 2: {header['protocol']} needs a degree bound >= {low}, got {bound}")
    return TriangleBroadcast(header["protocol"], header["n_nodes"], float(header["epsilon"]), bound, index,
                             run_id, projection)


def decode_edge_broadcast(data: bytes, versions: dict[str, int],
                          source: str = "broadcast") -> tuple[dict[str, Any], Any, int]:
    """``(header without run_id, sorted pair indices, run id)`` of a broadcast noisy graph (either
    version: packed bits or edge list) of one of the protocols ``versions`` (name -> version), after
    every check of the module docstring but those of the protocol's own header keys (the caller's)."""
    fh = io.BytesIO(data)
    tag = fh.readline().decode("utf-8", "replace").strip()
    head_bytes = fh.readline()
    start = fh.tell()
    head = head_bytes.decode("utf-8", "replace").strip()
    known = {f"# {BROADCAST_EDGES_FORMAT} {v}": v
             for v in (BROADCAST_EDGES_VERSION, BROADCAST_EDGES_TEXT_VERSION)}
    if tag not in known:
        raise ValueError(
            f"{source} line 1: not an {BROADCAST_EDGES_FORMAT} version {BROADCAST_EDGES_VERSION} (or "
            f"{BROADCAST_EDGES_TEXT_VERSION}) file (got {tag[:60]!r}, expected "
            f"'# {BROADCAST_EDGES_FORMAT} {BROADCAST_EDGES_VERSION}')"
        )
    if not head_bytes.endswith(b"\n"):
        raise ValueError(f"{source} line 2: truncated: the JSON header has no line end")
    header = broadcast_header(source, head)
    proto = header.get("protocol")
    ours = isinstance(proto, str) and proto in versions
    if not ours or header.get("protocol_version") != versions[proto]:
        raise ValueError(
            f"{source} line 2: protocol {str(proto)[:40]} version "
            f"{str(header.get('protocol_version'))[:40]}; "
            "this package reads " + ", ".join(f"{k} version {v}" for k, v in versions.items())
        )
    for key, hi in (("n_nodes", MAX_NODES), ("n_edges", MAX_NODES**2), ("run_id", 2**63 - 1)):
        val = header.get(key)
        if (
            isinstance(val, bool)
            or not isinstance(val, int)
            or not (1 if key == "n_nodes" else 0) <= val <= hi
        ):
            raise ValueError(f"{source} line 2: {key} must be a non-negative integer up to {hi}, got "
                             f"{str(val)[:40]}")
    eps = header.get("epsilon")
    if isinstance(eps, bool) or not isinstance(eps, (int, float)) or not 0 < eps < float("inf"):
        raise ValueError(f"{source} line 2: epsilon must be a number in (0, inf), got {eps!r}")
    if header.get("round") != 1:
        raise ValueError(
            f"{source} line 2: a broadcast after round {header.get('round')!r}; round 2 needs round 1's"
        )
    if known[tag] == BROADCAST_EDGES_VERSION:
        index = _decode_packed(data, header, start, source)
    else:
        index = _decode_edge_lines(data, header, start, source)
    if index.size != header["n_edges"]:
        raise ValueError(
            f"{source}: the header says {header['n_edges']} edges, the file holds {index.size} (truncated?)"
        )
    run_id = header.pop("run_id")
    if broadcast_run_id(header, index) != run_id:
        raise ValueError(f"{source}: the edges and header do not match the run id {run_id} (edited or "
                         "corrupt)")
    return header, index, run_id


def _decode_packed(data: bytes, header: dict[str, Any], start: int, source: str) -> Any:
    """The pair indices of a version-2 body (packed bits from byte ``start``): exactly
    ceil(C(n, 2)/8) bytes, the padding bits 0."""
    n = header["n_nodes"]
    n_pairs = n * (n - 1) // 2
    want = (n_pairs + 7) // 8
    body = np.frombuffer(data, dtype=np.uint8, count=min(want, len(data) - start), offset=start)
    extra = len(data) - start > want
    if body.size != want or extra:
        got = "more" if extra else f"{body.size:,}"
        raise ValueError(f"{source}: a packed body of {want:,} bytes expected for {n:,} nodes, got {got} "
                         "(truncated or edited: copy the whole broadcast again)")
    if n_pairs % 8 and body[-1] & (0xFF >> (n_pairs % 8)):
        raise ValueError(f"{source}: the padding bits after the last pair are not 0 (edited or corrupt)")
    return unpack_pairs(body, n_pairs)


def _decode_edge_lines(data: bytes, header: dict[str, Any], start: int, source: str) -> Any:
    """The pair indices of a version-1 body (text lines ``u v`` from byte ``start``), every line checked."""
    import pyarrow as pa
    import pyarrow.csv as pcsv

    n = header["n_nodes"]
    if data[-1:] != b"\n":  # cut mid-line
        raise ValueError(f"{source}: truncated: the file ends mid-line ({len(data):,} bytes, no final "
                         f"newline); the header announces {header['n_edges']:,} edges: copy the whole "
                         "broadcast again")
    _check_canonical_edges(data, start, source)
    try:
        table = pcsv.read_csv(
            pa.BufferReader(data[start:]),
            read_options=pcsv.ReadOptions(column_names=["u", "v"], block_size=1 << 20),
            parse_options=pcsv.ParseOptions(delimiter=" "),
            convert_options=pcsv.ConvertOptions(column_types={"u": pa.int64(), "v": pa.int64()}),
        ) if len(data) > start else None
    except pa.ArrowInvalid as exc:
        raise ValueError(f"{source}: edge lines must be two integers 'u v' (u > v): {exc}") from None
    rows = 0 if table is None else table.num_rows
    if rows and (table.column("u").null_count or table.column("v").null_count):
        raise ValueError(f"{source}: an edge line lacks a node id")
    u = table.column("u").to_numpy().astype(np.int64) if rows else np.zeros(0, dtype=np.int64)
    v = table.column("v").to_numpy().astype(np.int64) if rows else np.zeros(0, dtype=np.int64)
    bad = np.flatnonzero((v < 0) | (v >= u) | (u >= n))
    if bad.size:
        i = int(bad[0])
        raise ValueError(f"{source} line {i + 3}: edge '{u[i]} {v[i]}' must have 0 <= v < u < n_nodes = {n}")
    index = pair_index(u, v)
    bad = np.flatnonzero(index[1:] <= index[:-1])
    if bad.size:
        i = int(bad[0]) + 1
        raise ValueError(
            f"{source} line {i + 3}: edge '{u[i]} {v[i]}' repeats or is out of order "
            "(edges are distinct, in increasing (u, v) order)"
        )
    return index


def _check_canonical_edges(data: bytes, start: int, source: str) -> None:
    """ValueError (source and line) unless every edge line is two canonical decimal integers: only
    ASCII digits, a space and a line end (LF or CRLF), no sign, prefix or leading zero (pyarrow's
    integer reader, which parses the lines, would take ``0x1``, ``01`` or ``-0``)."""
    body = np.frombuffer(data, dtype=np.uint8, offset=start) if len(data) > start else np.zeros(0, np.uint8)
    digit = (body >= ord("0")) & (body <= ord("9"))
    newline = body == ord("\n")
    crlf = (body == ord("\r")) & np.r_[newline[1:], False]  # a CRLF line end (a file moved through Windows)
    sep = (body == ord(" ")) | newline | crlf
    bad = ~(digit | sep)
    first = np.r_[True, sep[:-1]] if body.size else np.zeros(0, dtype=bool)
    nxt_digit = np.r_[digit[1:], False] if body.size else np.zeros(0, dtype=bool)
    bad |= first & (body == ord("0")) & nxt_digit  # a leading zero
    at = np.flatnonzero(bad)
    if at.size:
        line = 3 + int(np.count_nonzero(body[: at[0]] == ord("\n")))
        raise ValueError(f"{source} line {line}: an edge line holds two canonical integers 'u v' (digits "
                         "only, no sign, prefix or leading zero)")
