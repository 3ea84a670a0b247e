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


def test_the_top_level_help_is_the_full_parsers():
    """``ratelab --help`` comes from COMMANDS' one-line helps alone: each must say what the
    command's own parser says, in the same order."""
    from ratelab.cli import parser, summary_parser

    assert summary_parser().format_help() == parser().format_help()


def test_the_readme_names_every_subcommand():
    from ratelab.cli import COMMANDS

    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    listed = readme.split("The subcommands of `ratelab`", 1)[1].split("\n\n", 1)[0]
    assert [c for c, *_ in COMMANDS if f"`{c}`" not in listed] == []


def fresh(code: str) -> subprocess.CompletedProcess:
    """`code` run in a fresh interpreter, which must exit 0: what it imports is its own."""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    return out


def test_help_and_version_import_no_command_module():
    code = ("import sys; from ratelab.cli import main\n"
            "for argv in ([], ['--help'], ['--version']):\n"
            "    try:\n"
            "        main(argv)\n"
            "    except SystemExit as e:\n"
            "        assert e.code == 0, e.code\n"
            "heavy = sorted(m for m in sys.modules if m.split('.')[0] in "
            "('numpy', 'pandas', 'numba', 'matplotlib') or m.startswith('ratelab.limiters'))\n"
            "print('heavy:', heavy, file=sys.stderr)")
    out = fresh(code)
    assert out.stderr.strip() == "heavy: []"
    assert out.stdout.count("usage: ratelab") == 2 and "ratelab 0.1.0" in out.stdout


def test_a_command_imports_its_own_modules_only():
    """``ratelab limiters`` builds its own parser and the others' one-line helps: no other
    command's module, nor pandas, numba or matplotlib, is imported (0.3 s instead of 1.9 s:
    ``ratelab bench startup``)."""
    code = ("import contextlib, io, sys; from ratelab.cli import main\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            "    assert main(['limiters']) == 0\n"
            "print(sorted(m for m in sys.modules if m.startswith('ratelab.cli.') or "
            "m.split('.')[0] in ('pandas', 'numba', 'matplotlib')))")
    out = fresh(code)
    assert out.stdout.strip() == "['ratelab.cli.limiters', 'ratelab.cli.support']"


def test_printing_a_policys_lines_imports_no_replay():
    """``ratelab haproxy-config`` reads a policy and prints four lines: the policy parser sits
    with the limiters, so no pandas, numba or matplotlib (0.19 s; 0.78 s when it came from
    ratelab.whatif)."""
    code = ("import contextlib, io, sys; from ratelab.cli import main\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            "    assert main(['haproxy-config', '--policy', 'haproxy period=10 limit=5']) == 0\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in "
            "('pandas', 'numba', 'matplotlib')))")
    assert fresh(code).stdout.strip() == "[]"


def test_the_light_import_still_reaches_every_subpackage():
    """``import ratelab`` imports no subpackage, yet ``ratelab.limiters`` and the others work
    as attributes (students' notebooks write ``ratelab.limiters.make``), and a wrong name is
    still an AttributeError."""
    code = ("import ratelab\n"
            "print(type(ratelab.limiters.make('gcra', rate=1, burst=1)).__name__)\n"
            "print(ratelab.exercises.__name__, ratelab.make is ratelab.limiters.make)\n"
            "try:\n"
            "    ratelab.no_such_room\n"
            "except AttributeError as e:\n"
            "    print(e)\n")
    out = fresh(code)
    assert out.stdout.splitlines() == [
        "GCRA", "ratelab.exercises True", "module 'ratelab' has no attribute 'no_such_room'"]


def test_limiters_lists_the_registry(capsys):
    assert main(["limiters"]) == 0
    out = capsys.readouterr().out
    assert "sliding-window-counter" in out and "SlidingWindowCounter(limit: float" in out


def test_the_console_script_is_installed():
    out = subprocess.run([BIN / "ratelab", "--version"], capture_output=True, text=True)
    assert out.returncode == 0 and out.stdout.startswith("ratelab ")


def test_lab_opens_jupyterlab_on_the_notebooks_and_passes_options_on(monkeypatch):
    import ratelab.cli.lab as cli
    from ratelab import checkout

    seen = {}
    monkeypatch.setattr(cli.subprocess, "call", lambda cmd: seen.setdefault("cmd", cmd) and 0)
    assert main(["lab", "--no-browser", "--port", "9999"]) == 0
    cmd = seen["cmd"]
    assert cmd[1:3] == ["-m", "jupyterlab"]
    assert f"--notebook-dir={checkout.notebooks()}" in cmd
    assert cmd[cmd.index("--port") + 1] == "9999" and "--no-browser" in cmd


def test_unknown_options_of_other_commands_are_errors(capsys):
    try:
        assert main(["limiters", "--bogus"]) == 2
    except SystemExit as e:
        assert e.code == 2
    assert "unrecognized option --bogus" in capsys.readouterr().err
