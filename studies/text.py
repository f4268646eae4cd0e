"""Small phrases of the CLI and the reports (no heavy imports: ``flexlink show`` uses them)."""

from __future__ import annotations

import re


def warned_by(numbers: list[int]) -> str:
    """The cases that raised a warning: ``case 3``, ``cases 1, 4`` or ``study`` (the study as a whole)."""
    if not numbers:
        return "study"
    return f"case{'s' if len(numbers) > 1 else ''} {', '.join(map(str, numbers))}"


def counted(number: int, noun: str) -> str:
    """ "1 case", "3 cases"."""
    return f"{number} {noun}{'' if number == 1 else 's'}"


def pipe_table(header, rows) -> str:
    """A Markdown pipe table of strings; "|" inside cells is escaped so it cannot break the columns."""

    def line(cells) -> str:
        return "| " + " | ".join(str(c).replace("|", "\\|") for c in cells) + " |"

    return "\n".join([line(header), "|" + "---|" * len(header), *(line(row) for row in rows)])


#: Values longer than this are cut in messages (a pasted megabyte is not echoed back).
SHOWN_CHARACTERS = 80


def shown(value: object) -> str:
    """``repr(value)``, cut to :data:`SHOWN_CHARACTERS` with the full length said."""
    text = repr(value)
    if len(text) <= SHOWN_CHARACTERS:
        return text
    return f"{text[:SHOWN_CHARACTERS]}… ({len(text)} characters)"


def file_stem(title: str) -> str:
    """The file name of a table titled ``title``: the title without its unit (`` [m]``), every
    run of characters other than ASCII letters, digits, ``.``, ``_`` and ``-`` one ``_``
    ("fitted exponents (time ∝ links^p)" → ``fitted_exponents_time_links_p``): names every file
    system, shell and LaTeX ``\\input`` take as they are."""
    stem = re.sub(r"[^A-Za-z0-9._-]+", "_", title.split(" [")[0]).strip("_")
    return stem or "table"
