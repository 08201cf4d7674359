"""Backup models: when a model is unknown, overloaded or out of quota, ask the next one.

The walk happens only before the first chunk a caller sees (text, reasoning or a tool call):
once something has been delivered, a failure propagates, because answering again from another
model would repeat or contradict what was already shown.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from ..core.errors import ErrorKind, ProviderError
from ..core.messages import Message
from ..core.tools import ToolDefinition
from ..core.turn import Chunk, Turn
from ..providers.base import ChunkStream, Provider
from ..wire.options import CallOptions
from ._base import Ask, Policy, RelayStream, Wrapper, constructor, read_head, relay

__all__ = ["BackupModels", "with_backup_models", "BACKUP_KINDS"]

BACKUP_KINDS = frozenset({ErrorKind.MODEL, ErrorKind.OVERLOAD, ErrorKind.QUOTA})


class BackupModels(Wrapper, Policy):
    """Try ``models`` in order on one provider (same endpoint, same key)."""

    def __init__(
        self,
        provider: Provider,
        models: Sequence[str],
        *,
        kinds: Sequence[ErrorKind | str] | None = None,
        on_fallback: Callable[[dict[str, Any]], None] | None = None,
        on_model_failed: Callable[[dict[str, Any]], None] | None = None,
    ) -> None:
        super().__init__(provider)
        if isinstance(models, str):
            raise TypeError("models is a list of model ids, e.g. ['gpt-5-mini', 'gpt-5-nano']")
        self.backups = [m for m in models if m]
        if not self.backups:
            raise ValueError("with_backup_models needs at least one backup model")
        self.kinds = frozenset(ErrorKind(k) for k in kinds) if kinds is not None else BACKUP_KINDS
        self.on_fallback = on_fallback
        self.on_model_failed = on_model_failed

    def chain(self, opts: CallOptions) -> list[str]:
        """The primary (the call's model, else the provider's), then the backups, once each."""
        out: list[str] = []
        for m in (opts.model or self.inner.model, *self.backups):
            if m and m not in out:
                out.append(m)
        return out

    def _eligible(self, exc: BaseException) -> bool:
        return isinstance(exc, ProviderError) and exc.kind in self.kinds

    def _failed(self, model: str, exc: BaseException, position: int, total: int) -> None:
        if self.on_model_failed is not None:
            self.on_model_failed({"model": model, "error": exc, "position": position, "total": total})

    def _fallback(self, model: str, position: int, total: int) -> None:
        if self.on_fallback is not None:
            self.on_fallback({"model": model, "position": position, "total": total})

    def _open(self, messages: list[Message], tools: list[ToolDefinition] | None, opts: CallOptions) -> ChunkStream:
        chain = self.chain(opts)
        inner = self.inner

        def body(stream: RelayStream) -> Iterator[Chunk]:
            total = len(chain)
            for pos, model in enumerate(chain, 1):
                if pos > 1:
                    self._fallback(model, pos, total)
                s = inner.open_stream(messages, tools, dataclasses.replace(opts, model=model))
                stream.inner = s
                stream.info["model"] = model
                stream.info["models_tried"] = pos
                try:
                    head = read_head(s)
                except BaseException as exc:
                    s.close()  # hang up before the next model is asked
                    if pos == total or not self._eligible(exc):
                        raise
                    self._failed(model, exc, pos, total)
                    continue
                yield from relay(head, s)  # committed: something may have been shown
                return

        return RelayStream(body, provider=self.inner.id)

    def whole(self, ask: Ask, opts: CallOptions) -> Turn:
        chain = self.chain(opts)
        total = len(chain)
        for pos, model in enumerate(chain, 1):
            if pos > 1:
                self._fallback(model, pos, total)
            try:
                return ask(self.inner, model=model)
            except Exception as exc:
                if pos == total or not self._eligible(exc):
                    raise
                self._failed(model, exc, pos, total)
        raise AssertionError("unreachable: the chain is never empty")

    def __repr__(self) -> str:
        return f"<BackupModels {self.backups!r} {self.inner!r}>"


with_backup_models = constructor(BackupModels, "with_backup_models", """Ask ``models`` in turn when the
provider's own model fails with ``model``, ``overload`` or ``quota`` (``kinds`` to change that)
before the first chunk; never after one.

``on_fallback({"model", "position", "total"})`` runs before each backup is asked;
``on_model_failed({"model", "error", "position", "total"})`` after each failure that walks on.
Wrap a retry inside it (``with_backup_models(with_retry(p), [...])``) to retry each model
before moving on.
""")
