"""`.github/odw.yml`: the repository's agent, gates, base branch and run settings.

One model for the runner, local mode and the App, and one reader of the file,
`read_repo_config`: every host fetches the bytes and hands them here, so the
YAML, the size cap, the validation and the one error, `ConfigProblem` (file,
field, line), are the same wherever the file is read. YAML parsing is pure
(text in, data out, no I/O), so it lives in the core with the model.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator
from pydantic.alias_generators import to_camel

from app.core.config import RunConfig
from app.core.identity import Identity

CONFIG_PATH = ".github/odw.yml"
# One cap for every host: what GitHub's contents API serves in full
# (https://docs.github.com/en/rest/repos/contents#get-repository-content);
# a configuration is a few hundred bytes.
MAX_CONFIG_BYTES = 1 << 20

# The collaborator permission a commenter needs for `/odw` commands that change
# something (GitHub's levels, lowest first; `triage` and `read` are not enough).
CommandPermission = Literal["write", "maintain", "admin"]
# How a task lands: ODW pushes its squash commit to the base, or squash-merges
# the task's pull request (what a base protected against pushes needs).
IntegrationMethod = Literal["push", "pull-request"]


# A GitHub login, or `org/team`: what an @mention notifies.
_LOGIN = r"[A-Za-z0-9](?:[A-Za-z0-9]|-(?=[A-Za-z0-9])){0,38}"
_MENTIONABLE = re.compile(rf"^{_LOGIN}(?:/[A-Za-z0-9][A-Za-z0-9_.-]{{0,99}})?$")
MAX_NOTIFY = 10


def valid_login(name: str) -> bool:
    """A GitHub login (or `org/team`) an @mention can name."""
    return bool(_MENTIONABLE.match(name))


class _Model(BaseModel):
    model_config = ConfigDict(
        alias_generator=to_camel, populate_by_name=True, extra="forbid", frozen=True
    )


class RepoConfig(_Model):
    agent: str | None = None
    gates: list[str] = Field(default_factory=list)
    base: str = "main"
    identity: Identity | None = None
    # Delete a task's branch (on origin and in a local clone) once it has landed,
    # as GitHub's "automatically delete head branches" does.
    delete_task_branches: bool = True
    # The App starts (or continues) a run when a push to the base changes the roadmap.
    auto: bool = False
    config: RunConfig = Field(default_factory=RunConfig)
    command_permission: CommandPermission = "write"
    # Bot accounts (`name[bot]`) whose `/odw` comments count; others are ignored.
    allowed_bots: tuple[str, ...] = ()
    integration: IntegrationMethod = "push"
    # Who is mentioned when a person must act (a task failed, the run halted);
    # empty: the person who started the run.
    notify: tuple[str, ...] = ()

    @field_validator("notify")
    @classmethod
    def _mentionable(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        if len(value) > MAX_NOTIFY:
            raise ValueError(f"names {len(value)} people; at most {MAX_NOTIFY}")
        names = tuple(name.removeprefix("@") for name in value)
        for name in names:
            if not _MENTIONABLE.match(name):
                raise ValueError(f"{name!r} is not a GitHub login or an org/team like 'acme/ops'")
        return tuple(dict.fromkeys(names))

    @field_validator("allowed_bots")
    @classmethod
    def _bot_logins(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for login in value:
            if not login.endswith("[bot]") or len(login) <= len("[bot]"):
                raise ValueError(f"{login!r} is not a bot login like 'renovate[bot]'")
        return value


@dataclass(frozen=True)
class ConfigProblem(ValueError):
    """A repository file ODW cannot use: the file (as the caller named it), the
    dotted field ("" for the whole file), its 1-based line when known, and why."""

    path: str
    field: str
    line: int | None
    message: str

    def __str__(self) -> str:
        where = self.path + (f", line {self.line}" if self.line else "")
        return f"{where}: {self.field + ': ' if self.field else ''}{self.message}"


def read_repo_config(text: str | bytes | None, source: str = CONFIG_PATH) -> RepoConfig:
    """The one reader of `.github/odw.yml`: None (no file) and an empty document
    mean the defaults; anything else unusable is a ConfigProblem naming `source`."""
    if text is None:
        return RepoConfig()
    raw = text if isinstance(text, bytes) else text.encode("utf-8", "surrogatepass")
    if len(raw) > MAX_CONFIG_BYTES:
        raise ConfigProblem(source, "", None, f"larger than {MAX_CONFIG_BYTES} bytes")
    decoded = text.decode("utf-8", "replace") if isinstance(text, bytes) else text
    node, data = _load(decoded, source)
    return _validated(data, source, node)


def parse_repo_config(data: object, *, source: str = CONFIG_PATH) -> RepoConfig:
    """Data already parsed (a layered or command-line configuration): no lines to name."""
    return _validated(data, source, None)


def _load(text: str, source: str) -> tuple[yaml.Node | None, object]:
    """The document's node tree (for line numbers) and its data, from one parse."""
    loader = yaml.SafeLoader(text)
    try:
        node = loader.get_single_node()
        return node, (loader.construct_document(node) if node is not None else None)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else None
        raise ConfigProblem(source, "", line, f"not valid YAML: {exc}") from None
    except RecursionError:
        raise ConfigProblem(source, "", None, "not valid YAML: nested too deeply") from None
    finally:
        loader.dispose()


def _validated(data: object, source: str, node: yaml.Node | None) -> RepoConfig:
    if data is None:
        data = {}
    if not isinstance(data, dict):
        line = node.start_mark.line + 1 if node is not None else None
        raise ConfigProblem(source, "", line, "expected a mapping at the top level")
    try:
        return RepoConfig.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = tuple(first["loc"])
        field = ".".join(str(p) for p in loc)
        raise ConfigProblem(source, field, _line_of(node, loc), first["msg"]) from None


def _line_of(node: yaml.Node | None, loc: tuple[Any, ...]) -> int | None:
    """1-based line of the YAML node at `loc` (or its nearest parent), if known."""
    if node is None:
        return None
    line = node.start_mark.line + 1
    for part in loc:
        if isinstance(node, yaml.MappingNode):
            match = next(
                (
                    (k, v)
                    for k, v in node.value
                    if isinstance(k, yaml.ScalarNode) and _matches(k.value, str(part))
                ),
                None,
            )
            if match is None:
                return line
            line, node = match[0].start_mark.line + 1, match[1]
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int):
            if part >= len(node.value):
                return line
            node = node.value[part]
            line = node.start_mark.line + 1
        else:
            return line
    return line


def _matches(key: str, field: str) -> bool:
    camel = field.split("_")[0] + "".join(w.title() for w in field.split("_")[1:])
    return key in (field, camel)
