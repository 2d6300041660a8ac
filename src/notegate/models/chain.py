"""The fallback chain, and building it from the ``[models]`` config.

A job holds one :class:`FallbackChain` and calls it like any provider.  The chain asks its
providers in order: a :class:`ModelError` (down, timeout, refusal, no key) is recorded and the
next one is asked; :class:`ModelSkipped` (the ``none`` provider) ends the chain and propagates,
so the job leaves model decisions undone; when every provider failed, the last error propagates.
Anything else a provider raises is a bug and propagates at once: no silent fallbacks.

Which provider answered is recorded two ways: :meth:`FallbackChain.complete` returns a
:class:`Completion` (text, provider, attempts), and after every call the chain's ``answered_by``
and ``attempts`` attributes say the same (``answered_by`` is ``None`` when nobody answered).
Jobs use the chain from one thread; the attributes are a convenience, the return value is the
contract.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from notegate.models.anthropic_api import AnthropicProvider
from notegate.models.base import DataPart, ModelError, ModelSkipped, NoneProvider, Provider, log
from notegate.models.claude_cli import ClaudeCliProvider
from notegate.models.config import ModelsConfig
from notegate.models.openai_api import OpenAIProvider


@dataclass(frozen=True)
class Attempt:
    """One provider's turn: ``outcome`` is ``"answered"`` or the rule of what stopped it."""

    provider: str
    outcome: str
    seconds: float


@dataclass(frozen=True)
class Completion:
    """The raw model text (still untrusted: run it through the output gate) and who produced it."""

    text: str
    provider: str
    attempts: tuple[Attempt, ...]


class FallbackChain:
    """Providers tried in order; itself a :class:`Provider` named ``"chain"``."""

    name = "chain"

    def __init__(self, providers: Sequence[Provider], *, clock: Callable[[], float] = time.monotonic) -> None:
        if not providers:
            raise ValueError("a fallback chain needs at least one provider")
        self.providers: tuple[Provider, ...] = tuple(providers)
        self._clock = clock
        self.answered_by: str | None = None
        self.attempts: tuple[Attempt, ...] = ()

    def complete(
        self, system: str, data_parts: Sequence[DataPart], schema: dict[str, Any], *, schema_name: str, timeout: float
    ) -> Completion:
        """Ask each provider in turn; the first answer wins.  ``timeout`` applies to each attempt."""
        self.answered_by = None
        attempts: list[Attempt] = []
        last_error: ModelError | None = None
        try:
            for provider in self.providers:
                started = self._clock()
                try:
                    text = provider.complete_json(system, data_parts, schema, schema_name=schema_name, timeout=timeout)
                except ModelSkipped:
                    attempts.append(Attempt(provider.name, ModelSkipped.rule, self._clock() - started))
                    log.info("model chain: '%s' reached, model decisions left undone", provider.name)
                    raise
                except ModelError as exc:
                    attempts.append(Attempt(provider.name, exc.rule, self._clock() - started))
                    log.warning("model chain: %s [%s]; trying the next provider", exc.message, exc.rule)
                    last_error = exc
                    continue
                took = self._clock() - started
                attempts.append(Attempt(provider.name, "answered", took))
                self.answered_by = provider.name
                log.info("model chain: '%s' answered in %.1f s", provider.name, took)
                return Completion(text, provider.name, tuple(attempts))
        finally:
            self.attempts = tuple(attempts)
        if last_error is None:  # unreachable: the loop ran at least once and neither returned nor raised
            raise RuntimeError("fallback chain ended without an answer or an error")
        raise last_error

    def complete_json(
        self, system: str, data_parts: Sequence[DataPart], schema: dict[str, Any], *, schema_name: str, timeout: float
    ) -> str:
        return self.complete(system, data_parts, schema, schema_name=schema_name, timeout=timeout).text


def build_provider(name: str, config: ModelsConfig, environ: Mapping[str, str]) -> Provider:
    """One provider by its config name (``anthropic``, ``openai``, ``claude-cli``, ``none``)."""
    if name == "anthropic":
        return AnthropicProvider(config.anthropic, environ)
    if name == "openai":
        return OpenAIProvider(config.openai, environ)
    if name == "claude-cli":
        return ClaudeCliProvider(config.claude_cli, environ)
    if name == "none":
        return NoneProvider()
    raise ValueError(f"unknown model provider {name!r}")  # models_from_table already refused it


def build_chain(config: ModelsConfig, environ: Mapping[str, str]) -> FallbackChain:
    """The configured chain.  Keys are read only from ``environ`` (the CLI passes ``os.environ``).

    ``environ`` is copied now, like the rest of the config: later changes to the process
    environment do not reach the providers.
    """
    snapshot = dict(environ)
    return FallbackChain([build_provider(name, config, snapshot) for name in config.chain])
