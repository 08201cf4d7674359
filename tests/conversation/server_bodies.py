"""What real OpenAI-compatible servers answer, byte for byte, for the scripted servers to play.

llama-cpp-python's bodies were copied from its 0.3.36 server (``python -m llama_cpp.server
--chat_format chatml-function-calling``, SmolLM2-135M-Instruct) with curl; only the site-packages
path its traceback names is replaced by a neutral one. The others are copied from the issue
thread or source named beside each.
"""

from __future__ import annotations

import json
from typing import Any

from .chat_server import Refuse

# -- llama-cpp-python 0.3.36 ---------------------------------------------------------------

# response_format json_schema: HTTP 500, pydantic's validation error (the path is neutral here)
LLAMA_CPP_PYTHON_JSON_SCHEMA = (
    b'{"error":{"message":"1 validation error:\\n  {\'type\': \'literal_error\', \'loc\': (\'body\', '
    b'\'response_format\', \'type\'), \'msg\': \\"Input should be \'text\' or \'json_object\'\\", \'input\': '
    b'\'json_schema\', \'ctx\': {\'expected\': \\"\'text\' or \'json_object\'\\"}}\\n\\n  File '
    b'\\"/usr/lib/python3/site-packages/llama_cpp/server/app.py\\", line 376, in create_chat_completion\\n    '
    b'POST /v1/chat/completions","type":"internal_server_error","param":null,"code":null}}'
)
# tool_choice "required" (with --chat_format chatml-function-calling): HTTP 500, no message
LLAMA_CPP_PYTHON_REQUIRED = b'{"error":{"message":"","type":"internal_server_error","param":null,"code":null}}'


def llama_cpp_python_stream(pieces: list[str], finish: str = "stop") -> list[tuple[float, bytes]]:
    """A streamed text answer as llama-cpp-python writes it: no usage, even when asked for."""
    head = {"id": "chatcmpl-4bb1bcd3-1338-4d57-8830-9fca684e07ec", "model": "m", "created": 1796414721,
            "object": "chat.completion.chunk"}

    def frame(delta: dict[str, Any], reason: str | None = None) -> bytes:
        body = {**head, "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": reason}]}
        return f"data: {json.dumps(body)}\n\n".encode()

    out = [(0.0, frame({"role": "assistant"}))]
    out += [(0.0, frame({"content": p})) for p in pieces]
    out += [(0.0, frame({}, finish)), (0.0, b"data: [DONE]\n\n")]
    return out


# -- LM Studio --------------------------------------------------------------------------------

# json_object: HTTP 400 (lmstudio-bug-tracker#189; the body as LoadShine/tada#16 and
# willmiao/ComfyUI-Lora-Manager#1033 quote it)
LM_STUDIO_JSON_OBJECT = b'{"error":"\'response_format.type\' must be \'json_schema\' or \'text\'"}'
# a named tool_choice: HTTP 400 (can1357/llm-git#13)
LM_STUDIO_TOOL_CHOICE = b'{"error":"Invalid tool_choice type: \'object\'. Supported string values: none, auto, required"}'

# -- llama.cpp's server (llama-server) -----------------------------------------------------------

# started without --jinja, a request with tools: HTTP 500 (tools/server/server-common.cpp)
LLAMA_CPP_NO_JINJA = b'{"error":{"code":500,"message":"tools param requires --jinja flag","type":"server_error"}}'


def llama_cpp_props(supports_tool_calls: bool) -> dict[str, Any]:
    """``GET /props`` in the shape tools/server/server-context.cpp writes (get_res_props)."""
    return {
        "default_generation_settings": {"params": {"n_predict": -1}, "n_ctx": 4096},
        "total_slots": 1,
        "model_alias": "SmolLM2-135M-Instruct.Q4_1.gguf",
        "model_path": "models/SmolLM2-135M-Instruct.Q4_1.gguf",
        "modalities": {"vision": False, "video": False, "audio": False},
        "chat_template": "{% for message in messages %}...{% endfor %}",
        "chat_template_caps": {
            "supports_tools": supports_tool_calls,
            "supports_tool_calls": supports_tool_calls,
            "supports_system_role": True,
            "supports_parallel_tool_calls": False,
        },
        "bos_token": "<|im_start|>",
        "eos_token": "<|im_end|>",
        "build_info": "b9999-0000000",
        "is_sleeping": False,
    }


# -- stream_options refusals --------------------------------------------------------------------

STREAM_OPTIONS_REFUSALS = {
    # vLLM before it took stream_options (modelscope/ms-agent#489)
    "vllm": (400, b'{"object":"error","message":"[{\'type\': \'extra_forbidden\', \'loc\': (\'body\', \'stream_options\'), '
             b'\'msg\': \'Extra inputs are not permitted\', \'input\': {}}]","type":"BadRequestError","param":null,'
             b'"code":400}'),
    # an OpenAI-compatible proxy (QuantumNous/new-api#418)
    "proxy": (400, b'{"error":{"message":"Unknown parameter: \'stream_options\'.","type":"invalid_request_error",'
              b'"param":"stream_options","code":"unknown_parameter"}}'),
    # Azure AI inference (CherryHQ/cherry-studio#9214)
    "azure": (400, b'{"detail":"Extra parameters [\'stream_options\'] are not allowed when extra-parameters is not set or '
              b'set to be \'error\'. Set extra-parameters to \'pass-through\' to pass to the model."}'),
}


def refuse(status: int, body: bytes) -> Refuse:
    return Refuse(status, body)
