"""Idempotency keys, built in one place.

An executor may run an effect twice (a crash between doing and recording), and a
resuming driver asks again for what the log says is outstanding; both must
produce the same key, so every key is spelled here and nowhere else.
"""

from __future__ import annotations


def _key(run_id: str, *parts: object) -> str:
    return "/".join([run_id, *(str(p) for p in parts)])


def attempt_key(run_id: str, task: str, stage: str, attempt: int, lane: str) -> str:
    """One stage attempt (and its lane); also names the attempt a driver recovers."""
    return _key(run_id, task, stage, attempt, lane or "-")


def integrate_key(run_id: str, task: str, number: int) -> str:
    return _key(run_id, task, "integrate", number)


def assess_key(run_id: str, task: str, attempts: int) -> str:
    return _key(run_id, task, "assess", attempts)


def survivor_assess_key(run_id: str, task: str) -> str:
    return _key(run_id, task, "recovery-assess")


def salvage_key(run_id: str, task: str, attempts: int) -> str:
    return _key(run_id, task, "salvage", attempts)


def judge_key(run_id: str, task: str, stage: str, gate: str, charges: int) -> str:
    return _key(run_id, task, stage, gate, "judge", charges)
