"""``ratelab limiters``: the registry algorithms and their parameters."""

from __future__ import annotations

from ..limiters import REGISTRY
from ..limiters.params import parameters
from .support import command, show


def add_limiters(sub) -> None:
    command(sub, "limiters", run=run_limiters, render=render_limiters,
            help="list the registry algorithms and their parameters (types, units, defaults)",
            description="Every name make() accepts, with its constructor parameters: plain "
                        "types, units, defaults, and the settings the command line uses when "
                        "no --param is given.",
            example="ratelab limiters --json")


def run_limiters(args) -> dict:
    """The registry as a record: per algorithm, its class and parameters."""
    return {"limiters": [
        {"name": name, "class": cls.__name__,
         "parameters": [{"name": p.name, "type": p.type.__name__, "unit": p.unit,
                         "required": p.required,
                         "default": None if p.required else p.default}
                        for p in parameters(name)],
         "cli_defaults": dict(cls.example)}
        for name, cls in REGISTRY.items()]}


def render_limiters(record: dict) -> str:
    def param(p):
        text = f"{p['name']}: {p['type']} ({p['unit']})"
        return text if p["required"] else f"{text} = {show(p['default'])}"

    return "\n".join(f"{r['name']:24} {r['class']}({', '.join(param(p) for p in r['parameters'])})"
                     for r in record["limiters"])


