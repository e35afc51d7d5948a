"""Keep the README, CI and the public API in step."""

from __future__ import annotations

import re
from pathlib import Path

import polaroc as pr

ROOT = Path(__file__).resolve().parents[1]


def readme_commands() -> list[str]:
    text = (ROOT / "README.md").read_text()
    block = re.search(r"```bash\n(.*?)```", text, re.S)
    assert block, "README must open with a bash block of two commands"
    return [line for line in block.group(1).splitlines() if line.strip()]


def test_readme_opens_with_two_commands():
    text = (ROOT / "README.md").read_text()
    assert text.index("```bash") < 40, "the commands come first"
    assert len(readme_commands()) == 2


def test_readme_python_examples_run():
    text = (ROOT / "README.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    assert blocks, "the README shows a Python example"
    for block in blocks:
        exec(compile(block, "README.md", "exec"), {})


def test_readme_report_excerpt_matches_the_demo(tmp_path):
    from polaroc.report.cli import main

    assert main(["demo", "-o", str(tmp_path), "--no-plots", "-q"]) == 0
    excerpt = re.search(r"```text\n(.*?)```", (ROOT / "README.md").read_text(), re.S).group(1)
    for name in ("summary", "anova", "duncan"):
        table = (tmp_path / f"{name}.md").read_text().split("\n\n", 1)[1].strip()
        assert table in excerpt, f"README's {name} table is out of date"


def test_ci_runs_the_readme_test_command():
    ci = (ROOT / ".ci" / "run").read_text()
    assert readme_commands()[1] in ci


def test_public_names_exist_and_are_documented():
    for name in pr.__all__:
        obj = getattr(pr, name)
        assert obj.__doc__, f"{name} needs a docstring"
        assert "Examples" in obj.__doc__, f"{name}'s docstring needs runnable examples"


def test_ruff_is_clean():
    import subprocess
    import sys

    for args in (["check"], ["format", "--check"]):
        command = [sys.executable, "-m", "ruff", *args, str(ROOT)]
        done = subprocess.run(command, capture_output=True, text=True)
        assert done.returncode == 0, done.stdout + done.stderr


def test_readme_lists_exactly_the_public_api():
    text = (ROOT / "README.md").read_text()
    table = text[text.index("| what | functions |") :]
    table = table[: table.index("\n\n")]
    listed = set(re.findall(r"`([a-z][a-z0-9_]*)`", table))
    assert listed == set(pr.__all__), (
        f"README's API table lacks {sorted(set(pr.__all__) - listed)}, "
        f"lists unknown {sorted(listed - set(pr.__all__))}"
    )
