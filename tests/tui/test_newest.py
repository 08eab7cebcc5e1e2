"""tui/newest.py: results shown in the order their reads started, whatever order they land in."""

from __future__ import annotations

from lesson_credit.tui.newest import Newest


def test_a_result_is_shown_unless_a_read_started_after_it_was_shown() -> None:
    newest = Newest()
    first, second, third = newest.start(), newest.start(), newest.start()
    assert newest.shows("view", first)  # landed first: shown, though two reads started after it
    assert newest.shows("view", third)
    assert not newest.shows("view", second)  # landed after the third's: older than what is shown
    assert newest.shows("other", second)  # another kind of result keeps its own order


def test_reads_started_in_many_threads_get_different_numbers() -> None:
    import threading

    newest, taken = Newest(), []
    lock = threading.Lock()

    def take() -> None:
        numbers = [newest.start() for _ in range(1000)]
        with lock:
            taken.extend(numbers)

    threads = [threading.Thread(target=take) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(taken) == list(range(4000))


def test_a_superseded_read_is_told_without_moving_the_mark() -> None:
    """A failure is not said once a later read's result is shown; asking does not count as showing."""
    newest = Newest()
    first, second, third = newest.start(), newest.start(), newest.start()
    assert not newest.superseded("view", second)  # nothing shown yet
    assert newest.shows("view", third)
    assert newest.superseded("view", first) and newest.superseded("view", second)
    assert not newest.superseded("view", third) and not newest.superseded("other", first)
    assert not newest.shows("view", second)  # still older than the third, whatever was asked
