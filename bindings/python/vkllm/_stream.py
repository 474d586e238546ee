"""A call that streams through a callback, run on a worker thread and read as a generator:
Session.generate and Conversation.reply(stream=True) are both this."""

import queue
import threading

from .constants import ERR_CANCELLED, OK
from .errors import Error
from ._lib import lib


class Stream:
    """The queue between the library's callback, on the worker thread, and the reader. The
    callbacks give what they receive to put() and return what it returns: 1 (stop) once the
    reader has gone away."""

    def __init__(self):
        self._items = queue.Queue(maxsize=4)  # back-pressure: the worker waits for the reader
        self._cancel = threading.Event()
        self._done = object()

    def put(self, item):
        if self._cancel.is_set():
            return 1
        if item is not None:
            self._items.put(item)
        return self.stopping()

    def stopping(self):
        return 1 if self._cancel.is_set() else 0

    def run(self, session, call, finished, name):
        """Yields what the callbacks put while call() (the C function; it returns its status)
        runs on a worker thread. The session is busy meanwhile; finished() runs when the call
        has returned, even when the reader stops early (which cancels the call). A failure
        raises vkllm.Error from the iteration; a cancel, asked here or by Session.cancel(),
        does not."""
        outcome = {}

        def work():
            outcome["code"] = call()
            # The message is thread-local: read it on this thread.
            outcome["message"] = lib.vkllm_last_error().decode(errors="replace")
            self._items.put(self._done)

        session._busy = True
        session._cancel_asked = False
        worker = threading.Thread(target=work, name=name, daemon=True)
        worker.start()
        complete = False
        try:
            while True:
                item = self._items.get()
                if item is self._done:
                    complete = True
                    break
                yield item
        finally:
            if not complete:
                self._cancel.set()
                while self._items.get() is not self._done:  # unblock a worker on a full queue
                    pass
            worker.join()
            session._busy = False
            finished()
        code = outcome["code"]
        asked = self._cancel.is_set() or session._cancel_asked
        if code != OK and not (code == ERR_CANCELLED and asked):
            raise Error(code, outcome["message"])
