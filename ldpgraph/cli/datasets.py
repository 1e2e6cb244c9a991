"""``ldpgraph datasets list | fetch NAME | path NAME``: the registered datasets."""

from __future__ import annotations

import argparse
import json

from .common import _PROG, _notice, _table

# ------------------------------------------------------------------------------ commands


def _cmd_datasets_list(args: argparse.Namespace) -> int:
    from ..datasets import dataset_info, list_datasets, locate_dataset

    entries = []
    for name in list_datasets():
        info = dataset_info(name)
        found = locate_dataset(name)
        entries.append({
            "name": name,
            "kind": info.kind,
            "file": info.filename,
            "size": info.size_gz,
            "path": None if found is None else str(found),
            "bundled": info.bundled,
            "source": info.source_page,
        })
    if args.json:
        print(json.dumps(entries, indent=2))
        return 0
    if args.quiet:
        return 0
    rows = [("name", "kind", "file", "local copy")]
    for e in entries:
        where = e["path"] or f"not found ({_PROG} datasets fetch {e['name']})"
        rows.append((e["name"], e["kind"], e["file"], where))
    print(_table(rows, right=set()))
    return 0


def _cmd_datasets_fetch(args: argparse.Namespace) -> int:
    from ..datasets import default_cache_dir, fetch

    cache = default_cache_dir()
    target = cache / _dataset_filename(args.name)
    before = target.stat().st_mtime_ns if target.is_file() else None
    path = fetch(args.name, url=args.url, force=args.force, timeout=args.timeout,
                 progress=None if not (args.quiet or args.json) else False)
    downloaded = path == target and (before is None or target.stat().st_mtime_ns != before)
    if args.json:
        print(json.dumps({"name": args.name, "path": str(path), "downloaded": downloaded}, indent=2))
        return 0
    if not downloaded:
        where = "in the cache" if path.parent == cache else f"in {path.parent}"
        _notice(f"{args.name}: a verified copy is already present {where}; nothing was downloaded",
                args.quiet)
    if not args.quiet:
        print(path)
    return 0


def _dataset_filename(name: str) -> str:
    from ..datasets import dataset_info

    return dataset_info(name).filename


def _cmd_datasets_path(args: argparse.Namespace) -> int:
    from ..datasets import dataset_path

    path = dataset_path(args.name)
    if args.json:
        print(json.dumps({"name": args.name, "path": str(path)}, indent=2))
    elif not args.quiet:
        print(path)
    return 0
