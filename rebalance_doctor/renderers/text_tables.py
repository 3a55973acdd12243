"""Terminal text drawn as plain painted strings: a console's style codes rendered once (:class:`Palette`),
columns fitted to the screen, and ruled tables whose wide cells fold. Printing rich objects line by
line is most of the time on large outputs; joining painted strings is not."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

import polars as pl
from rich.cells import cell_len
from rich.console import Console
from rich.text import Text

from .words import visible

GAP = "  "
_SENTINEL = "\ue000"  # a private-use character no style code contains
WRITE_CHUNK_ROWS = 10_000


class Palette:
    """The ANSI codes of a console's styles, rendered once per style by the console itself (so
    ``NO_COLOR``, ``--color`` and pipes are honoured): event lines are then joined as plain strings,
    much faster than printing rich objects line by line."""

    def __init__(self, console: Console):
        self._console = console
        self._codes: dict[str, tuple[str, str]] = {}

    def codes(self, style: str) -> tuple[str, str]:
        if style not in self._codes:
            with self._console.capture() as capture:
                self._console.print(Text(_SENTINEL, style=style), end="")
            before, _, after = capture.get().partition(_SENTINEL)
            self._codes[style] = before, after
        return self._codes[style]

    def paint(self, text: str, style: str) -> str:
        before, after = self.codes(style)
        return f"{before}{text}{after}"

    def by_value(self, column: pl.Series, style_of: Callable[[str], str]) -> dict[str, str]:
        """Each distinct value of a low-cardinality column (nodes, kinds) made visible and painted in its style."""
        return {value: self.paint(visible(value), style_of(value)) for value in column.drop_nulls().unique()}


def write_lines(lines: Sequence[str], console: Console) -> None:
    """Lines to the console's stream, a chunk at a time (one large string would double the memory)."""
    for start in range(0, len(lines), WRITE_CHUNK_ROWS):
        console.file.write("".join(f"{line}\n" for line in lines[start : start + WRITE_CHUNK_ROWS]))
    console.file.flush()


def fit_widths(natural: list[int], available: int | None, foldable: list[bool], minimum: int = 8) -> list[int]:
    """Column widths that fit ``available`` cells: the widest foldable columns give way first (down to
    ``minimum``), like rich's tables; their cells fold onto more lines. Short fixed columns (time,
    kind) are never cut."""
    if available is None or sum(natural) <= available:
        return natural
    fixed = sum(w for w, fold in zip(natural, foldable, strict=True) if not fold)
    cap = max(natural)
    while cap > minimum and fixed + sum(min(w, cap) for w, fold in zip(natural, foldable, strict=True) if fold) > available:
        cap -= 1
    return [min(w, cap) if fold else w for w, fold in zip(natural, foldable, strict=True)]


def fold(text: str, width: int) -> list[str]:
    """A cell cut into pieces of at most ``width`` cells."""
    pieces, piece, used = [], [], 0
    for char in text:
        size = cell_len(char)
        if used + size > width and piece:
            pieces.append("".join(piece))
            piece, used = [], 0
        piece.append(char)
        used += size
    return [*pieces, "".join(piece)]


def fold_row(texts: Sequence[str], widths: Sequence[int]) -> list[list[str]]:
    """A row with cells wider than their columns, as the lines of pieces it folds into ('' where a cell has ended)."""
    folded = [fold(text, width) for text, width in zip(texts, widths, strict=True)]
    return [[pieces[depth] if depth < len(pieces) else "" for pieces in folded] for depth in range(max(map(len, folded)))]


Cell = tuple[str, str]  # text, style


def cell_width(text: str) -> int:
    """Terminal cells a text takes (``len`` for ASCII, faster than rich's ``cell_len``)."""
    return len(text) if text.isascii() else cell_len(text)


def ruled_table(headers: Sequence[tuple[str, str]], rows: Sequence[Sequence[Cell]], width: int, foldable: list[bool],
                palette: Palette) -> list[str]:
    """Columns (header, "left" or "right") under a heavy rule, separated by │ (the look of rich's Table
    without edges), as painted lines to write: rich measured, wrapped and rendered every cell,
    too slowly for a storm's rebalances. Cells wider than their share of
    ``width`` fold onto the following lines, as in the events table."""
    sizes = [[cell_width(text) for text, _ in row] for row in rows]
    natural = [max([cell_width(header), *(row[index] for row in sizes)]) for index, (header, _) in enumerate(headers)]
    widths = fit_widths(natural, width - 3 * (len(natural) - 1), foldable)
    right = [side == "right" for _, side in headers]

    def line(cells: Iterable[Cell], cell_sizes: Iterable[int], separator: str) -> str:
        pieces = []
        for index, ((text, style), size) in enumerate(zip(cells, cell_sizes, strict=True)):
            pad = " " * (widths[index] - size)
            shown = palette.paint(text, style) if style and text else text
            pieces.append(pad + shown if right[index] else shown + pad)
        return separator.join(pieces)

    lines = [line(((header, "bold") for header, _ in headers), [cell_width(header) for header, _ in headers], " ┃ ")]
    lines.append("╇".join("━" * (size + 2 - (index in (0, len(widths) - 1))) for index, size in enumerate(widths)))
    for row, row_sizes in zip(rows, sizes, strict=True):
        if all(size <= column for size, column in zip(row_sizes, widths, strict=True)):
            lines.append(line(row, row_sizes, " │ "))
            continue
        for pieces in fold_row([text for text, _ in row], widths):
            lines.append(line([(piece, style) for piece, (_, style) in zip(pieces, row, strict=True)], map(cell_width, pieces), " │ "))
    return lines
