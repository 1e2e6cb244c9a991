"""The documentation site's sources stay complete without building it (CI builds it, ``.ci/run``).

* every public subpackage and public top-level module has an API page (``docs/api/NAME.rst``)
  that documents it with ``automodule`` (whose members are its ``__all__``), listed in the API
  index, and a module named in a package's ``__all__`` is documented too;
* every markdown page of ``docs/`` is in the site's table of contents;
* ``docs/_incoming/`` (prose of other branches, folded in by hand) is outside the build;
* CI builds the site with warnings as errors;
* the build's docstring hook (``docs/conf.py``) escapes only the plain text's bars and underscores.
"""

from __future__ import annotations

import importlib
import importlib.util
import pkgutil
import re
import types
from pathlib import Path

import ldpgraph

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"


def _public_modules() -> list[str]:
    """``ldpgraph.X`` for each public subpackage and top-level module (no leading underscore)."""
    return [f"ldpgraph.{m.name}" for m in pkgutil.iter_modules(ldpgraph.__path__)
            if not m.name.startswith("_")]


def _documented() -> set[str]:
    text = "".join(p.read_text(encoding="utf-8") for p in (DOCS / "api").glob("*.rst"))
    return set(re.findall(r"^\.\. automodule:: (\S+)$", text, re.M))


def test_every_public_module_has_an_api_page_in_the_index():
    documented = _documented()
    index = (DOCS / "api" / "index.rst").read_text(encoding="utf-8")
    listed = set(re.findall(r"^   (\w+)$", index, re.M))
    for name in _public_modules():
        assert name in documented, f"{name} has no automodule in docs/api/"
        short = name.split(".", 1)[1]
        assert (DOCS / "api" / f"{short}.rst").is_file() and short in listed, f"docs/api/{short}.rst not in the index"


def test_modules_named_in_an_all_are_documented():
    documented = _documented()
    for name in _public_modules():
        module = importlib.import_module(name)
        assert hasattr(module, "__all__"), f"{name} has no __all__: the API page documents a module's __all__"
        for member in module.__all__:
            if isinstance(getattr(module, member), types.ModuleType):
                assert f"{name}.{member}" in documented, f"{name}.{member} (in {name}.__all__) is not documented"


def test_every_page_is_in_the_table_of_contents():
    index = (DOCS / "index.md").read_text(encoding="utf-8")
    entries = set(re.findall(r"^([\w/-]+)$", index, re.M))
    for page in DOCS.glob("*.md"):
        if page.stem != "index":
            assert page.stem in entries, f"docs/{page.name} is not in the toctree of docs/index.md"


def test_incoming_prose_is_outside_the_build():
    conf = (DOCS / "conf.py").read_text(encoding="utf-8")
    patterns = re.search(r"^exclude_patterns = \[(.*?)\]", conf, re.M | re.S).group(1)
    assert '"_incoming"' in patterns


def test_ci_builds_the_docs_with_warnings_as_errors():
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert re.search(r"^sphinx-build -W --keep-going .*-b html docs ", ci, re.M)
    assert '".[test,docs]"' in ci


def _conf():
    spec = importlib.util.spec_from_file_location("docs_conf", DOCS / "conf.py")
    conf = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(conf)
    return conf


def test_plain_text_bars_and_underscores_are_escaped_and_nothing_else():
    """The API pages read docstrings written for ``help()``: |x| and d_+ in plain text become
    literal characters, while literals, roles, doctests, literal blocks and directives keep theirs."""
    lines = [
        "Noise |eta| <= t, so |ln|t|| < eps; g - T = c (d_+² + d_-²) for d_max and f_.",
        "A literal ``|value| <= 2**53``, a role :math:`|x - x'|_1` and :func:`f_`.",
        ">>> abs(-1) | 2",
        "3",
        "",
        "Formula::",
        "",
        "    |y| stays",
        "",
        ".. math::",
        "",
        "    |z|",
        "",
        "| a line block |",
        "After |w|.",
    ]
    _conf().escape_plain_text(None, "function", "f", None, {}, lines)
    assert lines == [
        r"Noise \|eta\| <= t, so \|ln\|t\|\| < eps; g - T = c (d\_+² + d\_-²) for d_max and f\_.",
        "A literal ``|value| <= 2**53``, a role :math:`|x - x'|_1` and :func:`f_`.",
        ">>> abs(-1) | 2",
        "3",
        "",
        "Formula::",
        "",
        "    |y| stays",
        "",
        ".. math::",
        "",
        "    |z|",
        "",
        "| a line block |",
        r"After \|w\|.",
    ]
