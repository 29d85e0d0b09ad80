"""Artifacts are untrusted: the token never reaches storage, sizes are capped,
and zip entries are checked before anything is written."""

from __future__ import annotations

import io
import stat
import zipfile
from pathlib import Path

import pytest

from app.github import UnsafeArtifact
from app.github.artifacts import unzip_checked
from app.github.client import RepositoryClient
from tests.fakegithub import FakeGitHub


@pytest.fixture
def finished_run(client: RepositoryClient, fake: FakeGitHub) -> int:
    inputs = {"stage": "plan", "task": "1.1", "token": "tok"}
    run = client.dispatch.dispatch("odw-stage.yml", "main", inputs, "tok")
    fake.start_run(run.run_id)
    fake.upload_artifact(
        run.run_id,
        "odw-verdict",
        {"verdict.json": '{"stage": "plan"}', "logs/agent.txt": "done\n"},
    )
    fake.complete_run(run.run_id)
    return run.run_id


def test_an_artifact_is_downloaded_through_the_redirect_without_the_token(
    client: RepositoryClient, fake: FakeGitHub, finished_run: int, tmp_path: Path
) -> None:
    (artifact,) = client.artifacts.list_artifacts(finished_run)
    assert artifact.name == "odw-verdict"
    written = client.artifacts.download_artifact(artifact, tmp_path / "out", 1_000_000)
    assert sorted(p.relative_to(tmp_path / "out").as_posix() for p in written) == [
        "logs/agent.txt",
        "verdict.json",
    ]
    assert (tmp_path / "out/verdict.json").read_text() == '{"stage": "plan"}'
    # The fake's storage host records a violation if an Authorization header arrives.
    assert [r["status"] for r in fake.requests if r["path"].endswith("/zip")] == [302]


def test_an_artifact_over_the_cap_is_refused_before_download(
    client: RepositoryClient, fake: FakeGitHub, finished_run: int, tmp_path: Path
) -> None:
    (artifact,) = client.artifacts.list_artifacts(finished_run)
    with pytest.raises(UnsafeArtifact, match="over the 10 cap"):
        client.artifacts.download_artifact(artifact, tmp_path / "out", 10)
    assert not any(r["path"].endswith("/zip") for r in fake.requests)
    assert not (tmp_path / "out").exists()


def _zip(name: str, data: bytes = b"x", mode: int | None = None) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        info = zipfile.ZipInfo(name)
        if mode is not None:
            info.external_attr = mode << 16
        archive.writestr(info, data)
    return buffer.getvalue()


@pytest.mark.parametrize(
    ("archive", "reason"),
    [
        (_zip("/etc/passwd"), "absolute"),
        (_zip("../escape.txt"), "escapes"),
        (_zip("docs/../../escape.txt"), "escapes"),
        (_zip("C:/windows.txt"), "absolute"),
        (_zip("link", b"/etc/passwd", stat.S_IFLNK | 0o777), "not a regular file"),
        (b"not a zip", "not a zip"),
    ],
    ids=["absolute", "dot-dot", "nested-dot-dot", "drive-letter", "symlink", "not-zip"],
)
def test_unsafe_zip_entries_are_refused_and_nothing_is_written(
    tmp_path: Path, archive: bytes, reason: str
) -> None:
    with pytest.raises(UnsafeArtifact, match=reason):
        unzip_checked(archive, tmp_path / "out", 1_000_000)
    assert not (tmp_path / "out").exists()


def test_a_zip_bomb_is_refused_by_its_unpacked_size(tmp_path: Path) -> None:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("big.txt", b"0" * 5_000_000)
    assert len(buffer.getvalue()) < 100_000
    with pytest.raises(UnsafeArtifact, match="unpacks to more"):
        unzip_checked(buffer.getvalue(), tmp_path / "out", 1_000_000)
