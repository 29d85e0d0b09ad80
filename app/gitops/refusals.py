"""What a forge's refusal of a push means, and what a person can do about it.

GitHub refuses a push for reasons a retry cannot change, each in its own words
(the ref's `[remote rejected] (...)` reason and `remote:` lines):

- classic branch protection: `GH006: Protected branch update failed`;
- a repository ruleset: `GH013: Repository rule violations found`, one line per
  rule, `push declined due to repository rule violations`. "Changes must be made
  through a pull request." is satisfied by landing through a pull request;
  "Cannot update this protected ref." ("Restrict updates") refuses merges too;
- workflow files pushed with an App token without the `workflows` permission:
  `refusing to allow a GitHub App to create or update workflow ...`.

Sources: GitHub's messages as reported from github.com (desktop/desktop#858,
henne49/dbus-opendtu#235, gleam-lang/gleam#6080, repo-sync/github-sync#23);
"About rulesets" in GitHub's documentation.
"""

from __future__ import annotations

from enum import Enum


class Refusal(Enum):
    PROTECTED = "branch protection"  # GH006, or a ruleset that wants a pull request
    LOCKED = "a ruleset that restricts updates"  # GH013 "Cannot update this protected ref"
    WORKFLOWS = "no `workflows` permission"  # workflow files, App token without it


_WORKFLOWS = "create or update workflow"
_LOCKED = "cannot update this protected ref"
_PROTECTED = (
    "gh006",
    "protected branch",
    "changes must be made through a pull request",
    "gh013",
    "repository rule violations",
)


def refusal_of(message: str) -> Refusal | None:
    """Which decision of the forge `message` reports, or None when it names none."""
    said = message.lower()
    if _WORKFLOWS in said and "workflows` permission" in said:
        return Refusal.WORKFLOWS
    if _LOCKED in said:
        return Refusal.LOCKED
    if any(marker in said for marker in _PROTECTED):
        return Refusal.PROTECTED
    return None


def what_to_do(refusal: Refusal, base: str, *, task_branch: bool = False) -> str:
    """The way out for a person, after "not retried: "; `task_branch` when the ref
    refused is the branch a pull request lands from, not the base."""
    if task_branch and refusal is not Refusal.WORKFLOWS:
        return (
            f"branch protection or a ruleset covers {base}, a branch ODW lands from: "
            "exempt ODW's branches (`roadmap-*`, `integrate-*`) or add its App to the "
            "ruleset's bypass list"
        )
    if refusal is Refusal.WORKFLOWS:
        return (
            "the change touches `.github/workflows/`, which GitHub lets an App change only "
            "with the `workflows` permission ODW does not ask for; a person lands this "
            "task (merge its branch by hand), or keep workflow changes out of ODW's tasks"
        )
    if refusal is Refusal.LOCKED:
        return (
            f"a ruleset lets nobody update {base} (merges included): add ODW's App to "
            "the ruleset's bypass list (Settings → Rules → Rulesets), or land it by hand"
        )
    return "land it through its pull request (`integration: pull-request`)"
