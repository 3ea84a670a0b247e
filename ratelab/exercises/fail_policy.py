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

from .core import AnswerFailed, Exercise, Failure, Mismatch, call
from ._limiter_kit import verbs

REQUIREMENTS = ("never over the limit", "never lock out")


def fail_policy(requirements):
    """'closed' where nothing may slip through, 'open' where nobody may be locked out."""
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
            names = ["login", "search", "checkout", "feed"][: int(rng.integers(2, 5))]
            reqs = {e: REQUIREMENTS[int(rng.integers(0, 2))] for e in names}
            start = float(rng.uniform(0.5, 3.0))
            out.append({"name": f"random outage {i}", "requirements": reqs,
                        "outage": [start, start + float(rng.uniform(0.5, 2.0))],
                        "limit": int(rng.integers(10, 40))})
        return out

    def run_case(self, answer, case, **options):
        from ..cluster.experiments import outage_effect

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
