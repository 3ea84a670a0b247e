"""The progress helper: silent when asked, shown (on stderr outside notebooks) when slow."""

from __future__ import annotations

import gzip
import threading

from ratelab.progress import bar, track
from ratelab.traces.loaders import load_log


def test_progress_false_shows_nothing(capsys):
    assert list(track(range(5), progress=False, delay_s=0)) == [0, 1, 2, 3, 4]
    with bar(10, desc="quiet", progress=False, delay_s=0) as b:
        b.update(10)
        assert b.disable
    captured = capsys.readouterr()
    assert captured.err == "" and captured.out == ""


def test_a_bar_is_shown_once_its_delay_has_passed(capsys):
    # delay_s=0 stands for work that has already run past the delay
    assert list(track([1, 2, 3], desc="counting", delay_s=0)) == [1, 2, 3]
    assert "counting" in capsys.readouterr().err


def test_a_loader_shows_its_bar_or_not(tmp_path, capsys, monkeypatch):
    line = b'h - - [01/Jul/1995:00:00:01 -0400] "GET / HTTP/1.0" 200 1\n'
    path = tmp_path / "a.log.gz"
    path.write_bytes(gzip.compress(line * 3))
    monkeypatch.setattr("ratelab.progress.DELAY_S", 0.0)  # as if the load took over 1 s
    load_log(path, progress=True)
    assert "a.log.gz" in capsys.readouterr().err
    load_log(path, progress=False)
    assert capsys.readouterr().err == ""


def test_bars_share_one_monitor_thread():
    """tqdm keeps its monitor thread on the bar's class: a class per bar left a thread per
    bar behind (every replay, silent or not, made one; a property test's run left 5,000)."""
    import threading

    def threads() -> int:
        return sum(t.name == "tqdm_monitor" for t in threading.enumerate())

    with bar(1, progress=False):
        pass
    before = threads()
    for _ in range(20):
        with bar(3, progress=False) as b:
            b.update(3)
        list(track(range(2), progress=False))
    assert threads() <= max(before, 1)
