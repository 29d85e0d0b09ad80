"""A minimal HTTP front for `odw intake`, for `bench_intake` only: one
single-threaded loop that reads each request, checks its signature, hands
the delivery to the real intake process over its socket and answers `202`
after the commit. No framework, no threads: what it costs is the floor under
any HTTP server's figures. Not how odw serves (that is `odw serve`).

Started as `python -m bench.minimal_edge PORT`, with `ODW_*` in the
environment; it starts the intake (and `odw worker` unless
`ODW_WORKERS=0`) and stops them when it is stopped.
"""

from __future__ import annotations

import os
import selectors
import signal
import socket
import subprocess
import sys
import time
from collections import deque
from pathlib import Path

from app.store.inbox import NewDelivery
from app.web.intake.client import IntakeClient
from app.web.intake.listener import private_listener
from app.web.intake.wire import encode
from webhooks.signature import verify

ODW = str(Path(sys.executable).with_name("odw"))
ACCEPTED = b"HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n\r\n"
OK = b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"
REFUSED = b"HTTP/1.1 401 Unauthorized\r\nContent-Length: 0\r\n\r\n"
UNAVAILABLE = b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\n\r\n"


def parse(buf: bytearray) -> tuple[str, dict[str, str], bytes] | None:
    """One whole request off the front of `buf`, or None while incomplete."""
    end = buf.find(b"\r\n\r\n")
    if end < 0:
        return None
    lines = bytes(buf[:end]).decode("latin-1").split("\r\n")
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    size = int(headers.get("content-length", "0"))
    if len(buf) < end + 4 + size:
        return None
    body = bytes(buf[end + 4 : end + 4 + size])
    del buf[: end + 4 + size]
    return lines[0].split(" ")[0], headers, body


def main() -> None:
    port = int(sys.argv[1])
    secret = os.environ["ODW_WEBHOOK_SECRET"]
    subprocess.run([ODW, "db", "upgrade"], check=True, capture_output=True)
    listener = private_listener()
    fd = listener.sock.fileno()
    children = [subprocess.Popen([ODW, "intake", "--listen-fd", str(fd)], pass_fds=(fd,))]
    if os.environ.get("ODW_WORKERS", "2") != "0":
        children.append(
            subprocess.Popen([ODW, "worker", "--threads", os.environ.get("ODW_WORKERS", "2")])
        )
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    try:
        # The socket listens before the intake runs: wait for its answer.
        deadline = time.monotonic() + 30
        while not IntakeClient(listener.path).ready():
            if time.monotonic() > deadline:
                raise SystemExit("the intake did not start")
        intake = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        intake.connect(listener.path)
        serve(port, secret, intake)
    finally:
        for child in children:
            child.terminate()
        for child in children:
            child.wait(timeout=30)
        listener.close()


def serve(port: int, secret: str, intake: socket.socket) -> None:
    server = socket.create_server(("127.0.0.1", port), backlog=128)
    server.setblocking(False)
    sel = selectors.DefaultSelector()
    sel.register(server, selectors.EVENT_READ, "accept")
    sel.register(intake, selectors.EVENT_READ, "intake")
    buffers: dict[socket.socket, bytearray] = {}
    waiting: deque[socket.socket] = deque()  # the intake answers in order
    while True:
        for key, _ in sel.select():
            if key.data == "accept":
                conn, _ = server.accept()
                conn.setblocking(False)
                buffers[conn] = bytearray()
                sel.register(conn, selectors.EVENT_READ, "client")
            elif key.data == "intake":
                answers = intake.recv(65536)
                if not answers:
                    raise SystemExit("the intake closed its socket")
                for answer in answers:
                    client = waiting.popleft()
                    reply = ACCEPTED if answer in b"ND" else UNAVAILABLE
                    if client in buffers:
                        client.send(reply)
            else:
                client = key.fileobj  # type: ignore[assignment]
                data = client.recv(1 << 18)
                if not data:
                    sel.unregister(client)
                    del buffers[client]
                    client.close()
                    continue
                buf = buffers[client]
                buf += data
                while (request := parse(buf)) is not None:
                    method, headers, body = request
                    if method == "GET":
                        client.send(OK)
                    elif not verify(body, headers.get("x-hub-signature-256"), [secret]):
                        client.send(REFUSED)
                    else:
                        delivery = NewDelivery(
                            headers["x-github-delivery"], headers["x-github-event"], None, 42, body
                        )
                        intake.sendall(encode(delivery))
                        waiting.append(client)


if __name__ == "__main__":
    main()
