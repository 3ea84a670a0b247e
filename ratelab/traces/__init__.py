"""Request traces: the Trace columns, generators, loaders for real logs."""

from . import generators
from .trace import Trace, merge

__all__ = ["Trace", "merge", "generators"]
