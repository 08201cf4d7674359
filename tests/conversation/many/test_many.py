"""resume_many / send_many on the executors a notebook user has without Dask: threads (the
default) and a process pool, against the stub provider on 127.0.0.1."""

from __future__ import annotations

import multiprocessing
import os
import pickle
import subprocess
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import pytest

import providerkit_nb as pk
from providerkit_nb.conversation import ConversationMaker, send_many
from providerkit_nb.core.messages import UserMessage
from providerkit_nb.store import PostgresStore

from .conftest import TOOLS_REF
from .stub import StubProvider, registry_config


def _seed(store: pk.NotebookStore | PostgresStore, ids: list[str]) -> None:
    for cid in ids:
        store.save(cid, UserMessage(f"cid={cid}"))


def test_resume_many_on_threads_then_again_changes_nothing(stub: StubProvider, tmp_path: Path) -> None:
    stub.reset(0.05, 2)
    path = str(tmp_path / "many.providerkit.sqlite")
    make = ConversationMaker(store=path, registry=registry_config(stub.url, 4, None),
                                model="stub/m", tools=TOOLS_REF)
    ids = [f"t{i:02d}" for i in range(30)]
    _seed(make.open_store(), ids)
    frame = pk.resume_many(ids, make, progress=False)
    assert list(frame.columns) == ["cid", "outcome", "turns", "error_kind", "error", "seconds", "worker"]
    assert list(frame["cid"]) == ids  # the order given, whatever the completion order
    assert (frame["outcome"] == "answered").all() and (frame["turns"] == 2).all()
    assert frame["error_kind"].isna().all() and (frame["seconds"] > 0).all()
    assert set(frame["worker"]) == {f"{os.uname().nodename}:{os.getpid()}"}
    assert 2 <= stub.max_in_flight <= 4
    assert set(stub.calls.values()) == {1} and len(stub.calls) == 60
    calls = dict(stub.calls)
    again = pk.resume_many(ids, make, progress=False)  # an engine re-running everything
    assert (again["outcome"] == "unchanged").all() and (again["turns"] == 0).all()
    assert dict(stub.calls) == calls  # no provider call, no tool run
    assert make.open_store().unfinished() == []


def test_send_many_and_the_progress_bar(stub: StubProvider, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    # outside a notebook: tqdm.auto picks its bar when first imported, by whether a kernel's shell
    # module is loaded, and a test of the notebook layer may have loaded one in this process
    for name in ("tqdm.auto", "tqdm.autonotebook", "ipykernel.zmqshell"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    stub.reset(0.01, 1)
    make = ConversationMaker(store=str(tmp_path / "s.providerkit.sqlite"),
                                registry=registry_config(stub.url, 2, None), model="stub/m")
    prompts = {f"s{i}": f"cid=s{i} hello" for i in range(6)}
    frame = send_many(prompts, make, max_workers=3)
    assert (frame["outcome"] == "answered").all()
    err = capsys.readouterr().err  # tqdm.auto outside a notebook: the text bar on stderr
    assert "sent" in err and "6/6" in err
    store = make.open_store()
    assert [m.role for m in store.load("s3")] == ["user", "assistant"]
    pairs = send_many([("s3", "cid=s3 again")], make, progress=False)
    assert pairs["outcome"].tolist() == ["answered"]
    assert [m.role for m in store.load("s3")] == ["user", "assistant", "user", "assistant"]


def test_failures_and_busy_are_rows_not_exceptions(stub: StubProvider, tmp_path: Path) -> None:
    stub.reset(0.01, 1)
    dead = "http://127.0.0.1:9"  # nothing listens on the discard port
    make = ConversationMaker(store=str(tmp_path / "f.providerkit.sqlite"),
                                registry=registry_config(dead, 2, None), model="stub/m")
    store = make.open_store()
    _seed(store, ["f1", "f2"])
    with store.hold("f2"):
        frame = pk.resume_many(["f1", "f2"], make, progress=False)
    f1, f2 = frame.to_dict("records")
    assert f1["outcome"] == "failed" and f1["error_kind"] and f1["error"]
    assert f2["outcome"] == "busy" and "'f2'" in f2["error"]
    assert set(frame["outcome"]) <= {"answered", "unchanged", "max_steps", "busy", "failed"}
    with pytest.raises(ValueError, match="listed twice"):
        pk.resume_many(["f1", "f1"], make, progress=False)


@pytest.mark.postgres
def test_process_pool_shares_one_postgres_gate(stub: StubProvider, pg_dsn: str, pg_schema: str,
                                               gate_name: str) -> None:
    stub.reset(0.1, 2)
    gate = {"dsn": pg_dsn, "name": gate_name, "quarantine": 0.5}
    make = ConversationMaker(store=pg_dsn, schema=pg_schema, registry=registry_config(stub.url, 3, gate),
                                model="stub/m", tools=TOOLS_REF)
    store = PostgresStore(pg_dsn, schema=pg_schema)
    ids = [f"p{i:02d}" for i in range(24)]
    _seed(store, ids)
    assert store.unfinished() == ids
    with ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("spawn")) as pool:
        frame = pk.resume_many(ids, make, executor=pool, progress=False)
    assert (frame["outcome"] == "answered").all(), frame
    assert frame["worker"].nunique() == 2
    assert stub.max_in_flight <= 3  # one limit across both processes
    assert set(stub.calls.values()) == {1} and set(stub.tool_runs.values()) == {1}
    assert store.unfinished() == []
    store.close()


def test_the_factory_pickles_small_and_hides_the_password() -> None:
    make = ConversationMaker(store="postgresql://u:hunter2@db.example/x",
                                registry={"c": {"preset": "openai", "api_key_env": "K"}}, model="c/m")
    assert "hunter2" not in repr(make)
    assert len(pickle.dumps(make)) < 1000
    assert pickle.loads(pickle.dumps(make)) == make


def test_import_stays_light() -> None:
    code = ("import sys, providerkit_nb as pk; pk.resume_many; "
            "from providerkit_nb.conversation import ConversationMaker; from providerkit_nb.wrappers import PostgresGate; "
            "print([m for m in ('dask', 'distributed', 'psycopg', 'tqdm', 'pandas') if m in sys.modules])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.strip() == "[]"
