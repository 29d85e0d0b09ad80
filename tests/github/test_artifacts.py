"""Artifacts are untrusted: the token never reaches storage, sizes are capped,
and zip entries are checked before anything is written. Nothing a zip header
declares is believed: the cap bounds the bytes actually inflated."""

from __future__ import annotations

import io
import stat
import tracemalloc
import zipfile
import zlib
from pathlib import Path

import pytest

from app.github import UnsafeArtifact
from app.github.artifacts import unzip_checked
from app.github.client import RepositoryClient
from tests.fakegithub import FakeGitHub
from tests.github.zips import lying, one_entry


@pytest.fixture
def finished_run(client: RepositoryClient, fake: FakeGitHub) -> int:
    inputs = {"stage": "plan", "task": "1.1", "token": "tok"}
    run = client.dispatch.dispatch("odw-stage.yml", "main", inputs)
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


DEFLATED_1000 = one_entry("verdict.json", b"{" * 1000, method=zipfile.ZIP_DEFLATED)


@pytest.mark.parametrize(
    ("archive", "reason"),
    [
        (one_entry("/etc/passwd"), "absolute"),
        (one_entry("../escape.txt"), "escapes"),
        (one_entry("docs/../../escape.txt"), "escapes"),
        (one_entry("C:/windows.txt"), "absolute"),
        (one_entry("link", b"/etc/passwd", stat.S_IFLNK | 0o777), "not a regular file"),
        (b"not a zip", "not a zip"),
        (lying(DEFLATED_1000, crc=0), "corrupt .*Bad CRC-32"),
        (lying(DEFLATED_1000, size=10), "declares 10 bytes but holds 1000"),
        (lying(DEFLATED_1000, size=5000), "declares 5000 bytes but holds 1000"),
        (lying(DEFLATED_1000, flags=0x1), "encrypted"),
        (one_entry("verdict.json", b"{}", method=zipfile.ZIP_BZIP2), "compression method 12"),
        (one_entry("verdict.json", b"{}", method=zipfile.ZIP_LZMA), "compression method 14"),
    ],
    ids=[
        "absolute",
        "dot-dot",
        "nested-dot-dot",
        "drive-letter",
        "symlink",
        "not-zip",
        "bad-crc",
        "understated-size",
        "overstated-size",
        "encrypted",
        "bzip2",
        "lzma",
    ],
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


BOMB = 32 << 20
CAP = 1 << 20
DECLARED = 100


@pytest.mark.parametrize(
    ("method", "crc_of_prefix", "reason"),
    [
        (zipfile.ZIP_DEFLATED, False, "unpacks to more than the 1048576-byte cap"),
        (zipfile.ZIP_DEFLATED, True, "unpacks to more than the 1048576-byte cap"),
        (zipfile.ZIP_BZIP2, False, "compression method 12"),
    ],
    ids=["deflated", "deflated-crc-of-the-declared-prefix", "bzip2"],
)
def test_a_zip_that_understates_its_size_is_refused_having_inflated_no_more_than_the_cap(
    tmp_path: Path, method: int, crc_of_prefix: bool, reason: str
) -> None:
    """32 MiB in a zip of kilobytes whose headers say 100 bytes (with a CRC that
    matches those 100, in one case): refused, and the peak memory of the whole
    unzip, measured by tracemalloc, stays within a few times the 1 MiB cap."""
    content = b"0" * BOMB
    crc = zlib.crc32(content[:DECLARED]) if crc_of_prefix else None
    archive = lying(one_entry("verdict.json", content, method=method), size=DECLARED, crc=crc)
    del content
    assert len(archive) < 100_000
    tracemalloc.start()
    try:
        with pytest.raises(UnsafeArtifact, match=reason):
            unzip_checked(archive, tmp_path / "out", CAP)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 3 * CAP, f"{peak} bytes held while unzipping"
    assert not (tmp_path / "out").exists()
