"""An independent, line-by-line reading of the edge-list grammar of ldpgraph.graph.edgelist.

Written from the module docstring (not from the implementation) and deliberately naive: every
line is split and checked in Python. ``reference_outcome(data)`` is ``("ok", pairs)`` with the
node ids (ints) or names (str) of each edge line, or ``("err", line_number)`` for the first
malformed line.
"""

from __future__ import annotations

import csv
import re

MAX_ID = 2**63 - 1
KNOWN = [("source", "target"), ("src", "dst"), ("from", "to"), ("u", "v"), ("node1", "node2"),
         ("node_1", "node_2"), ("fromnodeid", "tonodeid"), ("id1", "id2"),
         ("source_id", "target_id"), ("head", "tail")]
NUMBER_LIKE = r"[-+]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][-+]?[0-9]+)?"


def _split(body: bytes, delim: str | None) -> list[str]:
    text = body.decode("utf-8", "surrogateescape")
    if delim is None:
        return re.split(r"[ \t\r]+", text)
    if delim == ",":
        return [f.strip(" \t") for f in next(csv.reader([text.replace("\r", " ")]))]
    return [f.strip(" \r") for f in text.split("\t")]


def _is_int(t: str) -> bool:
    return re.fullmatch("[0-9]+", t) is not None and int(t) <= MAX_ID


def _valid_name(t: str) -> bool:
    return bool(t) and re.search("[\x00-\x1f\x7f\udc80-\udcff]", t) is None


def reference_outcome(data: bytes) -> tuple[str, object]:
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    edge_lines = []
    for number, line in enumerate(data.split(b"\n"), start=1):
        body = line.split(b"#")[0].strip(b" \t\r")
        if body:
            edge_lines.append((number, line, body))
    if not edge_lines:
        return ("ok", [])
    first = edge_lines[0][2]
    delim = None
    if b"," in first:
        delim = ","
    elif b"\t" in first:
        for f in first.decode("utf-8", "surrogateescape").split("\t"):
            words = f.split()
            if len(words) > 1 and not all(re.fullmatch(NUMBER_LIKE, w) for w in words):
                delim = "\t"
    f0 = _split(first, delim)
    low = [x.lower() for x in f0]
    known = [p for p in KNOWN if p[0] in low and p[1] in low]
    cols = (low.index(known[0][0]), low.index(known[0][1])) if known else (0, 1)
    header = bool(known)
    if not header and len(edge_lines) > 1:
        f1 = _split(edge_lines[1][2], delim)
        header = (len(f0) >= 2 and len(f1) >= 2
                  and not any(re.fullmatch(NUMBER_LIKE, f0[c]) for c in (0, 1))
                  and all(_is_int(f1[c]) for c in (0, 1)))
    if header:
        edge_lines = edge_lines[1:]
        if not edge_lines:
            return ("ok", [])
    number, line, body = edge_lines[0]
    fields = _split(body, delim)
    nf = len(fields)
    names = any(not re.fullmatch(NUMBER_LIKE, fields[c]) for c in cols if c < nf)
    if nf > 2 and delim is None and re.search(rb"\r[^\r\n]", line.rstrip(b"\r")):
        return ("err", number)
    out = []
    for number, _, body in edge_lines:
        fields = _split(body, delim)
        chosen = [fields[c] for c in cols if c < len(fields)]
        if not all(_valid_name(t) if names else _is_int(t) for t in chosen):
            return ("err", number)
        if len(fields) != nf or nf < 2 or max(cols) >= nf:
            return ("err", number)
        a, b = fields[cols[0]], fields[cols[1]]
        out.append((a, b) if names else (int(a), int(b)))
    return ("ok", out)


def outcome_of(parse, data: bytes, source: str = "<input>") -> tuple[str, object]:
    """The same outcome from ldpgraph's parser (``parse`` is ``parse_edge_pairs``)."""
    try:
        p = parse(data, source_name=source)
    except ValueError as exc:
        found = re.match(rf"{re.escape(source)}, line (\d+): ", str(exc))
        assert found, str(exc)
        return ("err", int(found.group(1)))
    if p.names is None:
        return ("ok", [tuple(r) for r in p.pairs.tolist()])
    return ("ok", [(p.names[a], p.names[b]) for a, b in p.pairs.tolist()])
