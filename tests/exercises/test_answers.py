"""The answers' side: plain data only, the student's line found by what it is, one verdict."""

from __future__ import annotations

import importlib.util
import json
from collections import namedtuple

import numpy as np
import pytest

from ratelab.exercises import module
from ratelab.exercises.proxy import AnswerFunction, lookup
from ratelab.exercises.answers import LocalPort, is_library
from ratelab.exercises.protocol import NotPlain, decode, encode, plain, unplain


@pytest.mark.parametrize("value, expected", [
    (None, None), (True, True), (np.bool_(False), False), (3, 3), (np.int64(7), 7),
    (2.5, 2.5), (np.float32(0.5), 0.5), ("ok", "ok"), ([1, (2, 3)], [1, (2, 3)]),
    ({"a": [np.float64(1.0)]}, {"a": [1.0]}), (np.array([1, 2]), [1, 2]),
    (namedtuple("D", "allowed remaining")(True, 2), (True, 2)),
])
def test_plain_data_comes_back_as_itself(value, expected):
    got = unplain(plain(value))
    assert got == expected and type(got) is type(expected)


@pytest.mark.parametrize("value, says", [
    ({1, 2}, "a set"), (object(), "a object"), ({1: "x"}, "keys are not all strings"),
    (lambda: 0, "a function"), ("x" * (2 << 20), "characters"),
])
def test_anything_else_is_not_plain(value, says):
    with pytest.raises(NotPlain, match=says):
        plain(value)


def test_inputs_travel_with_their_types():
    from ratelab.limiters import Decision

    rng = np.random.default_rng(3)
    d = Decision(False, 5, 0, 0.25, 1.0)
    back = decode(encode([d, rng, b"\x00", (1, 2)]))
    assert back[0] == d and back[2] == b"\x00" and back[3] == [1, 2]
    assert back[1].random() == np.random.default_rng(3).random()


def test_a_generator_handed_in_moves_on_as_if_called_here():
    def draw(rng):
        return float(rng.random())

    here, there = np.random.default_rng(5), np.random.default_rng(5)
    answer = lookup(LocalPort({"draw": draw}), "draw")
    assert isinstance(answer, AnswerFunction)
    assert [answer(there) for _ in range(3)] == [draw(here) for _ in range(3)]
    assert there.random() == here.random()


def test_an_object_returned_where_data_is_asked_is_a_bad_return():
    result = module("boundary_attack").EXERCISE.check(lambda limit, w, b: {1.0, 2.0})
    assert result.verdict == "wrong" and result.failure.kind == "bad return"
    assert "a set" in result.failure.message


def test_the_students_line_is_found_in_a_folder_named_ratelab(tmp_path):
    """A clone in a folder named ratelab keeps the student's line (no path word decides)."""
    folder = tmp_path / "ratelab" / "tests"
    folder.mkdir(parents=True)
    source = folder / "answer.py"
    source.write_text("def take(tokens, last, now, cost, rate, capacity):\n"
                      "    return {}['missing']\n")
    spec = importlib.util.spec_from_file_location("answer_in_ratelab", source)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    assert not is_library(str(source))
    result = module("token_bucket_take").EXERCISE.check(mod.take)
    assert result.verdict == "wrong" and result.failure.kind == "raised"
    assert "line 2" in result.failure.message and "['missing']" in result.failure.message


def test_the_package_and_the_python_installation_are_library_code():
    assert is_library(module("token_bucket_take").__file__)
    assert is_library(np.__file__) and is_library(json.__file__)


BACKTRACKING = 'return string.find(string.rep("a", 24), string.rep("a*", 24) .. "b")'


def lua_that_never_ends(key, now, limit, window_s):
    yield ("EVAL", BACKTRACKING, 0)  # one C call the script's step limit cannot interrupt
    return True


def test_a_script_that_hangs_in_one_c_call_costs_its_row_not_the_grader():
    """The Lua counter's script runs in the checker's store: the grader checks it in a child
    it kills, and gets on."""
    import time

    from ratelab.grading.grader import check_in_child

    port = LocalPort({"decide": lua_that_never_ends})
    started = time.monotonic()
    row = check_in_child("lua_counter", port, [], 20.0, [], timeout_s=3.0)
    assert row.verdict == "timed out" and "ran past 3 s" in row.first_failure
    assert time.monotonic() - started < 10


def test_a_right_script_passes_through_the_child():
    from ratelab.grading.grader import check_in_child

    right = module("lua_counter").decide
    row = check_in_child("lua_counter", LocalPort({"decide": right}), [], 20.0, [],
                         timeout_s=60.0)
    assert (row.verdict, row.score) == ("passed", 1.0)
