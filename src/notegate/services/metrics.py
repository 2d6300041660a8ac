"""What ``/metrics`` tells Prometheus: counts and latencies heard from the server's events, and gauges read
when a scrape asks.

Why events: the server already says once, in :mod:`notegate.services.eventlog`, what happened (a tool call
with its outcome and milliseconds, a commit with its push, a fetch).  Counting those lines keeps one source
per fact: a metric cannot disagree with the log.

Labels hold only values code made from a fixed set: an environment's name (the deployment config's), a
tool's name (ours), an outcome (``ok``, ``error`` or a refusal's rule).  Never a path, a login, a connector
or a client name: those are the caller's and would let anyone who can scrape read who uses the vault.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Collection, Iterator

from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from notegate.services import eventlog
from notegate.services.container import Services
from notegate.services.runtime import Runtime

CONTENT_TYPE = CONTENT_TYPE_LATEST
#: Latency buckets in seconds: a confirmed write is ~10-20 ms, a push to a remote origin up to seconds.
BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)


class Metrics:
    """One registry per app; :meth:`start` begins hearing events, :meth:`stop` ends it."""

    def __init__(self, runtime: Runtime, services: Services, *, clock: Callable[[], float] = time.time) -> None:
        self.runtime = runtime
        self.services = services
        self.clock = clock
        self.registry = CollectorRegistry(auto_describe=True)
        self.environments = frozenset(runtime.config.environments)
        self.tool_calls = Counter(
            "notegate_tool_calls",
            "Tool calls, by environment, tool and outcome (ok, error, or the refusal's rule).",
            ["environment", "tool", "outcome"],
            registry=self.registry,
        )
        self.tool_seconds = Histogram(
            "notegate_tool_seconds",
            "How long a tool call took, by environment and tool.",
            ["environment", "tool"],
            buckets=BUCKETS,
            registry=self.registry,
        )
        self.write_seconds = Histogram(
            "notegate_write_seconds",
            "How long an accepted write took, from the call to its commit pushed to the origin.",
            ["environment"],
            buckets=BUCKETS,
            registry=self.registry,
        )
        self.push_seconds = Histogram(
            "notegate_commit_push_seconds",
            "How long a commit and its push to the origin took.",
            ["environment"],
            buckets=BUCKETS,
            registry=self.registry,
        )
        self.fetches_moved = Counter(
            "notegate_fetches_moved",
            "Fetches from the origin that moved the server's main branch.",
            ["environment"],
            registry=self.registry,
        )
        self.registry.register(_Gauges(self))
        self._stop: Callable[[], None] | None = None
        #: (metric, label values) -> that child: ``labels()`` takes a lock and checks its values on every call,
        #: twice per write; the children never go away (nothing here removes one) and the label values come
        #: from fixed sets, so the table stays as small as the metrics themselves.
        self._children: dict[tuple[object, ...], object] = {}

    def start(self) -> None:
        if self._stop is None:
            self._stop = eventlog.listen(self.hear)

    def stop(self) -> None:
        if self._stop is not None:
            self._stop()
            self._stop = None

    def _environment(self, fields: dict[str, object]) -> str | None:
        """The event's environment, only when it is one of the config's (so a label is never a caller's)."""
        name = fields.get("environment")
        return name if isinstance(name, str) and name in self.environments else None

    def hear(self, name: str, fields: dict[str, object]) -> None:
        environment = self._environment(fields)
        if environment is None:
            return
        seconds = fields.get("ms")
        seconds = float(seconds) / 1000 if isinstance(seconds, int | float) else None
        if name == "tool":
            tool, outcome = str(fields.get("tool", "-")), str(fields.get("outcome", "-"))
            self._child(self.tool_calls, environment, tool, outcome).inc()
            if seconds is not None:
                self._child(self.tool_seconds, environment, tool).observe(seconds)
                if fields.get("commit"):
                    self._child(self.write_seconds, environment).observe(seconds)
        elif name == "commit" and seconds is not None:
            self._child(self.push_seconds, environment).observe(seconds)
        elif name == "fetch":
            self._child(self.fetches_moved, environment).inc()

    def _child(self, metric, *values: str):  # type: ignore[no-untyped-def]
        key = (metric, *values)
        child = self._children.get(key)
        if child is None:
            child = self._children[key] = metric.labels(*values)
        return child

    def render(self, environments: Collection[str] | None = None) -> bytes:
        """The page; with ``environments``, only their samples (what
        :func:`notegate.policy.metrics_environments` lets the reader see)."""
        if environments is None:
            return generate_latest(self.registry)
        return generate_latest(_Only(self.registry, frozenset(environments)))  # type: ignore[arg-type]


class _Only:
    """The registry as one reader may see it: every sample labelled with another environment is left out.

    Filtering the finished samples, not each metric, keeps one place that cannot miss a metric added later;
    a sample without an environment label (none today) describes the whole server and stays."""

    def __init__(self, registry: CollectorRegistry, environments: frozenset[str]) -> None:
        self.registry = registry
        self.environments = environments

    def collect(self) -> Iterator[Metric]:
        for family in self.registry.collect():
            view = Metric(family.name, family.documentation, family.type, family.unit)
            view.samples = [
                s
                for s in family.samples
                if "environment" not in s.labels or s.labels["environment"] in self.environments
            ]
            yield view


class _Gauges(Collector):
    """Read at each scrape: what is waiting, what was refused, how big the index is, how old the last fetch."""

    def __init__(self, metrics: Metrics) -> None:
        self.metrics = metrics

    def describe(self) -> Iterator[Metric]:
        return iter(self._families())

    def collect(self) -> Iterator[Metric]:
        families = self._families()
        runtime = self.metrics.runtime
        now = self.metrics.clock()
        waiting, refused, notes, lag = families
        for name in sorted(runtime.config.environments):
            env = runtime.environment(name)
            waiting.add_metric([name], self.metrics.services.inbox.waiting_count(env))
            kinds: dict[str, int] = {}
            for task in runtime.state.tasks(name):
                kinds[task["kind"]] = kinds.get(task["kind"], 0) + 1
            for kind, count in sorted(kinds.items()):
                refused.add_metric([name, kind], count)
            notes.add_metric([name], env.index.count())
            last = runtime.last_fetch.get(name)
            if last is not None:
                lag.add_metric([name], max(0.0, now - last))
        return iter(families)

    @staticmethod
    def _families() -> list[GaugeMetricFamily]:
        return [
            GaugeMetricFamily("notegate_inbox_waiting", "Inbox items waiting for review.", labels=["environment"]),
            GaugeMetricFamily(
                "notegate_open_tasks",
                "Open task notes for the owner, by kind (a refused fetch opens one of kind fetch-refused).",
                labels=["environment", "kind"],
            ),
            GaugeMetricFamily("notegate_index_notes", "Notes in the search index.", labels=["environment"]),
            GaugeMetricFamily(
                "notegate_fetch_lag_seconds",
                "Seconds since the last fetch that reached the origin.",
                labels=["environment"],
            ),
        ]
