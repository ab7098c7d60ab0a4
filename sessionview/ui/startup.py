"""Until the first screen: the cyclic garbage collector waits.

Starting the app allocates tens of thousands of long-lived objects (modules, classes, Textual's style rules,
the widgets), and the collector walks all of them once they are that many: a full collection of 20–30 ms
lands in the middle of the first frame, on top of the younger ones, and frees next to nothing. ``sessionview
FILE`` holds the collector (:func:`hold_collector`, before it imports the app) and the app releases it once
its first frame is written (:func:`release_collector`), or when it ends. Textual itself does the same while
it scrolls (``App.PAUSE_GC_ON_SCROLL``). Only a hold taken here is released here: a collector someone else
turned off stays off.
"""

from __future__ import annotations

import gc

_held = False


def hold_collector() -> None:
    """Turn the cyclic collector off until :func:`release_collector` (nothing if it is off already)."""
    global _held
    if gc.isenabled():
        gc.disable()
        _held = True


def release_collector() -> None:
    """Turn the collector on again if :func:`hold_collector` turned it off (any number of calls)."""
    global _held
    if _held:
        _held = False
        gc.enable()


def held() -> bool:
    return _held
