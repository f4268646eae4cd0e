"""Plain Markdown and LaTeX tables from DataFrames (no extra dependencies)."""

from __future__ import annotations

import math

import pandas as pd

from studies.text import pipe_table


def _cell(value) -> str:
    if value is None or value is pd.NA:
        return ""
    if isinstance(value, float):
        if math.isnan(value):
            return "–"
        return f"{value:.6g}"
    return str(value)


def markdown_table(frame: pd.DataFrame) -> str:
    """A pipe table of ``frame`` (:func:`studies.text.pipe_table`)."""
    return pipe_table(frame.columns, ([_cell(v) for v in row] for row in frame.itertuples(index=False)))


def latex_table(frame: pd.DataFrame, caption: str) -> str:
    def escape(text: str) -> str:
        for char in ("\\", "&", "%", "$", "#", "_", "{", "}"):
            text = text.replace(char, "\\" + char)
        return text

    columns = "l" * len(frame.columns)
    lines = [
        "\\begin{table}[ht]",
        "\\centering",
        f"\\caption{{{escape(caption)}}}",
        f"\\begin{{tabular}}{{{columns}}}",
        "\\hline",
        " & ".join(escape(str(c)) for c in frame.columns) + " \\\\",
        "\\hline",
    ]
    lines += [" & ".join(escape(_cell(v)) for v in row) + " \\\\" for row in frame.itertuples(index=False)]
    lines += ["\\hline", "\\end{tabular}", "\\end{table}"]
    return "\n".join(lines) + "\n"
