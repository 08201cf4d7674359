"""Structured output: ``json=`` on every wire, and reading JSON out of an answer."""

from .core.structured import (
    JsonAnswer,
    JsonFormat,
    JsonReply,
    is_strict_schema,
    parse_json_answer,
    schema_prompt,
)

__all__ = ["JsonAnswer", "JsonFormat", "JsonReply", "is_strict_schema", "parse_json_answer", "schema_prompt"]
