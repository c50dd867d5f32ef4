"""The OpenAI-compatible embedder against a real HTTP server on loopback."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Iterator

import numpy as np
import pytest

from citesum.embed.openai_compat import OpenAIEmbedder
from citesum.errors import CitesumError

pytest.importorskip("httpx")


class _Handler(BaseHTTPRequestHandler):
    requests: list[dict] = []
    fail = False

    def do_POST(self) -> None:  # noqa: N802 - http.server's naming
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).requests.append({"path": self.path, "auth": self.headers.get("Authorization"), **body})
        if type(self).fail:
            self.send_response(500)
            self.end_headers()
            return
        # reversed order on purpose: the client must sort by "index"
        data = [{"index": i, "embedding": [float(len(t)), 1.0, 0.0]} for i, t in enumerate(body["input"])][::-1]
        payload = json.dumps({"data": data}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def server() -> Iterator[str]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    _Handler.requests, _Handler.fail = [], False
    yield f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    httpd.shutdown()


def test_embeddings_endpoint(server: str) -> None:
    embedder = OpenAIEmbedder("my-model", base_url=server, api_key="sk-test")
    assert embedder.name == "openai:my-model" and embedder.dim == 3
    vectors = embedder.encode_documents(["a", "abc"])
    expected = np.array([[1, 1, 0], [3, 1, 0]], dtype=np.float32)
    np.testing.assert_allclose(vectors, expected / np.linalg.norm(expected, axis=1, keepdims=True), rtol=1e-6)
    last = _Handler.requests[-1]
    assert last["path"] == "/v1/embeddings" and last["model"] == "my-model" and last["auth"] == "Bearer sk-test"


def test_server_error_is_reported(server: str) -> None:
    embedder = OpenAIEmbedder("m", base_url=server)
    _Handler.fail = True
    with pytest.raises(CitesumError, match="embedding request to .* failed"):
        embedder.encode_query("x")
