"""The suite itself: a test that leaves a non-daemon thread behind fails the run loudly (exit 3,
naming the thread) instead of leaving pytest waiting at exit until CI's time limit; the same when
the tests run in pytest-xdist's workers (``make test``), where a worker's report must reach the end."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.timeout(120)

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["in-process", "xdist-workers"])
def test_a_thread_left_running_fails_the_run_and_is_named(tmp_path: Path, workers: list[str]) -> None:
    (tmp_path / "test_leaves_a_thread.py").write_text(
        "import threading\n\n\n"
        "def test_leaves_a_thread() -> None:\n"
        "    threading.Thread(target=threading.Event().wait, name='stuck-one').start()\n\n\n"
        "def test_leaves_nothing() -> None:\n"
        "    pass\n"
    )
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "tests.conftest", "-p", "no:cacheprovider", "-c", "/dev/null",
         "--rootdir", str(tmp_path), *workers, str(tmp_path)],
        cwd=ROOT, capture_output=True, text=True, timeout=90, check=False)
    assert run.returncode == 3, run.stdout + run.stderr
    assert "2 passed" in run.stdout
    assert "non-daemon threads running" in run.stderr and "- stuck-one:" in run.stderr
