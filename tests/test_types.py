"""The package type-checks under mypy's strict mode (configured in pyproject.toml)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_mypy_strict_is_clean():
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--no-incremental", "--config-file", "pyproject.toml"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stdout + done.stderr
