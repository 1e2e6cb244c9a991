"""Dataset files: the shipped data, verification on first use, download limits and offline install.

Complements tests/test_datasets.py (registry, lookup order, fetch): here the manifest against the
shipped folder, the verified marks, a wrong file refused with the fix, the registered-size limit
and the overall deadline of a download, ``.part`` cleanup on every exit path, and ``fetch``
finding copies that are already present.
"""

from __future__ import annotations

import gzip
import hashlib
import http.server
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from ldpgraph import datasets
from ldpgraph.datasets import (
    ChecksumError,
    DatasetInfo,
    DownloadError,
    bundled_data_dir,
    dataset_info,
    fetch,
    load_dataset,
    locate_dataset,
    parse_fingerprint,
)
from ldpgraph.datasets import download as download_mod
from ldpgraph.datasets import verify as verify_mod

REPO = Path(__file__).resolve().parent.parent
_SHARED = os.environ.get("LDPGRAPH_DATA", "")  # read before the fixture below removes it


def _sha(b: bytes) -> str:
    return hashlib.sha256(b).hexdigest()


@pytest.fixture(autouse=True)
def _isolated(tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    monkeypatch.setenv("LDPGRAPH_CACHE", str(cache))
    monkeypatch.delenv("LDPGRAPH_DATA", raising=False)
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    for var in ("http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setattr(verify_mod, "_SESSION_MARKS", {})
    return cache


CONTENT = "".join(f"{(5 * i) % 11}\n" for i in range(1, 300)).encode()


def _read(path: Path, info: DatasetInfo) -> np.ndarray:
    with datasets._open_binary(path) as fh:
        return parse_fingerprint(fh.read().decode().splitlines())


@pytest.fixture
def tiny(monkeypatch):
    gz = gzip.compress(CONTENT, compresslevel=9, mtime=0)
    info = DatasetInfo(
        name="tiny2", kind="histogram", filename="tiny2.txt.gz", source_page="http://example.invalid/",
        url=None, sha256_gz=_sha(gz), size_gz=len(gz), sha256_raw=_sha(CONTENT), size_raw=len(CONTENT),
        stats={}, description="test", citation="", license="", parser=_read,
    )
    monkeypatch.setitem(datasets._REGISTRY, info.name, info)
    return info


# ------------------------------------------------------------------ the shipped folder


def test_manifest_is_the_registry_and_the_shipped_file_matches_it():
    folder = bundled_data_dir()
    assert folder is not None and (folder / "manifest.json").is_file()
    doc = json.loads((folder / "manifest.json").read_text())
    assert [d["name"] for d in doc["datasets"]] == datasets.list_datasets()
    for d in doc["datasets"]:
        info = dataset_info(d["name"])
        assert (info.sha256_gz, info.size_gz, info.sha256_raw, info.size_raw) == (
            d["sha256_gz"], d["size_gz"], d["sha256_raw"], d["size_raw"])
        assert info.citation and info.license and info.source_page.startswith("https://")
    shipped = [d["name"] for d in doc["datasets"] if d.get("bundled")]
    assert shipped == ["facebook"]
    blob = (folder / "facebook_combined.txt.gz").read_bytes()
    info = dataset_info("facebook")
    assert (len(blob), _sha(blob)) == (info.size_gz, info.sha256_gz)
    raw = gzip.decompress(blob)
    assert (len(raw), _sha(raw)) == (info.size_raw, info.sha256_raw)
    # independent count of the edge lines and node ids (SOURCES.md: 88,234 edges, ids 0..4038)
    pairs = np.array(raw.split(), dtype=np.int64).reshape(-1, 2)
    assert len(pairs) == 88_234 and len(np.unique(pairs)) == 4_039
    sources = (folder / "SOURCES.md").read_text()
    assert info.sha256_gz in sources and info.sha256_raw in sources and "McAuley" in sources


def test_facebook_is_found_and_loaded_without_any_data_folder(_isolated):
    assert locate_dataset("facebook") == bundled_data_dir() / "facebook_combined.txt.gz"
    g = load_dataset("facebook")
    assert (g.n_nodes, g.n_edges) == (4_039, 88_234)
    assert fetch("facebook", progress=False) == bundled_data_dir() / "facebook_combined.txt.gz"
    assert not (_isolated / "facebook_combined.txt.gz").exists()  # nothing downloaded


def test_setup_lists_every_datasets_subfolder_as_package_data(tmp_path):
    """The packaging includes everything under datasets/ (subfolders too)."""
    text = (REPO / "setup.py").read_text()
    assert '"ldpgraph._data"' in text and "rglob" in text
    pyproject = (REPO / "pyproject.toml").read_text()
    assert '"ldpgraph._data" = "datasets"' in pyproject and '"ldpgraph._data" = ["*", "**/*"]' in pyproject


# ------------------------------------------------------------------ verification on first use


def test_first_use_verifies_and_marks_later_uses_skip_the_hash(tmp_path, monkeypatch, tiny, _isolated):
    data = tmp_path / "data"
    data.mkdir()
    (data / tiny.filename).write_bytes(gzip.compress(CONTENT, mtime=0))
    monkeypatch.setenv("LDPGRAPH_DATA", str(data))
    calls = []
    real = datasets.lookup._check_content
    monkeypatch.setattr(datasets.lookup, "_check_content", lambda p, i: (calls.append(p), real(p, i)))
    assert load_dataset("tiny2").tolist() == [int(x) for x in CONTENT.split()]
    assert load_dataset("tiny2").size == 299
    assert calls == [data / tiny.filename]  # hashed once
    marks = json.loads((_isolated / "verified.json").read_text())
    assert marks[str((data / tiny.filename).resolve())]["sha256_raw"] == tiny.sha256_raw
    # a new process (no in-memory mark) trusts the mark on disk
    monkeypatch.setattr(verify_mod, "_SESSION_MARKS", {})
    load_dataset("tiny2")
    assert len(calls) == 1
    # the file changes: verified again, and refused
    time.sleep(0.01)
    (data / tiny.filename).write_bytes(gzip.compress(CONTENT + b"1\n", mtime=0))
    with pytest.raises(ChecksumError) as ei:
        load_dataset("tiny2")
    msg = str(ei.value)
    assert len(calls) == 2
    assert "refusing" in msg and "checksum mismatch" in msg and "Fix:" in msg and "LDPGRAPH_DATA" in msg


def test_wrong_cached_file_is_refused_with_the_fetch_fix(tiny, _isolated):
    _isolated.mkdir()
    (_isolated / tiny.filename).write_bytes(gzip.compress(b"1\n2\n"))
    with pytest.raises(ChecksumError, match=r"Fix: run `ldpgraph datasets fetch tiny2 --force`.*--url FILE"):
        load_dataset("tiny2")


def test_registered_counts_are_checked_after_the_hash(monkeypatch, tmp_path, _isolated):
    """Content matching the digests but parsing to other counts (a parser change) is refused."""
    info = dataset_info("exac-sfs")
    path = Path(_SHARED.split(os.pathsep)[0] or "/nonexistent") / info.filename
    if not path.is_file():
        pytest.skip("exac-sfs: set LDPGRAPH_DATA to the folder holding the real datasets")
    monkeypatch.setenv("LDPGRAPH_DATA", str(path.parent))
    assert load_dataset("exac-sfs").size == 1200
    monkeypatch.setattr(verify_mod, "_SESSION_MARKS", {})
    (_isolated / "verified.json").unlink()
    bad = DatasetInfo(**{**info.__dict__, "stats": {**info.stats, "variants": 1}})
    monkeypatch.setitem(datasets._REGISTRY, "exac-sfs", bad)
    with pytest.raises(ChecksumError, match=r"parses to variants 7,302,295 \(registered 1\)"):
        load_dataset("exac-sfs")


def test_decompression_is_stopped_at_the_registered_size(tmp_path, tiny):
    bomb = tmp_path / "bomb.gz"
    bomb.write_bytes(gzip.compress(b"0\n" * 5_000_000))  # 10 MB inflated, ~10 KB on disk
    with pytest.raises(ChecksumError, match=f"more than {tiny.size_raw:,} bytes"):
        load_dataset("tiny2", path=bomb, verify=True)


# ------------------------------------------------------------------ downloads


class _Server:
    def __init__(self) -> None:
        self.routes: dict[str, tuple[bytes, str]] = {}
        self.requests: list[str] = []
        server = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_GET(self):
                server.requests.append(self.path)
                body, mode = server.routes[self.path]
                self.send_response(200)
                if mode == "biglength":
                    self.send_header("Content-Length", str(10**9))
                self.send_header("Connection", "close")
                self.end_headers()
                try:
                    if mode == "drip":  # one byte every 0.1 s, forever-ish
                        for b in body:
                            self.wfile.write(bytes([b]))
                            self.wfile.flush()
                            time.sleep(0.1)
                    elif mode == "endless":
                        for _ in range(10_000):
                            self.wfile.write(b"0\n" * 4096)
                    else:
                        self.wfile.write(body)
                except (BrokenPipeError, ConnectionResetError):
                    pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        threading.Thread(target=self.httpd.serve_forever, args=(0.02,), daemon=True).start()

    def serve(self, path: str, body: bytes, mode: str = "ok") -> str:
        self.routes[path] = (body, mode)
        return f"http://127.0.0.1:{self.httpd.server_address[1]}{path}"


@pytest.fixture
def server():
    s = _Server()
    yield s
    s.httpd.shutdown()
    s.httpd.server_close()


def _parts(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir()) if folder.exists() else []


def test_download_stops_at_the_registered_size(server, tiny, _isolated):
    with pytest.raises(DownloadError, match="more than the registered size allows; stopped") as ei:
        fetch("tiny2", url=server.serve("/endless", b"", "endless"), progress=False, timeout=30)
    assert "Nothing was written" in str(ei.value)
    assert _parts(_isolated) == []
    with pytest.raises(DownloadError, match="announces 1,000,000,000 bytes"):
        fetch("tiny2", url=server.serve("/big", b"", "biglength"), progress=False)
    assert _parts(_isolated) == []


def test_overall_deadline(server, tiny, _isolated):
    """Each byte arrives well within the socket timeout; the overall deadline still stops it."""
    url = server.serve("/drip", gzip.compress(CONTENT), "drip")
    t0 = time.perf_counter()
    with pytest.raises(DownloadError, match="overall deadline") as ei:
        fetch("tiny2", url=url, progress=False, timeout=0.6)
    assert time.perf_counter() - t0 < 2.5
    assert "--url FILE" in str(ei.value)  # how to install it by hand
    assert _parts(_isolated) == []


def test_part_file_removed_on_interrupt_and_stale_parts_cleaned(monkeypatch, tmp_path, tiny, _isolated):
    src = tmp_path / "src.gz"
    src.write_bytes(gzip.compress(CONTENT, mtime=0))

    def interrupted(url, out, **kw):
        out.write(b"partial")
        raise KeyboardInterrupt

    monkeypatch.setattr(download_mod, "_download_to", interrupted)
    with pytest.raises(KeyboardInterrupt):
        fetch("tiny2", url=src, progress=False)
    assert _parts(_isolated) == []
    monkeypatch.undo()
    monkeypatch.setitem(datasets._REGISTRY, tiny.name, tiny)
    monkeypatch.setenv("LDPGRAPH_CACHE", str(_isolated))
    # a killed process left a .part (its pid is dead); a live process's .part is left alone
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True,
                          text=True, check=True).stdout.strip()
    stale = _isolated / f".{tiny.filename}.{dead}.abc.part"
    live = _isolated / f".{tiny.filename}.{os.getppid()}.def.part"
    stale.write_bytes(b"x")
    live.write_bytes(b"x")
    path = fetch("tiny2", url=src, progress=False)
    assert not stale.exists() and live.exists()
    assert _parts(_isolated) == sorted([live.name, tiny.filename])
    assert path.read_bytes() == src.read_bytes()


def test_fetch_finds_a_copy_in_ldpgraph_data(server, tmp_path, monkeypatch, tiny, _isolated):
    data = tmp_path / "data"
    data.mkdir()
    (data / tiny.filename).write_bytes(gzip.compress(CONTENT, mtime=0))
    monkeypatch.setenv("LDPGRAPH_DATA", str(data))
    assert fetch("tiny2", progress=False) == data / tiny.filename  # no URL needed: found
    assert _parts(_isolated) == []
    # a wrong copy there is not taken
    (data / tiny.filename).write_bytes(gzip.compress(b"7\n"))
    with pytest.raises(DownloadError, match="no download URL"):
        fetch("tiny2", progress=False)


def test_offline_install_from_a_file(tmp_path, tiny, _isolated):
    src = tmp_path / "copy.txt"
    src.write_bytes(CONTENT)
    path = fetch("tiny2", url=str(src), progress=False)
    assert path == _isolated / tiny.filename and gzip.decompress(path.read_bytes()) == CONTENT
