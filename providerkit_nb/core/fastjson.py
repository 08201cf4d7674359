"""``json.loads`` with the same values, cheaper when orjson (the ``fast-json`` extra) is there.

orjson parses about 2.5x faster than the standard library but differs on a few texts: it reads
an integer beyond 64 bits as a float, and refuses NaN/Infinity, lone surrogates and floats beyond
range. The first case is the only one where it would answer differently; such an integer needs 20
digits in a row (19 for a negative one below -2**63), so any text with a run of 19 digits goes to
the standard parser, as does anything orjson refuses. What is accepted and what comes back never
depend on whether orjson is installed.

A stream reader checks each read once (``trusted_loads``) rather than every event's text: the
check costs more than orjson's parse of a short event, and an event cut from text without a long
digit run has none either.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

__all__ = ["loads", "loads_utf8", "trusted_loads"]

_orjson_loads: Callable[[bytes | str], Any] | None
try:
    from orjson import loads as _found

    _orjson_loads = _found
except ImportError:  # pragma: no cover - depends on the environment
    _orjson_loads = None

# digits -> "0", every other byte -> " ": one substring test then finds a run of 19 digits
_DIGITS = bytes(48 if 48 <= i <= 57 else 32 for i in range(256))
_LONG_RUN = b"0" * 19


def loads(text: str, slow: Callable[[str], Any] = json.loads) -> Any:
    """The value of one JSON text; ``slow`` (``json.loads`` or an equivalent) reads what orjson
    is not trusted with and raises the usual ValueError for what is not JSON."""
    if _orjson_loads is not None:
        try:
            raw = text.encode()
            if _LONG_RUN not in raw.translate(_DIGITS):
                return _orjson_loads(raw)
        except ValueError:  # orjson's JSONDecodeError, or a lone surrogate that cannot encode
            pass
    return slow(text)


def trusted_loads(text: str) -> Callable[[str], Any] | None:
    """orjson's ``loads`` when it is installed and may read every JSON text cut out of ``text``
    (no run of 19 digits anywhere in it), else None. A caller still falls back to ``loads``
    when orjson refuses a text, so what is accepted stays the same."""
    fast = _orjson_loads
    if fast is None:
        return None
    try:
        if _LONG_RUN in text.encode().translate(_DIGITS):
            return None
    except UnicodeEncodeError:  # a lone surrogate: orjson would refuse every text with it
        return None
    return fast  # orjson reads str as well as bytes


def _utf8_standard(raw: bytes) -> Any:
    return json.loads(raw.decode())


# The value of one JSON text given as UTF-8 bytes: orjson itself when installed (no wrapper: a
# store's load calls it once a row), without the digit scan, so an integer beyond 64 bits may
# come back as a float. For callers that know where numbers can be (a canonical message holds
# them only inside its reasoning payloads; see the store's load) and read those texts with
# ``loads``. Raises ValueError for bytes that are not UTF-8 JSON; orjson refuses a few texts
# ``json.loads`` accepts (see above).
loads_utf8: Callable[[bytes], Any] = _orjson_loads if _orjson_loads is not None else _utf8_standard
