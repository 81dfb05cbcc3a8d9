"""Watch over HTTP: the store's events for one collection, streamed as newline-delimited
`{"type": ..., "object": ...}` JSON until the client leaves, the timeout passes or the
server stops.

A store watch blocks its reader, so a small thread per watch hands its events to the
event loop. The store applies the selectors, as the API server's cacher does: an object
that stops matching is sent as DELETED, one that starts matching as ADDED.

Nothing here grows with a client that does not read: the thread hands over no more than
RELAY_BUFFER events ahead of what was sent, and each send is of at most about CHUNK
bytes; so the store's watch fills instead, and the store ends it once its buffer is full
(see store/core.py). The client gets what was held, then the end of the stream, and
watches again from the last resourceVersion it saw, as client-go's reflector does.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

from fleetwarden.api.errors import Expired
from fleetwarden.api.kinds import KindInfo
from fleetwarden.store.interface import Obj, Store, Watch, WatchEvent

Send = Callable[[Mapping[str, Any]], Awaitable[None]]
Receive = Callable[[], Awaitable[Mapping[str, Any]]]
Encode = Callable[[Any], bytes]
Render = Callable[[Obj], Any]

# kube-apiserver's --min-request-timeout: a watch without timeoutSeconds ends after this.
DEFAULT_TIMEOUT = 1800.0
# Events handed to the event loop but not yet sent, at most.
RELAY_BUFFER = 256
# Events are sent together while they are fewer bytes than this.
CHUNK = 256 * 1024


@dataclass(frozen=True)
class WatchOptions:
    resource_version: str | None = None
    label_selector: str | None = None
    field_selector: str | None = None
    timeout: float | None = None
    bookmarks: bool = False


class WatchSession:
    """One client's watch, opened (blocking: call it off the event loop) and then streamed."""

    def __init__(
        self, store: Store, info: KindInfo, namespace: str | None, options: WatchOptions
    ) -> None:
        self.info, self.options = info, options
        self.expired: Expired | None = None
        self.watch: Watch | None = None
        rv = options.resource_version
        if rv in (None, "", "0"):
            # Read before the watch opens, so no event at or below it is still to come.
            self.last_rv = store.resource_version
            self.watch = self._open(store, namespace, "0")
            return
        assert rv is not None
        try:
            self.watch = self._open(store, namespace, rv)
        except Expired as exc:
            self.expired = exc
        self.last_rv = int(rv) if rv.isdigit() else 0

    def _open(self, store: Store, namespace: str | None, rv: str) -> Watch:
        """The store's watch; a selector it refuses is a 400 before any event."""
        return store.watch(
            self.info,
            namespace,
            rv,
            label_selector=self.options.label_selector,
            field_selector=self.options.field_selector,
        )

    def close(self) -> None:
        """Thread-safe: ends the stream (its pump thread lets the last events through)."""
        if self.watch is not None:
            self.watch.close()

    async def stream(
        self, send: Send, receive: Receive, encode: Encode, render: Render, interval: float
    ) -> None:
        """Send the events as the body of a 200 response whose headers are sent already."""
        if self.expired is not None or self.watch is None:
            error = self.expired or Expired("watch closed")
            await _chunk(send, encode({"type": "ERROR", "object": error.status()}))
            return
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[WatchEvent | None] = asyncio.Queue()
        room = threading.Semaphore(RELAY_BUFFER)  # taken per event handed over, given back sent
        pump = _start_pump(self.watch, loop, queue, room)
        listener = asyncio.ensure_future(_until_disconnect(receive, queue))
        try:
            await self._relay(send, queue, room, encode, render, interval)
        finally:
            self.watch.close()
            pump.set()
            room.release()  # a pump waiting for room wakes, and stops
            listener.cancel()

    async def _relay(
        self,
        send: Send,
        queue: asyncio.Queue[WatchEvent | None],
        room: threading.Semaphore,
        encode: Encode,
        render: Render,
        interval: float,
    ) -> None:
        loop = asyncio.get_running_loop()
        timeout = self.options.timeout if self.options.timeout is not None else DEFAULT_TIMEOUT
        deadline = loop.time() + timeout
        bookmark_at = loop.time() + interval
        while (now := loop.time()) < deadline:
            wait = min(deadline, bookmark_at) - now if self.options.bookmarks else deadline - now
            try:
                first = await asyncio.wait_for(queue.get(), max(wait, 0))
            except TimeoutError:
                if self.options.bookmarks and loop.time() >= bookmark_at:
                    await _chunk(send, encode(self._bookmark()))
                    bookmark_at = loop.time() + interval
                continue
            body, ended = self._batch(first, queue, room, encode, render)
            await _chunk(send, body)
            if ended:
                return

    def _batch(
        self,
        first: WatchEvent | None,
        queue: asyncio.Queue[WatchEvent | None],
        room: threading.Semaphore,
        encode: Encode,
        render: Render,
    ) -> tuple[bytes, bool]:
        """The lines of `first` and of the events queued after it, up to about CHUNK
        bytes (each taken gives its room back); and whether the stream ends with them."""
        event, lines, size = first, [], 0
        while event is not None:
            room.release()
            lines.append(line := self._line(event, encode, render))
            size += len(line)
            if size >= CHUNK or queue.empty():
                break
            event = queue.get_nowait()
        return b"".join(lines), event is None

    def _line(self, event: WatchEvent, encode: Encode, render: Render) -> bytes:
        self.last_rv = max(self.last_rv, event.resource_version)
        return encode({"type": event.type.value, "object": render(event.object)})

    def _bookmark(self) -> dict[str, Any]:
        obj = {
            "kind": self.info.kind,
            "apiVersion": self.info.api_version,
            "metadata": {"resourceVersion": str(self.last_rv)},
        }
        return {"type": "BOOKMARK", "object": obj}


def _start_pump(
    watch: Watch,
    loop: asyncio.AbstractEventLoop,
    queue: asyncio.Queue[WatchEvent | None],
    room: threading.Semaphore,
) -> threading.Event:
    """Hand the watch's events to the loop, each once there is room; set the event
    returned (and give room) to stop it."""
    stopped = threading.Event()

    def pump() -> None:
        with contextlib.suppress(RuntimeError):  # the event loop is gone: nobody is left
            for event in watch:
                room.acquire()
                if stopped.is_set():
                    return
                loop.call_soon_threadsafe(queue.put_nowait, event)
            loop.call_soon_threadsafe(queue.put_nowait, None)

    threading.Thread(target=pump, name="fleetwarden-watch", daemon=True).start()
    return stopped


async def _until_disconnect(receive: Receive, queue: asyncio.Queue[WatchEvent | None]) -> None:
    while (await receive())["type"] != "http.disconnect":
        continue
    queue.put_nowait(None)


async def _chunk(send: Send, body: bytes) -> None:
    if body:
        await send({"type": "http.response.body", "body": body, "more_body": True})
