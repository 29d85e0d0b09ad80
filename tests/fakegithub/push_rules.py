"""What GitHub refuses in a push besides classic branch protection (GH006):
repository rulesets (GH013) and workflow files pushed without `workflows`.

Every repository of the fake gets a `proc-receive` hook (git's hook that may
answer each ref with its own reason, `ng <ref> <reason>`, the words git
prints in `[remote rejected] (...)`); the refs it lets through fall through to
git's own update. What it refuses, in GitHub's exact words:

- A branch under a ruleset (`fake.add_ruleset`): GH013 on stderr with one
  line per violated rule, and `push declined due to repository rule
  violations` as the ref's reason. Seen from github.com in, for example,
  henne49/dbus-opendtu#235 and gleam-lang/gleam#6080 ("Changes must be made
  through a pull request.") and the "Cannot update this protected ref." rule
  (the ruleset's "Restrict updates", which refuses merges too); "About
  rulesets", https://docs.github.com/en/repositories/configuring-branches-and-merges-in-your-repository/managing-rulesets/about-rulesets.
- New commits that add, change or delete a file under `.github/workflows/`,
  pushed with an App's token that lacks `workflows: write`: the ref's reason
  is `refusing to allow a GitHub App to create or update workflow `<path>`
  without `workflows` permission` and nothing on stderr (reported in
  repo-sync/github-sync#23, peter-evans/create-pull-request#1713,
  stefanzweifel/git-auto-commit-action#322). The permission is GitHub's
  "Workflows" repository permission for Apps.
"""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tests.fakegithub import state as s

RULES_FILE = "fake-github-rules.json"
# The token's `workflows` level reaches the hook through git http-backend's environment.
WORKFLOWS_ENV = "FAKE_GITHUB_WORKFLOWS"
RULE_WORDS = {
    "pull_request": "Changes must be made through a pull request.",
    "update": "Cannot update this protected ref.",
}

HOOK = r'''#!{python}
"""The fake GitHub's push rules (tests/fakegithub/push_rules.py): git's proc-receive protocol."""
import json, os, subprocess, sys

def read():
    size = sys.stdin.buffer.read(4)
    if not size:
        return None
    n = int(size, 16)
    return b"" if n == 0 else sys.stdin.buffer.read(n - 4)

def write(data):
    out = sys.stdout.buffer
    out.write(b"0000" if data is None else b"%04x" % (len(data) + 4) + data)
    out.flush()

def git(*args):
    return subprocess.run(["git", *args], capture_output=True, text=True).stdout

read()
while read():
    pass
write(b"version=1\0")
write(None)
commands = []
while (line := read()):
    commands.append(line.decode().split())
with open({rules_file!r}) as fh:
    rules = json.load(fh)
may_write_workflows = os.environ.get({workflows_env!r}) == "write"
ZERO = "0" * 40
for old, new, ref in commands:
    branch = ref.removeprefix("refs/heads/")
    violated = rules["branches"].get(branch, [])
    if violated:
        quoted = ref.replace("/", "%2F")
        say = [f"error: GH013: Repository rule violations found for {ref}.",
               f"Review all repository rules at {rules['url']}?ref={quoted}", ""]
        for rule in violated:
            say += [f"- {rules['words'][rule]}", ""]
        print("\n".join(say), file=sys.stderr)
        write(f"ng {ref} push declined due to repository rule violations".encode())
        continue
    if new != ZERO and not may_write_workflows:
        touched = []
        for commit in git("rev-list", new, "--not", "--all").split():
            names = git("diff-tree", "--no-commit-id", "--name-only", "-r", "--root", "-m", commit)
            touched += [n for n in names.split() if n.startswith(".github/workflows/")]
        if touched:
            write((f"ng {ref} refusing to allow a GitHub App to create or update workflow "
                   f"`{sorted(touched)[0]}` without `workflows` permission").encode())
            continue
    write(f"ok {ref}".encode())
    write(b"option fall-through")
write(None)
'''


def install(repo: s.Repository, html_url: str) -> None:
    """Give the bare repository the hook and an empty rule set."""
    git_dir = repo.git.path
    repo.git.git("config", "receive.procReceiveRefs", "refs/heads/")
    hooks = git_dir / "hooks"
    hooks.mkdir(exist_ok=True)
    hook = hooks / "proc-receive"
    hook.write_text(
        HOOK.replace("{python}", sys.executable)
        .replace("{rules_file!r}", repr(str(git_dir / RULES_FILE)))
        .replace("{workflows_env!r}", repr(WORKFLOWS_ENV))
    )
    hook.chmod(0o755)
    write_rules(repo, html_url)


def write_rules(repo: s.Repository, html_url: str) -> None:
    data = {
        "url": f"{html_url}/{repo.full_name}/rules",
        "branches": repo.rulesets,
        "words": RULE_WORDS,
    }
    (repo.git.path / RULES_FILE).write_text(json.dumps(data))
