"""Finding the installation for a repository (for the App host, not wired yet)."""

from __future__ import annotations

from app.store import Store


def test_a_repository_maps_to_the_installation_that_holds_it(store: Store) -> None:
    with store.transaction() as tx:
        store.installations.upsert(11, tx=tx, account_login="octo-org")
        store.installations.add_repositories(
            11, [{"id": 1, "full_name": "octo-org/a"}, {"id": 2, "full_name": "octo-org/b"}], tx=tx
        )
        store.installations.upsert(22, tx=tx, account_login="other")
        store.installations.add_repositories(22, [{"id": 3, "full_name": "other/c"}], tx=tx)
    assert store.installations.installation_for_repository("octo-org/b") == 11
    assert store.installations.installation_for_repository("other/c") == 22
    assert store.installations.installation_for_repository("nobody/x") is None


def test_a_removed_or_uninstalled_repository_maps_to_nothing(store: Store) -> None:
    with store.transaction() as tx:
        store.installations.add_repositories(11, [{"id": 1, "full_name": "octo-org/a"}], tx=tx)
        store.installations.add_repositories(22, [{"id": 3, "full_name": "other/c"}], tx=tx)
    with store.transaction() as tx:
        store.installations.remove_repositories(11, [1], tx=tx)
        store.installations.mark_deleted(22, tx=tx)
    assert store.installations.installation_for_repository("octo-org/a") is None
    assert store.installations.installation_for_repository("other/c") is None
