"""What a notebook prints when ``send`` fails: short tracebacks (the caller's frames and the
user's own code, not the library's), and a tool's own traceback kept beside its result.

The tracebacks are formatted the way a Jupyter cell shows them (IPython's ``Context`` mode) and
counted: lines, and frames of the library. A real HTTP server on 127.0.0.1 refuses a wrong
model name; Stop is a real SIGINT from a timer."""

from __future__ import annotations

import io
import os
import signal
import threading
import time
import traceback
from pathlib import Path
from typing import Any

import pytest

import providerkit_nb as pk
from providerkit_nb.testing import simulate
from tests.conversation.chat_server import ChatServer, Refuse, call_answer, text_answer

LIBRARY = str(Path(pk.__file__).resolve().parent) + os.sep
NOT_FOUND = b'{"error": {"message": "The model `gpt-nope` does not exist", "type": "invalid_request_error", "code": "model_not_found"}}'


def _shown(exc: BaseException) -> list[str]:
    """The lines a Jupyter cell shows for ``exc`` (IPython's default mode), chained ones too."""
    from IPython.core.ultratb import AutoFormattedTB

    try:
        fmt = AutoFormattedTB(mode="Context", theme_name="nocolor")
    except TypeError:  # IPython before 9
        fmt = AutoFormattedTB(mode="Context", color_scheme="NoColor")
    return "\n".join(fmt.structured_traceback(type(exc), exc, exc.__traceback__)).splitlines()


def _library_frames(exc: BaseException) -> list[str]:
    """Frames of the library in what is printed for ``exc`` and the exceptions chained to it."""
    out: list[str] = []
    seen: BaseException | None = exc
    while seen is not None:
        out += [f"{f.name} ({Path(f.filename).name})" for f in traceback.extract_tb(seen.__traceback__)
                if str(Path(f.filename).resolve()).startswith(LIBRARY)]
        seen = seen.__cause__ or (None if seen.__suppress_context__ else seen.__context__)
    return out


def _stop_in(seconds: float) -> threading.Timer:
    timer = threading.Timer(seconds, os.kill, (os.getpid(), signal.SIGINT))
    timer.start()
    return timer


def _slow_tool(args: dict[str, Any]) -> str:
    time.sleep(3)
    return "slept"


TOOLS = pk.ToolRegistry([pk.define_tool("slow", "Sleep.", {"type": "object", "properties": {}}, _slow_tool)])


def test_a_refused_send_shows_the_caller_and_one_library_frame():
    with ChatServer([Refuse(404, NOT_FOUND)]) as server:
        convo = pk.Conversation(pk.MemoryStore(), "c", pk.openai(model="gpt-nope", base_url=server.base_url,
                                                                  api_key="k"), display=False)
        with pytest.raises(pk.ProviderError) as caught:
            convo.send("hi")
    exc = caught.value
    assert exc.kind == "model" and "gpt-nope" in str(exc)
    assert _library_frames(exc) == ["send (facade.py)"]  # was 8 frames, 66 lines
    assert len(_shown(exc)) <= 25, "\n".join(_shown(exc))
    # where it was raised inside the library stays reachable
    inside = [f.name for f in traceback.extract_tb(exc.full_traceback)]
    assert "_stream_turn" in inside and "send" in inside


def test_a_network_error_hides_the_client_chain_but_keeps_the_cause():
    convo = pk.Conversation(pk.MemoryStore(), "c", pk.openai(model="m", base_url="http://127.0.0.1:9/v1",
                                                              api_key="k"), display=False)
    with pytest.raises(pk.ProviderError) as caught:
        convo.send("hi")
    exc = caught.value
    shown = _shown(exc)
    assert exc.kind == "network" and _library_frames(exc) == ["send (facade.py)"]
    assert len(shown) <= 25 and not any("httpcore" in line for line in shown), "\n".join(shown)  # was 209 lines
    assert "ConnectError" in type(exc.cause).__name__  # the client's own error, one attribute away


def test_stop_while_the_answer_streams_shows_one_library_frame():
    with ChatServer([text_answer(["word "] * 100, gap=0.05)]) as server:
        convo = pk.Conversation(pk.MemoryStore(), "c", pk.openai(model="m", base_url=server.base_url,
                                                                  api_key="k"), display=False)
        _stop_in(0.5)
        with pytest.raises(KeyboardInterrupt) as caught:
            convo.send("talk")
    assert _library_frames(caught.value) == ["send (facade.py)"]  # was 6 frames, 52 lines
    assert len(_shown(caught.value)) <= 25


def test_stop_inside_a_tool_shows_the_tool_and_not_the_library_around_it():
    with ChatServer([call_answer("call_1", "slow", "{}")]) as server:
        convo = pk.Conversation(pk.MemoryStore(), "c", pk.openai(model="m", base_url=server.base_url,
                                                                  api_key="k"), TOOLS, display=False)
        _stop_in(0.5)
        with pytest.raises(KeyboardInterrupt) as caught:
            convo.send("sleep")
    frames = [f.name for f in traceback.extract_tb(caught.value.__traceback__)]
    assert frames[-2:] == ["send", "_slow_tool"], frames  # where Stop landed: the user's own tool
    assert _library_frames(caught.value) == ["send (facade.py)"]  # was 10 frames, 82 lines
    assert len(_shown(caught.value)) <= 30


def _divide(args: dict[str, Any]) -> float:
    return _ratio(1, 0)


def _ratio(a: int, b: int) -> float:
    return a / b


def test_an_exception_in_a_tool_keeps_its_traceback_beside_the_result():
    tools = pk.ToolRegistry([pk.define_tool("divide", "Divide.", {"type": "object", "properties": {}}, _divide)])
    result = tools.invoke(pk.ToolCall("call_1", "divide", "{}"))
    assert result.kind == "failed"
    # what the model reads is unchanged: one line naming the error
    assert result.message.content.startswith("Error: divide failed with ZeroDivisionError: division by zero.")
    assert "Traceback" not in result.message.content
    tb = result.traceback or ""
    assert tb.startswith("Traceback (most recent call last):") and tb.rstrip().endswith("ZeroDivisionError: division by zero")
    assert "in _divide" in tb and "in _ratio" in tb and "return a / b" in tb
    assert "tool_run.py" not in tb and "tools.py" not in tb  # only the tool's own frames


def test_the_tool_traceback_is_in_the_live_display_and_the_calls_mark():
    tools = pk.ToolRegistry([pk.define_tool("divide", "Divide.", {"type": "object", "properties": {}}, _divide)])
    provider = simulate.ScriptedProvider([simulate.call_turn([("divide", {})]), simulate.text_turn("it failed")])
    store = pk.MemoryStore()
    out = io.StringIO()
    from providerkit_nb.conversation.console import TerminalLive

    convo = pk.Conversation(store, "c", provider, tools, display=True)
    convo._live_display = lambda: TerminalLive(out)  # type: ignore[method-assign]  # the terminal's face, captured
    convo.send("divide")
    shown = out.getvalue()
    assert "<- divide: failed: Error: divide failed with ZeroDivisionError" in shown
    assert "in _ratio" in shown and "return a / b" in shown  # the tool's own traceback, under its line
    mark = store.call_marks("c")["call_1"]
    assert mark.state == "finished" and mark.detail["kind"] == "failed"
    assert "in _ratio" in mark.detail["traceback"]
    told = [m.content for m in provider.requests[1] if m.role == "tool"]
    assert told == [tools.invoke(pk.ToolCall("x", "divide", "{}")).message.content]  # no traceback to the model


def test_the_notebook_live_display_shows_the_tool_traceback():
    from providerkit_nb.notebook.live import NotebookLive

    class Area:
        value = ""

    area = Area()
    live = NotebookLive(into=area)
    live.tool(pk.ToolCall("call_1", "divide", "{}"), "failed", "Error: divide failed with ZeroDivisionError.",
              traceback='Traceback (most recent call last):\n  File "x.py", line 1, in <b>\nZeroDivisionError')
    assert 'class="pk-tool-traceback"' in area.value and "in &lt;b&gt;" in area.value
