import subprocess
import sys
from pathlib import Path

from ratelab.cli import main

BIN = Path(sys.executable).parent


def test_help_lists_the_commands(capsys):
    try:
        main(["--help"])
    except SystemExit as e:
        assert e.code == 0
    out = capsys.readouterr().out
    for command in ("lab", "notebooks", "limiters"):
        assert command in out


def test_limiters_lists_the_registry(capsys):
    assert main(["limiters"]) == 0
    out = capsys.readouterr().out
    assert "sliding-window-counter" in out and "SlidingWindowCounter(limit" in out


def test_the_console_script_is_installed():
    out = subprocess.run([BIN / "ratelab", "--version"], capture_output=True, text=True)
    assert out.returncode == 0 and out.stdout.startswith("ratelab ")
