"""`ratelab notebooks` saves the state of widgets still open, not of those a notebook closed."""

import nbformat
from ratelab.cli.execute import Executor


def comm(msg_type, comm_id, state=None):
    data = {"state": state} if state is not None else {}
    return {"msg_type": msg_type, "header": {"msg_type": msg_type},
            "content": {"comm_id": comm_id, "data": data, "target_name": "other"}}


def test_closed_widgets_are_not_saved():
    client = Executor(nbformat.v4.new_notebook())
    client.handle_comm_msg([], comm("comm_open", "a", {"value": 1}), 0)
    client.handle_comm_msg([], comm("comm_open", "b", {"value": 2}), 0)
    client.handle_comm_msg([], comm("comm_msg", "b", {"value": 3}), 0)
    assert client.widget_state == {"a": {"value": 1}, "b": {"value": 3}}
    client.handle_comm_msg([], comm("comm_close", "a"), 0)
    assert client.widget_state == {"b": {"value": 3}}


def test_a_quizs_widgets_are_not_saved_and_without_other_widgets_no_state_is_left():
    """A quiz answers only while its kernel runs; a reader without one gets its HTML. Saving
    its models would only make the notebook's web page load the widget scripts."""
    quiz = {"q": {"_model_name": "VBoxModel", "_dom_classes": ["ratelab-quiz"],
                  "children": ["IPY_MODEL_a1"]},
            "a1": {"_model_name": "ButtonModel", "layout": "IPY_MODEL_b2"},
            "b2": {"_model_name": "LayoutModel"}}
    panel = {"c3": {"_model_name": "VBoxModel", "_dom_classes": ["ratelab-live"],
                    "children": []}}
    client = Executor(nbformat.v4.new_notebook())
    client.widget_state = {**quiz, **panel}
    client.set_widgets_metadata()
    saved = client.nb.metadata["widgets"]["application/vnd.jupyter.widget-state+json"]["state"]
    assert set(saved) == {"c3"}

    alone = Executor(nbformat.v4.new_notebook())
    alone.nb.metadata["widgets"] = {"stale": "from an earlier run"}
    alone.widget_state = dict(quiz)
    alone.set_widgets_metadata()
    assert "widgets" not in alone.nb.metadata
