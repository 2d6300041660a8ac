"""The contract runner: one machine request is validated, planned, committed once, and audited.

Theory of operation
-------------------
* **Who**: :func:`notegate.policy.decide_contract` — machine tokens only ("conversations use the MCP
  tools"), and only the contracts the token was given at creation; anything else is "no such contract".
* **What**: the body is capped (the contract's own cap and ``contract_max_body_bytes``), parsed as strict
  JSON (no duplicate keys, no NaN) and validated against the contract's Draft 2020-12 schema before
  anything else; the refusal names the JSON pointer and the schema rule, never the value.
* **Once**: the plan runs after a fetch and inside the environment's write lock (re-entrant, so the
  recipe's own commit runs inside the same hold). Under that lock the idempotency record (state DB) of
  this connector login is read: the same key with the same input is a no-op naming the commit that
  recorded it; the same key with other input is refused naming the fields that differ. Records are per
  connector login: another machine's use of the same key is its own record, so one machine can neither
  make another's post fail nor learn anything of its input from a refusal. A call that committed nothing
  (all dropped, or the vault already held it) records no key: a corrected resend under the same key is
  then recorded. Concurrent posts of one key queue on the lock, so the second finds the first's record.
  The record is written *pending* before the commit and names the commit after the push: a call stopped
  between the two (a crash, a power cut: never answered, so the machine sends it again) is recovered by
  finding its commit on the origin by its trailers, so the resend is a replay, never a second commit.
* **How**: one commit through :meth:`NotesService.commit_as` (the git door's rules, author = the machine's
  connector login, trailers ``Notegate-Contract`` and ``Notegate-Idempotency``), pushed before the answer.
* **Loudly**: every call is one audit row (tool ``contract:<name>``); what a plan dropped is named in the
  response, in the audit outcome and in a task note for the environment's owner, authored by the machine's
  connector login, its words quoted inside a fence, at most ``connector_open_tasks`` open per connector.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

from jsonschema import Draft202012Validator

import notegate.strictjson as strictjson
from notegate.contracts import Contract, Dropped, Plan, PlanContext, builtins
from notegate.errors import NotegateError, PolicyDenied, StaleRevision
from notegate.policy import Caller, decide_connector_task, decide_contract, decide_contract_door
from notegate.policy.plan import Intent
from notegate.safety.outputgate import strict_validator
from notegate.services.contract_tasks import dropped_task_text, task_key
from notegate.services.eventlog import event
from notegate.services.modelwrite import refuse_unsafe, staged_lines
from notegate.services.notes import NotesService, contract_trailers, unified_diff
from notegate.vault.commits import Trailer, _trailer_value
from notegate.vault.store import ABSENT, Change

CONTRACT_TASK = "contract-dropped"
PLAN_ATTEMPTS = 3  # a note changed by another writer between plan and commit: plan again on the new text
SHOWN_DIFFERENCES = 10
#: The commit a key's record names while its commit is being made: the record is written first, so a call that
#: stops between its commit and its answer (a crash, a power cut) leaves a pending record, not none.
PENDING = "pending"
#: How much earlier than its pending record a recovered commit may be dated (the commit's time has whole
#: seconds; replicas' clocks differ a little).
RECOVERY_SKEW_SECONDS = 300.0


@dataclass(frozen=True)
class ContractResult:
    status: str  # committed | already-recorded | nothing-to-record
    message: str
    commit: str | None = None
    changed: tuple[str, ...] = ()
    dropped: tuple[Dropped, ...] = ()
    warnings: tuple[str, ...] = ()

    def as_json(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "message": self.message,
            "commit": self.commit,
            "changed": list(self.changed),
            "dropped": [d.as_json() for d in self.dropped],
            "warnings": list(self.warnings),
        }


@dataclass
class _Audit:
    path: str | None = None
    commit: str | None = None
    extra: list[str] = field(default_factory=list)


def parse_body(body: bytes) -> Any:
    """Strict JSON: UTF-8, one value, no repeated key, no NaN or Infinity."""
    try:
        return strictjson.loads(body)
    except (ValueError, RecursionError) as exc:
        raise NotegateError(
            f"the body is not one strict JSON value ({type(exc).__name__})", rule="contract-body-not-json"
        ) from None


def _pointer(parts: list[Any]) -> str:
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in parts) or "/"


def schema_problem(validator: Draft202012Validator, value: Any) -> tuple[str, str] | None:
    """(JSON pointer, schema rule) of the first error in a stable order, or None when ``value`` is valid.

    The pointer names where the input is wrong (for a missing or unknown field, the field itself)."""
    best: tuple[Any, ...] | None = None
    found: tuple[str, str] | None = None
    for error in validator.iter_errors(value):
        parts: list[Any] = list(error.absolute_path)
        if error.validator == "required" and isinstance(error.instance, dict):
            parts += [n for n in error.validator_value if n not in error.instance][:1]
        elif error.validator == "additionalProperties" and isinstance(error.instance, dict):
            known = error.schema.get("properties", {})
            parts += sorted(str(k)[:64] for k in error.instance if k not in known)[:1]
        order = (tuple((0, p, "") if isinstance(p, int) else (1, 0, str(p)) for p in parts), str(error.validator))
        if best is None or order < best:
            best, found = order, (_pointer(parts), str(error.validator))
    return found


def leaf_hashes(value: Any, pointer: str = "") -> dict[str, str]:
    """Each leaf's JSON pointer -> a short hash of its value (what an idempotency record keeps: no values)."""
    if isinstance(value, dict):
        out: dict[str, str] = {}
        for k, v in value.items():
            out.update(leaf_hashes(v, f"{pointer}/{str(k).replace('~', '~0').replace('/', '~1')}"))
        return out or {pointer or "/": "{}"}
    if isinstance(value, list):
        out = {}
        for i, v in enumerate(value):
            out.update(leaf_hashes(v, f"{pointer}/{i}"))
        return out or {pointer or "/": "[]"}
    canonical = json.dumps(value, sort_keys=True, ensure_ascii=False)
    return {pointer or "/": hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:16]}


def canonical_hash(value: Any) -> str:
    text = json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class ContractsService:
    def __init__(self, notes: NotesService, registry: dict[str, Contract] | None = None) -> None:
        self.notes = notes
        self.rt = notes.rt
        self.policy = notes.policy
        self.registry = registry if registry is not None else builtins()
        self._validators = {name: strict_validator(contract.schema) for name, contract in self.registry.items()}

    # ---------------------------------------------------------------- reads
    def body_limit(self, name: str) -> int:
        """The largest body contract ``name`` accepts: its own cap, never over the policy's."""
        contract = self.registry.get(name)
        own = contract.max_body_bytes if contract is not None else self.policy.contract_max_body_bytes
        return min(own, self.policy.contract_max_body_bytes)

    def available(self, caller: Caller, granted: tuple[str, ...]) -> list[dict[str, Any]]:
        """The contracts this machine may call, with their schemas (GET /contracts)."""
        with self._audited(caller, "contracts", None) as _record:
            door = decide_contract_door(caller)
            if not door.allowed:
                raise PolicyDenied(door.reason, rule=door.rule)
            return [
                {
                    "name": c.name,
                    "description": c.description,
                    "max_body_bytes": self.body_limit(c.name),
                    "schema": c.schema,
                }
                for name, c in self.registry.items()
                if decide_contract(caller, granted, name, self.registry).allowed
            ]

    # ---------------------------------------------------------------- calls
    def call(
        self, caller: Caller, granted: tuple[str, ...], name: str, body: bytes | None, *, size: int | None = None
    ) -> ContractResult:
        """Run contract ``name`` for ``caller`` on ``body`` (None: over the limit, ``size`` bytes seen)."""
        shown = name if name in self.registry else "?"
        with self._audited(caller, f"contract:{shown}", None) as record:
            decision = decide_contract(caller, granted, name, self.registry)
            if not decision.allowed:
                raise PolicyDenied(decision.reason, rule=decision.rule)
            contract = self.registry[name]
            limit = self.body_limit(name)
            if body is None or len(body) > limit:
                raise NotegateError(
                    f"the body is {size if body is None else len(body)} bytes or more, over this contract's limit "
                    f"of {limit} bytes",
                    rule="contract-body-too-large",
                )
            value = parse_body(body)
            problem = schema_problem(self._validators[name], value)
            if problem is not None:
                pointer, rule = problem
                raise NotegateError(
                    f"the input does not match the {name} schema at {pointer} (rule: {rule})",
                    rule="contract-input-invalid",
                )
            return self._run(caller, contract, value, record)

    def _run(self, caller: Caller, contract: Contract, value: dict[str, Any], record: _Audit) -> ContractResult:
        env = self.notes.env(caller, None)
        key = contract.key(value)
        record.path = f"key:{key}"[:300]
        digest, fields = canonical_hash(value), leaf_hashes(value)
        with env.store.write_lock():
            # The record first: a replay needs no fetch (the state DB, not the vault, holds what was recorded).
            earlier = self.rt.state.contract_call(
                environment=env.name, contract=contract.name, connector=caller.connector_id, key=key
            )
            if earlier is not None and earlier["commit_id"] == PENDING:
                earlier = self._recover(env, caller, contract, key, earlier)
            if earlier is not None:
                return self._replay(earlier, digest, fields, key, record)
            env.store.fetch(env.on_advance)
            ident = {"environment": env.name, "contract": contract.name, "connector": caller.connector_id, "key": key}
            if not self.rt.state.record_contract_call(
                **ident, input_hash=digest, fields=fields, commit_id=PENDING, now=self.rt.clock()
            ):  # another replica recorded the key meanwhile (its write lock is its own): its record stands
                return self._replay(self.rt.state.contract_call(**ident), digest, fields, key, record)
            try:
                for attempt in range(PLAN_ATTEMPTS):
                    plan = self._plan(caller, contract, value, env)
                    try:
                        result = self._commit(caller, contract, key, plan, env)
                    except StaleRevision:
                        if attempt == PLAN_ATTEMPTS - 1:
                            raise
                        env.store.fetch(env.on_advance)
                        continue
                    break
            except BaseException:  # refused or failed: no commit, so the key is free for a corrected resend
                self.rt.state.settle_contract_call(**ident, commit_id=None)
                raise
            # No commit (nothing recorded, nothing to protect): the record goes, and a corrected resend may use the key.
            self.rt.state.settle_contract_call(**ident, commit_id=result.commit)
        return self._finish(env.name, caller, contract, key, result, record)

    def _recover(self, env, caller: Caller, contract: Contract, key: str, earlier) -> dict[str, Any] | None:
        """A record left pending by a call that stopped between its record and its answer (a crash, a power
        cut): its commit is looked for on the origin by its trailers.  Found: the record names it and the call
        is a replay, never a second commit of the same input.  Not found: no commit was made; the record goes
        and the call runs as a first one."""
        env.store.fetch(env.on_advance)
        wanted = {**contract_trailers(contract.name, key), Trailer.CONNECTOR: caller.connector_id}
        trailers = {name: _trailer_value(value) for name, value in wanted.items()}  # as commit_message spells them
        found = env.store.commit_with_trailers(trailers, since=float(earlier["at"]) - RECOVERY_SKEW_SECONDS)
        ident = {"environment": env.name, "contract": contract.name, "connector": caller.connector_id, "key": key}
        self.rt.state.settle_contract_call(**ident, commit_id=found)
        if found is None:
            return None
        event("contract-recovered", contract=contract.name, commit=found[:12], connector=caller.connector_id)
        return {"commit_id": found, "input_hash": earlier["input_hash"], "fields": earlier["fields"]}

    def _finish(
        self, environment: str, caller: Caller, contract: Contract, key: str, result: ContractResult, record: _Audit
    ) -> ContractResult:
        record.commit = result.commit
        if result.changed:
            record.path = result.changed[0]
        if result.dropped:
            record.extra.append("dropped=" + ",".join(sorted({d.rule for d in result.dropped})))
            if not self._task(environment, caller, contract, key, result):
                record.extra.append("task-cap")
        return result

    def _replay(self, earlier, digest: str, fields: dict[str, str], key: str, record: _Audit) -> ContractResult:
        commit = None if earlier["commit_id"] == PENDING else earlier["commit_id"]  # pending: in flight elsewhere
        if earlier["input_hash"] == digest:
            record.commit = commit
            record.extra.append("replay")
            where = (
                f"already recorded in {commit}"
                if commit
                else "being recorded by another call"
                if earlier["commit_id"] == PENDING
                else "already recorded (nothing needed changing)"
            )
            return ContractResult(status="already-recorded", message=f"Nothing was written: {where}.", commit=commit)
        before: dict[str, str] = json.loads(earlier["fields"])
        differ = sorted(p for p in before.keys() | fields.keys() if before.get(p) != fields.get(p))
        shown = ", ".join(differ[:SHOWN_DIFFERENCES]) + (
            f" and {len(differ) - SHOWN_DIFFERENCES} more" if len(differ) > SHOWN_DIFFERENCES else ""
        )
        raise NotegateError(
            f"the idempotency key {key[:80]} was recorded"
            + (f" in {commit[:12]}" if commit else "")
            + f" with other input; it differs at {shown}",
            rule="idempotency-conflict",
        )

    def _plan(self, caller: Caller, contract: Contract, value: dict[str, Any], env) -> Plan:
        def read(path: str) -> str | None:
            found = env.store.read(path)
            return None if found is None else found[0].decode("utf-8", errors="replace")

        def credentials(text: str) -> None:
            self.notes.check_secrets(caller, text, False)

        files = self.policy.instruction_files

        def rescan(path: str, old: str, new: str) -> None:  # as guarded_write: the rendered text, then the diff
            refuse_unsafe("rendered", new, files, path)
            refuse_unsafe("staged", staged_lines(unified_diff(old, new, path, "now", "proposed")), files)

        def commit_rule(path: str, text: str) -> str | None:  # the rule the recipe would refuse it with
            decision = self.notes.decide_content(path, text.encode("utf-8"))
            return None if decision.allowed else decision.rule

        ctx = PlanContext(
            policy=self.policy,
            read=read,
            caller=caller,
            now=self.rt.clock(),
            gates={"credentials": credentials, "rescan": rescan, "commit_rule": commit_rule},
        )
        return contract.plan(value, ctx)

    def _commit(self, caller: Caller, contract: Contract, key: str, plan: Plan, env) -> ContractResult:
        changes: list[Change] = []
        expect: dict[str, str] = {}
        new_paths: list[str] = []
        for note in plan.notes:
            data = self.notes.encoded_content(note.text)
            current = env.store.blob_id(note.path)
            found = env.store.read(note.path)
            if found is not None and found[0] == data:
                continue
            changes.append(Change(note.path, data))
            expect[note.path] = ABSENT if note.new else current
            if note.new:
                new_paths.append(note.path)
        if not changes:
            return ContractResult(
                status="nothing-to-record",
                message="Nothing was written: the vault already holds this (or nothing was recordable).",
                dropped=plan.dropped,
                warnings=plan.warnings,
            )
        trailers = contract_trailers(contract.name, key)
        result = self.notes.commit_as(
            caller,
            env,
            changes,
            expect,
            plan.summary,
            trailers,
            new_paths=tuple(new_paths),
            intent=Intent(op=f"contract:{contract.name}"),
        )
        event("contract", contract=contract.name, commit=result.commit[:12], connector=caller.connector_id)
        return ContractResult(
            status="committed",
            message=f"Committed and pushed {result.commit[:12]}.",
            commit=result.commit,
            changed=tuple(c.path for c in changes),
            dropped=plan.dropped,
            warnings=plan.warnings,
        )

    def _task(self, environment: str, caller: Caller, contract: Contract, key: str, result: ContractResult) -> bool:
        """A task note for the owner: what the machine sent that was not recorded, and why; authored by the
        machine's connector login, its words only inside a fence (:mod:`notegate.services.contract_tasks`),
        at most ``connector_open_tasks`` open per connector (False: the cap kept this one out)."""
        text = dropped_task_text(
            contract.name,
            caller.connector_id,
            key,
            result.dropped,
            result.commit,
            "Fix the exporter's unit or scale; nothing was recorded at the wrong scale.",
        )
        opened = self.rt.state.open_task(
            environment=environment,
            kind=CONTRACT_TASK,
            key=task_key(contract.name, caller.connector_id, key),
            text=text,
            now=self.rt.clock(),
            connector=caller.connector_id,
            client=caller.client,
            login=caller.login,
            fits=lambda open_tasks: decide_connector_task(self.policy, open_tasks).allowed,
        )
        return opened is not None

    # --------------------------------------------------------------- audit
    def _audited(self, caller: Caller, tool: str, path: str | None):
        return _AuditRow(self, caller, tool, path)


class _AuditRow:
    """One audit row per contract call: the outcome (ok, a refusal's rule, plus what was dropped), never input."""

    def __init__(self, service: ContractsService, caller: Caller, tool: str, path: str | None) -> None:
        self.service, self.caller, self.tool = service, caller, tool
        self.record = _Audit(path=path)

    def __enter__(self) -> _Audit:
        return self.record

    def __exit__(self, kind, exc, _tb) -> None:
        if exc is None:
            outcome = "ok"
        elif isinstance(exc, NotegateError):
            outcome = exc.rule
        else:
            outcome = "error"
        if self.record.extra:
            outcome += " " + " ".join(self.record.extra)
        rt = self.service.rt
        rt.state.audit(
            now=rt.clock(),
            **self.caller.audit_fields(rt.config.default_environment),
            tool=self.tool,
            path=self.record.path,
            outcome=outcome,
            commit_id=self.record.commit,
        )
