"""How a processor of ours follows config under ``--wire 2.11``: notices, then a fetch of one workspace.

Under 2.11 config-svc (ours or upstream's) pushes no config: it sends a
notice naming, per changed type, the workspaces it changed in, on
``notify:tg:config``, and a processor fetches what it needs (trustgraph-base
2.11.1 ``base/async_processor.py``).  :class:`NotifyFollowing`, the 2.11
wire's ``config-following`` component, subscribes to the notices (at Latest,
under a fresh subscription), and its fetch asks for the followed workspace's
config (:data:`~.schema.DEFAULT_WORKSPACE`) with 2.11's ``config``
operation; the follower (:class:`~trustgraph.base.processors.config_follower.ConfigFollower`)
fetches at start and again after each notice that names that workspace for a
type a handler follows, with its own retries and wake-ups, and hands the
handlers the same ``{type: {key: value}}`` they get under 2.1.  A fetched
config is config-svc's own reply, so there is no push to check: a notice
nobody sent costs one fetch.  One fetch takes the whole workspace, so the
handlers see one consistent version (2.11 fetches type by type).
"""

from __future__ import annotations

import logging
import uuid

from trustgraph.base.messaging.pubsub import CONFIG_PUSH_LANE, Message
from trustgraph.base.processors.config_follower import Asked, ConfigFollower

from . import schema as v211

__all__ = ["NotifyFollowing"]

logger = logging.getLogger(__name__)


class NotifyFollowing:
    """2.11's config following (see the module's docstring), for one :class:`ConfigFollower`."""

    def __init__(self, follower: ConfigFollower) -> None:
        self.follower = follower
        #: The workspace whose config the handlers get.
        self.workspace = v211.DEFAULT_WORKSPACE

    async def subscribe(self) -> None:
        """2.11 config-svc's change notices."""
        f = self.follower
        await f.pubsub.consumer(
            v211.CONFIG_NOTIFY, f"{f.id}--config-notify--{uuid.uuid4()}", v211.ConfigPush,
            handler=self._on_notify, initial_position="latest", name="config-notify",
            lane=CONFIG_PUSH_LANE, own=True,
        )

    async def _on_notify(self, msg: Message) -> None:
        """A change notice: fetch the workspace when it names it for a type we follow.

        A notice that names no change (config-svc's when it starts) is fetched
        on too when its version is not the one held: a config-svc with a new
        store starts at its own version, and this is all it says.
        """
        push: v211.ConfigPush = msg.value
        changes = push.changes or {}
        ours = [t for t, workspaces in changes.items() if self.workspace in (workspaces or [])]
        held = self.follower.held_version
        if ours and self.follower.wants(ours):
            logger.debug("Config notice of version %d changes %s: fetching", push.version or 0, ours)
        elif not changes and (push.version or 0) != held:
            logger.debug("Config notice of version %d (held %s): fetching", push.version or 0, held)
        else:
            logger.debug("Config notice of version %d: nothing this processor follows", push.version or 0)
            return
        self.follower.fetch_soon()

    async def fetch_once(self, asked: Asked, timeout: float) -> bool:
        """The followed workspace's config, with 2.11's ``config`` operation on its system config queue."""
        f = self.follower
        client = f.client("config-fetch", request_topic=v211.CONFIG_REQUEST,
                          response_topic=v211.CONFIG_RESPONSE, request_schema=v211.ConfigRequest,
                          response_schema=v211.ConfigResponse)
        try:
            resp = await asked(client.request(
                v211.ConfigRequest(operation="config", workspace=self.workspace), timeout=timeout))
        finally:
            await client.stop()
        if resp is None:
            return False
        if resp.error is not None:
            logger.warning("Config fetch of workspace %s failed: %s", self.workspace, resp.error.message)
            return False
        await f.apply_fetched(resp.config or {}, resp.version or 0, None)
        return True
