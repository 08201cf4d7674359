"""A kept-alive connection the server closed after every streamed reply (RFC 9112, 9.3.1).

Real servers on 127.0.0.1 that advertise ``Keep-Alive: timeout=5, max=100`` (never
``Connection: close``) and close the connection after each stream, as llama.cpp's server does.
A request that got no byte of answer on the reused connection is sent again at once on a fresh
one, once, by both senders; never once a byte came back, never after a hang-up of our own."""

from __future__ import annotations

import socket
import threading
from typing import Any

import pytest

import providerkit_nb as pk
from providerkit_nb.transport.hangup import Hangup
from providerkit_nb.transport.http import Request, make_sender
from tests.conversation.chat_server import ChatServer

TRANSPORTS = ["httpx", "requests"]


def _turns(srv: ChatServer, transport: str, n: int, **convo: Any) -> tuple[int, list[str]]:
    provider = pk.openai(model="m", base_url=srv.base_url, transport=transport)
    c = pk.Conversation(pk.MemoryStore(), "c", provider, display=False, **convo)
    failures: list[str] = []
    for i in range(n):
        try:
            c.send(f"turn {i}")
        except pk.ProviderError as exc:
            failures.append(f"turn {i}: {exc}")
    done = sum(1 for m in c.messages if m.role == "assistant")
    return done, failures


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_hundreds_of_turns_on_a_server_that_closes_after_every_stream(transport: str) -> None:
    with ChatServer([], closes="after", close_delay=0.0) as srv:
        done, failures = _turns(srv, transport, 300)
        assert failures == []
        assert done == 300
        # the server really closed after every stream: each turn had a connection of its own
        assert srv.connections == 300


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_every_request_lost_on_its_reused_connection_is_sent_again_on_a_fresh_one(transport: str) -> None:
    # the race lost every time: the connection closes as the next request arrives on it
    with ChatServer([], closes="on_next") as srv:
        done, failures = _turns(srv, transport, 60)
        assert failures == [] and done == 60
        assert srv.dropped == 59  # every turn after the first went out on the dead connection first
        assert srv.connections == 60  # ... and then on a new one, once
        assert len(srv.requests) == 60  # the lost attempts never reached the handler as a request


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_the_resend_is_not_a_retry(transport: str) -> None:
    with ChatServer([], closes="on_next") as srv:
        retries: list[dict[str, Any]] = []
        provider = pk.with_retry(
            pk.openai(model="m", base_url=srv.base_url, transport=transport), attempts=1, on_retry=retries.append
        )
        c = pk.Conversation(pk.MemoryStore(), "c", provider, display=False)
        for i in range(5):
            c.send(f"turn {i}")
        assert retries == [] and srv.dropped == 4


class _RawServer:
    """Answers the first request on a connection with a whole chunked stream (kept alive); on
    the second it writes ``second`` (the first bytes of a status line, or nothing) and closes."""

    BODY = (
        b'data: {"choices":[{"index":0,"delta":{"content":"hi"},"finish_reason":null}]}\n\n'
        b'data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n'
    )

    def __init__(self, second: bytes) -> None:
        self.second = second
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.requests = 0
        self.connections = 0
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.sock.getsockname()[1]}/v1/chat/completions"

    def _read_request(self, conn: socket.socket) -> bool:
        data = b""
        while b"\r\n\r\n" not in data:
            got = conn.recv(65536)
            if not got:
                return False
            data += got
        head, _, body = data.partition(b"\r\n\r\n")
        length = next((int(h.split(b":")[1]) for h in head.split(b"\r\n") if h.lower().startswith(b"content-length")), 0)
        while len(body) < length:
            body += conn.recv(65536)
        self.requests += 1
        return True

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.connections += 1
            with conn:
                if not self._read_request(conn):
                    continue
                conn.sendall(
                    b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nkeep-alive: timeout=5, max=100\r\n"
                    b"transfer-encoding: chunked\r\n\r\n" + b"%x\r\n%s\r\n0\r\n\r\n" % (len(self.BODY), self.BODY)
                )
                if not self._read_request(conn):
                    continue
                conn.sendall(self.second)

    def close(self) -> None:
        self.sock.close()


def _post(sender: Any, url: str, hangup: Hangup | None = None) -> Any:
    r = sender.send(Request("POST", url, {"content-type": "application/json"}, b"{}", hangup=hangup), "local")
    body = r.read()
    r.close()
    return body


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_never_sent_again_once_a_byte_of_the_answer_arrived(transport: str) -> None:
    srv = _RawServer(b"HTTP/1.1 50")  # part of a status line, then the close
    try:
        sender = make_sender(transport)
        assert b"[DONE]" in _post(sender, srv.url)
        with pytest.raises(pk.ProviderError) as info:
            _post(sender, srv.url)
        assert info.value.kind in (pk.ErrorKind.NETWORK, pk.ErrorKind.OVERLOAD)
        assert srv.requests == 2 and srv.connections == 1  # not sent a third time
        sender.close()
    finally:
        srv.close()


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_a_request_lost_before_any_byte_is_sent_once_more_and_only_once(transport: str) -> None:
    srv = _RawServer(b"")  # the second request on a connection gets nothing, every time
    try:
        sender = make_sender(transport)
        assert b"[DONE]" in _post(sender, srv.url)
        assert b"[DONE]" in _post(sender, srv.url)  # lost on the kept-alive one, answered on a new one
        assert (srv.requests, srv.connections) == (3, 2)
        sender.close()
    finally:
        srv.close()


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_never_sent_again_after_our_own_hang_up(transport: str) -> None:
    srv = _RawServer(b"")
    try:
        sender = make_sender(transport)
        _post(sender, srv.url)
        hangup = Hangup()
        hangup.abort()  # Stop before the request went out: the socket is shut as it is written
        with pytest.raises(pk.ProviderError):
            _post(sender, srv.url, hangup)
        assert srv.connections == 1  # no fresh connection was opened for it
        sender.close()
    finally:
        srv.close()


@pytest.mark.soak
@pytest.mark.parametrize("transport", TRANSPORTS)
def test_a_thousand_back_to_back_streamed_turns(transport: str) -> None:
    with ChatServer([], closes="after", close_delay=0.0) as srv:
        done, failures = _turns(srv, transport, 1000)
        assert failures == [] and done == 1000
