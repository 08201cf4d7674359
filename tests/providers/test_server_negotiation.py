"""What real OpenAI-compatible servers refuse, learned and remembered per provider: the JSON
form, a named tool_choice, stream_options, tools a chat template cannot render.

Each server here is a real HTTP server on 127.0.0.1 that answers as the server it stands for
does, with its own refusal bodies (``tests/conversation/server_bodies.py`` says where each was
copied from); the request each one saw is read back from it."""

from __future__ import annotations

import io
import json
from typing import Any

import pytest

import providerkit_nb as pk
from providerkit_nb.conversation.console import TerminalLive
from providerkit_nb.core.html import turn_html
from providerkit_nb.stream import TurnAssembler
from tests.conversation.chat_server import ChatServer, Refuse, call_answer, text_answer
from tests.conversation.server_bodies import (
    LLAMA_CPP_NO_JINJA,
    LLAMA_CPP_PYTHON_JSON_SCHEMA,
    LM_STUDIO_JSON_OBJECT,
    LM_STUDIO_TOOL_CHOICE,
    STREAM_OPTIONS_REFUSALS,
    llama_cpp_props,
    llama_cpp_python_stream,
)

pytestmark = pytest.mark.timeout(60)

CITY = {
    "type": "object",
    "properties": {"city": {"type": "string"}, "population": {"type": "integer"}},
    "required": ["city", "population"],
    "additionalProperties": False,
}
GOOD = '{"city": "Lyon", "population": 522000}'


def weather(city: str) -> str:
    """The weather in a city."""
    weather.calls += 1  # type: ignore[attr-defined]
    return "sunny"


def clock(city: str) -> str:
    """The time in a city."""
    return "noon"


weather.calls = 0  # type: ignore[attr-defined]
TOOLS = pk.ToolRegistry([pk.tool(weather), pk.tool(clock)])


def compatible(srv: ChatServer, **kw: Any) -> Any:
    return pk.openai(model="smollm2", base_url=srv.base_url, **kw)


def form_of(body: dict[str, Any]) -> str:
    rf = body.get("response_format")
    if rf is None:
        return "prompt"
    if rf["type"] == "json_object":
        return "json_object_schema" if "schema" in rf else "json_object"
    return rf["type"]


# --------------------------------------------------------------------------- JSON


def llama_cpp_python(body: dict[str, Any]) -> Any:
    """llama-cpp-python 0.3.36: json_schema is a 500; json_object with the schema is enforced."""
    if form_of(body) == "json_schema":
        return Refuse(500, LLAMA_CPP_PYTHON_JSON_SCHEMA)
    return llama_cpp_python_stream([GOOD[:10], GOOD[10:]])


def test_json_schema_refused_by_llama_cpp_python_is_sent_once_more_as_json_object_with_the_schema() -> None:
    with ChatServer([llama_cpp_python] * 4) as srv:
        c = pk.Conversation(pk.MemoryStore(), "j", compatible(srv), display=False)
        reply = c.send("A city?", json=CITY)
        assert reply.ok and reply.value == {"city": "Lyon", "population": 522000}
        first, second = srv.requests
        assert first["response_format"]["type"] == "json_schema"  # OpenAI's form first
        assert second["response_format"] == {"type": "json_object", "schema": CITY}
        assert second["messages"][-1]["role"] == "system" and "JSON" in second["messages"][-1]["content"]
        said = reply.turn.notice("json_form")
        assert said is not None and said.value == "json_object_schema"
        assert "refused json_schema" in said.text and "Input should be 'text' or 'json_object'" in said.text
        # remembered for this provider: the next reply goes out in the form it takes, once
        again = c.send("Another?", json=CITY)
        assert again.ok and len(srv.requests) == 3
        assert form_of(srv.requests[2]) == "json_object_schema"
        assert again.turn.notice("json_form").value == "json_object_schema"


def lm_studio(answer: str) -> Any:
    def serve(body: dict[str, Any]) -> Any:
        if form_of(body) in ("json_object", "json_object_schema"):
            return Refuse(400, LM_STUDIO_JSON_OBJECT)
        return text_answer([answer])
    return serve


def test_a_reply_that_does_not_fit_is_asked_once_more_in_the_other_form_before_it_is_reported() -> None:
    # an unknown server that takes json_schema and refuses json_object (LM Studio's wording)
    with ChatServer([lm_studio('{"city": "Lyon"}'), lm_studio(GOOD), lm_studio(GOOD)]) as srv:
        store = pk.MemoryStore()
        c = pk.Conversation(store, "j", compatible(srv), display=False)
        reply = c.send("A city?", json=CITY)
        assert reply.ok and reply.value["population"] == 522000
        forms = [form_of(b) for b in srv.requests]
        # the reply in json_schema did not fit; the other form was refused (learned), then the prompt
        assert forms == ["json_schema", "json_object_schema", "prompt"]
        said = reply.turn.notice("json_form")
        assert said.value == "prompt" and "did not fit" in said.text and "refused json_object_schema" in said.text
        # only the reply that fit is in the history; the first is kept aside for inspection
        answers = [m.content for m in c.messages if m.role == "assistant"]
        assert answers == [GOOD]
        assert any('"Lyon"' in str(t) for t in store.lost_turns("j"))


def test_a_second_reply_that_does_not_fit_is_reported() -> None:
    with ChatServer([text_answer(['{"city": 1}']), text_answer(["no json here"])]) as srv:
        c = pk.Conversation(pk.MemoryStore(), "j", compatible(srv), display=False)
        reply = c.send("A city?", json=CITY)
        assert not reply.ok and reply.value is None and "no JSON object" in reply.error
        assert [form_of(b) for b in srv.requests] == ["json_schema", "json_object_schema"]  # once, not more


def test_lm_studio_preset_knows_its_forms() -> None:
    with ChatServer([lm_studio("{}"), lm_studio(GOOD)]) as srv:
        p = pk.preset("lmstudio", model="m", base_url=srv.base_url)
        reply = pk.Conversation(pk.MemoryStore(), "j", p, display=False).send("A city?", json=CITY)
        assert reply.ok
        # json_object is known to be refused there: the other form is the prompt, no 400 on the way
        assert [form_of(b) for b in srv.requests] == ["json_schema", "prompt"]


# --------------------------------------------------------------------------- tool_choice


def llama_cpp_server(body: dict[str, Any]) -> Any:
    """llama.cpp's server: an object tool_choice is read as its default (auto), a 200 without a
    call; "required" is enforced."""
    if body.get("tool_choice") == "required":
        name = body["tools"][0]["function"]["name"]
        return call_answer("call_1", name, '{"city": "Paris"}')
    return text_answer(["It is probably sunny."])


def test_llama_cpp_gets_required_with_only_the_named_tool() -> None:
    with ChatServer([llama_cpp_server] * 4, props=llama_cpp_props(True)) as srv:
        p = compatible(srv)
        turn = pk.collect_turn(p.create_stream([pk.UserMessage("Weather in Paris?")], TOOLS.definitions(),
                                               tool_choice="weather"))
        assert [c.name for c in turn.message.tool_calls or []] == ["weather"]
        sent = srv.requests[0]
        assert sent["tool_choice"] == "required"
        assert [t["function"]["name"] for t in sent["tools"]] == ["weather"]
        said = turn.notice("tool_choice")
        assert said is not None and said.value == "required" and "llama.cpp" in said.text
        assert srv.gets == ["/props"]
        # learned once per provider: no second probe
        pk.collect_turn(p.create_stream([pk.UserMessage("And Rome?")], TOOLS.definitions(), tool_choice="weather"))
        assert srv.gets == ["/props"] and srv.requests[1]["tool_choice"] == "required"


def test_a_forced_call_the_server_ignored_is_said_on_the_reply_and_the_live_display() -> None:
    # a server nothing is known of that answers 200 as if auto (as llama.cpp does with the object form)
    with ChatServer([text_answer(["It is probably sunny."])]) as srv:
        out = io.StringIO()
        p = compatible(srv)
        live = TerminalLive(out)
        asm = TurnAssembler()
        for chunk in p.create_stream([pk.UserMessage("Weather?")], TOOLS.definitions(), tool_choice="weather"):
            asm.feed(chunk)
        live.turn(asm, True)
        turn = asm.turn()
        assert srv.requests[0]["tool_choice"] == {"type": "function", "function": {"name": "weather"}}
        said = turn.notice("forced_call")
        assert said is not None and said.value == "none" and "weather" in said.text
        assert "forced call not made" in out.getvalue()
        assert "forced call not made" in turn_html(turn)


def test_required_without_a_call_is_said_too() -> None:
    with ChatServer([text_answer(["no"])]) as srv:
        turn = pk.collect_turn(compatible(srv).create_stream([pk.UserMessage("x")], TOOLS.definitions(),
                                                            tool_choice="required"))
        assert turn.notice("forced_call").value == "none"


def lm_studio_tools(body: dict[str, Any]) -> Any:
    if isinstance(body.get("tool_choice"), dict):
        return Refuse(400, LM_STUDIO_TOOL_CHOICE)
    return call_answer("call_1", body["tools"][0]["function"]["name"], '{"city": "Paris"}')


def test_a_refused_named_tool_choice_is_sent_again_as_required_and_remembered() -> None:
    with ChatServer([lm_studio_tools] * 3) as srv:
        p = compatible(srv)
        turn = pk.collect_turn(p.create_stream([pk.UserMessage("x")], TOOLS.definitions(), tool_choice="clock"))
        assert [c.name for c in turn.message.tool_calls or []] == ["clock"]
        assert isinstance(srv.requests[0]["tool_choice"], dict)
        assert srv.requests[1]["tool_choice"] == "required"
        assert [t["function"]["name"] for t in srv.requests[1]["tools"]] == ["clock"]
        assert "Invalid tool_choice type" in turn.notice("tool_choice").text
        pk.collect_turn(p.create_stream([pk.UserMessage("y")], TOOLS.definitions(), tool_choice="clock"))
        assert len(srv.requests) == 3 and srv.requests[2]["tool_choice"] == "required"


def test_required_on_llama_cpp_python_goes_as_the_named_object_for_a_single_tool() -> None:
    with ChatServer([call_answer("call_1", "weather", "{}")]) as srv:
        p = compatible(srv, server="llama-cpp-python")
        pk.collect_turn(p.create_stream([pk.UserMessage("x")], [TOOLS.get("weather").definition],
                                        tool_choice="required"))
        assert srv.requests[0]["tool_choice"] == {"type": "function", "function": {"name": "weather"}}


# --------------------------------------------------------------------------- stream_options


@pytest.mark.parametrize("server", sorted(STREAM_OPTIONS_REFUSALS))
def test_refused_stream_options_are_left_out_and_remembered(server: str) -> None:
    status, body = STREAM_OPTIONS_REFUSALS[server]

    def serve(req: dict[str, Any]) -> Any:
        return Refuse(status, body) if "stream_options" in req else llama_cpp_python_stream(["hi"])

    with ChatServer([serve] * 3) as srv:
        p = compatible(srv)
        turn = pk.collect_turn(p.create_stream([pk.UserMessage("x")]))
        assert turn.message.content == "hi" and turn.usage is None
        assert "stream_options" in srv.requests[0] and "stream_options" not in srv.requests[1]
        assert turn.notice("stream_options").value == "omitted"
        pk.collect_turn(p.create_stream([pk.UserMessage("y")]))
        assert len(srv.requests) == 3 and "stream_options" not in srv.requests[2]


# --------------------------------------------------------------------------- tools a template cannot render


def test_a_server_whose_template_cannot_render_tools_is_said_plainly_before_anything_is_sent() -> None:
    with ChatServer([text_answer(["hi"])], props=llama_cpp_props(False)) as srv:
        p = compatible(srv)
        for _ in range(2):
            with pytest.raises(pk.ProviderError) as info:
                pk.collect_turn(p.create_stream([pk.UserMessage("x")], TOOLS.definitions()))
            err = info.value
            assert err.kind == pk.ErrorKind.INVALID and err.code == "tools_unsupported"
            assert "cannot take tools" in err.message and "supports_tool_calls is false" in err.message
            assert "--jinja" in err.message and "--chat_format chatml-function-calling" in err.message
        assert srv.requests == [] and srv.gets == ["/props"]  # asked once, nothing sent
        # without tools the server is fine
        assert pk.collect_turn(p.create_stream([pk.UserMessage("x")])).message.content == "hi"


def test_a_server_without_props_is_not_held_against_it() -> None:
    with ChatServer([call_answer("call_1", "weather", "{}")]) as srv:  # /props: 404
        turn = pk.collect_turn(compatible(srv).create_stream([pk.UserMessage("x")], TOOLS.definitions()))
        assert turn.message.tool_calls and srv.gets == ["/props"]


def test_llama_cpp_without_jinja_is_a_setting_not_an_overload() -> None:
    with ChatServer([Refuse(500, LLAMA_CPP_NO_JINJA)] * 3) as srv:
        p = pk.with_retry(compatible(srv), attempts=3, base=0.0)
        with pytest.raises(pk.ProviderError) as info:
            pk.collect_turn(p.create_stream([pk.UserMessage("x")], TOOLS.definitions()))
        assert info.value.kind == pk.ErrorKind.INVALID and "--jinja" in info.value.message
        assert len(srv.requests) == 1  # a setting: never retried


def test_a_call_written_as_text_is_a_finding_and_never_run() -> None:
    written = 'Sure.\n<tool_call>\n{"name": "weather", "arguments": {"city": "Paris"}}\n</tool_call>'
    with ChatServer([text_answer([written])]) as srv:
        before = weather.calls  # type: ignore[attr-defined]
        c = pk.Conversation(pk.MemoryStore(), "t", compatible(srv), TOOLS, display=False)
        turn = c.send("Weather in Paris?")
        assert weather.calls == before  # type: ignore[attr-defined]
        assert turn.message.tool_calls is None
        assert "tool call as text" in turn_html(turn)
        from providerkit_nb.viewer import build_page

        page = build_page(c.messages)
        found = [f for f in page.findings if f.kind == "call_as_text"]
        assert len(found) == 1 and "weather" in found[0].title and found[0].index == len(c.messages) - 1
        assert json.loads(written.split("\n")[2])["name"] == "weather"


def test_calls_that_start_together_wait_for_the_one_probe() -> None:
    import threading

    with ChatServer([llama_cpp_server] * 6, props=llama_cpp_props(True)) as srv:
        p = compatible(srv)
        errors: list[BaseException] = []

        def send() -> None:
            try:
                pk.collect_turn(p.create_stream([pk.UserMessage("x")], TOOLS.definitions(), tool_choice="weather"))
            except BaseException as exc:  # pragma: no cover - reported below
                errors.append(exc)

        threads = [threading.Thread(target=send) for _ in range(6)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(30)
        assert errors == [] and srv.gets == ["/props"]
        assert [b["tool_choice"] for b in srv.requests] == ["required"] * 6
