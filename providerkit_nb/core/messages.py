"""Canonical messages: the one shape every layer reads and writes.

The JSON form is fixed by the design: sorted keys, compact separators, ``ensure_ascii=False``
and absent fields left out, so equal messages are equal bytes (which keeps prompt caches and
content hashes stable). ``from_dict`` refuses anything it would have to guess about, naming the
field and the message index, and never drops data silently.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, NotRequired, TypedDict

from .errors import (
    MessageFormatError,  # noqa: F401 (defined at the bottom, kept importable here)
)
from .json_input import read_json

__all__ = [
    "TextPart",
    "ImagePart",
    "FilePart",
    "ContentPart",
    "ToolCall",
    "ReasoningItems",
    "SystemMessage",
    "UserMessage",
    "AssistantMessage",
    "ToolMessage",
    "Message",
    "MessageJSON",
    "MessageInput",
    "message_from_dict",
    "MessageFormatError",
    "dumps",
    "loads",
    "dump_message",
    "text_of",
    "strip_reasoning",
]

IMAGE_MIME_TYPES = frozenset({"image/jpeg", "image/png", "image/webp", "image/gif"})


def _where(index: int | None) -> str:
    return f"message {index}" if index is not None else "message"


def _bad(index: int | None, ctx: str, problem: str, key: str | None = None) -> MessageFormatError:
    """The error for a field (``ctx`` is its path inside the message, e.g. ``.tool_calls[0]``):
    ``message 3: [3].tool_calls[0].arguments: expected str, got dict``."""
    path = ((f"[{index}]" if index is not None else "") + ctx + (f".{key}" if key else "")).lstrip(".")
    if ctx or key:
        return MessageFormatError(f"{_where(index)}: {path}: {problem}", path)
    return MessageFormatError(f"{_where(index)}: {problem}", path)


def _got(value: Any) -> str:
    return type(value).__name__


def _need_str(d: dict[str, Any], key: str, index: int | None, *, ctx: str = "", allow_empty: bool = True) -> str:
    if key not in d:
        raise _bad(index, ctx, "missing (a required field)", key)
    value = d[key]
    if not isinstance(value, str):
        raise _bad(index, ctx, f"expected str, got {_got(value)}", key)
    if not allow_empty and not value:
        raise _bad(index, ctx, "must not be empty", key)
    return value


def _opt_str(d: dict[str, Any], key: str, index: int | None, *, ctx: str = "") -> str | None:
    if d.get(key) is None:
        return None
    return _need_str(d, key, index, ctx=ctx)


def _check_keys(d: dict[str, Any], allowed: frozenset[str], index: int | None, ctx: str = "") -> None:
    extra = set(d) - allowed
    if extra:
        raise _bad(
            index,
            ctx,
            f"unknown field(s) {sorted(extra)}; "
            f"allowed: {sorted(allowed)} (refusing rather than dropping data)"
        )


# --------------------------------------------------------------------------- parts


@dataclass(slots=True)
class TextPart:
    text: str
    type: Literal["text"] = field(default="text", init=False)

    def to_dict(self) -> dict[str, Any]:
        return {"type": "text", "text": self.text}


@dataclass(slots=True)
class ImagePart:
    """An inline image; base64 only, never a URL, so a history is self-contained."""

    mime_type: str
    data: str
    type: Literal["image"] = field(default="image", init=False)

    def to_dict(self) -> dict[str, Any]:
        return {"type": "image", "mime_type": self.mime_type, "data": self.data}

    def data_uri(self) -> str:
        return f"data:{self.mime_type};base64,{self.data}"


@dataclass(slots=True)
class FilePart:
    """An inline file (PDF, audio, video, text): only some wires accept it."""

    mime_type: str
    data: str
    name: str | None = None
    type: Literal["file"] = field(default="file", init=False)

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"type": "file", "mime_type": self.mime_type, "data": self.data}
        if self.name is not None:
            d["name"] = self.name
        return d


ContentPart = TextPart | ImagePart | FilePart


def _part_from_dict(d: Any, index: int | None, j: int, field_name: str = "content") -> ContentPart:
    ctx = f".{field_name}[{j}]"
    if not isinstance(d, dict):
        raise _bad(index, ctx, f"expected a content part object, got {_got(d)}")
    kind = d.get("type")
    if kind == "text":
        _check_keys(d, frozenset({"type", "text"}), index, ctx)
        return TextPart(_need_str(d, "text", index, ctx=ctx))
    if kind == "image":
        _check_keys(d, frozenset({"type", "mime_type", "data"}), index, ctx)
        mime = _need_str(d, "mime_type", index, ctx=ctx)
        if mime not in IMAGE_MIME_TYPES:
            raise _bad(index, ctx, f"image mime_type {mime!r} is not one of {sorted(IMAGE_MIME_TYPES)}", "mime_type")
        return ImagePart(mime, _need_str(d, "data", index, ctx=ctx))
    if kind == "file":
        _check_keys(d, frozenset({"type", "mime_type", "data", "name"}), index, ctx)
        return FilePart(
            _need_str(d, "mime_type", index, ctx=ctx),
            _need_str(d, "data", index, ctx=ctx),
            _opt_str(d, "name", index, ctx=ctx),
        )
    raise _bad(index, ctx, f"unknown part type {kind!r} (text, image or file)", "type")


# --------------------------------------------------------------------------- pieces


@dataclass(slots=True)
class ToolCall:
    """A call the model made. ``arguments`` is the raw JSON text, kept verbatim end to end."""

    id: str
    name: str
    arguments: str = ""
    thought_signature: str | None = None

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"id": self.id, "name": self.name, "arguments": self.arguments}
        if self.thought_signature is not None:
            d["thought_signature"] = self.thought_signature
        return d

    @classmethod
    def from_dict(cls, d: Any, index: int | None = None, j: int = 0) -> ToolCall:
        ctx = f".tool_calls[{j}]"
        if not isinstance(d, dict):
            raise _bad(index, ctx, f"expected a tool call object, got {_got(d)}")
        _check_keys(d, frozenset({"id", "name", "arguments", "thought_signature"}), index, ctx)
        return cls(
            id=_need_str(d, "id", index, ctx=ctx, allow_empty=False),
            name=_need_str(d, "name", index, ctx=ctx, allow_empty=False),
            arguments=_need_str(d, "arguments", index, ctx=ctx),
            thought_signature=_opt_str(d, "thought_signature", index, ctx=ctx),
        )


@dataclass(slots=True)
class ReasoningItems:
    """Provider-owned signed state, replayed only to the provider named here."""

    provider: str
    items: list[Any]

    def to_dict(self) -> dict[str, Any]:
        return {"provider": self.provider, "items": self.items}

    @classmethod
    def from_dict(cls, d: Any, index: int | None = None) -> ReasoningItems:
        ctx = ".reasoning_items"
        if not isinstance(d, dict):
            raise _bad(index, ctx, f"expected an object {{provider, items}}, got {_got(d)}")
        _check_keys(d, frozenset({"provider", "items"}), index, ctx)
        provider = _need_str(d, "provider", index, ctx=ctx, allow_empty=False)
        items = d.get("items")
        if not isinstance(items, list):
            raise _bad(index, ctx, f"expected list, got {_got(items)}", "items")
        return cls(provider, items)


# --------------------------------------------------------------------------- messages


@dataclass(slots=True)
class SystemMessage:
    content: str
    role: Literal["system"] = field(default="system", init=False)

    def to_dict(self) -> dict[str, Any]:
        return {"role": "system", "content": self.content}

    @classmethod
    def from_dict(cls, d: dict[str, Any], index: int | None = None) -> SystemMessage:
        _check_keys(d, frozenset({"role", "content"}), index)
        return cls(_need_str(d, "content", index))


@dataclass(slots=True)
class UserMessage:
    content: str | list[ContentPart]
    role: Literal["user"] = field(default="user", init=False)

    def to_dict(self) -> dict[str, Any]:
        c = self.content
        return {"role": "user", "content": c if isinstance(c, str) else [p.to_dict() for p in c]}

    @classmethod
    def from_dict(cls, d: dict[str, Any], index: int | None = None) -> UserMessage:
        _check_keys(d, frozenset({"role", "content"}), index)
        if "content" not in d:
            raise _bad(index, "", "missing (a required field)", "content")
        c = d["content"]
        if isinstance(c, str):
            return cls(c)
        if isinstance(c, list):
            return cls([_part_from_dict(p, index, j) for j, p in enumerate(c)])
        raise _bad(index, "", f"expected str or a list of parts, got {_got(c)}", "content")


@dataclass(slots=True)
class AssistantMessage:
    content: str = ""
    reasoning: str | None = None
    reasoning_details: list[Any] | None = None
    reasoning_items: ReasoningItems | None = None
    tool_calls: list[ToolCall] | None = None
    role: Literal["assistant"] = field(default="assistant", init=False)

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"role": "assistant", "content": self.content}
        if self.reasoning is not None:
            d["reasoning"] = self.reasoning
        if self.reasoning_details is not None:
            d["reasoning_details"] = self.reasoning_details
        if self.reasoning_items is not None:
            d["reasoning_items"] = self.reasoning_items.to_dict()
        if self.tool_calls:
            d["tool_calls"] = [c.to_dict() for c in self.tool_calls]
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any], index: int | None = None) -> AssistantMessage:
        _check_keys(
            d,
            frozenset(
                {"role", "content", "reasoning", "reasoning_details", "reasoning_items", "tool_calls"}
            ),
            index,
        )
        content = d.get("content", "")
        if content is None:
            content = ""
        if not isinstance(content, str):
            raise _bad(index, "", f"expected str, got {_got(content)}", "content")
        details = d.get("reasoning_details")
        if details is not None and not isinstance(details, list):
            raise _bad(index, "", f"expected list, got {_got(details)}", "reasoning_details")
        items = d.get("reasoning_items")
        calls = d.get("tool_calls")
        if calls is not None and not isinstance(calls, list):
            raise _bad(index, "", f"expected list, got {_got(calls)}", "tool_calls")
        return cls(
            content=content,
            reasoning=_opt_str(d, "reasoning", index),
            reasoning_details=details,
            reasoning_items=ReasoningItems.from_dict(items, index) if items is not None else None,
            tool_calls=[ToolCall.from_dict(c, index, j) for j, c in enumerate(calls)] or None
            if calls is not None
            else None,
        )

    @property
    def has_content(self) -> bool:
        """True when the message says something or calls something (repair drops the rest)."""
        return bool(self.content.strip()) or bool(self.tool_calls)


@dataclass(slots=True)
class ToolMessage:
    tool_call_id: str
    name: str
    content: str
    images: list[ImagePart] | None = None
    role: Literal["tool"] = field(default="tool", init=False)

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "role": "tool",
            "tool_call_id": self.tool_call_id,
            "name": self.name,
            "content": self.content,
        }
        if self.images:
            d["images"] = [p.to_dict() for p in self.images]
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any], index: int | None = None) -> ToolMessage:
        _check_keys(d, frozenset({"role", "tool_call_id", "name", "content", "images"}), index)
        images = d.get("images")
        parts: list[ImagePart] | None = None
        if images is not None:
            if not isinstance(images, list):
                raise _bad(index, "", f"expected a list of image parts, got {_got(images)}", "images")
            parts = []
            for j, p in enumerate(images):
                part = _part_from_dict(p, index, j, "images")
                if not isinstance(part, ImagePart):
                    raise _bad(index, f".images[{j}]", "only image parts are allowed")
                parts.append(part)
        return cls(
            tool_call_id=_need_str(d, "tool_call_id", index, allow_empty=False),
            name=_need_str(d, "name", index),
            content=_need_str(d, "content", index),
            images=parts or None,
        )


Message = SystemMessage | UserMessage | AssistantMessage | ToolMessage

# --------------------------------------------------------------------------- JSON form
# The canonical JSON of DESIGN.md as types a checker can follow: what a user may pass where a
# message is expected (a pasted dict is checked by ``message_from_dict`` all the same).


class TextPartJSON(TypedDict):
    type: Literal["text"]
    text: str


class ImagePartJSON(TypedDict):
    type: Literal["image"]
    mime_type: str
    data: str


class FilePartJSON(TypedDict):
    type: Literal["file"]
    mime_type: str
    data: str
    name: NotRequired[str]


class ToolCallJSON(TypedDict):
    id: str
    name: str
    arguments: str
    thought_signature: NotRequired[str]


class ReasoningItemsJSON(TypedDict):
    provider: str
    items: list[Any]


class SystemMessageJSON(TypedDict):
    role: Literal["system"]
    content: str


class UserMessageJSON(TypedDict):
    role: Literal["user"]
    content: str | list[TextPartJSON | ImagePartJSON | FilePartJSON]


class AssistantMessageJSON(TypedDict):
    role: Literal["assistant"]
    content: NotRequired[str]
    reasoning: NotRequired[str]
    reasoning_details: NotRequired[list[Any]]
    reasoning_items: NotRequired[ReasoningItemsJSON]
    tool_calls: NotRequired[list[ToolCallJSON]]


class ToolMessageJSON(TypedDict):
    role: Literal["tool"]
    tool_call_id: str
    name: str
    content: str
    images: NotRequired[list[ImagePartJSON]]


MessageJSON = SystemMessageJSON | UserMessageJSON | AssistantMessageJSON | ToolMessageJSON
MessageInput = Message | MessageJSON
"""A message object or its canonical JSON dict: what every call that takes messages accepts."""


_BY_ROLE: dict[str, Any] = {
    "system": SystemMessage,
    "user": UserMessage,
    "assistant": AssistantMessage,
    "tool": ToolMessage,
}


def _common(d: dict[str, Any]) -> Message | None:
    """The shapes most messages have (text content, plain tool calls), built directly once each
    field has its type; None for anything else, which the validating ``from_dict`` then builds
    or refuses. Accepts only what ``from_dict`` accepts and builds the same object (a store's
    load spends most of its time here; tests/core/test_messages_fast.py holds the two together)."""
    role = d.get("role")
    build = _COMMON_BY_ROLE.get(role) if isinstance(role, str) else None
    return None if build is None else build(d)


def _common_assistant(d: dict[str, Any]) -> AssistantMessage | None:
    content = d.get("content")
    reasoning = d.get("reasoning")
    calls = d.get("tool_calls")
    if (
        not d.keys() <= _ASSISTANT_COMMON
        or (type(content) is not str and content is not None)
        or (reasoning is not None and type(reasoning) is not str)
    ):
        return None
    if calls is None:
        return AssistantMessage(content or "", reasoning)
    if type(calls) is not list or not calls:
        return None
    built: list[ToolCall] = []
    for c in calls:
        call = _common_call(c)
        if call is None:
            return None
        built.append(call)
    return AssistantMessage(content or "", reasoning, None, None, built)


def _common_call(c: Any) -> ToolCall | None:
    if type(c) is not dict or not c.keys() <= _CALL_KEYS:
        return None
    cid, name, args, sig = c.get("id"), c.get("name"), c.get("arguments"), c.get("thought_signature")
    if (
        type(cid) is not str or not cid
        or type(name) is not str or not name
        or type(args) is not str
        or (sig is not None and type(sig) is not str)
    ):
        return None
    return ToolCall(cid, name, args, sig)


def _common_user(d: dict[str, Any]) -> UserMessage | None:
    content = d.get("content")
    return UserMessage(content) if len(d) == 2 and type(content) is str else None


def _common_tool(d: dict[str, Any]) -> ToolMessage | None:
    content, cid, name = d.get("content"), d.get("tool_call_id"), d.get("name")
    if len(d) == 4 and type(content) is str and type(cid) is str and cid and type(name) is str:
        return ToolMessage(cid, name, content)
    return None


def _common_system(d: dict[str, Any]) -> SystemMessage | None:
    content = d.get("content")
    return SystemMessage(content) if len(d) == 2 and type(content) is str else None


_COMMON_BY_ROLE: dict[str, Callable[[dict[str, Any]], Message | None]] = {
    "assistant": _common_assistant,
    "user": _common_user,
    "tool": _common_tool,
    "system": _common_system,
}


_ASSISTANT_COMMON = frozenset({"role", "content", "reasoning", "tool_calls"})
_CALL_KEYS = frozenset({"id", "name", "arguments", "thought_signature"})


def message_from_dict(d: Any, index: int | None = None) -> Message:
    """Build the right message class from its canonical dict (``index`` names it in errors)."""
    if type(d) is dict:
        common = _common(d)
        if common is not None:
            return common
    if not isinstance(d, dict):
        raise _bad(index, "", f"must be a JSON object, got {_got(d)}")
    role = d.get("role")
    cls = _BY_ROLE.get(role) if isinstance(role, str) else None
    if cls is None:
        raise _bad(index, "", f"unknown role {role!r}; expected one of system, user, assistant, tool")
    message: Message = cls.from_dict(d, index)
    return message


def _encode(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def dump_message(message: Message) -> str:
    """One message in the canonical encoding (what stores write and hash)."""
    return _encode(message.to_dict())


def dumps(messages: Iterable[Message]) -> str:
    """A JSON array of messages in the canonical encoding."""
    return _encode([m.to_dict() for m in messages])


def loads(text: str | bytes) -> list[Message]:
    """Parse a JSON array of canonical messages; malformed input raises ``MessageFormatError``
    (a ValueError) naming the path of the bad field, e.g. ``[3].tool_calls[0].arguments``."""
    try:
        data = read_json(text)
    except ValueError as exc:  # not JSON, not UTF-8, or nested beyond reading
        raise MessageFormatError(f"not valid JSON: {exc}") from exc
    if not isinstance(data, list):
        raise MessageFormatError(f"expected a JSON array of messages, got {_got(data)}")
    return [message_from_dict(d, i) for i, d in enumerate(data)]


def text_of(message: Message) -> str:
    """The readable text of any message (parts joined), for previews and notes."""
    c = message.content
    if isinstance(c, str):
        return c
    return "".join(p.text for p in c if isinstance(p, TextPart))


def ensure_messages(messages: Sequence[MessageInput | dict[str, Any]]) -> list[Message]:
    """Accept canonical dicts or message objects alike (notebook users paste dicts)."""
    out: list[Message] = []
    for i, m in enumerate(messages):
        out.append(m if not isinstance(m, dict) else message_from_dict(m, i))
    return out


def strip_reasoning(messages: Sequence[Message]) -> list[Message]:
    """A copy without the three reasoning carriers (``reasoning``, ``reasoning_details``,
    ``reasoning_items``) on any assistant message, for a thinking-off turn: DeepSeek rejects
    replayed reasoning then, and OpenRouter and Responses would otherwise still replay it.
    A tool call's Gemini ``thought_signature`` is kept: dropping it makes the model re-plan."""
    out: list[Message] = []
    for m in messages:
        if isinstance(m, AssistantMessage) and (
            m.reasoning is not None or m.reasoning_details is not None or m.reasoning_items is not None
        ):
            m = AssistantMessage(m.content, tool_calls=m.tool_calls)
        out.append(m)
    return out
