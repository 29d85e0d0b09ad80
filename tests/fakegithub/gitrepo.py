"""Real bare git repositories behind the fake: plumbing for refs, contents
and squash merges, and smart HTTP through `git http-backend` (CGI)."""

from __future__ import annotations

import os
import subprocess
import tempfile
from pathlib import Path

ZERO = "0" * 40
IDENTITY = {
    "GIT_AUTHOR_NAME": "GitHub",
    "GIT_AUTHOR_EMAIL": "noreply@github.com",
    "GIT_COMMITTER_NAME": "GitHub",
    "GIT_COMMITTER_EMAIL": "noreply@github.com",
}


class BareRepo:
    def __init__(self, path: Path) -> None:
        self.path = path

    def git(self, *args: str, input: bytes | None = None, check: bool = True) -> str:
        env = {**os.environ, **IDENTITY, "GIT_DIR": str(self.path)}
        done = subprocess.run(
            ["git", *args], input=input, capture_output=True, env=env, check=False
        )
        if check and done.returncode:
            raise RuntimeError(f"git {args[0]} failed: {done.stderr.decode(errors='replace')}")
        return done.stdout.decode(errors="replace").strip()

    @classmethod
    def create(cls, path: Path, files: dict[str, str], branch: str) -> BareRepo:
        path.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run(["git", "init", "--bare", "--quiet", "-b", branch, str(path)], check=True)
        repo = cls(path)
        repo.git("config", "http.receivepack", "true")
        if files:
            repo.commit_files(branch, files, "Initial commit", parent=None)
        return repo

    def commit_files(
        self, branch: str, files: dict[str, str], message: str, parent: str | None
    ) -> str:
        with tempfile.TemporaryDirectory() as tmp:
            env = {
                **os.environ,
                **IDENTITY,
                "GIT_DIR": str(self.path),
                "GIT_INDEX_FILE": str(Path(tmp) / "index"),
            }
            if parent:
                subprocess.run(["git", "read-tree", parent], env=env, check=True)
            for name, text in files.items():
                blob = (
                    subprocess.run(
                        ["git", "hash-object", "-w", "--stdin"],
                        input=text.encode(),
                        capture_output=True,
                        env=env,
                        check=True,
                    )
                    .stdout.decode()
                    .strip()
                )
                subprocess.run(
                    ["git", "update-index", "--add", "--cacheinfo", f"100644,{blob},{name}"],
                    env=env,
                    check=True,
                )
            tree = (
                subprocess.run(["git", "write-tree"], capture_output=True, env=env, check=True)
                .stdout.decode()
                .strip()
            )
        args = ["commit-tree", tree, "-m", message] + (["-p", parent] if parent else [])
        sha = self.git(*args)
        self.git("update-ref", f"refs/heads/{branch}", sha)
        return sha

    def sha(self, ref: str) -> str | None:
        out = self.git("rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}", check=False)
        return out or None

    def refs(self) -> dict[str, str]:
        out = self.git("for-each-ref", "--format=%(refname) %(objectname)")
        return dict(line.split(" ", 1) for line in out.splitlines() if line)

    def show(self, sha: str, path: str) -> bytes | None:
        env = {**os.environ, "GIT_DIR": str(self.path)}
        kind = subprocess.run(
            ["git", "cat-file", "-t", f"{sha}:{path}"], capture_output=True, env=env, check=False
        )
        if kind.returncode or kind.stdout.strip() != b"blob":
            return None
        return subprocess.run(
            ["git", "cat-file", "blob", f"{sha}:{path}"], capture_output=True, env=env, check=True
        ).stdout

    def is_ancestor(self, older: str, newer: str) -> bool:
        env = {**os.environ, "GIT_DIR": str(self.path)}
        return (
            subprocess.run(
                ["git", "merge-base", "--is-ancestor", older, newer], env=env, check=False
            ).returncode
            == 0
        )

    def squash(self, base: str, head: str, message: str) -> str | None:
        """A commit on `base` with the tree `head` merges to, or None on conflict."""
        out = self.git("merge-tree", "--write-tree", base, head, check=False)
        tree = out.splitlines()[0] if out else ""
        if len(tree) != 40 or "CONFLICT" in out:
            return None
        return self.git("commit-tree", tree, "-p", base, "-m", message)

    def set_ref(self, ref: str, sha: str, old: str | None = None) -> bool:
        args = ["update-ref", ref, sha] + ([old] if old else [])
        return not self.git(*args, check=False) and self.git("rev-parse", ref) == sha

    def http_backend(
        self,
        root: Path,
        path_info: str,
        method: str,
        query: str,
        content_type: str,
        body: bytes,
        encoding: str,
        user: str,
        extra_env: dict[str, str] | None = None,
    ) -> tuple[int, list[tuple[str, str]], bytes]:
        env = {
            **(extra_env or {}),
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "GIT_PROJECT_ROOT": str(root),
            "GIT_HTTP_EXPORT_ALL": "1",
            "PATH_INFO": path_info,
            "REQUEST_METHOD": method,
            "QUERY_STRING": query,
            "CONTENT_TYPE": content_type,
            "CONTENT_LENGTH": str(len(body)),
            "REMOTE_USER": user,
            "REMOTE_ADDR": "127.0.0.1",
            "GIT_HTTP_MAX_REQUEST_BUFFER": "100M",
        }
        if encoding:
            env["HTTP_CONTENT_ENCODING"] = encoding
        done = subprocess.run(
            ["git", "http-backend"], input=body, capture_output=True, env=env, check=False
        )
        head, _, payload = done.stdout.partition(b"\r\n\r\n")
        status = 200
        headers = []
        for line in head.decode(errors="replace").split("\r\n"):
            if not line:
                continue
            name, _, value = line.partition(":")
            if name.lower() == "status":
                status = int(value.strip().split()[0])
            else:
                headers.append((name.strip(), value.strip()))
        return status, headers, payload
