"""Executing a notebook for ``ratelab notebooks`` (imported only when it runs: nbclient and
nbformat are slow to import, see :mod:`ratelab.cli.lab`)."""

from __future__ import annotations

from nbclient import NotebookClient

from ..exercises.quizview import WIDGET_CLASS, widget_trees


class Executor(NotebookClient):
    """nbclient's notebook client, except that some widgets are not saved with the notebook:

    * a widget closed in the kernel: widgets a notebook makes and closes again (panels used
      only from code) would otherwise all be stored in the notebook's widget state;
    * a quiz's widgets (:mod:`ratelab.exercises.quizview`): they only answer while their
      kernel runs, and without it a reader gets the quiz's HTML, which needs no state. A
      notebook left with no widget to save keeps no widget state at all, so its web page
      loads no widget script.
    """

    def handle_comm_msg(self, outs, msg, cell_index) -> None:
        super().handle_comm_msg(outs, msg, cell_index)
        if msg["msg_type"] == "comm_close":
            self.widget_state.pop(msg["content"]["comm_id"], None)
            self.widget_buffers.pop(msg["content"]["comm_id"], None)

    def set_widgets_metadata(self) -> None:
        for model_id in widget_trees(self.widget_state, WIDGET_CLASS):
            self.widget_state.pop(model_id, None)
            self.widget_buffers.pop(model_id, None)
        super().set_widgets_metadata()
        if not any("_model_name" in s for s in self.widget_state.values()):
            self.nb.metadata.pop("widgets", None)
