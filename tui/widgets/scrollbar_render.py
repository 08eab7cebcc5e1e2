"""Scrollbars of whole cells that read as scrollbars, a column of space between text and a vertical bar.

Textual's scrollbar is a run of cells in the thumb's colour on the track's, with an eighth-cell glyph at the
thumb's ends. With the theme's colours (a dark blue thumb on black) the run hardly shows and the glyph stands
alone: a `▊` under a table or a `▅▅` right after a row's last number read as stray characters. Here the thumb
is whole cells in the theme's primary colour on a track a shade off the widget's own background (the app's
stylesheet makes the scrollbar's background transparent), no glyphs; a vertical bar two cells wide keeps its
left cell blank. Where nothing scrolls (a gutter kept for a bar) the cells stay blank."""

from __future__ import annotations

from rich.color import Color, blend_rgb
from rich.segment import Segment, Segments
from rich.style import Style
from textual.scrollbar import ScrollBarRender

# the app's stylesheet: the bar's cells on the widget's background, the thumb in the theme's primary colour
SCROLLBAR_CSS = (
    "* { scrollbar-background: transparent; scrollbar-background-hover: transparent;"
    " scrollbar-background-active: transparent; scrollbar-color: $primary 80%;"
    " scrollbar-color-hover: $primary; scrollbar-color-active: $accent; }"
)
GREY, MAGENTA = Color.parse("#555555"), Color.parse("bright_magenta")  # Textual's defaults (a bar passes its own)
TRACK_SHARE = 0.3  # the track's colour: this far from the background towards the thumb's


def thumb_cells(size: int, virtual_size: float, window_size: float, position: float) -> tuple[int, int]:
    """(first cell, cells) of the thumb on a track `size` cells long: as long as the share of the content in
    view (one cell at least), at the share of the scroll done; (0, 0) when nothing scrolls."""
    if not (window_size and size and virtual_size) or virtual_size <= window_size:
        return 0, 0
    length = min(size, max(1, round(size * window_size / virtual_size)))
    start = round((size - length) * min(1.0, max(0.0, position / (virtual_size - window_size))))
    return start, length


class WholeCellScrollBarRender(ScrollBarRender):
    """Set as `ScrollBar.renderer` (Textual's hook for drawing scrollbars) by the app."""

    @classmethod
    def render_bar(
        cls,
        size: int = 25,
        virtual_size: float = 50,
        window_size: float = 20,
        position: float = 0,
        thickness: int = 1,
        vertical: bool = True,
        back_color: Color = GREY,
        bar_color: Color = MAGENTA,
    ) -> Segments:
        start, length = thumb_cells(size, virtual_size, window_size, position)
        track_colour = blend_rgb(back_color.get_truecolor(), bar_color.get_truecolor(), TRACK_SHARE)
        back = Style(bgcolor=back_color)
        track = Style(bgcolor=Color.from_triplet(track_colour))
        thumb = Style(bgcolor=bar_color, meta={"@mouse.down": "grab"})
        gap = " " * (thickness - 1) if vertical and thickness > 1 else ""  # the blank column next to the text
        cells: list[list[Segment]] = []
        for at in range(size):
            if not length:  # nothing to scroll (a gutter kept for a bar): blank, as Textual draws it
                cell = Segment(" ", back)
            elif start <= at < start + length:
                cell = Segment(" ", thumb)
            else:
                cell = Segment(" ", track + Style(meta={"@mouse.down": "scroll_up" if at < start else "scroll_down"}))
            cells.append([Segment(gap, back), cell] if gap else [cell])
        if vertical:
            return Segments([segment for row in cells for segment in (*row, Segment.line())][:-1])
        line = [segment for row in cells for segment in row]
        return Segments((line + [Segment.line()]) * thickness)
