"""A smart-HTTP git server on loopback (`git http-backend` behind Basic auth).

It lets the tests prove that git really authenticates through GIT_ASKPASS with
the token, and records every request line so a token in a URL would be seen.
`redirecting_to` is a second server that sends every request on with a 302.
"""

from __future__ import annotations

import base64
import os
import subprocess
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from tests.gitops.conftest import REAL_GIT


class GitHttpServer:
    def __init__(self, project_root: Path, username: str, token: str) -> None:
        self.project_root = project_root
        self.expected = "Basic " + base64.b64encode(f"{username}:{token}".encode()).decode()
        self.requests: list[tuple[str, str, bool]] = []  # (method, path, authorised)
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_GET(self) -> None:
                server.serve(self)

            def do_POST(self) -> None:
                server.serve(self)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def __enter__(self) -> GitHttpServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(10)

    def serve(self, req: BaseHTTPRequestHandler) -> None:
        ok = req.headers.get("Authorization") == self.expected
        self.requests.append((req.command, req.path, ok))
        if not ok:
            req.send_response(401)
            req.send_header("WWW-Authenticate", 'Basic realm="odw-test"')
            req.send_header("Content-Length", "0")
            req.end_headers()
            return
        body = self._body(req)
        path, _, query = req.path.partition("?")
        env = {
            "PATH": os.environ.get("PATH", ""),
            "GIT_PROJECT_ROOT": str(self.project_root),
            "GIT_HTTP_EXPORT_ALL": "1",
            "PATH_INFO": path,
            "QUERY_STRING": query,
            "REQUEST_METHOD": req.command,
            "CONTENT_TYPE": req.headers.get("Content-Type", ""),
            "CONTENT_LENGTH": str(len(body)),
            "HTTP_CONTENT_ENCODING": req.headers.get("Content-Encoding", ""),
            "GIT_PROTOCOL": req.headers.get("Git-Protocol", ""),
            "REMOTE_USER": "odw",
            "REMOTE_ADDR": "127.0.0.1",
        }
        out = subprocess.run(
            [REAL_GIT, "http-backend"], input=body, env=env, capture_output=True, timeout=30,
            check=False,
        ).stdout  # fmt: skip
        sep = b"\r\n\r\n" if b"\r\n\r\n" in out else b"\n\n"
        head, _, payload = out.partition(sep)
        status = 200
        headers = []
        for line in head.decode("latin-1").splitlines():
            name, _, value = line.partition(":")
            if name.lower() == "status":
                status = int(value.split()[0])
            elif name:
                headers.append((name, value.strip()))
        req.send_response(status)
        for name, value in headers:
            req.send_header(name, value)
        req.send_header("Content-Length", str(len(payload)))
        req.end_headers()
        req.wfile.write(payload)

    @staticmethod
    def _body(req: BaseHTTPRequestHandler) -> bytes:
        if req.headers.get("Transfer-Encoding", "").lower() == "chunked":
            chunks = []
            while True:
                size = int(req.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    req.rfile.readline()
                    return b"".join(chunks)
                chunks.append(req.rfile.read(size))
                req.rfile.readline()
        return req.rfile.read(int(req.headers.get("Content-Length") or 0))


@contextmanager
def redirecting_to(target: str) -> Iterator[str]:
    """A loopback server that answers every request with 302 to the same path at `target`."""

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def do_GET(self) -> None:
            self.send_response(302)
            self.send_header("Location", f"{target}{self.path}")
            self.send_header("Content-Length", "0")
            self.end_headers()

        do_POST = do_GET

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(10)
