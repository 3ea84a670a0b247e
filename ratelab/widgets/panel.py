"""What the two panels share: callbacks that report their errors, quiet control updates,
and the mime bundle a notebook keeps."""

from __future__ import annotations

from contextlib import contextmanager
from typing import Any, Iterator

import ipywidgets as W


class Panel:
    """A panel's plumbing; subclasses provide ``widget`` and ``redraw``.

    ``_building`` is True while the panel sets its own controls, so that their callbacks
    (which check it) do not take the change for a learner's.
    """

    ERRORS: tuple[type[Exception], ...] = (ValueError,)
    """What a button or knob may raise that the panel shows as its message instead."""

    widget: W.Widget
    message: str = ""
    _building: bool = False

    def redraw(self) -> None:
        """Draw the panel's current state into its widgets."""
        raise NotImplementedError

    def _safely(self, action, *args, **kwargs) -> None:
        """Run `action`; an error it raises (one of ERRORS) becomes the panel's message."""
        try:
            self.message = ""
            action(*args, **kwargs)
        except self.ERRORS as e:
            self.message = str(e)
            self.redraw()

    @contextmanager
    def _quietly(self) -> Iterator[None]:
        """While in it, the panel's own control changes are not taken for a learner's."""
        self._building = True
        try:
            yield
        finally:
            self._building = False

    def _bundle(self, **kwargs) -> tuple[Any, dict]:
        """(the widget's mime bundle, its data dict) to add a static view to."""
        bundle = self.widget._repr_mimebundle_(**kwargs)
        return bundle, bundle[0] if isinstance(bundle, tuple) else bundle
