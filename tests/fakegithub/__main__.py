"""Run the fake GitHub on its own (for `make demo` and manual poking):

    python -m tests.fakegithub --root var/fakegithub --repo octo/demo \\
        --files-from examples/sample --webhook-url http://127.0.0.1:8000/webhooks

Prints one JSON line with what an App needs (API URL, App id, key path,
installation id, git URL), then serves until interrupted."""

from __future__ import annotations

import argparse
import json
import signal
import sys
import threading
from pathlib import Path

from tests.fakegithub.oracles import REST_OPENAPI
from tests.fakegithub.server import FakeGitHub


def _files(root: Path | None) -> dict[str, str]:
    if root is None:
        return {"README.md": "# demo\n"}
    return {
        p.relative_to(root).as_posix(): p.read_text(encoding="utf-8")
        for p in sorted(root.rglob("*"))
        if p.is_file() and ".git" not in p.relative_to(root).parts
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.fakegithub")
    parser.add_argument("--root", type=Path, required=True, help="where bare repositories live")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--repo", default="octo/demo", help="OWNER/NAME to create and install")
    parser.add_argument("--files-from", type=Path, help="a directory copied into the repository")
    parser.add_argument("--webhook-url")
    parser.add_argument("--webhook-secret", default="fake-webhook-secret")
    parser.add_argument("--ghes", action="store_true", help="refuse return_run_details")
    args = parser.parse_args(argv)
    if not REST_OPENAPI.is_file():
        print("GitHub's OpenAPI description is missing: run `make oracles`", file=sys.stderr)
        return 2
    if args.files_from is not None and not args.files_from.is_dir():
        print(f"--files-from {args.files_from}: not a directory", file=sys.stderr)
        return 2
    args.root.mkdir(parents=True, exist_ok=True)
    fake = FakeGitHub(
        args.root, ghes=args.ghes, webhook_url=args.webhook_url, webhook_secret=args.webhook_secret
    ).start(args.port)
    fake.create_repository(args.repo, _files(args.files_from))
    installation = fake.install(args.repo.split("/")[0], [args.repo])
    info = {
        "api_url": fake.api_url,
        "app_id": fake.app_id,
        "private_key_path": str(fake.write_private_key(args.root)),
        "installation_id": installation.id,
        "git_url": fake.git_url(args.repo),
        "webhook_secret": args.webhook_secret,
    }
    print(json.dumps(info), flush=True)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    try:
        stop.wait()
    except KeyboardInterrupt:
        pass
    finally:
        fake.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
