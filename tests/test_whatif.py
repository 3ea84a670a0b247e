"""What-if: policies parsed against the registry, and figures worked out by hand."""

from __future__ import annotations

import json

import numpy as np
import pytest

from ratelab.cli import main
from ratelab.traces import Trace
from ratelab.whatif import parse_policy, tally, what_if

# A: 5 requests at t = 0; B: 1 at 3600.5; C: 4 at 7200 (hours 0, 1 and 2).
HAND = Trace(np.array([0.0] * 5 + [3600.5] + [7200.0] * 4),
             np.array([0] * 5 + [1] + [2] * 4, dtype=np.int32), key_names=["A", "B", "C"])
BUCKET = "token-bucket rate=1 capacity=2"       # 2 pass at once, then one per second
WINDOW = "fixed-window limit=2 window=60"       # 2 per calendar minute
SHAPER = "leaky-bucket rate=1 capacity=5 mode=shape"  # queues up to 5, one per second


@pytest.mark.parametrize("text, params", [
    ("token-bucket rate=10 capacity=50", {"rate": 10, "capacity": 50}),
    ("sliding-window-counter limit=600 window=60", {"limit": 600, "window": 60}),
    ("leaky-bucket rate=0.5 capacity=3 mode=shape",
     {"rate": 0.5, "capacity": 3, "mode": "shape"}),
    ("sliding-window-log limit=5 window=1 count-rejected=true",
     {"limit": 5, "window": 1, "count_rejected": True}),
])
def test_a_policy_is_a_registry_name_and_its_parameters(text, params):
    p = parse_policy(text)
    assert p.params == params and p.limiter().name == text.split()[0]


@pytest.mark.parametrize("text, words", [
    ("token-buckets rate=1 capacity=2", ["unknown limiter 'token-buckets'"]),
    ("token-bucket rate=1 capcity=2", ["unknown parameter 'capcity'", "rate, capacity"]),
    ("token-bucket rate=1", ["missing capacity"]),
    ("token-bucket rate=1 rate=2 capacity=2", ["'rate' is given twice"]),
    ("token-bucket rate=-1 capacity=2", ["rate must be a positive"]),
    ("token-bucket rate capacity=2", ["'rate' is not param=value"]),
    ("sliding-window-log limit=5 window=1 count_rejected=maybe", ["true or false"]),
    ("", ["policy is empty"]),
])
def test_a_bad_policy_is_an_error_naming_what_is_wrong(text, words):
    with pytest.raises(ValueError) as e:
        parse_policy(text)
    for w in words:
        assert w in str(e.value)


def test_token_bucket_by_hand():
    r = what_if(HAND, [BUCKET])["policies"][0]
    # A: 2 of 5 pass at t = 0; C: 2 of 4 at 7200; B's one request passes
    assert (r["requests_limited"], r["clients_limited"]) == (5, 2)
    assert [(h["hour_start_s"], h["requests"], h["requests_limited"], h["clients"],
             h["clients_limited"]) for h in r["by_hour"]] == [
        (0.0, 5, 3, 1, 1), (3600.0, 1, 0, 1, 0), (7200.0, 4, 2, 1, 1)]
    assert [(c["client"], c["requests"], c["requests_limited"]) for c in r["top_clients"]] \
        == [("A", 5, 3), ("C", 4, 2)]
    assert r["worst_minute"] == {"minute_start_s": 0.0, "requests": 5, "requests_limited": 3,
                                 "clients_limited": 1}
    # an empty bucket refills one token in 1 s: every 429 says Retry-After: 1
    ra = r["retry_after"]
    assert ra["histogram"] == [{"retry_after_s": 1, "responses_429": 5}]
    assert ra["mean_s"] == 1.0 and ra["p99_s"] == 1
    b = r["backend"]
    assert (b["requests_admitted"], b["peak_per_second"], b["peak_second_start_s"],
            b["peak_per_minute"]) == (5, 2, 0.0, 2)


def test_fixed_window_by_hand_waits_for_the_next_minute():
    rec = what_if(HAND, [WINDOW])
    r = rec["policies"][0]
    assert r["requests_limited"] == 5
    # both bursts open their minute
    assert r["retry_after"]["histogram"] == [{"retry_after_s": 60, "responses_429": 5}]
    assert rec["offered"]["peak_per_second"] == 5 and rec["offered"]["peak_per_minute"] == 5


def test_a_shaper_delays_instead_of_limiting_and_the_backend_sees_it():
    r = what_if(HAND, [SHAPER])["policies"][0]
    # A's 5 leave at 0, 1, 2, 3, 4 s; C's 4 at 7200 ... 7203: one per second
    assert r["requests_limited"] == 0 and r["backend"]["requests_delayed"] == 4 + 3
    assert r["backend"]["peak_per_second"] == 1 and r["backend"]["peak_per_minute"] == 5
    assert r["retry_after"]["responses_429"] == 0


def test_each_hour_has_its_busiest_second_as_offered_and_as_admitted():
    bucket, shaper = what_if(HAND, [BUCKET, SHAPER])["policies"]
    # offered: A's 5 at 0 s, B's 1 at 3600.5 s, C's 4 at 7200 s; the bucket admits 2 of a burst
    assert [(h["peak_per_second"], h["peak_per_second_admitted"])
            for h in bucket["by_hour"]] == [(5, 2), (1, 1), (4, 2)]
    # the shaper lets one a second leave: A's 5 over 0-4 s, C's 4 over 7200-7203 s
    assert [h["peak_per_second_admitted"] for h in shaper["by_hour"]] == [1, 1, 1]


def test_retry_after_percentiles_by_hand():
    t = Trace(np.array([0.0, 0.0, 0.0, 0.0]), np.zeros(4, np.int32))
    r = what_if(t, ["token-bucket rate=0.25 capacity=2"])["policies"][0]
    # empty bucket at 0.25 tokens/s: 4 s for the next token, every refusal says 4
    assert r["retry_after"]["histogram"] == [{"retry_after_s": 4, "responses_429": 2}]
    assert r["retry_after"]["min_s"] == 4


def test_a_haproxy_rule_by_hand_counts_what_it_refuses():
    """gt 2 per 10 s: A's 5 at t = 0 pass 2, and each refusal is counted: the k-th finds
    k + 2 in the period, and a request passes in the next one once 1 + (k + 2) x remain // 10
    <= 2, at remain < 20 / (k + 2) s: at 13.334, 15.001 and 16.001 s (Retry-After 14, 16 and
    17). C's 4 at 7200: its two refusals the same as A's first two."""
    r = what_if(HAND, ["haproxy period=10 limit=2"])["policies"][0]
    assert (r["requests_limited"], r["clients_limited"]) == (5, 2)
    assert r["retry_after"]["histogram"] == [
        {"retry_after_s": s, "responses_429": n} for s, n in ((14, 2), (16, 2), (17, 1))]


def test_haproxy_and_nginx_policies_carry_the_lines_that_deploy_them(capsys):
    policies = ["haproxy period=10 limit=2", "nginx rate=0.5 burst=1 nodelay=true",
                "nginx rate=0.123 burst=1", BUCKET]
    rec = what_if(HAND, policies)
    lines = [p["config"] for p in rec["policies"]]
    assert lines[0] == parse_policy(policies[0]).limiter().config()
    assert "sc_http_req_rate(0) gt 2" in lines[0] and "track-sc0 src" in lines[0]
    assert "limit_req_zone $binary_remote_addr zone=ratelab:10m rate=30r/m;" in lines[1]
    assert "limit_req zone=ratelab burst=1 nodelay;" in lines[1]
    assert lines[2].startswith("# nginx cannot run this policy as replayed: rate=0.123")
    assert lines[3] is None and rec["policies"][3]["server"] is None
    assert [p["server"] for p in rec["policies"][:2]] == ["haproxy", "nginx"]
    argv = ["what-if", "--dataset", "nasa-1995-07-clf-sample", "--no-progress"]
    assert main(argv + ["--policy", policies[0], "--policy", policies[1]]) == 0
    out = capsys.readouterr().out
    assert "[1] in haproxy, limiting by the client's address:" in out
    assert "    http-request deny deny_status 429 hdr Retry-After 20 " in out
    assert "    limit_req zone=ratelab burst=1 nodelay;" in out


def test_tallies_of_disjoint_clients_add_up_to_the_whole():
    rng = np.random.default_rng(7)
    n = 4000
    t = Trace.from_arrays(np.sort(rng.uniform(0, 3 * 3600, n)),
                          rng.integers(0, 40, n).astype(np.int32))
    policies = [parse_policy("token-bucket rate=0.05 capacity=3"), parse_policy(WINDOW),
                parse_policy("leaky-bucket rate=0.05 capacity=3 mode=shape")]
    whole = tally(t, policies).record()
    low, high = t.for_keys(range(20)), t.for_keys(range(20, 40))
    parts = tally(low, policies).add(tally(high, policies)).record()
    assert parts == whole
    assert all(p["requests_limited"] > 0 for p in whole["policies"])  # the check bites
    assert whole["policies"][2]["backend"]["requests_delayed"] > 0


def test_cli_table_and_json_agree(capsys, data_dir):
    argv = ["what-if", "--dataset", "epa-http", "--policy", "token-bucket rate=1 capacity=10",
            "--policy", "sliding-window-counter limit=60 window=60", "--no-progress"]
    assert main(argv + ["--json"]) == 0
    rec = json.loads(capsys.readouterr().out)
    assert rec["requests"] == 47_748 and rec["clients"] == 2_333
    first = rec["policies"][0]
    assert first["requests_limited"] == sum(h["requests_limited"] for h in first["by_hour"])
    assert first["requests_limited"] == sum(h["responses_429"]
                                            for h in first["retry_after"]["histogram"])
    assert first["backend"]["requests_admitted"] == 47_748 - first["requests_limited"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "[1] token-bucket rate=1 capacity=10" in out and "by hour (UTC)" in out
    assert f"{first['requests_limited']:,} (" in out


@pytest.mark.parametrize("extra, code, words", [
    (["--policy", "token-bucket rate=1 capcity=2"], 2, "--policy: policy"),
    (["--policy", BUCKET, "--key-col", "user"], 2, "--key-col"),
    (["--policy", BUCKET, "--scheduler", "tcp://127.0.0.1:1"], 2, "--scheduler needs"),
])
def test_cli_user_mistakes_exit_2_naming_the_flag(capsys, tmp_path, extra, code, words):
    log = tmp_path / "a.log"
    log.write_text('1.2.3.4 - - [01/Jul/1995:00:00:01 -0400] "GET / HTTP/1.0" 200 1\n')
    assert main(["what-if", "--trace", str(log), *extra]) == code
    assert words in capsys.readouterr().err


def test_cli_missing_log_exits_1(capsys, tmp_path):
    assert main(["what-if", "--trace", str(tmp_path / "none.log"), "--policy", BUCKET]) == 1
    assert "--trace: no log file" in capsys.readouterr().err


def test_cli_reads_a_trace_converted_to_parquet_as_the_log_it_came_from(capsys, tmp_path):
    """HAND written as a CLF log (whole seconds), converted once to Parquet: what-if gives
    the same figures from either file, and the token bucket's by hand (A's 5 at once: 2
    pass, 3 limited; C's 4: 2 limited; B's 1 passes)."""
    stamps = {0: "01/Jul/1995:00:00:00", 3600: "01/Jul/1995:01:00:00",
              7200: "01/Jul/1995:02:00:00"}
    log = tmp_path / "hand.log"
    log.write_text("".join(
        f'{HAND.key_names[k]} - - [{stamps[int(t)]} +0000] "GET / HTTP/1.0" 200 1\n'
        for t, k in zip(HAND.time, HAND.key)))
    parquet = tmp_path / "hand.parquet"
    assert main(["traces", "convert", str(log), str(parquet)]) == 0
    capsys.readouterr()
    recs = []
    for path in (log, parquet):
        assert main(["what-if", "--trace", str(path), "--policy", BUCKET, "--policy", WINDOW,
                     "--no-progress", "--json"]) == 0
        recs.append(json.loads(capsys.readouterr().out))
    assert recs[0]["policies"] == recs[1]["policies"]
    assert recs[1]["requests"] == 10 and recs[1]["clients"] == 3
    bucket = recs[1]["policies"][0]
    assert bucket["requests_limited"] == 5 and bucket["clients_limited"] == 2
