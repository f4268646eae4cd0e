"""Reports of a finished run: tidy CSV, summary.md, LaTeX tables, plots."""

from __future__ import annotations

import re
import warnings
from contextlib import nullcontext
from pathlib import Path
from typing import Any

import pandas as pd

from core.arm import Arm
from studies.config import StudyConfig
from studies.discretizations import Case, normalize_columns
from studies.tables import latex_table, markdown_table
from studies.text import counted, file_stem, warned_by

#: Sort keys of the tidy results table (those present are used).
ORDER = ["case", "mode", "check"]
#: A figure's PDF link in a kind's text: `` ([PDF](name.pdf))``.
PDF_LINK = re.compile(r" \(\[PDF\]\(([^()\s]+)\)\)")


def _figures(config: StudyConfig):
    """The context the kind's figures are drawn in: PDFs beside the PNGs as ``report.pdf``
    says (matplotlib loaded only when the config asks for plots)."""
    if not config.report.plots:
        return nullcontext()
    from studies.plots import pdf_output

    return pdf_output(config.report.pdf)


def without_missing_pdfs(text: str, folder: Path) -> str:
    """``text`` without the PDF links (:data:`PDF_LINK`) whose file is not in ``folder``
    (PNG-only reports: the config's ``report.pdf`` off)."""
    return PDF_LINK.sub(lambda link: link.group(0) if (folder / link.group(1)).exists() else "", text)


def write_reports(
    folder: Path,
    config: StudyConfig,
    kind,
    analysis,
    arm: Arm,
    results: pd.DataFrame,
    failed: list[dict[str, Any]],
    cases: list[Case],
    wall_times: dict[int, float] | None = None,
    raised: dict[str, list[int]] | None = None,
) -> None:
    """Write results.csv, the kind's tables (CSV, LaTeX), plots and summary.md.

    ``wall_times`` (case number → seconds) gives summary.md's cost table; it
    stays out of the CSVs, which depend only on the config. ``raised`` (warning
    text → case numbers) becomes summary.md's warnings section, before any result
    table, so an assumption violated or an unstable configuration is seen first.
    """
    formats = set(config.report.formats)
    raised = {} if raised is None else raised
    if not results.empty:
        # a kind's study-wide checks (finalize) warn for the study, not for a case
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            results = kind.finalize(results, arm, analysis)
        for warning in caught:
            raised.setdefault(f"{warning.category.__name__}: {warning.message}", [])
    lines = [
        f"# {config.study.name}",
        "",
        f"Study kind `{config.study.kind}`; arm: "
        + (f"preset `{config.arm.preset}`" if config.arm.preset else f"inline, {arm.n_links} links")
        + f"; {counted(len(cases), 'case')}, {len(cases) - len(failed)} succeeded, {len(failed)} failed.",
        "",
    ]
    if raised:
        lines += ["## Warnings", ""]
        lines += [f"- {text} ({warned_by(numbers)})" for text, numbers in raised.items()]
        lines += [""]
    if not results.empty:
        results = results.sort_values([c for c in ORDER if c in results.columns], kind="stable")
        kind.stored(results).to_csv(folder / "results.csv", index=False)
        with _figures(config):
            texts = kind.report(results, arm, analysis, folder, config.report.plots)
        for text in texts:
            lines += [text, ""]
        for title, table in kind.tables(results, arm, analysis).items():
            stem = file_stem(title)
            if "csv" in formats:
                table.to_csv(folder / f"{stem}.csv", index=False)
            if "latex" in formats:
                (folder / f"{stem}.tex").write_text(latex_table(table, title))
            lines += [f"## {title}", "", markdown_table(table), ""]
    if wall_times:
        costs = normalize_columns(
            pd.DataFrame(
                [
                    {**c.columns(), "wall_time_s": wall_times[c.number]}
                    for c in cases
                    if c.number in wall_times
                ]
            )
        )
        lines += ["## wall time per case", "", markdown_table(kind.cost(costs, analysis)), ""]
        if not results.empty:
            with _figures(config):
                text, tables = kind.cost_report(results, costs, analysis, folder, config.report.plots)
            for paragraph in text:
                lines += [paragraph, ""]
            for title, table in tables.items():
                if "csv" in formats:
                    table.to_csv(folder / f"{file_stem(title)}.csv", index=False)
                lines += [f"## {title}", "", markdown_table(table), ""]
    if failed:
        failures = normalize_columns(pd.DataFrame(failed))
        failures.to_csv(folder / "failures.csv", index=False)
        lines += ["## Failed cases", "", markdown_table(failures), ""]
    if "markdown" in formats:
        (folder / "summary.md").write_text(without_missing_pdfs("\n".join(lines), folder))
