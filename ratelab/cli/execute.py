"""Executing a notebook for ``ratelab notebooks`` (imported only when it runs: nbclient and
nbformat are slow to import, see :mod:`ratelab.cli.lab`)."""

from __future__ import annotations

from nbclient import NotebookClient


class Executor(NotebookClient):
    """nbclient's notebook client, except that a widget closed in the kernel is not saved.

    Widgets a notebook makes and closes again (panels used only from code) would otherwise
    all be stored in the notebook's widget state.
    """

    def handle_comm_msg(self, outs, msg, cell_index) -> None:
        super().handle_comm_msg(outs, msg, cell_index)
        if msg["msg_type"] == "comm_close":
            self.widget_state.pop(msg["content"]["comm_id"], None)
            self.widget_buffers.pop(msg["content"]["comm_id"], None)
