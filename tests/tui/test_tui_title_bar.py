"""The title bar: the screen's title and sub-title centred between the icon and the clock's space,
cut with an ellipsis when too long, following title changes; a click on the icon opens the
command palette."""

from __future__ import annotations

from textual.app import App, ComposeResult
from textual.command import CommandPalette
from textual.reactive import reactive
from textual.widgets import Static

from lesson_credit.tui.widgets.title_bar import TitleBar
from tests.support.textual_private import screen_lines


class Titled(App[None]):
    TITLE = "app"

    def compose(self) -> ComposeResult:
        yield TitleBar()
        yield Static("body")


def top_line(app: App[None]) -> str:
    return screen_lines(app)[0].text


async def test_the_title_is_centred_between_the_icon_and_the_clock_space() -> None:
    app = Titled()
    async with app.run_test(size=(40, 5)) as pilot:
        app.screen.title = "Lessons"
        app.screen.sub_title = "demo"
        await pilot.pause()
        # 40 cells: the icon's 8 (" ⭘" and 6 spaces), 22 for "Lessons — demo" (14 cells: 4 spaces
        # before it, 4 after), then the clock's 10
        assert top_line(app) == " ⭘      " + "    Lessons — demo    " + " " * 10


async def test_the_title_follows_the_screen_and_is_cut_with_an_ellipsis() -> None:
    app = Titled()
    async with app.run_test(size=(40, 5)) as pilot:
        await pilot.pause()
        assert top_line(app).strip() == "⭘" + " " * 15 + "app"  # the app's title: 6 + (22 - 3) // 2 spaces
        app.screen.title = "Health · 0 errors, 2 warnings"
        await pilot.pause()
        # 22 cells for 29: 21 of them and "…"
        assert top_line(app) == " ⭘      " + "Health · 0 errors, 2 …" + " " * 10


async def test_a_click_on_the_icon_opens_the_command_palette() -> None:
    app = Titled()
    async with app.run_test(size=(40, 5)) as pilot:
        await pilot.pause()
        await pilot.click(TitleBar, offset=(20, 0))  # on the title: nothing
        await pilot.pause()
        assert not isinstance(app.screen, CommandPalette)
        await pilot.hover(TitleBar, offset=(1, 0))
        await pilot.pause()
        assert app.query_one(TitleBar).tooltip == "Open the command palette"
        await pilot.click(TitleBar, offset=(1, 0))
        await pilot.pause()
        assert isinstance(app.screen, CommandPalette)


class Saving(Titled):
    saving: reactive[str] = reactive("")  # as the dashboard's: writes waiting, said after the sub-title


async def test_writes_waiting_are_said_whole_when_the_title_is_too_long() -> None:
    """At 80 columns the Lessons title and its sub-title take 55 of the 62 cells between the icon and the clock's
    space: on the old code the line read "Lessons · policy joint · 6 never used, listed last — t80 · wa…", the
    writes waiting and ctrl+d cut off. Now the title gives way, and the line takes the clock's space too (but the
    last cell): 71 cells = 27 of the title (26 and "…"; the sub-title goes first) + " · " (3) + the 41 of
    "waiting to save 1 write (ctrl+d discards)"."""
    app = Saving()
    async with app.run_test(size=(80, 5)) as pilot:
        app.screen.title = "Lessons · policy joint · 6 never used, listed last"
        app.screen.sub_title = "t80"
        app.saving = "waiting to save 1 write (ctrl+d discards)"
        await pilot.pause()
        waiting = " · waiting to save 1 write (ctrl+d discards)"
        assert top_line(app) == " ⭘      " + "Lessons · policy joint · 6…" + waiting + " "
        app.saving = ""  # saved: 56 cells of title, centred in the 62 (3 spaces either side)
        await pilot.pause()
        assert top_line(app) == " ⭘      " + "   Lessons · policy joint · 6 never used, listed last — t80   " + " " * 10


class SavingReading(Saving):
    reading: reactive[str] = reactive("")  # as the dashboard's: a long read's progress, said after the writes


async def test_writes_waiting_are_said_whole_during_a_long_read_too() -> None:
    """Writes wait while the log is read again (another program's edit: every block hashed). The writes' 44 cells
    (" · " and "waiting to save 1 write (ctrl+d discards)") and the read's 33 (" · reading the log: 38% of 1.4 GB")
    leave 62 - 77 < 0 for the title, and the old code cut the whole line at 62: "... listed last — t80 · wa…", the
    writes waiting and ctrl+d cut off again. Now the title keeps its least, 8 cells ("Lessons" and "…"), the writes
    are said whole (8 + 44 = 52 cells), and the read has what is left of the 71 (the clock's space too, but the
    last cell): 19, " · reading the log" (18) and "…"."""
    app = SavingReading()
    async with app.run_test(size=(80, 5)) as pilot:
        app.screen.title = "Lessons · policy joint · 6 never used, listed last"
        app.screen.sub_title = "t80"
        app.saving = "waiting to save 1 write (ctrl+d discards)"
        app.reading = "reading the log: 38% of 1.4 GB"
        await pilot.pause()
        waiting = " · waiting to save 1 write (ctrl+d discards)"
        assert top_line(app) == " ⭘      " + "Lessons…" + waiting + " · reading the log…" + " "
        app.reading = ""  # read: as with the writes alone
        await pilot.pause()
        assert top_line(app) == " ⭘      " + "Lessons · policy joint · 6…" + waiting + " "


async def test_a_session_id_is_said_whole_at_80_columns_while_a_write_waits() -> None:
    """A session's screen at 80 columns while a write waits: "Session 2026-10-26-165" (22 cells), " — " and the
    workspace's name (16), and the 44 of " · waiting to save 1 write (ctrl+d discards)" are 82 cells, and the old
    code cut the title to 18 ("Session 2026-10-2…") to fit the 62 cells between the icon and the clock's space.
    Now a line too long for those uses the clock's space too (the clock is never drawn), up to one cell from the
    edge: 71 cells, and the sub-title goes before the title is cut: 22 + 44 = 66, centred in the 71 (2 spaces
    before, 3 after)."""
    app = Saving()
    async with app.run_test(size=(80, 5)) as pilot:
        app.screen.title = "Session 2026-10-26-165"
        app.screen.sub_title = "lesson-credit-12"
        app.saving = "waiting to save 1 write (ctrl+d discards)"
        await pilot.pause()
        waiting = " · waiting to save 1 write (ctrl+d discards)"
        assert top_line(app) == " ⭘      " + "  " + "Session 2026-10-26-165" + waiting + "   " + " "
        app.saving = ""  # saved: the title and sub-title (41 cells) centred in the 62 as before (10 and 11 spaces)
        await pilot.pause()
        assert (
            top_line(app) == " ⭘      " + " " * 10 + "Session 2026-10-26-165 — lesson-credit-12" + " " * 11 + " " * 10
        )


class SavingShort(Saving):
    saving_short: reactive[str] = reactive("")  # as the dashboard's: the writes waiting in fewer words


async def test_a_title_too_long_beside_the_writes_in_fewer_words_is_cut_in_its_middle() -> None:
    """The Lessons title (50 cells) and " · 1 unsaved (^d discards)" (26) are 76 cells, 5 more than the 71: the title
    is cut in its middle to 45 cells (22 of its start, "…", its last 22) and the writes are said in the fewer words.
    The old code cut its end beside the long words: "Lessons · policy joint · 6… · waiting to save 1 write ...";
    a session's id, whose end tells sessions of one day apart, kept its start only."""
    app = SavingShort()
    async with app.run_test(size=(80, 5)) as pilot:
        app.screen.title = "Lessons · policy joint · 6 never used, listed last"
        app.screen.sub_title = "t80"
        app.saving_short = "1 unsaved (^d discards)"
        app.saving = "waiting to save 1 write (ctrl+d discards)"
        await pilot.pause()
        cut = "Lessons · policy joint" + "…" + "ever used, listed last"
        assert top_line(app) == " ⭘      " + cut + " · 1 unsaved (^d discards)" + " "
