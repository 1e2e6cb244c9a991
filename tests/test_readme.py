"""The code blocks of the README and of the documentation pages run, so neither can drift.

The documents are the README and every markdown page of ``docs/`` (not ``docs/_incoming/``,
prose waiting to be folded in, which the site does not build either). In each document:

* ```` ```python ```` blocks are doctests, run in order in one namespace per document (as a
  reader of that page would type them);
* ```` ```text ```` blocks starting with ``$ ldpgraph ...`` or ``$ printf ...`` are command-line
  transcripts: each ``$ ldpgraph ...`` line runs in-process and its output must match the lines
  below it (``...`` stands for any text, as in doctests); an expected output starting with
  ``ldpgraph ...: error:`` is a refusal: the command must exit with a non-zero status and its
  error (stderr) must match; ``$ cat FILE`` prints a file and ``$ printf 'TEXT' > FILE`` writes
  one (with ``\n`` escapes); any other command fails the test. The transcripts of a document share
  one working folder, in document order (a later block reads the files an earlier one wrote, as
  they would for a reader);
* ```` ```bash ```` blocks install software or start long jobs, so they are not run; each
  ``ldpgraph`` command in them must parse, and each ``pip install ".[EXTRA]"`` must name an extra
  that ``pyproject.toml`` defines.

The README is the landing page: at most 300 lines, and each of its links into the repository
names a file that exists.
"""

from __future__ import annotations

import doctest
import re
import shlex
from pathlib import Path

import pytest

from ldpgraph.cli import build_parser, main

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")
DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
#: the expected output of a command that must be refused: its error message
REFUSAL = re.compile(r"ldpgraph( \w+)?: error: ")


def _name(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def _blocks(text: str) -> list[tuple[str, str, int]]:
    """``(language, body, line)`` of each fenced block of a markdown text."""
    return [(m.group(1), m.group(2), text[: m.start()].count("\n") + 1)
            for m in re.finditer(r"^```(\w*)\n(.*?)^```$", text, re.M | re.S)]


BLOCKS = {_name(p): _blocks(p.read_text(encoding="utf-8")) for p in DOCUMENTS}
TRANSCRIPTS = {doc: [(line, body) for kind, body, line in blocks
                      if kind == "text" and body.startswith(("$ ldpgraph", "$ printf"))]
               for doc, blocks in BLOCKS.items()}
ALL_TRANSCRIPTS = [(doc, i) for doc, ts in TRANSCRIPTS.items() for i in range(len(ts))]


def _steps(body: str) -> list[tuple[str, str]]:
    """``(command, expected output)`` for each ``$ `` line of a transcript."""
    steps: list[tuple[str, str]] = []
    for line in body.splitlines(keepends=True):
        if line.startswith("$ "):
            steps.append((line[2:].strip(), ""))
        else:
            command, want = steps[-1]
            steps[-1] = (command, want + line)
    return steps


def test_the_documents_hold_at_least_the_examples_the_readme_held():
    """Moving the README's sections into pages kept every example tested (the README's counts
    before the move: 60 Python examples, 13 transcripts of 34 commands, 5 bash blocks)."""
    parser = doctest.DocTestParser()
    python = sum(len(parser.get_examples(body)) for blocks in BLOCKS.values()
                 for kind, body, _ in blocks if kind == "python")
    bash = sum(kind == "bash" for blocks in BLOCKS.values() for kind, _, _ in blocks)
    assert python >= 60 and bash >= 5
    assert len(ALL_TRANSCRIPTS) >= 13
    assert sum(len(_steps(body)) for ts in TRANSCRIPTS.values() for _, body in ts) >= 34
    kinds = [k for k, _, _ in BLOCKS["README.md"]]  # the landing page shows each kind
    assert kinds.count("python") >= 1 and kinds.count("bash") >= 2 and len(TRANSCRIPTS["README.md"]) >= 2


def test_steps_split_a_transcript_at_each_prompt():
    body = "$ ldpgraph a\nout 1\nout 2\n$ cat f\n$ ldpgraph b\n...\n"
    assert _steps(body) == [("ldpgraph a", "out 1\nout 2\n"), ("cat f", ""), ("ldpgraph b", "...\n")]


def test_blocks_are_found_with_their_language_and_line():
    text = "intro\n```python\n>>> 1\n1\n```\n\n```\nplain\n```\n"
    assert _blocks(text) == [("python", ">>> 1\n1\n", 2), ("", "plain\n", 7)]


def test_a_refusal_is_told_by_its_error_line():
    assert REFUSAL.match("ldpgraph: error: only 50 of the 500 users ...\n")
    assert REFUSAL.match("ldpgraph node: error: accounting 'binary-rr' ...\n")
    assert not REFUSAL.match("wrote shuffled.csv (1,333 rows)\n")


@pytest.mark.parametrize("doc", [d for d, blocks in BLOCKS.items() if any(k == "python" for k, _, _ in blocks)])
def test_python_blocks_are_true(doc, monkeypatch, tmp_path):
    monkeypatch.delenv("LDPGRAPH_DATA", raising=False)  # the documents promise no setup
    monkeypatch.setenv("LDPGRAPH_CACHE", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)
    parser = doctest.DocTestParser()
    runner = doctest.DocTestRunner(optionflags=FLAGS)
    globs: dict = {}
    for kind, body, line in BLOCKS[doc]:
        if kind != "python":
            continue
        test = parser.get_doctest(body, globs, f"{doc}:{line}", doc, line)
        runner.run(test, clear_globs=False)
        globs = test.globs
    result = runner.summarize(verbose=False)
    assert result.attempted >= 1
    assert result.failed == 0, f"{result.failed} example(s) of {doc} failed (see the output above)"


@pytest.fixture(scope="module")
def workspace(tmp_path_factory):
    """One working folder per document, and the transcripts already run in it."""
    return {"dirs": {}, "done": set(), "factory": tmp_path_factory}


def _run(command: str, want: str, capsys) -> str:
    words = shlex.split(command)
    if words[0] == "cat" and len(words) == 2:
        print(Path(words[1]).read_text(encoding="utf-8"), end="")
    elif words[0] == "printf" and len(words) == 4 and words[2] == ">":
        Path(words[3]).write_text(words[1].replace("\\n", "\n"), encoding="utf-8")
    elif words[0] == "ldpgraph":
        code = main(words[1:])
        if REFUSAL.match(want):
            captured = capsys.readouterr()
            assert code != 0, f"`{command}` exited with 0; the transcript shows a refusal"
            return captured.out + captured.err
        assert code == 0, f"`{command}` exited with {code}: {capsys.readouterr().err}"
    else:
        pytest.fail(f"transcript runs `{command}`: only `ldpgraph ...`, `cat FILE` and `printf 'TEXT' > FILE` are checked")
    return capsys.readouterr().out


@pytest.mark.parametrize(("doc", "index"), ALL_TRANSCRIPTS,
                         ids=[f"{doc}:{TRANSCRIPTS[doc][i][0]}" for doc, i in ALL_TRANSCRIPTS])
def test_cli_transcripts_are_true(doc, index, workspace, capsys, monkeypatch):
    if doc not in workspace["dirs"]:
        workspace["dirs"][doc] = workspace["factory"].mktemp(re.sub(r"\W", "_", doc))
    folder = workspace["dirs"][doc]
    monkeypatch.delenv("LDPGRAPH_DATA", raising=False)
    monkeypatch.setenv("LDPGRAPH_CACHE", str(folder / "cache"))
    monkeypatch.chdir(folder)
    for earlier in range(index):  # the files an earlier block writes (run alone with -k, say)
        if (doc, earlier) not in workspace["done"]:
            for command, want in _steps(TRANSCRIPTS[doc][earlier][1]):
                _run(command, want, capsys)
            workspace["done"].add((doc, earlier))
    checker = doctest.OutputChecker()
    for command, want in _steps(TRANSCRIPTS[doc][index][1]):
        got = _run(command, want, capsys)
        assert checker.check_output(want, got, FLAGS), (
            f"{doc} transcript differs for `{command}`.\n--- {doc}\n{want}\n--- got\n{got}")
    workspace["done"].add((doc, index))


def test_bash_blocks_parse():
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")  # no tomllib on Python 3.10
    section = pyproject.split("[project.optional-dependencies]", 1)[1].split("\n[", 1)[0]
    extras = set(re.findall(r"^([\w-]+) = \[", section, re.M))
    assert {"test", "distributed", "docs"} <= extras
    parser = build_parser()
    commands = 0
    for doc, blocks in BLOCKS.items():
        for kind, body, _line in blocks:
            if kind != "bash":
                continue
            for part in re.split(r"&&|\n", body):
                words = shlex.split(part.strip())
                if words[:1] == ["ldpgraph"]:
                    parser.parse_args(words[1:])
                    commands += 1
                if words[:2] == ["pip", "install"]:
                    for target in words[2:]:
                        m = re.fullmatch(r"\.\[([\w,-]+)\]", target)
                        for extra in m.group(1).split(",") if m else ():
                            assert extra in extras, f"{doc} installs {target}: pyproject.toml has no extra {extra!r}"
    assert commands >= 5  # the README held 5 before its sections moved


def test_ci_runs_the_readme_test_command():
    """``.ci/run`` runs exactly the test command the README gives."""
    readme = re.findall(r"^pip install \"\.\[test\]\" && (python -m pytest.*)$", README, re.M)
    ci = [line for line in (ROOT / ".ci" / "run").read_text().splitlines() if line.startswith("python -m pytest")]
    assert len(readme) == 1 and ci == readme


def test_readme_is_a_landing_page_whose_links_resolve():
    assert README.count("\n") <= 300
    links = re.findall(r"\]\(([^)\s]+)\)", README)
    local = [link for link in links if "://" not in link and not link.startswith("#")]
    assert len(local) >= 12
    for link in local:
        assert (ROOT / link.split("#")[0]).is_file(), f"README links to {link}, which is not a file"
    # the site's index, and its getting-started page (which includes this README's own sections)
    pages = {p.relative_to(ROOT).as_posix() for p in (ROOT / "docs").glob("*.md")}
    pages -= {"docs/index.md", "docs/getting-started.md"}
    assert pages <= set(local), f"pages the README does not link: {sorted(pages - set(local))}"
