"""Exercise: make the shared counter atomic with a Lua script (notebook 06).

Write ``decide(key, now, limit, window_s)``: a *program* in the style of
:mod:`ratelab.cluster.strategies` — a generator that yields store commands (a tuple such as
``("INCR", k)`` is one round trip; the reply is sent back in) and finally returns True or False.
It decides one request against a fixed window of `limit` per `window_s`, shared by many
gateways through one Redis. The window's counter is ``window_key(key, now, window_s)``
(``"key:k"`` for the calendar window k); admit iff count + 1 <= limit; a rejected request is
not counted; the counter must expire (PEXPIRE) and still exist until its window has ended.

GET, compare, INCR from the gateway is two round trips, and two gateways can both read 99:
do the whole decision in one EVAL of a Lua script. The check runs your program on the
simulated store, then in every interleaving of three gateways with one place left
(:func:`ratelab.cluster.interleave.interleavings`), and on a real Redis when you pass
``redis_url=``.
"""

from __future__ import annotations

import inspect
import uuid

from ..cluster.experiments import show_schedule
from ..cluster.interleave import interleavings
from ..cluster.sim import execute
from ..cluster.strategies import Strategy, window_key
from ..store import RedisStore, SimStore
from ..store.errors import StoreError
from .casekit import GRID_S, count, grid_times, on_grid, unix_start
from .core import AnswerFailed, Exercise, Failure, Mismatch, call
from ._limiter_kit import verbs

SCRIPT = """
local count = tonumber(redis.call("GET", KEYS[1]) or "0")
if count + 1 > tonumber(ARGV[1]) then
  return 0
end
if redis.call("INCR", KEYS[1]) == 1 then
  redis.call("PEXPIRE", KEYS[1], ARGV[2])
end
return 1
"""


def decide(key, now, limit, window_s):
    """Yields the store commands for one request of `key` at `now`; returns whether it passes."""
    counter = window_key(key, now, window_s)
    ttl_ms = int(2 * window_s * 1000)  # two windows: gateways whose clocks lag still count
    allowed = yield ("EVAL", SCRIPT, 1, counter, limit, ttl_ms)
    return allowed == 1


SOLUTION = f"SCRIPT = \"\"\"{SCRIPT}\"\"\"\n\n\n" + inspect.getsource(decide)


class _Answer(Strategy):
    """The student's program as a strategy, so the cluster tools can drive it."""

    name = "your decide"

    def __init__(self, answer, limit, window_s) -> None:
        super().__init__(limit, window_s, 1)
        self.answer = answer

    def decide(self, gateway, key, now):
        program = call(self.answer, key, now, self.limit, self.window_s)
        if not inspect.isgenerator(program):
            raise AnswerFailed("bad return", "decide must be a generator: it yields commands "
                                             f"and returns True or False (it returned "
                                             f"{type(program).__name__})")
        try:
            result = yield from program
        except (AnswerFailed, NotImplementedError):
            raise
        except GeneratorExit:
            raise
        except Exception as e:  # the student's program failed mid-way (an error reply...)
            raise AnswerFailed("raised", f"your program raised {type(e).__name__}: {e}") from None
        if not isinstance(result, bool):
            raise AnswerFailed("bad return", f"decide must return True or False, got {result!r}")
        return result


def _drive(program, conn):
    """Run a program to its end on one connection; its result."""
    try:
        cmd = next(program)
        while True:
            reply = execute(conn, cmd)
            cmd = program.throw(reply) if isinstance(reply, StoreError) else program.send(reply)
    except StopIteration as stop:
        return stop.value


class LuaExercise(Exercise):
    name = "lua_counter"
    answer = "decide"
    runs_here = True  # the student's script runs in the checker's SimStore
    references = ("ratelab.cluster.scripts", "ratelab.cluster.strategies.LuaFixedWindow",
                  "ratelab.cluster.strategies.LuaSlidingWindow")
    title = "An atomic shared counter with a Lua script"
    notebook = "06-distributed-races"

    def public_cases(self):
        return [
            {"name": "one gateway, limit 3", "kind": "sequential", "limit": 3, "window_s": 1.0,
             "times": [0.25, 0.25, 0.5, 0.5, 0.75, 1.25, 1.25, 1.5, 1.75, 2.5]},
            {"name": "three gateways, one place left", "kind": "exhaustive", "limit": 5,
             "clients": 3},
        ]

    def random_cases(self, rng, n):
        out = []
        for i in range(n):
            limit, w = count(rng.integers(1, 6)), float(rng.choice(WINDOWS_S))
            times = sorted(float(t) for t in rng.uniform(0, 3 * w, int(rng.integers(5, 30))))
            out.append({"name": f"random sequence {i}", "kind": "sequential", "limit": limit,
                        "window_s": w, "times": times})
        return out

    random_count = 3

    def instructor_cases(self, rng):
        """More random sequences, then window edges, Unix times, long idle gaps, many keys
        (a ``"keys"`` list: each request's key) and a limit of one among three gateways."""
        out = self.random_cases(rng, self.random_count)
        kinds = (("boundary edges", _edges), ("Unix time", _unix), ("long idle", _idle),
                 ("many keys", _many_keys))
        for label, times in kinds:
            for i in range(2):
                limit, w = count(rng.integers(1, 6)), float(rng.choice(WINDOWS_S))
                case = {"name": f"{label} {i}", "kind": "sequential", "limit": limit,
                        "window_s": w}
                out.append({**case, **times(rng, limit, w)})
        out.append({"name": "limit of one, three gateways", "kind": "exhaustive", "limit": 1,
                    "clients": 3})
        return out

    def run_case(self, answer, case, redis_url=None, **options):
        if case["kind"] == "exhaustive":
            return self._exhaustive(answer, case)
        n = self._sequential(answer, case, SimStore(), "sim", "rl")
        if redis_url:
            store = RedisStore(redis_url)
            try:
                n += self._sequential(answer, case, store, "redis",
                                      f"ratelab-exercise:{uuid.uuid4().hex}", real=True)
            finally:
                store.close()
        return n

    def _sequential(self, answer, case, store, where, key, real=False):
        limit, w = case["limit"], case["window_s"]
        keys = [f"{key}:{name}" for name in case["keys"]] if "keys" in case \
            else [key] * len(case["times"])
        strategy = _Answer(answer, limit, w)
        conn = store.connect("gateway")
        counts: dict[tuple[str, int], int] = {}
        rows = []
        for i, (t, who) in enumerate(zip(case["times"], keys)):
            if not real:
                store.set_time(t)
            # on a real Redis the clock is Redis's own: the windows are named from `t`
            k, counter_key = int(t // w), window_key(who, t, w)
            expected = counts.get((who, k), 0) + 1 <= limit
            got = _drive(strategy.decide(0, who, t), conn)
            counts[who, k] = counts.get((who, k), 0) + (1 if expected else 0)
            counter = conn.execute("GET", counter_key)
            rows.append((i, t, expected, got, counter))
            problem = None
            if got != expected:
                problem = f"the request should {'pass' if expected else 'be refused'}"
            elif str(counter) != str(counts[who, k]):
                problem = (f"the counter {counter_key} reads {counter!r} after it; "
                           f"{counts[who, k]} requests passed in this window"
                           + (" (rejected requests must not count)" if not expected else ""))
            else:
                pttl = conn.execute("PTTL", counter_key)
                left_ms = ((k + 1) * w - t) * 1000
                if pttl is None or pttl < 0:
                    problem = (f"the counter {counter_key} has no expiry (PTTL "
                               f"{pttl}): every window's counter would stay in Redis forever")
                elif not real and pttl + 1 < left_ms:
                    problem = (f"the counter expires in {pttl} ms, before its window ends "
                               f"({left_ms:.0f} ms away)")
            if problem:
                table = "\n".join([f"{'#':>2}  {'time':>8}  expected / yours    counter after"] + [
                    f"{j:>2}  {tt:>8.4g}  {'pass' if e else 'REJECT'} / {'pass' if g else 'REJECT'}"
                    f"{'  <-- ' if j == i else '    '}{c}" for j, tt, e, g, c in rows[-5:]])
                whose = f" of key {case['keys'][i]!r}" if "keys" in case else ""
                raise Mismatch(Failure(
                    case["name"], "disagrees",
                    f"in case {case['name']!r} on the {where} store (limit {limit} per "
                    f"{w:g} s), request {i}{whose} at t={t:g}: {problem}", index=i, time=t,
                    field="allowed" if got != expected else "counter", expected=expected,
                    got=got, timeline=table))
        return len(case["times"])

    def _exhaustive(self, answer, case):
        limit, clients = case["limit"], case["clients"]

        def setup(store):
            store.execute("SET", "rl:0", str(limit - 1))
            store.execute("PEXPIRE", "rl:0", 60_000)

        try:
            outcomes = interleavings(lambda: _Answer(answer, limit, 1.0), clients, setup=setup,
                                     counter_key="rl:0", max_schedules=50_000)
        except ValueError as e:
            raise AnswerFailed("rule", f"too many interleavings to try ({e}): use fewer "
                                       "round trips") from None
        for o in outcomes:
            if o.total_admitted != 1 or str(o.counter) != str(limit):
                what = (f"{o.total_admitted} of {clients} gateways were admitted with one "
                        f"place left, and the counter ended at {o.counter} (limit {limit})")
                raise Mismatch(Failure(
                    case["name"], "disagrees",
                    f"in case {case['name']!r}: in one of {len(outcomes)} interleavings "
                    f"{what}", field="admitted", expected=1, got=o.total_admitted,
                    timeline="the schedule (gateway: command -> reply):\n" + show_schedule(o)))
        return len(outcomes)


WINDOWS_S = (1.0, 10.0, 60.0)
"""The windows the sequential cases draw from (whole seconds: every edge k x W is exact)."""


def _edges(rng, limit, w):
    """limit + 1 requests at k x W - g, k x W and k x W + g on consecutive edges (g = 1/64 s)."""
    first = int(rng.integers(1, 1000))
    times = []
    for k in range(first, first + int(rng.integers(2, 4))):
        times += [k * w - GRID_S] * (limit + 1) + [k * w] * (limit + 1) + [k * w + GRID_S]
    return {"times": times}


def _unix(rng, limit, w):
    """A grid stream from a Unix time, its edges crossed."""
    return {"times": grid_times(rng, 30, w / (1.5 * limit), unix_start(rng))}


def _idle(rng, limit, w):
    """Bursts of limit + 1 with one window, two and a thousand idle between them."""
    t = on_grid(float(rng.uniform(0, 3 * w)))
    times = [t] * (limit + 1)
    for gap in rng.permutation([1, 2, 1000]):
        t += int(gap) * w
        times += [t] * (limit + 1)
    return {"times": times}


def _many_keys(rng, limit, w):
    """Several users' requests interleaved, each user with a counter of their own."""
    users = [f"user{j}" for j in range(int(rng.integers(3, 7)))]
    times = grid_times(rng, 40, w / (1.5 * limit * len(users) / 2))
    return {"times": times, "keys": [str(rng.choice(users)) for _ in times]}


EXERCISE = LuaExercise()
check, hint, solution = verbs(EXERCISE, SOLUTION, (
    "Put GET, the comparison and INCR inside one script: Redis runs a script as one step, "
    "so no other gateway's command can land between the read and the write. Only INCR "
    "when admitting; PEXPIRE when the count is 1 (a new window's counter)."),
    imports="from ratelab.cluster.strategies import window_key")
