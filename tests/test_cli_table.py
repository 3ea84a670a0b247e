"""Every subcommand, from one table: help, a good run, a bad value, and its JSON keys.

A subcommand registered in ``ratelab.cli.COMMANDS`` without a row here fails
``test_every_subcommand_has_a_row``, so a new one cannot skip any of it. The JSON keys must be
the ones the command-line reference (docs/cli.md) documents.
"""

from __future__ import annotations

import argparse
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
import pytest

import ratelab.cli as cli
import ratelab.cli.lab as lab
from ratelab.cli import main, parser

README = Path(__file__).resolve().parent.parent / "README.md"
SMALL_LOG = str(README.parent / "data" / "NASA_access_log_Aug95_first1000.clf.gz")
CLI_REFERENCE = README.parent / "docs" / "cli.md"  # the README's reference moved there


@dataclass
class Row:
    good: list[str]                      # a quick run that must exit 0
    bad: list[str] | None                # a bad value: exit 2, one line naming `flag`
    flag: str = ""
    keys: tuple[str, ...] = ()           # JSON paths the good run must have (with --json)
    no_bad_value: str = ""               # why there is no bad value to try
    needs: tuple[str, ...] = field(default_factory=tuple)  # "notebook", "no_lab", "tmp"


SMALL_POPULATION = ["--synthetic", "--sources", "40", "--requests", "2000",
                    "--no-progress"]

TABLE: dict[str, Row] = {
    "lab": Row(["lab", "--no-browser"], None, needs=("no_lab",),
               no_bad_value="lab passes every option on to jupyter lab"),
    "notebooks": Row(["notebooks", "{notebook}", "--timeout", "120", "--json"],
                     ["notebooks", "--timeout", "-5"], "--timeout",
                     keys=("notebooks[].notebook", "notebooks[].cells", "notebooks[].wall_s"),
                     needs=("notebook",)),
    "compile": Row(["compile", "--json"], None,
                   keys=("cache", "steps[].step", "steps[].kernels_compiled", "steps[].seconds",
                         "kernels_compiled"),
                   no_bad_value="compile takes no values"),
    "limiters": Row(["limiters", "--json"], None,
                    keys=("limiters[].name", "limiters[].parameters[].type",
                          "limiters[].parameters[].unit", "limiters[].cli_defaults"),
                    no_bad_value="limiters takes no values"),
    "race": Row(["race", "--strategy", "lua", "--gateways", "2", "--requests", "30",
                 "--limit", "10", "--json"],
                ["race", "--gateways", "0"], "--gateways",
                keys=("mode", "strategy", "store", "gateways", "requests", "limit", "admitted",
                      "over_admitted", "round_trips_per_request")),
    "datasets": Row(["datasets", "list", "--json"], ["datasets", "path", "epa"], "dataset",
                    keys=("search_dirs", "datasets[].name", "datasets[].requests",
                          "datasets[].present", "datasets[].path")),
    "storm": Row(["storm", "--clients", "5", "--duration", "5", "--surge", "none",
                  "--behaviours", "immediate", "--json"],
                 ["storm", "--clients", "0"], "--clients",
                 keys=("scenario.limiter", "scenario.limiter_params", "scenario.surge",
                       "scenario.summary_interval_s", "behaviours[].behaviour",
                       "behaviours[].succeeded_pct", "behaviours[].gave_up_pct",
                       "behaviours[].p50_latency_s")),
    "burst": Row(["burst", "--json"], ["burst", "--service", "-1"], "--service",
                 keys=("burst", "rate_per_s", "service_per_s", "swallowed", "peak_queue",
                       "worst_wait_s", "drain_s", "utilisation", "largest_burst")),
    "index": Row(["index", "--check", "--json"], None,
                 keys=("readme", "notebooks", "up_to_date", "written"),
                 no_bad_value="index takes no values"),
    "fps": Row(["fps", "--frames", "2", "--json"], ["fps", "--frames", "-1"], "--frames",
               keys=("frames", "dt_s", "results[].algorithm", "results[].frames_per_s")),
    "error-analysis": Row(["error-analysis", *SMALL_POPULATION, "--json"],
                          ["error-analysis", *SMALL_POPULATION, "--human", "2"], "--human",
                          keys=("command", "source", "population", "limit", "window_s",
                                "modes.estimate.wrong_decisions_pct",
                                "modes.admission.false_negatives", "run.wall_s")),
    "bench": Row(["bench", "--requests", "2000", "--keys", "10", "--slice", "300",
                  "--repeat", "1", "--no-limits", "--json"],
                 ["bench", "--keys", "1.5"], "--keys",
                 keys=("requests", "keys", "limit", "window_s", "results[].algorithm",
                       "results[].compiled_per_s", "results[].same")),
    "exercises": Row(["exercises", "build", "--out", "{tmp}/student", "--json"],
                     ["exercises", "build", "--out", "{tmp}/a-file"], "--out",
                     keys=("source_dir", "out_dir", "notebooks[].solution",
                           "notebooks[].student", "notebooks[].stubs", "notebooks[].changed"),
                     needs=("tmp",)),
    "traces": Row(["traces", "convert", SMALL_LOG, "{tmp}/nasa.parquet", "--no-progress", "--json"],
                  ["traces", "convert", SMALL_LOG, "{tmp}/nasa.csv"], "OUT",
                  keys=("log", "out", "format", "lines", "requests", "clients",
                        "malformed_lines", "out_of_order", "out_bytes", "load_report"),
                  needs=("tmp",)),
    "cloudflare-mix": Row(["cloudflare-mix", "--trials", "2", "--refine", "0", "--finalists", "1",
                           "--sources", "50", "--requests", "20000", "--confirm-sources", "0",
                           "--no-neighbourhood", "--no-progress", "--json"],
                          ["cloudflare-mix", "--refine", "-1"], "--refine",
                          keys=("command", "target.wrong_decisions_pct", "settings.trials",
                                "trials[].params", "trials[].figures.wrong_decisions_pct",
                                "trials[].figures.worst_false_negative_over_pct",
                                "trials[].distance.how_far_over", "trials[].distance.loss",
                                "finalists[].figures.false_negatives", "winner", "run.wall_s")),
    "grade": Row(["grade", "make-cases", "--seed", "3", "--exercises", "fixed_window",
                  "--out", "{tmp}/cases.json", "--json"],
                 ["grade", "make-cases", "--seed", "-1", "--out", "{tmp}/cases.json"], "--seed",
                 keys=("cases_file", "seed", "sha256", "exercises[].exercise",
                       "exercises[].cases", "total_cases"),
                 needs=("tmp",)),
    "what-if": Row(["what-if", "--dataset", "nasa-1995-07-clf-sample", "--policy",
                    "token-bucket rate=0.01 capacity=5", "--policy",
                    "leaky-bucket rate=0.5 capacity=5 mode=shape", "--no-progress", "--json"],
                   ["what-if", "--dataset", "nasa-1995-07-clf-sample", "--policy",
                    "token-bucket rate=1 capacity=5", "--workers", "2"], "--workers",
                   keys=("source", "engine", "requests", "clients", "offered.peak_per_second",
                         "policies[].requests_limited", "policies[].by_hour[].hour_start_s",
                         "policies[].top_clients[].client", "policies[].worst_minute",
                         "policies[].backend.requests_admitted",
                         "policies[].retry_after.histogram[].retry_after_s")),
    "haproxy-config": Row(["haproxy-config", "--policy", "haproxy period=10 limit=100",
                           "--json"],
                          ["haproxy-config", "--policy", "haproxy period=0.0001 limit=3"],
                          "--policy", keys=("policy", "server", "key", "config")),
    "nginx-config": Row(["nginx-config", "--policy", "nginx rate=10 burst=20", "--json"],
                        ["nginx-config", "--policy", "nginx rate=10", "--key", "ip"], "--key",
                        keys=("policy", "server", "key", "config")),
    "bench-dask": Row(["bench-dask", "engines", "--sources", "20", "--requests", "2000",
                       "--workers", "1", "--no-progress", "--json"],
                      ["bench-dask", "engines", "--workers", "0"], "--workers",
                      keys=("bench", "command", "cpus", "requests", "sources", "workers",
                            "inprocess_s", "dask_s", "dask_over_inprocess", "identical",
                            "figures.modes.estimate.wrong_decisions_pct")),
}


ACTIONS: dict[str, Row] = {
    # an action under a command that has its own row (`ratelab bench` runs without one)
    "bench ingest": Row(["bench", "ingest", "--lines", "2000", "--repeat", "1", "--json"],
                        ["bench", "ingest", "--lines", "0"], "--lines",
                        keys=("command", "log", "lines", "requests", "malformed_lines",
                              "lines_per_s.floor", "lines_per_s.fast", "lines_per_s.reference",
                              "fast_to_floor.wall", "reference_to_floor.cpu", "same",
                              "rounds[].fast_wall_s", "generated.lines")),
    "bench startup": Row(["bench", "startup", "--repeat", "1", "--json"],
                         ["bench", "startup", "--repeat", "0"], "--repeat",
                         keys=("command", "repeat", "python", "results[].command",
                               "results[].best_s", "results[].median_s")),
}
ROWS = {**TABLE, **ACTIONS}


# ---------------------------------------------------------------- helpers


def subparsers(p: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in p._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def every_parser():
    """(name, parser) of every subcommand and nested action ("datasets list" ...)."""
    for name, sub in subparsers(parser()).items():
        yield name, sub
        for action, nested in subparsers(sub).items():
            yield f"{name} {action}", nested


def json_paths(x, prefix=""):
    """Every key path of a JSON value: "a", "a.b", "a[].b" (lists of objects)."""
    if isinstance(x, dict):
        for k, v in x.items():
            path = f"{prefix}.{k}" if prefix else k
            yield path
            yield from json_paths(v, path)
    elif isinstance(x, list):
        for item in x:
            if isinstance(item, dict):
                yield from json_paths(item, prefix + "[]")


def documented_keys(command: str) -> set[str]:
    """The keys the CLI reference (docs/cli.md) lists under ``ratelab COMMAND`` (or ``ratelab
    COMMAND ACTION``: the first section whose heading starts so)."""
    text = CLI_REFERENCE.read_text(encoding="utf-8")
    ref = text[text.index("# Command-line reference"):]
    m = re.search(rf"^### `ratelab {re.escape(command)}[ `].*?$(.*?)(?=^### |\Z)", ref,
                  re.M | re.S)
    assert m, f"docs/cli.md has no section for ratelab {command}"
    keys = set()
    for line in m.group(1).splitlines():
        if line.startswith("| `"):
            keys.update(re.findall(r"`([^`]+)`", line.split("|")[1]))
    keys.update(re.findall(r"`(\w+)`", m.group(1).split("\n\n", 2)[-1]))  # prose lists
    return keys


def covered(path: str, documented: set[str]) -> bool:
    """`path` is documented, holds documented keys, or lies inside a documented free-form
    object (``population``, ``scenario.limiter_params`` ...)."""
    parts = re.split(r"(?=\.)|(?=\[\])", path)
    if any(d.startswith(path + ".") or d.startswith(path + "[]") for d in documented):
        return True
    return any("".join(parts[:i]) in documented for i in range(1, len(parts) + 1))


@pytest.fixture
def run(capsys, monkeypatch, tmp_path):
    def go(argv, needs=()):
        if "no_lab" in needs:
            monkeypatch.setattr(lab.subprocess, "call", lambda cmd: 0)
        if "notebook" in needs:
            nb = nbformat.v4.new_notebook()
            nb.cells = [nbformat.v4.new_code_cell("6 * 7")]
            path = tmp_path / "tiny.ipynb"
            nbformat.write(nb, path)
            argv = [str(path) if a == "{notebook}" else a for a in argv]
        if "tmp" in needs:
            (tmp_path / "a-file").write_text("not a folder")
            argv = [a.replace("{tmp}", str(tmp_path)) for a in argv]
        try:
            code = main(argv)
        except SystemExit as e:  # --help
            code = e.code
        out = capsys.readouterr()
        return code, out.out, out.err
    return go


# ---------------------------------------------------------------- the table


def test_every_subcommand_has_a_row():
    names = set(subparsers(parser()))
    assert names == set(TABLE), (f"subcommands without a row: {sorted(names - set(TABLE))}; "
                                 f"rows without a subcommand: {sorted(set(TABLE) - names)}")


@pytest.mark.parametrize("name", sorted(n for n, _ in every_parser()))
def test_help_shows_every_default_unit_and_an_example(name, run):
    code, out, err = run([*name.split(), "--help"])
    assert code == 0 and err == ""
    assert "default: None" not in out and "(default: none)" not in out.lower()
    assert "%%" not in out, f"{name} --help shows a %% escaped twice"
    if not subparsers(dict(every_parser())[name]):  # a group (datasets) lists its actions
        assert "\nexample:\n  ratelab " in out, f"{name} --help ends with no example"
    p = dict(every_parser())[name]
    one_of = {a for g in p._mutually_exclusive_groups if g.required for a in g._group_actions}
    for action in p._actions:
        if (not action.option_strings or action.nargs == 0 or action.help == argparse.SUPPRESS
                or action in one_of):  # one of a required choice (--trace | --dataset) is given
            continue
        assert action.help, f"{name} {action.option_strings[0]} has no help"
        assert "default" in HelpText.of(p, action), \
            f"{name} {action.option_strings[0]}: its help gives no default"
        unit = getattr(action.type, "unit", "")
        if unit and action.default is not None:
            assert f"{unit})" in HelpText.of(p, action), \
                f"{name} {action.option_strings[0]}: its help gives no unit"


class HelpText:
    @staticmethod
    def of(p, action) -> str:
        return p._get_formatter()._get_help_string(action)


def test_every_optional_action_has_a_row():
    """A command that runs without an action (``bench``) has a row of its own; each of its
    actions needs one too."""
    optional = {f"{name} {action}" for name, p in subparsers(parser()).items()
                for a in p._actions if isinstance(a, argparse._SubParsersAction)
                and not a.required for action in a.choices}
    assert optional == set(ACTIONS)


SLOW_ROWS = {"bench-dask"}
"""Rows whose good run starts a Dask cluster: make test runs them, the make check lane does not."""


@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.slow) if n in SLOW_ROWS else n
                                  for n in sorted(ROWS)])
def test_a_good_run_exits_0_and_its_json_has_the_documented_keys(name, run):
    row = ROWS[name]
    code, out, err = run(row.good, row.needs)
    assert code == 0, err
    assert "Traceback" not in err
    if "--json" not in row.good:
        return
    record = json.loads(out)
    paths = set(json_paths(record))
    missing = [k for k in row.keys if k not in paths]
    assert not missing, f"{name} --json lacks {missing}"
    documented = documented_keys(name if name in ACTIONS else name.split()[0])
    undocumented = sorted(p for p in paths if not covered(p, documented))
    assert not undocumented, f"{name}: keys not in docs/cli.md: {undocumented}"
    for p in paths:
        assert re.fullmatch(r"[a-z][a-z0-9_]*", re.split(r"\.|\[\]\.?", p)[-1] or "x"), \
            f"{name}: key {p!r} is not snake_case"


@pytest.mark.parametrize("name", sorted(ROWS))
def test_a_bad_value_is_one_line_naming_the_flag_exit_2(name, run):
    row = ROWS[name]
    if row.bad is None:
        assert row.no_bad_value, f"{name}: give a bad value to try, or say why there is none"
        return
    code, out, err = run(row.bad, row.needs)
    assert code == 2, (code, err)
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    assert lines[0].startswith(f"ratelab {name}") and row.flag in lines[0], lines[0]


@pytest.mark.parametrize("name", sorted(n for n in ROWS if n != "lab"))
def test_a_mistyped_option_suggests_the_nearest(name, run):
    p = dict(every_parser())[name]
    longest = max((s for a in p._actions for s in a.option_strings
                   if s.startswith("--") and s not in ("--help", "--json", "--debug")),
                  key=len, default="--debug")
    typo = longest[:-2] + longest[-1]  # one letter dropped
    code, _, err = run([*name.split(), typo])
    assert code == 2
    assert err.strip().splitlines() == [
        f"ratelab {name}: error: unrecognized option {typo}; did you mean {longest}?"]


def test_a_mistyped_subcommand_suggests_the_nearest(run):
    code, _, err = run(["rase"])
    assert code == 2 and err.strip() == "ratelab: error: unknown command 'rase'; did you mean race?"
