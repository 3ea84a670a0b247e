"""A real nginx and the NginxLimitReq model decide the same schedule the same way.

nginx (Debian package) runs on a free loopback port with four limit_req locations — policing
(burst + nodelay), shaping (burst, every queued request delayed), two-stage (delay=N) and no
burst at all — each serving a file (``return`` would bypass limit_req). One timed schedule of
requests is sent to all four, each request on its own pre-opened connection, and the 200/429
pattern must equal the model's on the same schedule (requests sent at the same instant reach
nginx in any order, so each instant's outcomes are compared as a sorted list); the time nginx
held each request must match the model's delay (delays come in steps of 100 ms here): no
earlier than 20 ms before it, no later than 60 ms after it.

The schedules keep every request far from a decision boundary: at 5 r/s a request's fate
changes only at multiples of 200 ms after the burst, and the requests sit 100 ms away from
them. ``test_schedules_are_robust_to_jitter`` checks that on the model, so a few milliseconds
of scheduling noise cannot flip a decision.
"""

from __future__ import annotations

import http.client
import threading
import time
import uuid

import numpy as np
import pytest

from ratelab.limiters import NginxLimitReq
from services import nginx_server

pytestmark = pytest.mark.service

RATE = 5  # r/s: a request drains every 200 ms
EARLY_S, LATE_S = 0.02, 0.06  # nginx never serves early; a loaded client reads late

# location -> (model parameters, limit_req directive tail)
CASES = {
    "police": (dict(burst=3, nodelay=True), "burst=3 nodelay"),
    "shape": (dict(burst=3), "burst=3"),
    "twostage": (dict(burst=4, delay=2), "burst=4 delay=2"),
    "strict": (dict(burst=0), ""),
}

# One schedule (seconds after the start) for every location: a burst, then requests that keep
# nginx's excess 500 thousandths away from every threshold (and, for burst=0, gaps far from
# 200 ms), some in pairs, then a pause that drains everything and another burst.
SCHEDULE = sorted([0.0] * 7 + [0.1, 0.3, 0.7, 0.7, 1.1, 1.5, 1.5, 1.5] + [2.5] * 4 + [2.6])

CONF = """
    limit_req_status 429;
{zones}
    server {{
        listen 127.0.0.1:{{port}};
        root {{root}};
{locations}
    }}
"""


def printed(name: str) -> tuple[str, str]:
    """(the limit_req_zone line, the limit_req line) that NginxLimitReq.config prints for case
    `name`: what the test deploys is what ratelab prints."""
    lines = [x.strip() for x in NginxLimitReq(rate=RATE, **CASES[name][0])
             .config("$http_x_client", zone=name).splitlines()]
    return (next(x for x in lines if x.startswith("limit_req_zone ")),
            next(x for x in lines if x.startswith("limit_req ")))


def conf() -> str:
    zones = "\n".join(f"    {printed(name)[0]}" for name in CASES)
    locations = "\n".join(f"        location /{name}/ {{ {printed(name)[1]} }}"
                          for name in CASES)
    return CONF.format(zones=zones, locations=locations)


def test_the_printed_lines_are_the_directives_of_each_case():
    for name, (_, tail) in CASES.items():
        zone, limit = printed(name)
        assert zone == f"limit_req_zone $http_x_client zone={name}:10m rate={RATE}r/s;"
        assert limit == " ".join(f"limit_req zone={name} {tail}".split()) + ";"


def model(params: dict, times) -> list[tuple[int, float]]:
    """(status, delay s) the model gives each request of `times`, for one fresh key."""
    lim = NginxLimitReq(rate=RATE, **params)
    out = []
    for t in times:
        d = lim.allow("k", t)
        out.append((200 if d.allowed else 429, d.delay))
    return out


def send_schedule(base: str, requests: list[tuple[float, str, str]]) -> list[tuple[int, float]]:
    """Send each (t, path, key) at start + t on its own connection; (status, seconds held)."""
    host, port = base.removeprefix("http://").split(":")
    conns = [http.client.HTTPConnection(host, int(port), timeout=10) for _ in requests]
    for c in conns:
        c.connect()
    results: list = [None] * len(requests)
    start = time.monotonic() + 0.3

    def one(i: int) -> None:
        t, path, key = requests[i]
        while (wait := start + t - time.monotonic()) > 0:
            time.sleep(min(wait, 0.002))
        sent = time.monotonic()
        conns[i].request("GET", path, headers={"X-Client": key})
        resp = conns[i].getresponse()
        resp.read()
        results[i] = (resp.status, time.monotonic() - sent)
        conns[i].close()

    threads = [threading.Thread(target=one, args=(i,)) for i in range(len(requests))]
    for th in threads:
        th.start()
    for th in threads:
        th.join(timeout=20)
    return results


def test_schedules_are_robust_to_jitter():
    rng = np.random.default_rng(6)
    for params, _ in CASES.values():
        want = [s for s, _ in model(params, SCHEDULE)]
        for _ in range(200):
            jitter = rng.uniform(-0.03, 0.03, len(SCHEDULE))
            shaken = np.maximum.accumulate(np.maximum(0.0, np.array(SCHEDULE) + jitter))
            assert [s for s, _ in model(params, shaken)] == want


def test_the_schedule_tells_the_four_philosophies_apart():
    outcomes = {name: model(params, SCHEDULE) for name, (params, _) in CASES.items()}
    assert len({tuple(o) for o in outcomes.values()}) == 4
    # policing passes burst + 1 at once, shaping holds them, two-stage holds only the tail
    assert [d for s, d in outcomes["police"][:4]] == [0, 0, 0, 0]
    assert [d for s, d in outcomes["shape"][:4]] == pytest.approx([0, 0.2, 0.4, 0.6])
    assert [d for s, d in outcomes["twostage"][:5]] == pytest.approx([0, 0, 0, 0.2, 0.4])


ATTEMPTS = 3  # a whole schedule again, on fresh keys, when the machine hiccupped


def mismatches(got: list, errors: str) -> list:
    """Where nginx's (status, time held) differ from the model's, schedule by schedule."""
    problems, i = [], 0
    for name, (params, _) in CASES.items():
        want = model(params, SCHEDULE)
        real = got[i:i + len(SCHEDULE)]
        i += len(SCHEDULE)
        # requests sent at the same instant reach nginx in any order: compare each instant's
        # outcomes as a sorted list of (status, time held)
        for t in sorted(set(SCHEDULE)):
            idx = [k for k, s in enumerate(SCHEDULE) if s == t]
            r = sorted(real[k] for k in idx)
            m = sorted(want[k] for k in idx)
            if [s for s, _ in r] != [s for s, _ in m]:
                problems.append(("status", name, t, r, m, errors[-2000:]))
            for (_, held), (_, delay) in zip(r, m):
                if not delay - EARLY_S < held < delay + LATE_S:
                    problems.append(("held", name, t, r, m))
    return problems


def test_real_nginx_matches_the_model(tmp_path):
    """Every status and hold time as the model says, in one whole run of the schedule.

    The schedule is timed by threads on a shared machine; a run disturbed by a stall of a
    tenth of a second is sent again on fresh keys (up to ATTEMPTS runs). A wrong model fails
    every run.
    """
    files = {f"{name}/index.html": f"{name}\n" for name in CASES}
    runs = []
    with nginx_server(conf(), files, tmp_path) as base:
        for _ in range(ATTEMPTS):
            run = uuid.uuid4().hex[:8]
            requests = [(t, f"/{name}/index.html", f"{name}-{run}")
                        for name in CASES for t in SCHEDULE]
            runs.append(mismatches(send_schedule(base, requests),
                                   (tmp_path / "error.log").read_text()))
            if not runs[-1]:
                break
    assert not runs[-1], runs
