"""Spellings renamed in 1.0 that keep working until 1.1, each with a DeprecationWarning that
names the new one (CHANGELOG.md lists them all). A type checker sees only the new spelling, so
old code runs while mypy and the editor point at what to write instead."""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable
from typing import ParamSpec, TypeVar

from .errors import _TRANSIENT, ErrorKind, ProviderError

__all__ = ["renamed", "renamed_keywords", "renamed_init_keywords", "CallableNumber", "is_transient"]

_P = ParamSpec("_P")
_R = TypeVar("_R")
_T = TypeVar("_T")


def renamed(old: str, new: str, *, stacklevel: int = 3) -> None:
    """Warn that ``old`` is spelled ``new`` since 1.0 (``stacklevel`` 3: the caller's caller)."""
    warnings.warn(
        f"{old} was renamed to {new} in 1.0 (see CHANGELOG.md); the old spelling goes in 1.1",
        DeprecationWarning,
        stacklevel=stacklevel,
    )


def renamed_keywords(owner: str, **renames: str) -> Callable[[Callable[_P, _R]], Callable[_P, _R]]:
    """A function that still takes the keywords it had before 1.0 (``old="new"``), warning once
    per call; the signature a checker sees is the function's own, with the new names only."""

    def wrap(fn: Callable[_P, _R]) -> Callable[_P, _R]:
        @functools.wraps(fn)
        def call(*args: _P.args, **kwargs: _P.kwargs) -> _R:
            for old, new in renames.items():
                if old in kwargs:
                    if new in kwargs:
                        raise TypeError(f"{owner}() got both {old}= and {new}=; {old}= is the old name of {new}=")
                    renamed(f"{owner}({old}=)", f"{owner}({new}=)")
                    kwargs[new] = kwargs.pop(old)
            return fn(*args, **kwargs)

        return call

    return wrap


def renamed_init_keywords(**renames: str) -> Callable[[type[_T]], type[_T]]:
    """``renamed_keywords`` for a class's ``__init__`` (above ``@dataclass``: its generated one)."""

    def wrap(cls: type[_T]) -> type[_T]:
        init = renamed_keywords(cls.__name__, **renames)(cls.__init__)
        cls.__init__ = init  # type: ignore[method-assign]  # the wrapped __init__, same signature
        return cls

    return wrap


class CallableNumber(float):
    """A number that was a method before 1.0 (``tracker.cost_usd()``): it is a plain float now,
    and calling it still gives the value, with a warning."""

    __slots__ = ()
    spelling = "tracker.cost_usd"

    def __call__(self) -> float:
        warnings.warn(
            f"{self.spelling}() is a number since 1.0: write {self.spelling} without the parentheses "
            "(see CHANGELOG.md); calling it goes in 1.1",
            DeprecationWarning,
            stacklevel=2,
        )
        return float(self)


def is_transient(kind: ErrorKind | str | ProviderError) -> bool:
    """``pk.is_transient(x)`` of 0.x: would a retry against the same endpoint help? Now
    ``err.is_transient`` (which also honours the server's own retry header)."""
    if isinstance(kind, ProviderError):
        return kind.is_transient
    return ErrorKind(kind) in _TRANSIENT
