"""The search for Cloudflare's traffic: its loss, its determinism, its command."""

from __future__ import annotations

import json

import numpy as np
import pytest

from ratelab.analysis import calibrate
from ratelab.cli import main

TINY = dict(sources=200, requests=100_000)


def figures(**changes):
    base = {"requests": 400_000_000, "sources": 270_000, "wrong_decisions_pct": 0.003,
            "mean_relative_error_pct": 6.0, "false_negatives": 3,
            "worst_false_negative_over_pct": 12.0, "false_positives": 0}
    return {**base, **changes}


def test_cloudflares_own_figures_are_at_distance_zero():
    assert calibrate.distance(figures())["loss"] == pytest.approx(0.0)


@pytest.mark.parametrize("changes, term, value", [
    ({"wrong_decisions_pct": 0.03}, "wrong", 1.0),                   # ten times too many
    ({"mean_relative_error_pct": 3.0}, "mean", 0.30103),             # half
    ({"false_negatives": 0}, "false_negatives", 0.60206),            # (0+1)/(3+1)
    ({"false_positives": 9}, "false_positives", 1.0),                # (9+1)/(0+1)
    ({"worst_false_negative_over_pct": 30.0}, "how_far_over", 1.0),
    ({"sources": 2_700, "requests": 4_000_000, "false_negatives": 1}, "false_negatives",
     1.40226),                                                       # 1 -> 100 at full scale
    ({"requests": 200_000_000}, "requests", 0.30103),                # half the volume
    ({"requests": 800_000_000}, "requests", 0.30103),                # twice
])
def test_each_term_measures_its_figure(changes, term, value):
    d = calibrate.distance(figures(**changes))
    assert d[term] == pytest.approx(value, abs=1e-4)
    assert d["loss"] == pytest.approx(value, abs=1e-4)


def test_the_requests_term_scales_a_small_run_to_cloudflares_sources():
    d = calibrate.distance(figures(sources=2_700, requests=8_000_000, false_negatives=0))
    assert d["requests"] == pytest.approx(0.30103, abs=1e-4)    # 8 M x 100 = twice 400 M


def test_search_is_deterministic_and_keeps_the_best_finalist():
    a = calibrate.search(trials=3, refine=2, finalists=2, scale_up=1, seed=4, **TINY)
    b = calibrate.search(trials=3, refine=2, finalists=2, scale_up=1, seed=4, **TINY)
    assert a == b
    assert len(a["trials"]) == 5 and len(a["finalists"]) == 2 and a["polished"] == []
    best = min(a["finalists"], key=lambda r: r["distance"]["loss"])
    assert a["winner"] == best["params"] == calibrate.best_run(a)["params"]
    for name, v in a["winner"].items():
        lo, hi, _ = calibrate.SPACE[name]
        assert lo <= v <= hi
    # the winner re-run gives the recorded figures (what the notebook checks)
    again = calibrate.evaluate(best["params"], sources=best["sources"], requests=best["requests"])
    assert again["figures"] == best["figures"]


def test_neighbourhood_varies_one_parameter_at_a_time():
    params = calibrate.search(trials=2, refine=0, finalists=1, scale_up=1, **TINY)["winner"]
    rows = calibrate.neighbourhood(params, ["volume_sigma"], steps=(0.5, 2.0), **TINY)
    assert [(r["parameter"], r["factor"]) for r in rows] == [
        ("found mix", 1.0), ("volume_sigma", 0.5), ("volume_sigma", 2.0)]
    lo, hi, _ = calibrate.SPACE["volume_sigma"]
    assert rows[1]["value"] == pytest.approx(min(max(params["volume_sigma"] * 0.5, lo), hi))
    found = calibrate.evaluate(params, **TINY)
    assert rows[0]["wrong_decisions"] == found["figures"]["wrong_decisions"]
    with pytest.raises(ValueError, match="names"):
        calibrate.neighbourhood(params, ["limit"], **TINY)


def test_command_runs_and_refuses_bad_input(capsys):
    assert main(["cloudflare-mix", "--trials", "2", "--refine", "1", "--finalists", "1",
                 "--scale-up", "1", "--sources", "200", "--requests", "100000",
                 "--confirm-sources", "0", "--no-neighbourhood", "--no-progress", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["command"].startswith("ratelab cloudflare-mix --trials 2 ")
    assert "confirmed" not in out and "neighbourhood" not in out
    assert main(["cloudflare-mix", "--trials", "0", "--no-progress"]) == 2
    assert capsys.readouterr().err.startswith("ratelab cloudflare-mix: error: --trials:")
    assert main(["cloudflare-mix", "--confirm-sources", "0", "--confirm-requests", "100"]) == 2
    assert "--confirm-requests: applies to the confirming run" in capsys.readouterr().err


def test_side_by_side_reads_a_recorded_summary():
    from ratelab.analysis.stream import analyse_population
    from ratelab.traces.population import Population

    tally = analyse_population(Population(**TINY), 100, 60, "both", workers=1, progress=False)
    recorded = json.loads(json.dumps(tally.to_dict()))["modes"]["estimate"]
    table = calibrate.side_by_side({"Cloudflare": calibrate.CLOUDFLARE_2017,
                                    "here": calibrate.from_summary(recorded)})
    assert list(table.index) == [calibrate.LABELS[k] for k in calibrate.FIGURES]
    assert table.loc["false positives", "here"] == tally.summary("estimate")[
        "limited, never over the threshold (false positives)"]
    assert table.loc["wrong decisions (%)", "Cloudflare"] == 0.003
    # the table's labels (ErrorTally.summary) give the same figures as the record's keys
    assert calibrate.from_summary(tally.summary("estimate")) == calibrate.from_summary(recorded)


def test_every_key_of_the_record_is_snake_case():
    record = calibrate.search(trials=1, refine=0, finalists=1, scale_up=1, **TINY)
    run = record["finalists"][0]
    for keys in (record["target"], run["figures"], run["admission"], run["distance"]):
        assert all(k.isidentifier() and k == k.lower() for k in keys), list(keys)


def test_polish_steps_from_the_best_finalist_at_its_size_and_may_win():
    a = calibrate.search(trials=3, refine=1, finalists=2, scale_up=2, polish=4, seed=5, **TINY)
    assert a["settings"]["polish"] == 4 and len(a["polished"]) == 4
    assert len(a["trials"]) == 4                       # polished points are not trials
    size = {(r["sources"], r["requests"]) for r in a["finalists"] + a["polished"]}
    assert size == {(2 * TINY["sources"], 2 * TINY["requests"])}
    best = calibrate.best_run(a)
    assert a["winner"] == best["params"]
    assert best["distance"]["loss"] == min(r["distance"]["loss"]
                                           for r in a["finalists"] + a["polished"])
    # kept: below everything before it (the finalists, then the steps so far)
    so_far = min(r["distance"]["loss"] for r in a["finalists"])
    for r in a["polished"]:
        assert r["kept"] == (r["distance"]["loss"] < so_far)
        so_far = min(so_far, r["distance"]["loss"])
    for name, v in a["winner"].items():
        lo, hi, _ = calibrate.SPACE[name]
        assert lo <= v <= hi


def test_a_mix_goes_to_the_unit_cube_and_back():
    u = np.linspace(0.05, 0.95, len(calibrate.SPACE))
    params = calibrate._to_params(u)
    assert set(params) == set(calibrate.SPACE) and len(params) == 17
    assert calibrate._to_unit(params) == pytest.approx(u, abs=1e-3)   # 4 significant digits


def test_vary_scale_up_sizes_the_neighbourhood_and_needs_one(capsys):
    small = ["cloudflare-mix", "--trials", "1", "--refine", "0", "--finalists", "1",
             "--scale-up", "1", "--sources", "100", "--requests", "20000",
             "--confirm-sources", "0", "--no-progress", "--json"]
    assert main([*small, "--vary", "app_shape", "--vary-scale-up", "2"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert {r["sources"] for r in out["neighbourhood"]} == {200}
    assert "--vary-scale-up 2" in out["command"] and "--polish 0" in out["command"]
    assert main([*small, "--no-neighbourhood", "--vary-scale-up", "2"]) == 2
    assert "--vary-scale-up: does nothing with --no-neighbourhood" in capsys.readouterr().err


@pytest.mark.slow  # starts 2-worker Dask clusters
def test_workers_run_the_finalists_polish_and_neighbourhood_with_the_same_record(capsys):
    small = ["cloudflare-mix", "--trials", "2", "--refine", "0", "--finalists", "1",
             "--polish", "1", "--scale-up", "2", "--sources", "100", "--requests", "20000",
             "--confirm-sources", "0", "--vary", "app_shape", "--no-progress", "--json"]
    records = []
    for workers in ([], ["--workers", "2"]):
        assert main([*small, *workers]) == 0
        out = json.loads(capsys.readouterr().out)
        del out["run"]  # the wall time
        records.append(out)
    assert records[0] == records[1]
    assert len(records[0]["polished"]) == 1 and len(records[0]["neighbourhood"]) == 3


@pytest.mark.slow  # starts a 2-worker Dask cluster
def test_a_confirming_run_on_more_workers_gives_the_same_figures():
    params = calibrate.search(trials=1, refine=0, finalists=1, scale_up=1, **TINY)["winner"]
    here = calibrate.confirm(params, **TINY)
    assert calibrate.confirm(params, workers=2, **TINY)["figures"] == here["figures"]


def test_start_polishes_a_given_mix_with_no_search_before(tmp_path):
    mix = calibrate.search(trials=2, refine=0, finalists=1, scale_up=1, **TINY)["winner"]
    a = calibrate.search(scale_up=2, polish=3, seed=2, start=mix, **TINY)
    assert a["trials"] == [] and a["start"] == mix and len(a["polished"]) == 3
    assert {k: a["settings"][k] for k in ("trials", "refine", "finalists")} == {
        "trials": 0, "refine": 0, "finalists": 1}
    (only,) = a["finalists"]  # the start, at scale_up times the size
    assert only["params"] == mix and only["sources"] == 2 * TINY["sources"]
    assert calibrate.best_run(a)["params"] == a["winner"]
    assert a == calibrate.search(scale_up=2, polish=3, seed=2, start=mix, **TINY)
    # a record (its winner) or the parameters themselves
    record, params = tmp_path / "record.json", tmp_path / "params.json"
    record.write_text(json.dumps({"winner": mix, "trials": []}))
    params.write_text(json.dumps(mix))
    assert calibrate.read_start(record) == mix == calibrate.read_start(params)


@pytest.mark.parametrize("change, message", [
    ({"span_s": 1.0}, "'span_s' is not a searched parameter"),
    ({"bot": 0.9}, "bot must be a number in [0, 0.5], got 0.9"),
    ({"bot": "a lot"}, "bot must be a number"),
    ({"bot": True}, "bot must be a number"),
    ({"bot": ...}, "bot: missing from the mix"),
])
def test_a_start_mix_is_checked_parameter_by_parameter(change, message):
    mix = {name: lo for name, (lo, hi, _) in calibrate.SPACE.items()}
    mix.update(change)
    mix = {k: v for k, v in mix.items() if v is not ...}
    with pytest.raises(ValueError) as e:
        calibrate.search(polish=0, start=mix, **TINY)
    assert message in str(e.value)


def test_command_starts_from_a_file_and_says_so(tmp_path, capsys):
    mix = calibrate.search(trials=1, refine=0, finalists=1, scale_up=1, **TINY)["winner"]
    path = tmp_path / "start.json"
    path.write_text(json.dumps(mix))
    small = ["cloudflare-mix", "--scale-up", "1", "--sources", "100", "--requests", "20000",
             "--confirm-sources", "0", "--no-neighbourhood", "--no-progress", "--json"]
    assert main([*small, "--start", str(path), "--polish", "1"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["command"].startswith(f"ratelab cloudflare-mix --start {path} --scale-up 1 ")
    assert "--trials" not in out["command"] and out["start"] == mix
    assert main([*small, "--start", str(path), "--refine", "5"]) == 2
    assert "--refine: does nothing with --start" in capsys.readouterr().err
    assert main([*small, "--start", str(tmp_path / "none.json")]) == 1
    assert "--start: no such file" in capsys.readouterr().err
    path.write_text("not json")
    assert main([*small, "--start", str(path)]) == 2
    assert "--start: " + str(path) + ": not JSON" in capsys.readouterr().err


def test_confirm_seeds_runs_the_winner_on_other_draws_of_the_mix(capsys):
    search = ["cloudflare-mix", "--trials", "1", "--refine", "0", "--finalists", "1",
              "--scale-up", "1", "--sources", "100", "--requests", "20000", "--no-neighbourhood",
              "--no-progress"]
    small = [*search, "--confirm-sources", "300", "--confirm-requests", "60000"]
    assert main([*small, "--confirm-seeds", "3", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert "--confirm-seeds 3" in out["command"]
    runs = [out["confirmed"], *out["confirmed_reseeded"]]
    assert [r["seed"] for r in runs] == [0, 1, 2]
    assert {(r["sources"], r["requests"]) for r in runs} == {(300, 60_000)}
    assert runs[1]["figures"] != runs[0]["figures"]      # another draw, not the same run again
    again = calibrate.confirm(out["winner"], sources=300, requests=60_000, seed=2)
    assert again["figures"] == runs[2]["figures"]
    assert main([*small, "--confirm-seeds", "2"]) == 0
    assert "population seed 1: wrong" in capsys.readouterr().out
    assert main([*small, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert "confirmed_reseeded" not in out and "--confirm-seeds" not in out["command"]
    assert main([*search, "--confirm-sources", "0", "--confirm-seeds", "2"]) == 2
    assert "--confirm-seeds: applies to the confirming run" in capsys.readouterr().err
    assert main([*small, "--confirm-seeds", "0"]) == 2
    assert capsys.readouterr().err.startswith("ratelab cloudflare-mix: error: --confirm-seeds:")


def test_every_searched_parameter_has_a_name_people_read():
    assert set(calibrate.PARAMETER_NAMES) == set(calibrate.SPACE)
    assert len(set(calibrate.PARAMETER_NAMES.values())) == len(calibrate.SPACE)
    assert not any("_" in name for name in calibrate.PARAMETER_NAMES.values())


def test_by_behaviour_splits_a_mix_into_parts_that_add_up():
    """The behaviours' rows add up to the two sides of the threshold, false negatives fall only
    on sources over it and false positives only on sources never over (by their definitions)."""
    table = calibrate.by_behaviour({"abuser": 0.01}, sources=2_700, requests=4_000_000)
    kinds = table.drop(index=["over the threshold", "never over"])
    whole = table.loc["over the threshold"] + table.loc["never over"]
    for column in ("sources", "over the threshold", "wrong decisions", "false negatives",
                   "false positives"):
        assert kinds[column].sum() == whole[column], column
    assert table.loc["over the threshold", "sources"] > 0
    assert table.loc["over the threshold", "wrong decisions"] > 0
    assert table.loc["never over", "false negatives"] == 0
    assert table.loc["over the threshold", "false positives"] == 0
