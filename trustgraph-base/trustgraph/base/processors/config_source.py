"""Whether a config push comes from config-svc: its stamp, and what a processor does with a push.

Anything that can publish on the broker can publish a ``ConfigPush`` on the
push topic, and upstream 2.1.4 processors apply any push they see.  A
version far ahead (10^12, say) would then also make every later real version
look older.  Our processors check each push against config-svc itself, over
its request/response path, before applying it:

* config-svc of this fork answers every read with two properties: its store's
  identity (:data:`STORE`, drawn when the store was created) and the digest
  of its whole config at that version (:data:`DIGEST`, :func:`config_digest`),
  and stamps its pushes and notices with the store identity;
* a processor that receives a push asks config-svc for its version (a ``get``
  of no keys: one small message, which upstream's config-svc answers too) and
  applies the push only when config-svc is at that version and holds that
  config (same digest).  A push ahead of config-svc, or one whose content
  config-svc does not hold, is ignored with a WARNING saying why; one behind
  it is superseded by the push that follows.
* config-svc's answer is what counts, also when its version is *lower* than
  the processor's: its history restarted (a new store, a restore from a
  backup), and the processor follows it, saying so, instead of ignoring
  every new version as "older".

Upstream's config-svc sends no digest: a push is then checked by its version
alone (a forged push at exactly config-svc's current version is applied;
only the broker's authorization stops that, docs/trust-model.md).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass

__all__ = ["DIGEST", "STORE", "Answer", "Decision", "Held", "config_digest", "decide", "restart_reason", "stamp_of"]

#: Message property: the config store's identity (config-svc's pushes, notices and replies).
STORE = "config-store"
#: Message property: the digest of config-svc's whole config at the version of a reply.
DIGEST = "config-digest"


def config_digest(config: Mapping[str, Mapping[str, str]]) -> str:
    """SHA-256 (hex) of a whole config, the same for config-svc and every processor.

    Canonical JSON (sorted keys, no spaces, ASCII), so it does not depend on
    the order a store or a decoder kept.
    """
    text = json.dumps(config, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(text.encode("ascii")).hexdigest()


def stamp_of(properties: Mapping[str, str]) -> tuple[str | None, str | None]:
    """``(store, digest)`` from a message's properties (None where it has none)."""
    store, digest = properties.get(STORE), properties.get(DIGEST)
    return (store if isinstance(store, str) and store else None,
            digest if isinstance(digest, str) and digest else None)


@dataclass(frozen=True)
class Held:
    """The config a processor holds: its version, digest and store (None until the first)."""

    version: int | None = None
    digest: str | None = None
    store: str | None = None


@dataclass(frozen=True)
class Answer:
    """What config-svc said it holds: version, and (ours only) digest and store."""

    version: int
    digest: str | None = None
    store: str | None = None


@dataclass(frozen=True)
class Decision:
    """What to do with a push: ``apply`` it, ``fetch`` config-svc's config, neither (``ignore``
    or ``superseded``); ``why`` says why for the log (a WARNING for ``ignore``)."""

    action: str
    why: str = ""


def decide(version: int, digest: str, answer: Answer, held: Held) -> Decision:
    """What to do with a push of ``version`` whose config has ``digest``, given config-svc's answer."""
    if version < answer.version:
        return Decision("superseded", f"config-svc is already at version {answer.version}")
    if version > answer.version:
        why = f"config-svc is at version {answer.version}, so it did not send it"
    elif answer.digest is not None and digest != answer.digest:
        why = f"its content is not the config config-svc holds at version {answer.version}, so it did not send it"
    else:
        return Decision("apply")
    holds = (held.version == answer.version and (answer.digest is None or held.digest == answer.digest))
    return Decision("ignore" if holds else "ignore+fetch", why)


def restart_reason(held: Held, version: int, store: str | None) -> str | None:
    """Why config-svc's current ``version`` is behind what we hold (None: it is not)."""
    if held.version is None or version >= held.version:
        return None
    if store is not None and held.store is not None and store != held.store:
        return f"a new config store ({store}, was {held.store})"
    if store is not None and store == held.store:
        return f"store {store} went back from version {held.version} (restored from a backup?)"
    return f"config-svc says its current version is {version}, behind {held.version}"
