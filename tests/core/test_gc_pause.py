"""gc_paused: no cyclic collection inside the block, and the collector's state before it restored."""

from __future__ import annotations

import gc

import pytest

from lesson_credit.core.base.gc_pause import gc_paused


@pytest.mark.parametrize("enabled_before", [True, False])
def test_the_collector_is_off_inside_and_as_before_after(enabled_before: bool) -> None:
    was = gc.isenabled()
    try:
        (gc.enable if enabled_before else gc.disable)()
        with gc_paused():
            assert not gc.isenabled()
        assert gc.isenabled() is enabled_before
        with pytest.raises(RuntimeError), gc_paused():
            raise RuntimeError("an error inside the block")
        assert gc.isenabled() is enabled_before
    finally:
        (gc.enable if was else gc.disable)()
