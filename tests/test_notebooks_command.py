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
