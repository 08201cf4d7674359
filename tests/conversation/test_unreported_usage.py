"""Usage a server did not report (llama-cpp-python sends none in a stream, even when asked) is
"not reported by the server" in every view, never zero: the turn keeps usage None, its cost is
unknown, and the totals say how many turns they leave out."""

from __future__ import annotations

import io

import pytest

import providerkit_nb as pk
from providerkit_nb.conversation.console import TerminalLive
from providerkit_nb.core.html import turn_html
from providerkit_nb.notebook.frames import turns_frame, usage_frame
from providerkit_nb.stream import TurnAssembler

from .chat_server import ChatServer, _frame
from .server_bodies import llama_cpp_python_stream

pytestmark = pytest.mark.timeout(60)

NOT_REPORTED = "not reported by the server"  # the words, pinned here


def with_usage(text: str) -> list[tuple[float, bytes]]:
    return [(0.0, _frame({"role": "assistant", "content": text})), (0.0, _frame(finish="stop")),
            (0.0, _frame(usage={"prompt_tokens": 10, "completion_tokens": 2})), (0.0, b"data: [DONE]\n\n")]


def test_a_stream_without_usage_is_not_reported_never_zero() -> None:
    with ChatServer([llama_cpp_python_stream(["Hel", "lo"]), llama_cpp_python_stream(["again"])]) as srv:
        provider = pk.openai(model="smollm2", base_url=srv.base_url)
        c = pk.Conversation(pk.MemoryStore(), "u", provider, display=False, rate={"input": 1.0, "output": 2.0})
        turn = c.send("hi")
        assert srv.requests[0]["stream_options"] == {"include_usage": True}  # asked; none came
        assert turn.message.content == "Hello" and turn.usage is None
        assert f"<{NOT_REPORTED}>" in repr(turn)
        assert f"tokens: {NOT_REPORTED}" in turn_html(turn)
        c.send("more")
        frame = turns_frame(c)
        assert list(frame["usage"]) == [NOT_REPORTED, NOT_REPORTED]
        assert frame["input_tokens"].isna().all() and frame["cost_usd"].isna().all()  # unknown, not $0
        totals = usage_frame(c)
        assert totals.loc[0, "usage"] == f"{NOT_REPORTED} for 2 of 2 turn(s)"
        assert totals.loc[0, "input_tokens"] is None and totals.loc[0, "cost_usd"] is None
        assert totals.loc[0, "cache_savings_usd"] is None
        assert f"usage {NOT_REPORTED} for 2 turn(s)" in repr(c)
        assert "$0" not in repr(c)
        assert c.usage.unreported == 2 and c.usage.calls == 0


def test_totals_say_which_turns_they_leave_out() -> None:
    with ChatServer([with_usage("a"), llama_cpp_python_stream(["b"])]) as srv:
        c = pk.Conversation(pk.MemoryStore(), "u", pk.openai(model="m", base_url=srv.base_url), display=False)
        c.send("one")
        c.send("two")
        totals = usage_frame(c)
        assert totals.loc[0, "input_tokens"] == 10
        assert totals.loc[0, "usage"] == f"{NOT_REPORTED} for 1 of 2 turn(s): the totals cover the others"
        assert list(turns_frame(c)["usage"]) == ["", NOT_REPORTED]


def test_not_reported_survives_a_restart() -> None:
    store = pk.MemoryStore()
    with ChatServer([llama_cpp_python_stream(["b"])]) as srv:
        provider = pk.openai(model="m", base_url=srv.base_url)
        pk.Conversation(store, "u", provider, display=False).send("one")
        again = pk.Conversation(store, "u", provider, display=False)
        assert again.usage.unreported == 1
        assert list(turns_frame(again)["usage"]) == [NOT_REPORTED]


def test_the_live_display_says_it_not_zero() -> None:
    with ChatServer([llama_cpp_python_stream(["x"])]) as srv:
        asm = TurnAssembler()
        for chunk in pk.openai(model="m", base_url=srv.base_url).create_stream([pk.UserMessage("hi")]):
            asm.feed(chunk)
        html = turn_html(asm.snapshot())
        assert NOT_REPORTED in html and "0 in" not in html
        out = io.StringIO()
        TerminalLive(out).turn(asm, True)
        assert "0 in" not in out.getvalue()
