"""Exercise: fail open or fail closed, per endpoint (notebook 07).

When the shared store is down, each endpoint's gateway must still answer. Write
``fail_policy(requirements) -> dict``: for each endpoint (a key of `requirements`, whose value says
in words what must never happen to it) answer "open" (admit what cannot be checked) or
"closed" (refuse it). The check runs the outage experiment of notebook 07
(:func:`ratelab.cluster.experiments.outage_effect`) with your policy and measures whether each
requirement held: "never over the limit" means nothing slipped through beyond the limit;
"never lock out" means nobody a healthy store would have admitted was refused.
"""

from __future__ import annotations

from ..cluster.experiments import outage_effect
from .casekit import count
from .core import AnswerFailed, Exercise, Failure, Mismatch, call
from ._limiter_kit import verbs

REQUIREMENTS = ("never over the limit", "never lock out")

ENDPOINTS = ("login", "search", "checkout", "feed", "upload", "admin", "export", "health")
"""Endpoint names the cases draw from."""

OUTAGE_RUN_S = 6.0
"""Seconds the outage experiment runs (:func:`ratelab.cluster.experiments.outage`)."""


def fail_policy(requirements):
    """{endpoint: "open" or "closed"} for every endpoint of `requirements`."""
    return {endpoint: "closed" if need == "never over the limit" else "open"
            for endpoint, need in requirements.items()}


class FailExercise(Exercise):
    name = "fail_policy"
    answer = "fail_policy"
    title = "Fail open or fail closed"
    notebook = "07-when-the-store-fails"
    random_count = 2

    def public_cases(self):
        return [{"name": "notebook 07's two endpoints, 2 s outage",
                 "requirements": {"login": "never over the limit", "search": "never lock out"},
                 "outage": [2.0, 4.0], "limit": 30}]

    def random_cases(self, rng, n):
        out = []
        for i in range(n):
            names = list(ENDPOINTS[: int(rng.integers(2, 5))])
            start = float(rng.uniform(0.5, 3.0))
            out.append(self.case(f"random outage {i}", self.needs(rng, names),
                                 [start, start + float(rng.uniform(0.5, 2.0))],
                                 rng.integers(10, 40)))
        return out

    @staticmethod
    def case(name, requirements, outage, limit):
        """A case dict: `requirements` per endpoint, the store down during `outage`."""
        return {"name": name, "requirements": requirements, "outage": [float(t) for t in outage],
                "limit": count(limit)}

    @staticmethod
    def needs(rng, names):
        """A requirement drawn for each endpoint of `names`."""
        return {e: REQUIREMENTS[int(rng.integers(0, 2))] for e in names}

    def instructor_cases(self, rng):
        """More random outages, then one requirement for every endpoint, outages from the
        start or to the end of the run, and many endpoints (the keys of this API)."""
        out = self.random_cases(rng, self.random_count)
        for i, need in enumerate(REQUIREMENTS):
            names = list(ENDPOINTS[: int(rng.integers(2, 5))])
            out.append(self.case(f"one requirement for all {i}", {e: need for e in names},
                                 [1.0, 3.0], rng.integers(10, 40)))
        start = float(rng.uniform(0.5, 3.0))
        out.append(self.case("outage from the start", self.needs(rng, ENDPOINTS[:3]),
                             [0.0, start], rng.integers(10, 40)))
        out.append(self.case("outage to the end", self.needs(rng, ENDPOINTS[:3]),
                             [start, OUTAGE_RUN_S], rng.integers(10, 40)))
        names = [str(e) for e in rng.permutation(ENDPOINTS)[:6]]
        out.append(self.case("many endpoints", self.needs(rng, names), [2.0, 3.5],
                             rng.integers(10, 40)))
        return out

    def run_case(self, answer, case, **options):
        reqs = case["requirements"]
        if not callable(answer):
            raise AnswerFailed("bad return", "the answer must be a function fail_policy(...)")
        policy = call(answer, dict(reqs))
        if not isinstance(policy, dict) or set(policy) != set(reqs) or \
                any(v not in ("open", "closed") for v in policy.values()):
            raise AnswerFailed("bad return", f"fail_policy must return {{endpoint: 'open' or "
                                             f"'closed'}} for {sorted(reqs)}, got {policy!r}")
        effect = outage_effect(policy, outage=tuple(case["outage"]), limit=case["limit"],
                               rate_per_s=40.0 * len(reqs), endpoints=tuple(reqs))
        for endpoint, need in reqs.items():
            e = effect[endpoint]
            broken = (e["slipped_through"] if need == "never over the limit"
                      else e["locked_out"])
            if broken:
                what = ("slipped through beyond the limit" if need == "never over the limit"
                        else f"were locked out ({e['users_locked_out']} users)")
                table = "\n".join(f"{k:>16}: {v}" for k, v in e.items())
                raise Mismatch(Failure(
                    case["name"], "disagrees",
                    f"in case {case['name']!r}: {endpoint!r} requires '{need}', but failing "
                    f"{policy[endpoint]} {broken} requests {what} during the outage "
                    f"{case['outage'][0]:.2f}-{case['outage'][1]:.2f} s",
                    field=endpoint, expected=need, got=policy[endpoint],
                    timeline=f"what the outage did to {endpoint}:\n{table}"))
        return sum(e["requests"] for e in effect.values())


EXERCISE = FailExercise()
check, hint, solution = verbs(EXERCISE, fail_policy, (
    "Failing open admits everything the store cannot check: what slips through grows with "
    "the outage. Failing closed refuses everything: users are locked out. Pick, per "
    "endpoint, the cost its requirement can bear."))
