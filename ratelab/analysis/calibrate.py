"""Which traffic makes the sliding window counter look like Cloudflare's?

Cloudflare (2017, "How we built rate limiting capable of scaling to millions of domains")
published four figures for 400 million requests from 270,000 sources — :data:`CLOUDFLARE_2017`
— and not the traffic behind them. :func:`search` looks for a :class:`Population` (limit and
window fixed) on which all four land near them at once, so that "the figure is a property of
the traffic" becomes something measured; :func:`neighbourhood` then moves one parameter at a
time around the mix found and records how each figure moves.

The figures are estimate mode's (every request counts; see :mod:`ratelab.analysis.error`), the
reading closest to a counter that watches traffic. Each is compared on a log scale
(:func:`distance`): the share of wrong decisions and the mean |estimate - real| / real as
log10 ratios to Cloudflare's; false negatives and false positives scaled to 270,000 sources,
as log10((count + 1) / (target + 1)); a false negative more than 15% over the threshold adds
its excess in units of 15%; and the requests the run generated, scaled to 270,000 sources, as a
log10 ratio to 400 million (a population is sized by its requests, but bots' round periods and
page bursts cut at the end of the span make the count drift from the size asked for: without
this term the search could move the figures by moving the volume). A loss of 0 is all four on
target at Cloudflare's volume; 0.3 on one term is a factor of 2.

The search is seeded and runs in four stages, each in the population's own chunked analysis:

1. ``trials`` mixes drawn uniformly from :data:`SPACE` (log scale where the range spans
   decades), at a small scale (``sources`` and ``requests``: millions of requests, a second
   a mix);
2. ``refine`` steps of a (1 + 1) evolution strategy from the best of stage 1: a Gaussian step
   in the unit cube of :data:`SPACE`, kept when the loss falls, the step shrinking on failure;
3. the ``finalists`` best mixes seen, re-run at ``scale_up`` times the sources and requests
   (false-negative counts of a few sources need many sources to be seen);
4. ``polish`` steps of the same evolution strategy at the finalists' size, from the best
   finalist (at that size a step's loss no longer rides on one or two sources over the
   threshold). The best of the finalists and the polished points is the winner: a polished
   point is not a trial and may be the winner.

A search may instead start from a known mix (``start``, e.g. a recorded winner read with
:func:`read_start`): stages 1 to 3 are skipped, the mix is run once at the finalists' size (the
one finalist) and polished from there, so a search can go on where another stopped, at the
same size or a larger one.

:func:`confirm` runs the winner once more at a larger scale (1/10 of Cloudflare's by default;
full scale takes its flags), and may run it again on other population seeds: a mix polished
on one draw of its sources could fit that draw's few rare sources rather than the mix. Every
number in the record comes from
a run the record's command repeats.
"""

from __future__ import annotations

import json
import math
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
from tqdm.auto import tqdm

from ..traces.population import Population
from .error import KEYS, groups_table
from .stream import analyse_population, population_groups

#: Cloudflare's published figures (2017 blog post named in the module docstring).
#: Keys as in :data:`ratelab.analysis.error.KEYS` (see :data:`LABELS` for how people read them).
CLOUDFLARE_2017 = {
    "requests": 400_000_000,
    "sources": 270_000,
    "wrong_decisions_pct": 0.003,
    "mean_relative_error_pct": 6.0,
    "false_negatives": 3,
    "worst_false_negative_over_pct": 15.0,  # "all under 15% above"
    "false_positives": 0,
}

#: Searched parameters of :class:`Population`: (low, high, log scale?). Behaviour shares are
#: weights (the population normalises them). ``duration_s`` is searched because Cloudflare
#: gave no period: 400 M requests over an hour and over two days are different traffic. The
#: ranges keep the on/off cycles a source goes through (what generating a mix costs, beside
#: its requests) within about ten times the default population's, so a mix found at small
#: scale can be confirmed at a larger one on a laptop.
SPACE = {
    "duration_s": (3_600.0, 172_800.0, True),
    "volume_sigma": (0.3, 1.6, False),
    "human": (0.0, 1.0, False),
    "app": (0.0, 0.5, False),
    "bot": (0.0, 0.5, False),
    "abuser": (0.0, 0.01, False),
    "abuser_volume": (1.0, 100.0, True),
    "page_requests": (1.0, 20.0, True),
    "object_gap_s": (0.05, 5.0, True),
    "session_s": (60.0, 3_600.0, True),
    "human_duty": (0.05, 1.0, False),
    "app_on_s": (10.0, 600.0, True),
    "app_off_s": (60.0, 3_600.0, True),
    "bot_aligned": (0.0, 1.0, False),
    "bot_volume": (0.1, 10.0, True),
    "app_volume": (0.1, 10.0, True),
    "app_shape": (0.25, 4.0, True),
}

LIMIT, WINDOW_S = 100.0, 60.0

#: The searched parameters (:data:`SPACE`) as people read them: a figure's legend, a table's rows.
PARAMETER_NAMES = {
    "duration_s": "period covered", "volume_sigma": "spread of volume per source",
    "human": "share of humans", "app": "share of apps", "bot": "share of bots",
    "abuser": "share of abusive sources", "abuser_volume": "abusive sources' volume",
    "page_requests": "requests per page", "object_gap_s": "gap within a page",
    "session_s": "human session length", "human_duty": "humans' time active in session",
    "app_on_s": "apps' on period", "app_off_s": "apps' off period",
    "bot_aligned": "bots on the calendar grid", "bot_volume": "bots' volume",
    "app_volume": "apps' volume", "app_shape": "apps' burst shape",
}


#: The rows of :func:`side_by_side`: Cloudflare's figures and the size they were measured at.
FIGURES = ("requests", "sources", "wrong_decisions_pct", "mean_relative_error_pct",
           "false_negatives", "worst_false_negative_over_pct", "false_positives")

#: The figures' keys -> their names as people read them (the rows of :func:`side_by_side`).
LABELS = {"requests": "requests", "sources": "sources",
          "wrong_decisions_pct": "wrong decisions (%)", "wrong_decisions": "wrong decisions",
          "mean_relative_error_pct": "mean |estimate - real| / real (%)",
          "false_negatives": "false negatives",
          "worst_false_negative_over_pct": "false negatives: most above the threshold (%)",
          "false_positives": "false positives",
          "sources_over_threshold": "sources over the threshold"}


def from_summary(s: dict) -> dict:
    """The published figures (and context) out of one mode's
    :meth:`~ratelab.analysis.error.ErrorTally.record` (snake_case keys, as ``ratelab
    error-analysis --json`` prints) or :meth:`~ratelab.analysis.error.ErrorTally.summary`
    (the table's labels)."""
    if "wrong decisions (%)" in s:  # the labels: as the record's keys
        s = {KEYS[k]: v for k, v in s.items()}
    return {
        "requests": s["requests"],
        "sources": s["sources"],
        "wrong_decisions_pct": s["wrong_decisions_pct"],
        "wrong_decisions": s["false_allows"] + s["false_rejects"],
        "mean_relative_error_pct": s["mean_relative_error_pct"],
        "false_negatives": s["false_negatives"],
        "worst_false_negative_over_pct": float(s["worst_false_negative_over_pct"]),
        "false_positives": s["false_positives"],
        "sources_over_threshold": s["sources_over_threshold"],
    }


def figures(tally, mode: str = "estimate") -> dict:
    """The four published figures (and context) of one analysed population, in `mode`."""
    return from_summary(tally.summary(mode))


def side_by_side(columns: dict) -> pd.DataFrame:
    """One column per named set of figures (Cloudflare's first), one row per :data:`FIGURES`,
    named as people read them (:data:`LABELS`)."""
    return pd.DataFrame({name: pd.Series({LABELS[k]: fig[k] for k in FIGURES}, dtype=object)
                         for name, fig in columns.items()})


def distance(fig: dict, target: dict = CLOUDFLARE_2017) -> dict:
    """Each figure's distance from `target` (log10 units; see the module docs) and the sum."""
    n = max(fig["requests"], 1)
    wrong = max(fig["wrong_decisions_pct"], 50.0 / n)  # zero wrong: half a decision
    scale = target["sources"] / max(fig["sources"], 1)
    over = fig["worst_false_negative_over_pct"]
    limit_over = target["worst_false_negative_over_pct"]
    terms = {
        "wrong": abs(math.log10(wrong / target["wrong_decisions_pct"])),
        "mean": abs(math.log10(max(fig["mean_relative_error_pct"], 1e-9)
                               / target["mean_relative_error_pct"])),
        "false_negatives": abs(math.log10((fig["false_negatives"] * scale + 1)
                                          / (target["false_negatives"] + 1))),
        "false_positives": abs(math.log10((fig["false_positives"] * scale + 1)
                                          / (target["false_positives"] + 1))),
        "how_far_over": max(0.0, over - limit_over) / limit_over if fig["false_negatives"] else 0.0,
        "requests": abs(math.log10(n * scale / target["requests"])),
    }
    return {**terms, "loss": sum(terms.values())}


def evaluate(params: dict, *, sources: int, requests: int, seed: int = 0,
             workers: int | None = 1) -> dict:
    """Analyse the population `params` describes at the given size: its figures and loss.
    `workers` None or 1 runs it in this process, more on a local Dask cluster of that many
    (the figures are the same)."""
    pop = Population(sources=sources, requests=requests, seed=seed, **params)
    engine = "inprocess" if workers in (None, 1) else "dask"
    tally = analyse_population(pop, LIMIT, WINDOW_S, "both", engine=engine,
                               workers=None if engine == "inprocess" else workers,
                               progress=False)
    fig = figures(tally)
    adm = figures(tally, "admission")
    return {"params": dict(params), "sources": sources, "requests": requests, "seed": seed,
            "figures": fig, "admission": {k: adm[k] for k in ("wrong_decisions_pct",
                                                              "mean_relative_error_pct")},
            "distance": distance(fig)}


def _to_params(u: np.ndarray) -> dict:
    """A point of the unit cube as Population parameters."""
    out = {}
    for x, (name, (lo, hi, log)) in zip(u, SPACE.items()):
        x = float(min(max(x, 0.0), 1.0))
        out[name] = float(lo * (hi / lo) ** x) if log else float(lo + (hi - lo) * x)
    if sum(out[b] for b in ("human", "app", "bot", "abuser")) <= 0:
        out["human"] = 1.0
    return {k: float(f"{v:.4g}") for k, v in out.items()}  # short enough to type back


def _to_unit(params: dict) -> np.ndarray:
    """Population parameters (every one of :data:`SPACE`) as a point of the unit cube."""
    out = []
    for name, (lo, hi, log) in SPACE.items():
        v = float(params[name])
        out.append(math.log(v / lo) / math.log(hi / lo) if log else (v - lo) / (hi - lo))
    return np.clip(np.array(out), 0.0, 1.0)


def _evolve(u, loss, step, steps, rng, run, *, widest=0.3, narrowest=0.01):
    """`steps` steps of a (1 + 1) evolution strategy from `u` (its loss `loss`): a Gaussian
    step in the unit cube, kept when the loss falls; the step grows by half on success and
    shrinks by 15% on failure. `run(point)` evaluates a point and returns its loss."""
    for _ in range(steps):
        cand = np.clip(u + rng.normal(0.0, step, len(u)), 0.0, 1.0)
        c = run(cand)
        if c < loss:
            u, loss, step = cand, c, min(step * 1.5, widest)
        else:
            step = max(step * 0.85, narrowest)
    return u, loss


def check_mix(params: dict) -> dict:
    """`params` as a mix of :data:`SPACE` (every searched parameter, a number within its
    range), as floats; a clear ValueError naming the parameter otherwise."""
    if not isinstance(params, dict):
        raise ValueError(f"a mix is a mapping of parameter to value, got {type(params).__name__}")
    unknown = sorted(set(params) - set(SPACE))
    if unknown:
        raise ValueError(f"{unknown[0]!r} is not a searched parameter ({', '.join(SPACE)})")
    out = {}
    for name, (lo, hi, _) in SPACE.items():
        if name not in params:
            raise ValueError(f"{name}: missing from the mix")
        v = params[name]
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not lo <= v <= hi:
            raise ValueError(f"{name} must be a number in [{lo:g}, {hi:g}], got {v!r}")
        out[name] = float(v)
    return out


def read_start(path) -> dict:
    """The mix in the JSON file `path`: a search's record (its ``winner``) or the parameters
    themselves; checked by :func:`check_mix`."""
    try:
        data = json.loads(Path(path).read_text())
    except json.JSONDecodeError as e:
        raise ValueError(f"not JSON ({e})") from None
    if isinstance(data, dict) and "winner" in data:
        data = data["winner"]
    return check_mix(data)


def search(*, trials: int = 120, refine: int = 60, finalists: int = 4, scale_up: int = 10,
           polish: int = 0, sources: int = 2_700, requests: int = 4_000_000, seed: int = 0,
           start: dict | None = None, workers: int | None = 1, progress: bool = False) -> dict:
    """A seeded search for the population that lands Cloudflare's four figures (module docs).

    Returns a record: the settings, every trial (parameters, figures, distance), the
    finalists at ``scale_up`` times the size, the ``polish`` steps from the best of them at
    that size (``polished``, each with ``kept``: whether it improved on the best so far), and
    the winner: the best of finalists and polished points. Deterministic in `seed`.

    With `start` (a mix, see :func:`check_mix`) there are no trials: the one finalist is
    `start` at ``scale_up`` times the size, the polish steps from it, and the record keeps it
    as ``start``; `trials`, `refine` and `finalists` are then ignored (recorded as 0, 0, 1).

    `workers` (as in :func:`evaluate`) runs the finalists and the polish, at ``scale_up`` times
    the size, on a local Dask cluster of that many processes; the trials, a second or so each,
    always run in this process. The record is the same either way.
    """
    if start is not None:
        start = check_mix(start)
        trials, refine, finalists = 0, 0, 1
    for name, v in (("trials", trials if start is None else 1), ("sources", sources),
                    ("requests", requests), ("finalists", finalists),
                    ("scale_up", scale_up)):
        if int(v) != v or v < 1:
            raise ValueError(f"{name} must be a whole number >= 1, got {v!r}")
    for name, v in (("refine", refine), ("polish", polish)):
        if int(v) != v or v < 0:
            raise ValueError(f"{name} must be a whole number >= 0, got {v!r}")
    rng = np.random.default_rng(seed)
    dims = len(SPACE)
    bar = tqdm(total=trials + refine + finalists + polish, desc="search",
               disable=not progress, leave=False)
    history = []

    def run(u, stage):
        r = evaluate(_to_params(u), sources=sources, requests=requests)
        history.append({"stage": stage, **r})
        bar.update(1)
        return r["distance"]["loss"]

    if start is None:
        points = [rng.random(dims) for _ in range(trials)]
        losses = [run(u, "random") for u in points]
        best = int(np.argmin(losses))
        _evolve(points[best], losses[best], 0.15, refine, rng, lambda c: run(c, "refine"))
    order = sorted(range(len(history)), key=lambda i: history[i]["distance"]["loss"])
    seen, chosen = set(), [] if start is None else [start]
    for i in order:
        key = tuple(sorted(history[i]["params"].items()))
        if key not in seen:
            seen.add(key)
            chosen.append(history[i]["params"])
        if len(chosen) == finalists:
            break
    finals = []
    for p in chosen:
        finals.append(evaluate(p, sources=sources * scale_up, requests=requests * scale_up,
                               workers=workers))
        bar.update(1)
    top = _lowest(finals)
    polished = []

    def run_big(u):
        r = evaluate(_to_params(u), sources=sources * scale_up, requests=requests * scale_up,
                     workers=workers)
        so_far = _lowest([top, *polished])
        polished.append({**r, "kept": r["distance"]["loss"] < so_far["distance"]["loss"]})
        bar.update(1)
        return r["distance"]["loss"]

    _evolve(_to_unit(top["params"]), top["distance"]["loss"], 0.05, polish, rng, run_big)
    bar.close()
    winner = _lowest([*finals, *polished])
    return {"target": CLOUDFLARE_2017, "limit": LIMIT, "window_s": WINDOW_S,
            "mode": "estimate",
            "settings": {"trials": trials, "refine": refine, "finalists": finalists,
                         "scale_up": scale_up, "polish": polish, "sources": sources,
                         "requests": requests, "seed": seed},
            "space": {k: list(v) for k, v in SPACE.items()},
            **({} if start is None else {"start": start}),
            "trials": history, "finalists": finals, "polished": polished,
            "winner": winner["params"]}


def run_calibration(*, trials: int = 120, refine: int = 60, finalists: int = 4,
                    scale_up: int = 10, polish: int = 0, sources: int = 2_700,
                    requests: int = 4_000_000, seed: int = 0, start: dict | None = None,
                    confirm_sources: int = 27_000, confirm_requests: int = 40_000_000,
                    confirm_seeds: int = 1, vary=None, vary_scale_up: int = 1,
                    neighbours: bool = True, workers: int | None = None,
                    progress: bool = False) -> dict:
    """The record of ``ratelab cloudflare-mix``: :func:`search`'s, then the winner confirmed
    and its neighbourhood, and how long it all took.

    ``confirmed``: the winner at `confirm_sources` and `confirm_requests` (none when
    `confirm_sources` is 0), on population seed 0; ``confirmed_reseeded``: on seeds 1 to
    `confirm_seeds` - 1 (when more than one). ``neighbourhood`` (with `neighbours`): each of
    `vary` (default: every searched parameter) varied alone around the winner at
    `vary_scale_up` times `sources` and `requests`. ``run``: the wall time. The other
    arguments are :func:`search`'s; `workers` is passed to every run.
    """
    began = time.perf_counter()
    record = search(trials=trials, refine=refine, finalists=finalists, scale_up=scale_up,
                    polish=polish, sources=sources, requests=requests, seed=seed, start=start,
                    workers=workers, progress=progress)
    winner = record["winner"]
    if confirm_sources:
        runs = [confirm(winner, sources=confirm_sources, requests=confirm_requests,
                        seed=s, workers=workers) for s in range(confirm_seeds)]
        record["confirmed"] = runs[0]
        if len(runs) > 1:
            record["confirmed_reseeded"] = runs[1:]
    if neighbours:
        record["neighbourhood"] = neighbourhood(winner, vary, sources=sources * vary_scale_up,
                                                requests=requests * vary_scale_up,
                                                workers=workers)
    record["run"] = {"wall_s": round(time.perf_counter() - began, 1)}
    return record


def best_run(record: dict) -> dict:
    """The run of `record` (a :func:`search` record) whose parameters are the winner's: the
    best of its finalists and polished points (a polished point is not among the trials)."""
    return _lowest([*record["finalists"], *record.get("polished", [])])


def _lowest(runs: list[dict]) -> dict:
    """The run of `runs` with the lowest loss (the first of equals)."""
    return min(runs, key=lambda r: r["distance"]["loss"])


def confirm(params: dict, *, sources: int = 27_000, requests: int = 40_000_000,
            seed: int = 0, workers: int | None = None) -> dict:
    """The mix `params` at a larger scale (by default 1/10 of Cloudflare's: 27,000 sources,
    40 million requests, with their requests per source): figures and distance. `seed` is
    the population's (the search's runs all use 0; another seed draws other sources from the
    same mix: whether the figures belong to the mix or to one draw of it). `workers` as in
    :func:`evaluate` (default: this process)."""
    return evaluate(params, sources=sources, requests=requests, seed=seed, workers=workers)


#: Factors of :func:`neighbourhood`: each parameter halved and doubled.
STEPS = (0.5, 2.0)


def neighbourhood(params: dict, names=None, *, sources: int = 2_700,
                  requests: int = 4_000_000, steps=STEPS, workers: int | None = 1) -> list:
    """Each of `names` (default: every searched parameter) varied alone around `params`.

    Values are the found value times each of `steps`, clipped to the search range of
    :data:`SPACE`; a parameter found at 0 (a behaviour left out) takes instead the values
    ``lo + (hi - lo) * (factor - 1) / 3`` (factors up to 1 leave it at 0, 4 is the top of its
    range). Returns one row per run — parameter, factor, value, the figures and the loss — and
    first a row for the found mix itself (parameter "found mix", factor 1).
    """
    names = list(SPACE) if names is None else list(names)
    for name in names:
        if name not in SPACE:
            raise ValueError(f"names: {name!r} is not a searched parameter ({', '.join(SPACE)})")
    base = evaluate(params, sources=sources, requests=requests, workers=workers)
    rows = [{"parameter": "found mix", "factor": 1.0, "value": float("nan"), **base["figures"],
             "loss": base["distance"]["loss"]}]
    for name in names:
        lo, hi, _ = SPACE[name]
        for f in steps:
            v = params[name] * f if params[name] > 0 else lo + (hi - lo) * (f - 1.0) / 3.0
            v = float(min(max(v, lo), hi))
            r = evaluate({**params, name: v}, sources=sources, requests=requests,
                         workers=workers)
            rows.append({"parameter": name, "factor": f, "value": v, **r["figures"],
                         "loss": r["distance"]["loss"]})
    return rows


def population(params: dict, *, sources: int = 2_700, requests: int = 4_000_000,
               seed: int = 0) -> Population:
    """The :class:`Population` of a found mix at the given size."""
    return replace(Population(sources=sources, requests=requests, seed=seed), **params)


def by_behaviour(params: dict, *, sources: int = 27_000, requests: int = 40_000_000,
                 seed: int = 0) -> pd.DataFrame:
    """Where a mix's wrong decisions, false negatives and false positives come from, estimate
    mode, at the given size: a row per behaviour, then the sources over the threshold and those
    never over; columns sources, requests (%), over the threshold, wrong decisions, false
    negatives, false positives."""
    groups = population_groups(population(params, sources=sources, requests=requests, seed=seed),
                               LIMIT, WINDOW_S, "estimate", progress=False)
    table = groups_table(groups)[["sources", "requests (%)", "over the threshold", "wrong, estimate"]]
    for k in ("false_negatives", "false_positives"):
        table[k.replace("_", " ")] = [g.misjudged("estimate")[k] for g in groups.values()]
    return table.rename(columns={"wrong, estimate": "wrong decisions"})

