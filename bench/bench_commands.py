"""Command acknowledgement: from a `/odw` comment's delivery to ODW's `eyes`
reaction (and to its reply), on loopback, median of several comments.

Goal (issue 15): under 1 s, median. Everything is real but GitHub: `odw
serve` under gunicorn with the App's credentials, SQLite, the fake GitHub
sending signed `issue_comment` deliveries. Baselines from the same run: the
webhook's own acknowledgement (the delivery answered 202) and one reaction
written straight to the fake's REST API, the two costs a command cannot avoid.
"""

from __future__ import annotations

import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from app.github import GitHubApp
from app.github.auth import AppCredentials
from tests.apphost.harness import REPO, Service, app_env, sample_files
from tests.fakegithub import FakeGitHub

COMMENTS = 15
GOAL = 1.0


def _until(pred: Callable[[], object], timeout: float = 30.0) -> float:
    """The moment `pred` first holds (polled every 2 ms)."""
    start = time.perf_counter()
    while not pred():
        if time.perf_counter() - start > timeout:
            raise TimeoutError("no reaction within 30 s")
        time.sleep(0.002)
    return time.perf_counter()


def _one_comment(fake: FakeGitHub, number: int, i: int) -> tuple[float, float, float]:
    """Seconds from the comment to: its delivery's 202, the eyes reaction, the reply."""

    def answers() -> int:
        return sum(1 for c in list(fake.comments.values()) if c.user == fake.bot_login)

    before = answers()
    sent = time.perf_counter()
    comment = fake.comment_as("octo", REPO, number, f"/odw status\n\n(take {i})")
    delivery = fake.webhooks.deliveries[-1]
    acked = _until(lambda: delivery.status is not None)
    eyes = _until(lambda: (fake.bot_login, "eyes") in comment.reactions)
    replied = _until(lambda: answers() > before)
    return acked - sent, eyes - sent, replied - sent


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        fake = FakeGitHub(root / "github").start()
        service: Service | None = None
        try:
            data = root / "service"
            data.mkdir()
            env = app_env(fake, root, ODW_LOG_LEVEL="WARNING")
            service = Service(fake, data, env).start()
            fake.create_repository(REPO, sample_files())
            installation = fake.install("octo", [REPO])
            number = fake.open_issue(REPO)
            fake.comment_as("octo", REPO, number, "/odw help")  # warm-up: tokens, settings
            _until(lambda: any(c.user == fake.bot_login for c in fake.comments.values()))

            to_eyes, to_reply, to_ack = [], [], []
            for i in range(COMMENTS):
                ack, eyes, reply = _one_comment(fake, number, i)
                to_ack.append(ack)
                to_eyes.append(eyes)
                to_reply.append(reply)

            app = GitHubApp(AppCredentials(fake.app_id, fake.private_key_pem), fake.api_url)
            reactions = app.repository(installation.id, REPO).reactions
            target = fake.comment_as("octo", REPO, number, "plain words")
            direct = []
            for _ in range(COMMENTS):
                start = time.perf_counter()
                reactions.react_to_comment(target.id, "heart")
                direct.append(time.perf_counter() - start)
        finally:
            if service is not None:
                service.stop()
            fake.stop()

    eyes_ms = statistics.median(to_eyes) * 1000
    print(f"{COMMENTS} `/odw status` comments on loopback (odw serve, SQLite, fake GitHub)")
    print(f"{'delivery -> eyes':<28} median {eyes_ms:8.1f} ms   goal < {GOAL * 1000:.0f} ms")
    print(f"{'delivery -> reply':<28} median {statistics.median(to_reply) * 1000:8.1f} ms")
    print(
        f"{'baseline: delivery -> 202':<28} median {statistics.median(to_ack) * 1000:8.1f} ms"
        f"   (eyes x{statistics.median(to_eyes) / statistics.median(to_ack):.1f})"
    )
    print(f"{'baseline: one reaction call':<28} median {statistics.median(direct) * 1000:8.1f} ms")
    print("goal met" if eyes_ms < GOAL * 1000 else "GOAL MISSED: eyes median over 1 s")


if __name__ == "__main__":
    main()
