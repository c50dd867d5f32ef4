"""What the service lets out: no server path in what it says, and no flood in its log."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("fastapi")

from citesum.service.connections import client_key  # noqa: E402
from citesum.service.errors import PathHider  # noqa: E402


def test_paths_are_hidden_whatever_the_index_folder_was_called(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    served = tmp_path / "john doe" / "ix"
    (served / "uploads").mkdir(parents=True)
    monkeypatch.chdir(served.parent)
    for given in (Path("ix"), served, Path(".")):
        if given == Path("."):
            monkeypatch.chdir(served)
        hide = PathHider((given, given / "uploads"))
        said = hide(f"no space to write {served}/gen-3/x.npy; the index at {served} is unchanged; 2.5 s later")
        assert said == "no space to write gen-3/x.npy; the index at ix is unchanged; 2.5 s later", given
        assert hide(f"cannot read {served}/uploads/a b.pdf") == "cannot read a b.pdf"
        assert hide("the file segments/x.npy of ix, prefix/x") == "the file segments/x.npy of ix, prefix/x"
    hide = PathHider((served, served / "uploads"))
    assert hide("llm:llamacpp:/opt/models/smol.gguf") == "llm:llamacpp:smol.gguf"
    assert hide("milvus:/srv/data/m.db, /var/a/b;(/tmp/q/r.txt)") == "milvus:m.db, b;(r.txt)"
    assert hide("http://127.0.0.1:8080/v1/chat/completions failed") == "http://127.0.0.1:8080/v1/chat/completions failed"
    assert hide.json({"files": [{"reason": f"{served}/uploads/x.pdf: empty"}], "n": 3}) == \
        {"files": [{"reason": "x.pdf: empty"}], "n": 3}


def test_a_client_is_an_ipv4_address_or_an_ipv6_network() -> None:
    assert client_key("127.0.0.1") == "127.0.0.1"
    assert client_key("::ffff:10.1.2.3") == "10.1.2.3"
    assert client_key("2001:db8::1") == client_key("2001:db8::ffff:2") == "2001:db8::/64"
    assert client_key("2001:db8:0:1::1") != client_key("2001:db8::1")
    assert client_key("") == ""


def test_a_served_process_writes_a_repeated_message_a_few_times_a_minute() -> None:
    """Through the log handlers: records of every logger (ours are children of 'citesum', asyncio's accept
    loop logs on its own) are limited where they are written."""
    program = """
import logging, sys
logging.basicConfig(level=logging.WARNING, format="%(name)s %(message)s", stream=sys.stderr)
from citesum.service.connections import limit_repeated_logs
limit_repeated_logs()
for n in range(1000):
    logging.getLogger("citesum.service").warning("storage failed: [Errno 28] No space left (%d)", n)
    logging.getLogger("asyncio").error("socket.accept() out of system resource\\nsocket: <fd=%d>", n)
logging.getLogger("citesum.index.local").warning("something else")
"""
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=60)
    lines = done.stderr.splitlines()
    assert sum(line.startswith("citesum.service storage failed") for line in lines) == 5, done.stderr[-2000:]
    assert sum(line.startswith("asyncio socket.accept()") for line in lines) == 5
    assert "citesum.index.local something else" in lines
