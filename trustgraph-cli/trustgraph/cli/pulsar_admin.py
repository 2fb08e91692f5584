"""The broker's admin URL as the operators' commands use it (``tg-init-trustgraph``,
``tg-verify-system-status``): which broker answers there, and its tenants and namespaces.

Two kinds of broker answer at such a URL.  Apache Pulsar serves its admin REST
API (``/admin/v2/...``) on its web service port, 8080.  pulsar-lite, tg-launch's
embedded broker, serves only its Prometheus metrics there (``/metrics``) and
answers 404 to everything else: it has no clusters, tenants or namespaces to
create, and creates a topic when it is first used.  Upstream's commands ask it
for ``/admin/v2/clusters`` and, told 404, retry forever (``tg-init-trustgraph``)
or fail (``tg-verify-system-status``).  pulsar-lite names itself in its metrics
(``pulsar_version_info{cluster="pulsar-lite",version="..."}``), which is how
:meth:`PulsarAdmin.identify` tells the two apart.

Every failure is an :class:`AdminError` whose text says what went wrong and
what to do, and whose ``retry`` says whether trying again may help (nothing
listens yet, a broker still starting answers 5xx) or cannot (a refused token,
a URL that is no broker's).  ``requests`` is imported on first use, as in
:mod:`trustgraph.base.command_line`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from trustgraph.base.command_line import os_cause
from trustgraph.base.messaging.broker_url import DEFAULT_PULSAR_ADMIN_URL

DEFAULT_TIMEOUT = 10.0
PULSAR_LITE = "pulsar-lite"
_CLUSTERS = "/admin/v2/clusters"


class AdminError(Exception):
    """A failed admin call; ``retry``: whether trying again later may succeed."""

    def __init__(self, message: str, retry: bool) -> None:
        super().__init__(message)
        self.retry = retry


@dataclass(frozen=True)
class Broker:
    """What answers at an admin URL: ``kind`` is ``"pulsar"`` (Apache Pulsar) or ``"pulsar-lite"``."""

    url: str
    kind: str
    clusters: tuple[str, ...] = ()
    version: str = ""

    @property
    def lite(self) -> bool:
        return self.kind == PULSAR_LITE

    def describe(self) -> str:
        if self.lite:
            return f"pulsar-lite {self.version or '(version unknown)'} at {self.url}, tg-launch's embedded broker"
        return f"Apache Pulsar at {self.url}, cluster(s) {', '.join(self.clusters)}"


def _excerpt(text: str, limit: int = 160) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit] + "..."


class PulsarAdmin:
    """A few calls of Apache Pulsar's admin REST API, and telling pulsar-lite apart."""

    def __init__(self, url: str, token: str | None = None, timeout: float = DEFAULT_TIMEOUT) -> None:
        self.url = url.strip().rstrip("/")
        if "://" not in self.url:
            raise AdminError(f"invalid Pulsar admin URL {url!r}: it must start with http:// or https:// "
                             f"(e.g. {DEFAULT_PULSAR_ADMIN_URL})", retry=False)
        self.token = token or None
        self.timeout = timeout

    def _call(self, method: str, path: str, body: Any = None, timeout: float | None = None) -> Any:
        """One request; no reply at all is an :class:`AdminError` (worth retrying, except a bad URL)."""
        import requests

        target = self.url + path
        headers = {"Accept": "application/json", "User-Agent": "trustgraph-cli"}
        if self.token:   # Apache Pulsar with authentication wants the token here as on the broker port
            headers["Authorization"] = f"Bearer {self.token}"
        wait = self.timeout if timeout is None else timeout
        try:
            return requests.request(method, target, json=body, headers=headers, timeout=wait)
        except requests.Timeout:
            raise AdminError(f"no answer from {target} within {wait:g}s", retry=True) from None
        except (requests.exceptions.InvalidURL, requests.exceptions.InvalidSchema,
                requests.exceptions.MissingSchema) as e:
            raise AdminError(f"invalid Pulsar admin URL {self.url}: {e}", retry=False) from None
        except requests.RequestException as e:
            cause = os_cause(e)
            if isinstance(cause, ConnectionRefusedError):
                why = "connection refused (nothing listens there yet)"
            elif cause is not None:
                why = getattr(cause, "strerror", None) or str(cause)
            else:
                why = f"bad HTTP reply ({type(e).__name__})"
            raise AdminError(f"cannot reach {target}: {why}", retry=True) from None

    def _failed(self, response: Any, doing: str) -> AdminError:
        """The :class:`AdminError` for an unexpected HTTP status while ``doing`` something."""
        status = response.status_code
        where = f"{doing}: HTTP {status} from {response.url}"
        if status in (401, 403):
            return AdminError(f"{where}: the admin API refused the request; give --pulsar-api-key a token "
                              "of a role allowed to administer tenants (a superuser's)", retry=False)
        text = _excerpt(response.text or "")
        detail = f": {text}" if text else ""
        # A broker that is starting (or whose metadata store is) answers 5xx for a while.
        return AdminError(where + detail, retry=status >= 500)

    def identify(self) -> Broker:
        """Which broker answers here; an :class:`AdminError` when none does (or not as one)."""
        r = self._call("GET", _CLUSTERS)
        if r.status_code == 200:
            try:
                clusters = r.json()
            except ValueError:
                clusters = None
            if not isinstance(clusters, list):
                raise AdminError(f"{self.url}{_CLUSTERS} answered {_excerpt(r.text) or 'nothing'}, not a list "
                                 f"of clusters: is {self.url} a Pulsar admin URL?", retry=False)
            if not clusters:
                raise AdminError(f"the Pulsar at {self.url} lists no cluster yet", retry=True)
            return Broker(self.url, "pulsar", tuple(str(c) for c in clusters))
        if r.status_code != 404:
            raise self._failed(r, "listing the clusters")
        version = self._lite_version()
        if version is None:
            raise AdminError(f"{self.url} answers 404 for {_CLUSTERS} and is not pulsar-lite either: give the "
                             f"broker's admin URL (Apache Pulsar's web service, e.g. {DEFAULT_PULSAR_ADMIN_URL})",
                             retry=False)
        return Broker(self.url, PULSAR_LITE, version=version)

    def _lite_version(self) -> str | None:
        """pulsar-lite's version from its metrics (``""`` when it gives none), or None: not pulsar-lite."""
        from trustgraph.base.messaging.broker_consumers import samples

        try:
            r = self._call("GET", "/metrics")
        except AdminError:
            return None
        if r.status_code != 200:
            return None
        for labels, _value in samples(r.text, "pulsar_version_info"):
            if labels.get("cluster") == PULSAR_LITE:
                return labels.get("version", "")
        return None

    def _exists(self, path: str, doing: str) -> bool:
        r = self._call("GET", path)
        if r.status_code == 200:
            return True
        if r.status_code == 404:
            return False
        raise self._failed(r, doing)

    def _create(self, path: str, body: dict[str, Any], doing: str) -> bool:
        """PUT ``body`` at ``path``: True when created, False when it already existed (409)."""
        r = self._call("PUT", path, body)
        if r.status_code in (200, 204):
            return True
        if r.status_code == 409:   # created meanwhile by someone else: as good
            return False
        raise self._failed(r, doing)

    def tenant_exists(self, tenant: str) -> bool:
        return self._exists(f"/admin/v2/tenants/{tenant}", f"reading tenant {tenant}")

    def create_tenant(self, tenant: str, clusters: tuple[str, ...]) -> bool:
        """Create ``tenant`` allowed on ``clusters``, with no admin roles; False when it existed."""
        return self._create(f"/admin/v2/tenants/{tenant}",
                            {"adminRoles": [], "allowedClusters": list(clusters)}, f"creating tenant {tenant}")

    def namespace_exists(self, tenant: str, namespace: str) -> bool:
        return self._exists(f"/admin/v2/namespaces/{tenant}/{namespace}",
                            f"reading namespace {tenant}/{namespace}")

    def create_namespace(self, tenant: str, namespace: str, policies: dict[str, Any]) -> bool:
        """Create ``tenant/namespace`` with ``policies`` (Pulsar's ``Policies`` JSON); False when it existed."""
        return self._create(f"/admin/v2/namespaces/{tenant}/{namespace}", policies,
                            f"creating namespace {tenant}/{namespace}")


def policies_text(policies: dict[str, Any]) -> str:
    """A namespace's policies as the commands show them, e.g. ``retention 3 min, ...``."""
    parts = []
    retention = policies.get("retention_policies") or {}
    if retention:
        minutes, size = retention.get("retentionTimeInMinutes"), retention.get("retentionSizeInMB")
        parts.append("retention " + ", ".join(
            x for x in (("unlimited time" if minutes == -1 else f"{minutes} min") if minutes is not None else "",
                        ("unlimited size" if size == -1 else f"{size} MB") if size is not None else "") if x))
    expiry = policies.get("subscription_expiration_time_minutes")
    if expiry is not None:
        parts.append(f"idle subscriptions expire after {expiry} min")
    return "; ".join(parts) or "the broker's default policies"
