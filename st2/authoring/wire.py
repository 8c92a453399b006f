"""Wire models of the authoring path's JSON outputs: ``st2.agent-publish.v2`` (the receipt of
``st2 agent publish``/``new``), ``st2.agent-publish-conflict.v1`` (a lost compare-and-swap) and
``st2.agent-source-digest.v1`` (``st2 agent digest``).

Each model is the contract of one schema: its fields, in wire order, under their wire names,
with the nulls the schema keeps. The authoring records build their bodies through these models
(validated, strict) and the CLI prints them as one compact JSON line. pydantic is paid once, by the authoring CLI's ``--json``
output: nothing the roster, a hook, the DING notifier or a hot path imports loads this module
(``tests/ding/test_imports.py``, ``tests/test_hot_paths.py``)."""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

PUBLISH_SCHEMA = "st2.agent-publish.v2"
CONFLICT_SCHEMA = "st2.agent-publish-conflict.v1"
DIGEST_SCHEMA = "st2.agent-source-digest.v1"
POLICY_PROFILE = "st2.core+catalog.v1"
# The original stamps the Agent Spec revision it validated against; st2 has no such revision,
# and "local.unknown" is the value the original itself emits for a revisionless build.
AGENT_SPEC_REVISION = "local.unknown"


class Wire(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True, strict=True)
    OMITTED_WHEN_NULL: ClassVar[tuple[str, ...]] = ()

    def wire(self) -> dict:
        """The body in wire order under wire names; ``OMITTED_WHEN_NULL`` fields are left out
        when null, every other null is kept."""
        omitted = {name for name in self.OMITTED_WHEN_NULL if getattr(self, name) is None}
        return self.model_dump(by_alias=True, exclude=omitted)


class PublishReceipt(Wire):
    """``st2.agent-publish.v2``: ``beforeSha256`` is absent on a create, ``managedBy`` is null
    when the declaration names no owner."""

    schema_: Literal["st2.agent-publish.v2"] = Field(PUBLISH_SCHEMA, alias="schema")
    policy_profile: Literal["st2.core+catalog.v1"] = Field(POLICY_PROFILE, alias="policyProfile")
    agent_spec_revision: str = Field(AGENT_SPEC_REVISION, alias="agentSpecRevision")
    status: Literal["published", "unchanged"]
    bus_id: str = Field(alias="busId")
    path: str
    input_sha256: str = Field(alias="inputSha256")
    before_sha256: str | None = Field(None, alias="beforeSha256")
    after_sha256: str = Field(alias="afterSha256")
    managed_by: str | None = Field(alias="managedBy")

    OMITTED_WHEN_NULL: ClassVar[tuple[str, ...]] = ("before_sha256",)


class PublishConflict(Wire):
    """``st2.agent-publish-conflict.v1``: a null digest means "absent" on that side."""

    schema_: Literal["st2.agent-publish-conflict.v1"] = Field(CONFLICT_SCHEMA, alias="schema")
    status: Literal["conflict"] = "conflict"
    bus_id: str = Field(alias="busId")
    path: str
    expected_sha256: str | None = Field(alias="expectedSha256")
    current_sha256: str | None = Field(alias="currentSha256")


class SourceDigest(Wire):
    """``st2.agent-source-digest.v1``."""

    schema_: Literal["st2.agent-source-digest.v1"] = Field(DIGEST_SCHEMA, alias="schema")
    kind: Literal["spec", "bundle"]
    sha256: str
