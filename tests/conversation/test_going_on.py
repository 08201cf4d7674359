"""Going on after something stopped a send: a refused request (its message is kept once, and the
error says how to go on), and a resume with nothing to resume (it says so, and why).

A real OpenAI-Chat-format server on 127.0.0.1 refuses the wrong model name with the 404 the real
API sends; every store is a real one (in memory and a SQLite file)."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest

import providerkit_nb as pk
from providerkit_nb.conversation.console import TerminalLive
from providerkit_nb.errors import BudgetExceeded
from providerkit_nb.testing import simulate
from tests.conversation.chat_server import ChatServer, Refuse, text_answer

NOT_FOUND = (
    b'{"error": {"message": "The model `gpt-nope` does not exist or you do not have access to it.", '
    b'"type": "invalid_request_error", "param": null, "code": "model_not_found"}}'
)


@pytest.fixture(params=["memory", "sqlite"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Any:
    s = pk.MemoryStore() if request.param == "memory" else pk.NotebookStore(tmp_path / "g.providerkit.sqlite")
    yield s
    s.close()


def _chat(server: ChatServer, model: str) -> Any:
    return pk.openai(model=model, base_url=server.base_url, api_key="test-key")


def test_a_refused_send_then_the_same_text_again_sends_it_once(store):
    with ChatServer([Refuse(404, NOT_FOUND), text_answer(["Hello."])]) as server:
        convo = pk.Conversation(store, "c", _chat(server, "gpt-nope"), display=False)
        with pytest.raises(pk.ProviderError) as refused:
            convo.send("hi")
        said = str(refused.value)
        assert refused.value.kind == "model" and "gpt-nope" in said
        # the error says what became of the message, and how to go on
        assert "your message is saved in conversation 'c' but was not answered" in said
        assert "convo.resume() sends it" in said and "the same text again is not added twice" in said
        assert [m.role for m in store.load("c")] == ["user"]  # saved before the call: a crash keeps it

        convo.provider = _chat(server, "gpt-ok")  # the fix
        turn = convo.send("hi")
    assert turn.message.content == "Hello."
    assert [m.role for m in store.load("c")] == ["user", "assistant"]  # was user, user, assistant
    assert [m for m in server.requests[1]["messages"] if m["role"] == "user"] == [{"role": "user", "content": "hi"}]


def test_after_a_refused_send_resume_sends_the_kept_message(store):
    with ChatServer([Refuse(404, NOT_FOUND), text_answer(["Hello."])]) as server:
        convo = pk.Conversation(store, "c", _chat(server, "gpt-nope"), display=False)
        with pytest.raises(pk.ProviderError):
            convo.send("hi")
        convo.provider = _chat(server, "gpt-ok")
        assert convo.resume().message.content == "Hello."
    assert [m.role for m in store.load("c")] == ["user", "assistant"]


def test_another_text_after_a_refused_send_follows_the_kept_one(store):
    """The documented choice: the refused message stays (the store never takes a message back),
    so a different text is a second message and the model reads both."""
    with ChatServer([Refuse(404, NOT_FOUND), text_answer(["Both read."])]) as server:
        convo = pk.Conversation(store, "c", _chat(server, "gpt-nope"), display=False)
        with pytest.raises(pk.ProviderError):
            convo.send("hi")
        convo.provider = _chat(server, "gpt-ok")
        convo.send("hello?")
    assert [(m.role, m.content) for m in store.load("c")] == [("user", "hi"), ("user", "hello?"), ("assistant", "Both read.")]


def test_a_failure_after_tools_ran_says_everything_up_to_it_is_saved(store):
    tools = pk.ToolRegistry([pk.define_tool("look", "Look.", {"type": "object", "properties": {}}, lambda args: "seen",
                                            read_only=True)])
    provider = simulate.ScriptedProvider([simulate.call_turn([("look", {})])])  # no second turn: refused
    convo = pk.Conversation(store, "c", provider, tools, display=False)
    with pytest.raises(pk.ProviderError) as refused:
        convo.send("look")
    assert "everything up to the failure is saved in conversation 'c'" in str(refused.value)
    assert "convo.resume() carries on" in str(refused.value)
    assert [m.role for m in store.load("c")] == ["user", "assistant", "tool"]


def test_a_budget_spent_before_the_send_saves_nothing_and_says_nothing_was_saved(store):
    from providerkit_nb.usage import UsageTracker

    convo = pk.Conversation(store, "c", simulate.ScriptedProvider([]), display=False)
    convo.usage = UsageTracker(budget_usd=0.0)
    with pytest.raises(BudgetExceeded) as spent:
        convo.send("hi")
    assert store.load("c") == [] and "saved in conversation" not in str(spent.value)


# --------------------------------------------------------------------------- nothing to resume


def _captured(convo: Any) -> io.StringIO:
    out = io.StringIO()
    convo.display = True
    convo._live_display = lambda: TerminalLive(out)  # the terminal's face, captured
    return out


def test_resume_on_a_finished_conversation_says_there_is_nothing_to_resume(store):
    provider = simulate.ScriptedProvider([simulate.text_turn("Done.")])
    convo = pk.Conversation(store, "c", provider, display=False)
    convo.send("hi")
    out = _captured(convo)
    assert convo.resume() is None  # not an error
    said = out.getvalue()
    assert "nothing to resume: the model already answered" in said and "send() a new message" in said
    assert len(provider.requests) == 1  # no call was made


def test_resume_on_an_empty_conversation_says_so(store):
    convo = pk.Conversation(store, "c", simulate.ScriptedProvider([]), display=False)
    out = _captured(convo)
    assert convo.resume() is None
    assert "nothing to resume: conversation 'c' has no messages yet; send() starts it" in out.getvalue()


def test_the_notebook_display_shows_why_there_is_nothing_to_resume(store):
    class Area:
        value = ""

    convo = pk.Conversation(store, "c", simulate.ScriptedProvider([simulate.text_turn("Done.")]), display=False)
    convo.send("hi")
    area = Area()
    convo.display = True
    convo.live_into = area  # where the history view's Resume draws
    convo.resume()
    assert 'class="pk-note"' in area.value and "nothing to resume: the model already answered" in area.value
