"""The README's code blocks run, so the README cannot drift.

* ```` ```python ```` blocks are doctests, run in order in one namespace (as a reader would type them);
* ```` ```text ```` blocks starting with ``$ ldpgraph ...`` are command-line transcripts: each
  ``$ ldpgraph ...`` line runs in-process and its output must match the lines below it (``...``
  stands for any text, as in doctests); ``$ cat FILE`` prints a file; any other command fails the
  test. The transcripts share one working folder, in README order (a later block reads the files
  an earlier one wrote, as they would for a reader);
* ```` ```bash ```` blocks install software or start long jobs, so they are not run; each
  ``ldpgraph`` command in them must parse, and each ``pip install ".[EXTRA]"`` must name an extra
  that ``pyproject.toml`` defines.
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
BLOCKS = [(m.group(1), m.group(2), README[: m.start()].count("\n") + 1)
          for m in re.finditer(r"^```(\w*)\n(.*?)^```$", README, re.M | re.S)]
FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
TRANSCRIPTS = [(line, body) for kind, body, line in BLOCKS if kind == "text" and body.startswith("$ ldpgraph")]


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


def test_readme_has_the_blocks_this_test_runs():
    kinds = [k for k, _, _ in BLOCKS]
    assert kinds.count("python") >= 2 and kinds.count("bash") >= 2
    assert len(TRANSCRIPTS) >= 3
    assert sum(len(_steps(body)) for _, body in TRANSCRIPTS) >= 5


def test_steps_split_a_transcript_at_each_prompt():
    body = "$ ldpgraph a\nout 1\nout 2\n$ cat f\n$ ldpgraph b\n...\n"
    assert _steps(body) == [("ldpgraph a", "out 1\nout 2\n"), ("cat f", ""), ("ldpgraph b", "...\n")]


def test_python_blocks_are_true(monkeypatch, tmp_path):
    monkeypatch.delenv("LDPGRAPH_DATA", raising=False)  # the README promises no setup
    monkeypatch.setenv("LDPGRAPH_CACHE", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)
    parser = doctest.DocTestParser()
    runner = doctest.DocTestRunner(optionflags=FLAGS)
    globs: dict = {}
    for kind, body, line in BLOCKS:
        if kind != "python":
            continue
        test = parser.get_doctest(body, globs, f"README.md:{line}", "README.md", line)
        runner.run(test, clear_globs=False)
        globs = test.globs
    result = runner.summarize(verbose=False)
    assert result.attempted >= 10
    assert result.failed == 0, f"{result.failed} README example(s) failed (see the output above)"


@pytest.fixture(scope="module")
def workspace(tmp_path_factory):
    """One working folder for every transcript, and the transcripts already run in it."""
    return {"dir": tmp_path_factory.mktemp("readme"), "done": set()}


def _run(command: str, capsys) -> str:
    words = shlex.split(command)
    if words[0] == "cat" and len(words) == 2:
        print(Path(words[1]).read_text(encoding="utf-8"), end="")
    elif words[0] == "ldpgraph":
        code = main(words[1:])
        assert code == 0, f"`{command}` exited with {code}: {capsys.readouterr().err}"
    else:
        pytest.fail(f"README transcript runs `{command}`: only `ldpgraph ...` and `cat FILE` are checked")
    return capsys.readouterr().out


@pytest.mark.parametrize("index", range(len(TRANSCRIPTS)), ids=[f"README.md:{line}" for line, _ in TRANSCRIPTS])
def test_cli_transcripts_are_true(index, workspace, capsys, monkeypatch):
    monkeypatch.delenv("LDPGRAPH_DATA", raising=False)
    monkeypatch.setenv("LDPGRAPH_CACHE", str(workspace["dir"] / "cache"))
    monkeypatch.chdir(workspace["dir"])
    for earlier in range(index):  # the files an earlier block writes (run alone with -k, say)
        if earlier not in workspace["done"]:
            for command, _ in _steps(TRANSCRIPTS[earlier][1]):
                _run(command, capsys)
            workspace["done"].add(earlier)
    checker = doctest.OutputChecker()
    for command, want in _steps(TRANSCRIPTS[index][1]):
        got = _run(command, capsys)
        assert checker.check_output(want, got, FLAGS), (
            f"README transcript differs for `{command}`.\n--- README\n{want}\n--- got\n{got}")
    workspace["done"].add(index)


def test_bash_blocks_parse():
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")  # no tomllib on Python 3.10
    section = pyproject.split("[project.optional-dependencies]", 1)[1].split("\n[", 1)[0]
    extras = set(re.findall(r"^([\w-]+) = \[", section, re.M))
    assert {"test", "distributed"} <= extras
    parser = build_parser()
    commands = 0
    for kind, body, _line in BLOCKS:
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
                        assert extra in extras, f"README installs {target}: pyproject.toml has no extra {extra!r}"
    assert commands >= 2


def test_ci_runs_the_readme_test_command():
    """``.ci/run`` runs exactly the test command the README gives."""
    readme = re.findall(r"^pip install \"\.\[test\]\" && (python -m pytest.*)$", README, re.M)
    ci = [line for line in (ROOT / ".ci" / "run").read_text().splitlines() if line.startswith("python -m pytest")]
    assert len(readme) == 1 and ci == readme
