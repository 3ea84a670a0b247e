"""The rules every ``ratelab`` subcommand follows, and the machinery that enforces them.

How to add a subcommand
-----------------------
1. Write ``add_<name>(sub)`` in a module of this package (``ratelab/cli/<name>.py``): never
   in a library module (a test fails for argparse anywhere else). Register
   ``("<name>", "ratelab.cli.<name>", "add_<name>", "<its one-line help>")`` in
   ``ratelab.cli.COMMANDS`` (the same help as ``command(..., help=)``: a test holds them
   equal). Build the parser with
   :func:`command`::

       def add_burst(sub):
           p = command(sub, "burst", run=run_burst, render=render_burst,
                       help="can a service swallow a token-bucket burst?",
                       description="A paragraph: what it computes, and from what.",
                       example="ratelab burst --burst 300 --rate 50 --service 100")
           p.add_argument("--rate", type=per_second, default=50.0,
                          help="the bucket's refill")

   `command` gives the parser the house help formatter (each option's default and unit are
   appended: "(default: 50 /s)"; an option whose default is None must say in its help what
   happens without it: "(default: every core)"), a closing example, ``--json`` (when the
   command returns a record) and ``--debug``. A mistyped option or command gets the nearest
   match suggested.

2. Give every option a type from this module (:func:`seconds`, :func:`per_second`,
   :func:`share`, :func:`count`, :func:`seed`, :func:`interval_s` ...). Each type carries its
   unit, which the help shows beside the default, and refuses nonsense (negative counts,
   shares outside [0, 1], inverted ranges) as one line naming the flag, exit 2. Explain the
   choices of a choice option with :func:`choices_help`.

3. ``run(args)`` returns a **record**: a dict with snake_case keys, units in the names
   (``wait_s``, ``succeeded_pct``, ``rate_per_s``), numbers as numbers. With ``--json`` it is
   printed as JSON (NaN and inf become null); otherwise ``render(record) -> str`` prints it
   for people (use :func:`table` for rows). The library function behind the command returns
   that same record, so a notebook gets what the command line shows. Return
   ``(record, exit_code)`` to exit non-zero with a record, or an int when there is no record
   (``lab``, ``index``). Document the record's keys in the CLI reference, ``docs/cli.md``.

4. Errors. A user mistake that argparse cannot see raises ``UsageError("--flag", "what is
   wrong and what would be valid")``: one line, exit 2. A library ValueError names a Python
   parameter; wrap the call in ``with flags(service_per_s="--service"):`` so the user reads
   the flag as typed. A failure outside the user's input (a missing file, a store that does
   not answer) raises ``EnvironmentFailure("what failed", "what to do")``: one line, exit 1;
   FileNotFoundError and StoreUnavailable are turned into one automatically. An option that
   does not apply in the mode chosen is refused with a UsageError, never ignored. Nothing
   prints a traceback unless ``--debug`` is given.

5. Add the command's row to ``tests/test_cli_table.py`` (help, a quick good run, a bad value,
   the JSON keys); the test fails for a registered command without a row.
"""

from __future__ import annotations

import argparse
import dataclasses
import difflib
import json
import math
import re
import sys
import traceback
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence


# ---------------------------------------------------------------- errors


class UsageError(Exception):
    """A user mistake: one line naming the flag as typed, exit code 2."""

    exit_code = 2

    def __init__(self, flag: str | None, message: str) -> None:
        self.flag = flag
        self.message = message
        super().__init__(self.line())

    def line(self) -> str:
        if not self.flag or self.message.startswith(self.flag):
            return self.message
        return f"{self.flag}: {self.message}"


class EnvironmentFailure(Exception):
    """Something outside the user's input failed: one line with what to do, exit code 1."""

    exit_code = 1

    def __init__(self, message: str, todo: str = "") -> None:
        self.message, self.todo = message, todo
        super().__init__(self.line())

    def line(self) -> str:
        return f"{self.message}; {self.todo}" if self.todo else self.message


@contextmanager
def flags(**names: str):
    """Turn a library ValueError that names a parameter into a UsageError naming its flag.

        with flags(service_per_s="--service", rate_per_s="--rate"):
            burst_verdict(...)

    The first parameter (in the order given) that the message names as a word is replaced
    by its flag everywhere in the message. A ValueError naming none of them passes through
    (and is still shown as one line, exit 2).
    """
    try:
        yield
    except ValueError as e:
        message = str(e)
        for param, flag in names.items():
            pattern = rf"(?<![\w-]){re.escape(param)}(?![\w-])"
            if re.search(pattern, message):
                raise UsageError(flag, re.sub(pattern, flag, message)) from e
        raise


def _one_line(text: str) -> str:
    return "; ".join(part.strip() for part in str(text).splitlines() if part.strip())


def _environment(e: BaseException) -> EnvironmentFailure | None:
    """The EnvironmentFailure an exception from outside the user's input amounts to."""
    if isinstance(e, EnvironmentFailure):
        return e
    if isinstance(e, BrokenPipeError):  # output piped into `head`: not a store failure
        return None
    if isinstance(e, FileNotFoundError):
        if e.filename is None:  # raised with a message that already says what to do
            return EnvironmentFailure(_one_line(e))
        return EnvironmentFailure(f"no such file: {e.filename}", "check the path")
    if type(e).__name__ == "StoreUnavailable" or isinstance(e, ConnectionError):
        return EnvironmentFailure(f"the store did not answer ({_one_line(e)})",
                                  "start the server (redis-server --port PORT) or check "
                                  "--store, or use --store sim")
    if isinstance(e, PermissionError):
        return EnvironmentFailure(_one_line(e), "check the file's permissions")
    return None


def report(prog: str, e: BaseException, debug: bool = False) -> int:
    """Print `e` as one line on stderr (with a traceback first if `debug`); the exit code."""
    if debug:
        traceback.print_exception(e, file=sys.stderr)
    env = _environment(e)
    if isinstance(e, UsageError):
        line, code = e.line(), 2
    elif env is not None:
        line, code = env.line(), 1
    elif isinstance(e, ValueError):
        line, code = str(e), 2
    else:
        line, code = (f"internal error {type(e).__name__}: {e} (this is a bug; run again "
                      "with --debug for the traceback and report it)"), 1
    print(f"{prog}: error: {_one_line(line)}", file=sys.stderr)
    return code


# ---------------------------------------------------------------- the parser


class Parser(argparse.ArgumentParser):
    """An ArgumentParser whose errors are UsageErrors (one line, nearest match suggested)."""

    def __init__(self, *args, **kwargs) -> None:
        kwargs.setdefault("allow_abbrev", False)  # a flag is what was typed, never a prefix
        kwargs.setdefault("formatter_class", HelpFormatter)
        self.arguments: list[argparse.Action] = []
        """Every argument added, groups' included (argparse keeps its own list private)."""
        super().__init__(*args, **kwargs)
        self.commands: dict[str, argparse.ArgumentParser] = {}
        """The subcommands' parsers by name, once :meth:`add_subparsers` made them."""

    def add_argument(self, *args, **kwargs) -> argparse.Action:
        action = super().add_argument(*args, **kwargs)
        self.arguments.append(action)
        return action

    def add_argument_group(self, *args, **kwargs):
        return self._recording(super().add_argument_group(*args, **kwargs))

    def add_mutually_exclusive_group(self, **kwargs):
        return self._recording(super().add_mutually_exclusive_group(**kwargs))

    def _recording(self, group):
        """`group`, its arguments also recorded in :attr:`arguments`."""
        add = group.add_argument

        def add_argument(*args, **kwargs) -> argparse.Action:
            action = add(*args, **kwargs)
            self.arguments.append(action)
            return action

        group.add_argument = add_argument
        return group

    def add_subparsers(self, **kwargs):
        """argparse's, with the subcommands' parsers kept by name in :attr:`commands`."""
        action = super().add_subparsers(**kwargs)
        self.commands = action.choices
        return action

    def error(self, message: str):  # noqa: D401 - argparse's hook
        raise UsageError(None, _reword(message, self))


def _reword(message: str, parser: argparse.ArgumentParser) -> str:
    """argparse's message, with the flag first and the nearest valid choice suggested."""
    m = re.match(r"argument (\S+): invalid choice: '([^']*)' \(choose from (.*)\)$", message)
    if m:
        what, got, rest = m.groups()
        choices = re.findall(r"'([^']*)'", rest) or [c.strip() for c in rest.split(",")]
        if what.isupper():  # a positional: COMMAND, ACTION, DATASET
            return (f"unknown {what.lower()} {got!r}"
                    + (suggest(got, choices) or f"; choose from {', '.join(choices)}"))
        return (f"{what.split('/')[-1]}: {got!r} is not one of {', '.join(choices)}"
                + suggest(got, choices))
    m = re.match(r"argument (\S+): (.*)$", message)
    if m:
        return f"{m.group(1).split('/')[-1]}: {m.group(2)}"
    m = re.match(r"unrecognized arguments: (.*)$", message)
    if m:
        return unrecognized(m.group(1).split(), parser)
    return message


def suggest(got: str, choices: Iterable[str]) -> str:
    """"; did you mean X?" for the nearest of `choices`, or "" when none is near."""
    near = difflib.get_close_matches(got, list(choices), n=1, cutoff=0.6)
    return f"; did you mean {near[0]}?" if near else ""


def options_of(parser: Parser) -> list[str]:
    """Every option string `parser` accepts (``--window``, ``-h`` ...)."""
    return [s for a in parser.arguments for s in a.option_strings]


def unrecognized(extra: Sequence[str], parser: argparse.ArgumentParser) -> str:
    """The one-line message for arguments `parser` does not take, nearest option suggested."""
    opts = [e for e in extra if e.startswith("-")]
    if not opts:
        return f"unexpected argument {extra[0]!r} (see {parser.prog} --help)"
    typed = opts[0].split("=", 1)[0]
    return f"unrecognized option {typed}" + (suggest(typed, options_of(parser))
                                             or f" (see {parser.prog} --help)")


class HelpFormatter(argparse.HelpFormatter):
    """Help that shows every option's default and unit; never "default: None".

    The description's paragraphs are wrapped; an indented line (an example, a list) and the
    closing example keep their line breaks. An option's unit comes from its type
    (``type=seconds`` has unit "s"); its default is appended unless the help already states
    it (write "(default: ...)" yourself for a default of None).
    """

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        out, para = [], []

        def flush():
            if para:
                out.append(super(HelpFormatter, self)._fill_text(" ".join(para), width, indent))
                para.clear()

        for line in text.splitlines():
            if not line.strip():
                flush()
                out.append("")
            elif line.startswith(" ") or line.startswith("example:"):
                flush()
                out.append(indent + line)
            else:
                para.append(line.strip())
        flush()
        return "\n".join(out)

    def _get_default_metavar_for_optional(self, action: argparse.Action) -> str:
        return getattr(action.type, "metavar", None) or super()._get_default_metavar_for_optional(
            action)

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        if text == argparse.SUPPRESS or not action.option_strings:
            return text
        unit = getattr(action.type, "unit", "")
        takes_value = action.nargs != 0
        has_default = (action.default is not None and action.default is not argparse.SUPPRESS
                       and takes_value)
        if has_default and "default" not in text:
            text += f" (default: {show(action.default)}{' ' + unit if unit else ''})"
        elif unit and takes_value and unit not in text:
            text += f" ({unit})"
        return text.replace("%", "%%")


def show(value: Any) -> str:
    """A default as a person would type it: 60 not 60.0, 'inf', a list as 0.9 0.99."""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, float):
        return "inf" if value == math.inf else f"{value:g}"
    if isinstance(value, (list, tuple)):
        return ",".join(show(v) for v in value) if isinstance(value, tuple) else \
            " ".join(show(v) for v in value)
    return str(value)


def command(sub, name: str, *, run: Callable, help: str, description: str, example: str,
            render: Callable[[dict], str] | None = None, **kwargs) -> argparse.ArgumentParser:
    """A subcommand's parser, built to the house rules (see the module's docstring).

    `run(args)` does the work; with `render`, it returns a record and the parser gets
    ``--json``. `example` (one or more command lines) closes the help.
    """
    examples = "\n".join(f"  {line}" for line in example.strip().splitlines())
    p = sub.add_parser(name, help=help, description=description,
                       epilog=f"example:\n{examples}", formatter_class=HelpFormatter,
                       **kwargs)
    if render is not None:
        p.add_argument("--json", action="store_true",
                       help="print the record as JSON (keys: see docs/cli.md)")
    add_debug(p)
    p.set_defaults(func=run, render=render, _parser=p)
    return p


def add_debug(p: argparse.ArgumentParser) -> None:
    p.add_argument("--debug", action="store_true", default=argparse.SUPPRESS,
                   help="show a traceback on error")


def choices_help(text: str, choices: Mapping[str, str]) -> str:
    """`text` followed by one clause per choice: "text: a = what a does; b = what b does"."""
    return f"{text}: " + "; ".join(f"{k} = {v}" for k, v in choices.items())


# ---------------------------------------------------------------- types (argparse `type=`)


METAVARS = {"seconds": "SECONDS", "rate": "PER_S", "count": "N", "share": "SHARE",
            "quantile": "Q", "interval": "START,END", "number": "X", "words": "NAME,..."}


def _typed(unit: str, name: str):
    """Mark a type function with its unit (shown with the default) and its name (the
    metavar in the usage line: SECONDS, N, PER_S ...)."""
    def wrap(fn):
        fn.unit, fn.__name__, fn.metavar = unit, name, METAVARS.get(name, name.upper())
        return fn
    return wrap


def _number(text: str, what: str) -> float:
    try:
        x = float(text)
    except (TypeError, ValueError):
        raise argparse.ArgumentTypeError(f"must be {what}, got {text!r}") from None
    if math.isnan(x):
        raise argparse.ArgumentTypeError(f"must be {what}, got {text!r}")
    return x


def positive_number(unit: str = "", name: str = "number"):
    """A type: a finite number > 0 (carrying `unit`)."""
    @_typed(unit, name)
    def parse(text: str) -> float:
        x = _number(text, f"a positive number{_in(unit)}")
        if not math.isfinite(x) or x <= 0:
            raise argparse.ArgumentTypeError(f"must be a positive number{_in(unit)}, got {text!r}")
        return x
    return parse


def non_negative_number(unit: str = "", name: str = "number", *, infinite: bool = False):
    """A type: a number >= 0 (inf allowed if `infinite`)."""
    @_typed(unit, name)
    def parse(text: str) -> float:
        what = f"a number >= 0{_in(unit)}" + (" or inf" if infinite else "")
        x = _number(text, what)
        if x < 0 or (math.isinf(x) and not infinite):
            raise argparse.ArgumentTypeError(f"must be {what}, got {text!r}")
        return x
    return parse


def _in(unit: str) -> str:
    return f" ({unit})" if unit else ""


seconds = positive_number("s", "seconds")
seconds.__doc__ = "A type: a positive, finite number of seconds."
per_second = positive_number("/s", "rate")
per_second.__doc__ = "A type: a positive, finite rate per second."
positive = positive_number("", "number")
non_negative_seconds = non_negative_number("s", "seconds")
seconds_or_inf = non_negative_number("s", "seconds", infinite=True)


@_typed("", "share")
def share(text: str) -> float:
    """A type: a share in [0, 1]."""
    x = _number(text, "a share between 0 and 1")
    if not 0 <= x <= 1:
        raise argparse.ArgumentTypeError(f"must be a share between 0 and 1, got {text!r}")
    return x


@_typed("", "quantile")
def quantile(text: str) -> float:
    """A type: a quantile strictly between 0 and 1."""
    x = _number(text, "a quantile between 0 and 1 (exclusive)")
    if not 0 < x < 1:
        raise argparse.ArgumentTypeError(
            f"must be a quantile between 0 and 1 (exclusive), got {text!r}")
    return x


def whole(minimum: int = 1, maximum: int | None = None, unit: str = ""):
    """A type: a whole number in [minimum, maximum]."""
    bound = f">= {minimum}" if maximum is None else f"from {minimum} to {maximum}"

    @_typed(unit, "count")
    def parse(text: str) -> int:
        what = f"a whole number {bound}"
        try:
            x = int(text.replace("_", "")) if re.fullmatch(r"[+-]?[\d_]+", text.strip()) \
                else float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be {what}, got {text!r}") from None
        if isinstance(x, float) and (not math.isfinite(x) or x != int(x)):
            raise argparse.ArgumentTypeError(f"must be {what}, got {text!r}")
        x = int(x)
        if x < minimum or (maximum is not None and x > maximum):
            raise argparse.ArgumentTypeError(f"must be {what}, got {text!r}")
        return x
    return parse


count = whole(1)
count.__doc__ = "A type: a whole number >= 1."
seed = whole(0, 2**63 - 1)
seed.__doc__ = "A type: a seed, a whole number from 0 to 2**63 - 1."


@_typed("s", "interval")
def interval_s(text: str) -> tuple[float, float]:
    """A type: ``START,END`` seconds with 0 <= START < END."""
    parts = text.split(",")
    what = f"START,END in seconds with 0 <= START < END, got {text!r}"
    if len(parts) != 2:
        raise argparse.ArgumentTypeError(f"must be {what}")
    try:
        start, end = (float(x) for x in parts)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be {what}") from None
    if not (math.isfinite(start) and math.isfinite(end)) or not 0 <= start < end:
        raise argparse.ArgumentTypeError(f"must be {what}")
    return start, end


def words(choices: Sequence[str]):
    """A type: comma-separated words, each one of `choices` (nearest suggested if not)."""
    @_typed("", "words")
    def parse(text: str) -> tuple[str, ...]:
        got = tuple(w.strip() for w in text.split(",") if w.strip())
        if not got:
            raise argparse.ArgumentTypeError(f"must name at least one of {', '.join(choices)}")
        for w in got:
            if w not in choices:
                raise argparse.ArgumentTypeError(
                    f"{w!r} is not one of {', '.join(choices)}{suggest(w, choices)}")
        return got
    return parse


def limiter_params(algorithm: str, items: list[str] | None, flag: str = "--param") -> dict:
    """The parameters of registry `algorithm` from ``--param NAME=VALUE`` items, checked
    against its signature, with that algorithm's own defaults; a UsageError naming `flag`."""
    # the limiters (and numpy) when a command reads --param: ratelab --help stays light
    from ..limiters import make
    from ..limiters.params import parse

    try:
        params = parse(algorithm, items)
        make(algorithm, **params)  # the class checks ranges (rate > 0 ...)
    except ValueError as e:
        raise UsageError(flag, f"{e}") from None
    return params


# ---------------------------------------------------------------- records and output


def plain(value: Any) -> Any:
    """`value` made JSON-ready: numpy scalars as numbers, NaN/inf as None, tuples as lists."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        value = dataclasses.asdict(value)
    if isinstance(value, Mapping):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, Path):
        return str(value)
    if hasattr(value, "tolist") and not isinstance(value, (str, bytes)):
        value = value.tolist()  # numpy scalar or array
        if isinstance(value, list):
            return plain(value)
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def dumps(record: Any) -> str:
    """The record as indented JSON (NaN and inf as null)."""
    return json.dumps(plain(record), indent=2, allow_nan=False)


def cell(value: Any, digits: int = 3) -> str:
    """A number as a table shows it: thousands separated, floats to `digits` significant."""
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        if math.isnan(value):
            return "-"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        if value == int(value) and abs(value) < 1e15:
            return f"{int(value):,}"
        return f"{value:,.{digits}g}" if abs(value) < 1e-3 else f"{value:,.{digits}f}"
    return str(value)


def table(rows: Sequence[Mapping[str, Any]], columns: Sequence[str] | None = None,
          headers: Mapping[str, str] | None = None) -> str:
    """Rows of a record as a plain-text table (numbers right-aligned, text left)."""
    if not rows:
        return "(no rows)"
    columns = list(columns or rows[0].keys())
    headers = {c: (headers or {}).get(c, c) for c in columns}
    cells = [[cell(r.get(c)) for c in columns] for r in rows]
    width = [max(len(headers[c]), *(len(row[i]) for row in cells))
             for i, c in enumerate(columns)]
    numeric = [all(isinstance(r.get(c), (int, float)) or r.get(c) is None for r in rows)
               for c in columns]

    def line(values):
        return "  ".join(v.rjust(w) if num else v.ljust(w)
                         for v, w, num in zip(values, width, numeric)).rstrip()

    return "\n".join([line([headers[c] for c in columns]), *(line(r) for r in cells)])


def emit(args: argparse.Namespace, result: Any) -> int:
    """Print what a subcommand's run returned (see the module's docstring); the exit code."""
    code = 0
    if isinstance(result, tuple):
        result, code = result
    if isinstance(result, int) and not isinstance(result, bool):
        return result
    if result is None:
        return code
    if getattr(args, "json", False) or getattr(args, "render", None) is None:
        print(dumps(result))
    else:
        print(args.render(result))
    return int(code)
