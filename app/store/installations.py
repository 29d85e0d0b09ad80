"""Installations of the App and the repositories each may act on, kept current
from `installation` and `installation_repositories` deliveries."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection, delete, select, update

from app.store.base import Part, dumps, loads
from app.store.schema import installations, repositories


@dataclass(frozen=True)
class InstallationRow:
    id: int
    account_login: str | None
    account_type: str | None
    target_type: str | None
    repository_selection: str | None
    permissions: dict[str, str]
    events: list[str]
    suspended: bool
    deleted: bool


@dataclass(frozen=True)
class RepositoryRow:
    id: int
    installation_id: int
    full_name: str
    private: bool | None


class Installations(Part):
    def upsert(
        self,
        installation_id: int,
        *,
        tx: Connection,
        account_login: str | None = None,
        account_type: str | None = None,
        target_type: str | None = None,
        repository_selection: str | None = None,
        permissions: dict[str, Any] | None = None,
        events: list[str] | None = None,
    ) -> None:
        """Create or update; fields given as None keep their stored value."""
        now = self.clock()
        given: dict[str, Any] = {
            "account_login": account_login,
            "account_type": account_type,
            "target_type": target_type,
            "repository_selection": repository_selection,
            "permissions": None if permissions is None else dumps(permissions),
            "events": None if events is None else dumps(events),
        }
        changes = {k: v for k, v in given.items() if v is not None}
        stmt = self._insert(installations).values(
            id=installation_id,
            permissions=changes.get("permissions", "{}"),
            events=changes.get("events", "[]"),
            updated_at=now,
            **{k: v for k, v in changes.items() if k not in ("permissions", "events")},
        )
        stmt = stmt.on_conflict_do_update(
            index_elements=["id"], set_={**changes, "updated_at": now, "deleted_at": None}
        )
        tx.execute(stmt)

    def set_suspended(self, installation_id: int, suspended: bool, *, tx: Connection) -> None:
        self.upsert(installation_id, tx=tx)
        now = self.clock()
        tx.execute(
            update(installations)
            .where(installations.c.id == installation_id)
            .values(suspended_at=now if suspended else None, updated_at=now)
        )

    def mark_deleted(self, installation_id: int, *, tx: Connection) -> None:
        self.upsert(installation_id, tx=tx)
        now = self.clock()
        tx.execute(
            update(installations)
            .where(installations.c.id == installation_id)
            .values(deleted_at=now, updated_at=now)
        )
        tx.execute(delete(repositories).where(repositories.c.installation_id == installation_id))

    def add_repositories(
        self, installation_id: int, repos: Iterable[dict[str, Any]], *, tx: Connection
    ) -> None:
        now = self.clock()
        for repo in repos:
            values = {
                "id": int(repo["id"]),
                "installation_id": installation_id,
                "full_name": str(repo["full_name"]),
                "private": None if repo.get("private") is None else int(bool(repo["private"])),
                "updated_at": now,
            }
            stmt = self._insert(repositories).values(**values)
            stmt = stmt.on_conflict_do_update(
                index_elements=["id"],
                set_={k: v for k, v in values.items() if k != "id"},
            )
            tx.execute(stmt)

    def remove_repositories(
        self, installation_id: int, repo_ids: Iterable[int], *, tx: Connection
    ) -> None:
        ids = list(repo_ids)
        if ids:
            tx.execute(
                delete(repositories).where(
                    repositories.c.installation_id == installation_id,
                    repositories.c.id.in_(ids),
                )
            )

    def get(self, installation_id: int) -> InstallationRow | None:
        with self._read(None) as conn:
            row = conn.execute(
                select(installations).where(installations.c.id == installation_id)
            ).one_or_none()
        return None if row is None else _installation(row)

    def all(self) -> list[InstallationRow]:
        """Every installation ever recorded (deleted ones flagged), by id."""
        with self._read(None) as conn:
            rows = conn.execute(select(installations).order_by(installations.c.id))
            return [_installation(r) for r in rows]

    def all_repositories(self) -> list[RepositoryRow]:
        """Every repository of every installation, by installation, then name."""
        q = select(repositories).order_by(repositories.c.installation_id, repositories.c.full_name)
        with self._read(None) as conn:
            return [_repository(r) for r in conn.execute(q)]

    def repositories(self, installation_id: int) -> list[RepositoryRow]:
        q = (
            select(repositories)
            .where(repositories.c.installation_id == installation_id)
            .order_by(repositories.c.full_name)
        )
        with self._read(None) as conn:
            return [_repository(r) for r in conn.execute(q)]

    def installation_for_repository(self, full_name: str) -> int | None:
        q = select(repositories.c.installation_id).where(repositories.c.full_name == full_name)
        with self._read(None) as conn:
            return conn.execute(q).scalar_one_or_none()


def _installation(row: Any) -> InstallationRow:
    return InstallationRow(
        id=row.id,
        account_login=row.account_login,
        account_type=row.account_type,
        target_type=row.target_type,
        repository_selection=row.repository_selection,
        permissions=loads(row.permissions),
        events=loads(row.events),
        suspended=row.suspended_at is not None,
        deleted=row.deleted_at is not None,
    )


def _repository(r: Any) -> RepositoryRow:
    return RepositoryRow(
        r.id, r.installation_id, r.full_name, None if r.private is None else bool(r.private)
    )
