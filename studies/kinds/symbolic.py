"""``symbolic``: the equations of motion of the configured arm, derived, exported and checked.

For every assumed-modes case of the sweep (shape family and modes per flexible
link), :func:`amm.symbolic.derive` derives M, C, K, D, G and B of the arm with
physical parameters and modal constants as named symbols or as numbers
(``parameters``, ``constants``), and the generated numeric model
(:meth:`~amm.symbolic.SymbolicEOM.to_numeric`, lambdified numpy code with
common subexpressions shared) is compared with the engine's model of the same
arm and discretization:

* on ``check_states`` random states (joint angles uniform in ±π, free lengths of
  translating links uniform in a quarter to all of the beam, flexible
  coordinates of standard deviation ``flex_scale``, rates and joint inputs
  standard normal), the largest relative difference max|generated − engine| /
  max|engine| over the states of M, ∂M/∂q, C, h = C q̇ (against the engine's
  compiled Newton–Euler pass, which never forms ∂M/∂q), G, ∂G/∂q, K, D, B, joint
  friction, forward dynamics (against the engine's composite and recursive
  solvers), tip position and potential energy;
* at ``configuration`` (default ``Arm.home()``; flexible coordinates zero):
  the locked frequencies √eig(M_ff⁻¹ K_ff) and the zero dynamics with the
  joint coordinates as outputs (:func:`core.analysis.linear.zero_dynamics`), each
  generated zero paired with the nearest engine zero.

A difference above ``tolerance`` is a warning of the case. The cost rows give
the derivation and numeric-build wall times, the operation counts of M, C and
G (``sympy.count_ops`` of the derived entries, before common-subexpression
elimination) and, with ``budget`` > 0, the median time of one evaluation of M
and of one forward-dynamics call (generated: M, h = C q̇ and G from one call of
the generated code and a dense solve; engine: its compiled ``mass_matrix`` and the
``"recursive"`` solver) at fresh random states.

The report re-derives each case (the same deterministic derivation) to write
``equations_<case>.tex`` (``latex``: one ``align`` block per matrix and the
definitions of the symbols, a fragment for ``\\input`` that needs ``amsmath``)
and ``eom_<case>.py`` (``module``: a standalone numpy module, see
:meth:`~amm.symbolic.SymbolicEOM.to_python`), and previews M in summary.md.
Planar and spatial arms of revolute joints (rigid and flexible links, hubs,
motors, lumped masses, payloads), and prismatic joints carrying a translating
flexible link, with frozen shapes (``clamped-free``, ``clamped-mass``) or shapes
that follow the free length (``beta-ode``: their modal integrals are functions of
it, evaluated by the engine's series, so such a case writes no numpy module); an
all-rigid arm needs no shapes. Refused when the config is validated: a prismatic
joint carrying a rigid link, structural damping on a translating link, FEM cases
(the equations are those of assumed modes).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

import numpy as np
from pydantic import Field, NonNegativeInt

from core.dynamics.model import Model
from studies.discretizations import Discretization, case_keys, label_of
from studies.kinds.base import AtConfiguration, StudyKind, caution, lightest_by_backend
from studies.limits import AtMost, Deflection, Span, Tolerance, work_count

if TYPE_CHECKING:  # validating a config needs no pandas
    import pandas as pd

#: Quantities compared with the engine on random states, in table order.
AGREEMENT = (
    "M",
    "dM/dq",
    "C",
    "h = C qd",
    "G",
    "dG/dq",
    "K",
    "D",
    "B",
    "friction",
    "forward dynamics (composite)",
    "forward dynamics (recursive)",
    "tip position",
    "potential energy",
)
#: Cost quantities: wall times [s], operation counts and evaluation times [µs].
COST = (
    "derive_s",
    "numeric_s",
    "operations_M",
    "operations_C",
    "operations_G",
    "mass_matrix_us",
    "forward_dynamics_us",
)
#: The cost quantities that are measured times (kept out of results.csv).
TIMED = ("derive_s", "numeric_s", "mass_matrix_us", "forward_dynamics_us")


#: Free lengths of the random states, as fractions of the translating link's beam length (inside
#: the range the engine fits its length-following integrals over, a tenth of the beam to all of it).
FREE_LENGTHS = (0.25, 1.0)

#: How the symbolic equations carry a kind of quantity: named symbols or numbers.
SymbolsOrNumbers = Literal["symbols", "numeric"]


def _named(description: str) -> Any:
    """A :data:`SymbolsOrNumbers` field, named symbols by default."""
    return Field("symbols", description=description)


class SymbolicAnalysis(AtConfiguration):
    """``[analysis]`` of the symbolic kind; ``configuration`` is where the locked frequencies and
    the zero dynamics of the generated and the engine's models are compared."""

    parameters: SymbolsOrNumbers = _named(
        "Physical parameters (lengths, masses, EI, hub and payload inertias, gravity) as named symbols "
        "with their numbers listed in the definitions (symbols), or as numbers (numeric)."
    )
    constants: SymbolsOrNumbers = _named(
        "Modal constants (integrals, end values and slopes of the shape functions) as named symbols "
        "(symbols) or as the numbers of the shape family (numeric)."
    )
    latex: bool = Field(
        True, description="Write equations_<case>.tex: M, C, K, D, G, B and the symbol definitions."
    )
    module: bool = Field(
        True,
        description="Write eom_<case>.py: a standalone numpy module of the equations (common "
        "subexpressions shared).",
    )
    preview_characters: Annotated[
        NonNegativeInt, AtMost(1_000_000, "a megabyte of LaTeX in summary.md is no preview")
    ] = Field(
        400,
        description="Entries of M whose LaTeX is at most this long are shown in summary.md, longer ones "
        "by their length; 0: no preview.",
    )
    check_states: work_count(
        100_000,
        "the generated and the engine's model evaluated at each, days of work",
        soft=1_000,
        soft_why="the generated and the engine's model evaluated at each state",
    ) = Field(5, description="Random states on which the generated model is compared with the engine.")
    flex_scale: Deflection = Field(
        0.05, description="Standard deviation of the random flexible coordinates [m]."
    )
    seed: NonNegativeInt = Field(0, description="Seed of the random states (and of the timed states).")
    tolerance: Tolerance = Field(
        1e-9,
        description="Largest relative difference from the engine counted as agreement; a larger one is "
        "a warning of the case.",
    )
    operations: bool = Field(
        True,
        description="Count the operations of M, C and G (sympy.count_ops; the count of C grows fastest: "
        "8 s for four flexible links with 2 modes each, whose derivation takes 0.9 s).",
    )
    budget: Span = Field(
        0.2,
        description="Time for timing each evaluation (generated and engine M, forward dynamics): at "
        "least 5 calls, at most 400; 0: evaluations are not timed [s].",
    )


def _relative(difference: float, scale: float) -> float:
    """difference / scale, or the difference itself where the engine's value is exactly 0."""
    return difference / scale if scale > 0 else difference


def random_state(model: Model, rng: np.random.Generator, flex_scale: float):
    """(q, q̇, τ): joint angles uniform in ±π, the free length of each translating link uniform in
    :data:`FREE_LENGTHS` of its beam, flexible coordinates N(0, flex_scale²), rates and joint
    inputs standard normal."""
    q = np.concatenate(
        [
            rng.uniform(-np.pi, np.pi, model.n_joints),
            flex_scale * rng.standard_normal(model.n_dof - model.n_joints),
        ]
    )
    for number in model.arm.translating_links:
        q[number - 1] = rng.uniform(*FREE_LENGTHS) * model.arm.links[number - 1].length
    return q, rng.standard_normal(model.n_dof), rng.standard_normal(model.n_joints)


def agreement(generated: Model, engine: Model, states) -> dict[str, tuple[float, float, float]]:
    """Quantity → (max|generated|, max|engine|, max|generated − engine| / max|engine|) over ``states``.

    ``states`` is an iterable of (q, q̇, τ); the quantities are :data:`AGREEMENT`. Where the
    engine's value is exactly 0 in every state (no gravity, no damping) the absolute
    difference is reported.
    """
    if generated.coordinates != engine.coordinates:
        raise ValueError(
            f"coordinates differ: generated {generated.coordinates}, engine {engine.coordinates}"
        )
    peaks = {name: [0.0, 0.0, 0.0] for name in AGREEMENT}
    for q, qd, tau in states:
        pairs = {
            "M": (generated.mass_matrix(q), engine.mass_matrix(q)),
            "dM/dq": (generated.mass_matrix_derivatives(q), engine.mass_matrix_derivatives(q)),
            "C": (generated.coriolis_matrix(q, qd), engine.coriolis_matrix(q, qd)),
            "h = C qd": (generated.coriolis_matrix(q, qd) @ qd, engine.bias_forces(q, qd)),
            "G": (generated.gravity_forces(q), engine.gravity_forces(q)),
            "dG/dq": (generated.gravity_stiffness(q), engine.gravity_stiffness(q)),
            "K": (generated.stiffness_matrix(q), engine.stiffness_matrix(q)),
            "D": (generated.damping_matrix(q), engine.damping_matrix(q)),
            "B": (generated.input_matrix(q), engine.input_matrix(q)),
            "friction": (generated.friction_forces(q, qd), engine.friction_forces(q, qd)),
            "forward dynamics (composite)": (
                generated.forward_dynamics(q, qd, tau),
                engine.forward_dynamics(q, qd, tau, solver="composite"),
            ),
            "forward dynamics (recursive)": (
                generated.forward_dynamics(q, qd, tau),
                engine.forward_dynamics(q, qd, tau, solver="recursive"),
            ),
            "tip position": (generated.tip_position(q), engine.tip_position(q)),
            "potential energy": ([generated.potential_energy(q)], [engine.potential_energy(q)]),
        }
        for name, (ours, theirs) in pairs.items():
            ours, theirs = np.asarray(ours, dtype=float), np.asarray(theirs, dtype=float)
            peak = peaks[name]
            peak[0] = max(peak[0], float(np.max(np.abs(ours), initial=0.0)))
            peak[1] = max(peak[1], float(np.max(np.abs(theirs), initial=0.0)))
            peak[2] = max(peak[2], float(np.max(np.abs(ours - theirs), initial=0.0)))
    return {name: (g, e, _relative(d, e)) for name, (g, e, d) in peaks.items()}


def locked_frequencies(model: Model, q) -> np.ndarray:
    """√eig(M_ff⁻¹ K_ff) at q, ascending [rad/s]: the symmetric pencil of the flexible blocks
    of M and K (no gravity stiffness; for clamped frames the locked natural frequencies)."""
    import scipy.linalg

    f = model.flex
    eigenvalues = scipy.linalg.eigh(
        model.stiffness_matrix(q)[f, f], model.mass_matrix(q)[f, f], eigvals_only=True
    )
    return np.sign(eigenvalues) * np.sqrt(np.abs(eigenvalues))


def paired(ours: np.ndarray, theirs: np.ndarray) -> np.ndarray:
    """The entries of ``theirs`` reordered to pair each entry of ``ours`` with the nearest one
    (an assignment minimizing the total distance: round-off may order equal parts differently)."""
    from scipy.optimize import linear_sum_assignment

    rows, columns = linear_sum_assignment(np.abs(ours[:, None] - theirs[None, :]))
    return theirs[columns[np.argsort(rows)]]


def _sorted_zeros(zeros: np.ndarray) -> np.ndarray:
    """Zeros by |imaginary part|, then imaginary, then real part, at a resolution of 1e-9 of the
    largest |zero| (round-off does not decide the order)."""
    scale = 1e-9 * max(float(np.max(np.abs(zeros), initial=0.0)), 1e-300)
    keys = np.round(np.abs(zeros.imag) / scale), np.round(zeros.imag / scale), np.round(zeros.real / scale)
    return zeros[np.lexsort(keys[::-1])]


def _time_us(function, model: Model, rng: np.random.Generator, budget: float) -> float:
    from studies.kinds.timing import call_time

    function(model.home(), np.zeros(model.n_dof))  # first call: lambdify / numba loading
    return call_time(function, model, rng, budget)


class Symbolic(StudyKind):
    analysis_schema = SymbolicAnalysis
    backends = ("amm",)  # equations of global mode shapes; FEM cases are refused by show
    geometric_stiffening = False  # amm.symbolic derives the classic floating-frame equations

    def stored(self, results):
        """results.csv without the measured times (derivation, generation, per-call times:
        summary.md's cost table has them); the operation counts stay."""
        return super().stored(results[~results["quantity"].isin(TIMED)])

    def validate(self, arm, analysis):
        for number, (joint, link) in enumerate(zip(arm.joints, arm.links, strict=True), start=1):
            if joint.kind == "revolute":
                continue
            if not link.is_flexible:
                raise ValueError(
                    f"arm.joints[{number}].kind: the symbolic kind derives a prismatic joint only with a "
                    f"translating flexible link (amm.symbolic), got {joint.kind!r} carrying rigid link "
                    f"{number}"
                )
            if link.damping is not None:
                raise ValueError(
                    f"arm.links[{number}].damping: structural damping on a translating link is not derived "
                    f"symbolically (its stiffness depends on the free length), got {link.damping.kind!r}"
                )
        analysis.joint_values(arm)

    def warm_up(self, arm, cases, analysis):
        """sympy and :mod:`amm.symbolic` imported, and the engine side of the lightest case of
        each backend run (its comparisons: :func:`agreement` of the engine with itself on one
        random state, its locked frequencies and zero dynamics), which loads the compiled
        kernels those call before the first case's clock starts (it carried 1.9 s of the
        example's 2.1 s of cases). Nothing is derived: a derivation is what a case times, and
        the derivation cache would turn the case's into a cache hit."""
        import sympy  # noqa: F401  (the cases' imports)

        import amm.symbolic  # noqa: F401
        from core.analysis.linear import zero_dynamics

        for light in lightest_by_backend(arm, cases).values():
            engine = light.discretization.build(arm)
            agreement(engine, engine, [random_state(engine, np.random.default_rng(0), analysis.flex_scale)])
            q = engine.home()
            q[: arm.n_joints] = analysis.joint_values(arm)
            if engine.n_dof > engine.n_joints:
                locked_frequencies(engine, q)
                zero_dynamics(engine, q)

    def run_case(self, arm, case, analysis):
        import sympy as sp

        from amm.symbolic import derive
        from core.analysis.linear import zero_dynamics

        d = case.discretization
        start = time.perf_counter()
        eom = derive(
            arm,
            shape=d.shape,
            modes=d.size,
            constants=analysis.constants,
            symbols=analysis.parameters == "symbols",
        )
        derive_s = time.perf_counter() - start
        start = time.perf_counter()
        generated = eom.to_numeric()
        numeric_s = time.perf_counter() - start
        engine = d.build(arm)
        base = {**case.columns(), "n_dof": generated.n_dof}

        def row(
            group: str, quantity: str, ours: float = np.nan, theirs: float = np.nan, rel: float = np.nan
        ) -> dict:
            return {
                **base,
                "group": group,
                "quantity": quantity,
                "generated": float(ours),
                "engine": float(theirs),
                "relative_difference": float(rel),
            }

        costs = {"derive_s": derive_s, "numeric_s": numeric_s}
        for name in ("M", "C", "G"):
            matrix = getattr(eom, name)
            costs[f"operations_{name}"] = (
                sum(sp.count_ops(entry) for entry in matrix) if analysis.operations else np.nan
            )
        rows = [row("cost", name, value) for name, value in costs.items()]
        if analysis.budget > 0:
            timing = np.random.default_rng([analysis.seed, *case.discretization.seed, 1])
            tau = np.zeros(arm.n_joints)
            rows.append(
                row(
                    "cost",
                    "mass_matrix_us",
                    _time_us(lambda q, qd: generated.mass_matrix(q), generated, timing, analysis.budget),
                    _time_us(lambda q, qd: engine.mass_matrix(q), engine, timing, analysis.budget),
                )
            )
            rows.append(
                row(
                    "cost",
                    "forward_dynamics_us",
                    _time_us(
                        lambda q, qd: generated.forward_dynamics(q, qd, tau),
                        generated,
                        timing,
                        analysis.budget,
                    ),
                    _time_us(
                        lambda q, qd: engine.forward_dynamics(q, qd, tau, solver="recursive"),
                        engine,
                        timing,
                        analysis.budget,
                    ),
                )
            )
        else:
            rows += [row("cost", name) for name in ("mass_matrix_us", "forward_dynamics_us")]

        rng = np.random.default_rng([analysis.seed, *case.discretization.seed])
        states = [random_state(engine, rng, analysis.flex_scale) for _ in range(analysis.check_states)]
        found = agreement(generated, engine, states)
        rows += [row("agreement", name, *values) for name, values in found.items()]

        q = engine.home()
        q[: arm.n_joints] = analysis.joint_values(arm)
        if engine.n_dof > engine.n_joints:
            ours, theirs = locked_frequencies(generated, q), locked_frequencies(engine, q)
            scale = float(np.max(np.abs(theirs)))
            for k, (w, v) in enumerate(zip(ours, theirs, strict=True), start=1):
                rows.append(row("frequency", f"omega_{k}", w, v, _relative(abs(w - v), scale)))
            ours = _sorted_zeros(zero_dynamics(generated, q))
            theirs = paired(ours, zero_dynamics(engine, q))
            scale = float(np.max(np.abs(theirs)))
            for k, (z, w) in enumerate(zip(ours, theirs, strict=True), start=1):
                rel = _relative(abs(z - w), scale)
                rows.append(row("zero", f"zero_{k}.real", z.real, w.real, rel))
                rows.append(row("zero", f"zero_{k}.imag", z.imag, w.imag, rel))

        worst = [
            (r["relative_difference"], r["quantity"])
            for r in rows
            if r["group"] != "cost" and r["relative_difference"] > analysis.tolerance
        ]
        if worst:
            value, quantity = max(worst)
            caution(
                f"analysis.tolerance: the generated equations of {d.label} differ from the engine by "
                f"{value:.3g} (relative) in {quantity}, more than {analysis.tolerance:g}"
                + (f" ({len(worst)} quantities above it)" if len(worst) > 1 else "")
            )
        return rows

    def finalize(self, results, arm, analysis):
        """Warns when the arm is all rigid and the sweep still has several cases (they derive
        the same equations)."""
        if not arm.flexible_links and results["case"].nunique() > 1:
            caution(
                "sweep: the arm has no flexible link, so every case derives the same equations; one "
                "shape family and one mode count suffice"
            )
        return results

    def tables(self, results, arm, analysis):
        return {
            "generation cost": cost_table(results),
            "agreement with the engine [max relative difference]": agreement_table(results),
        }

    def report(self, results, arm, analysis, folder: Path, plots: bool) -> list[str]:
        from amm.symbolic import derive

        text = [
            f"Equations of motion derived by amm.symbolic (parameters: {analysis.parameters}, modal "
            f"constants: {analysis.constants}) and compared with the engine on {analysis.check_states} "
            f"random states (seed {analysis.seed}, flexible coordinates of {analysis.flex_scale:g} m) and "
            "at the configuration. Timings are of this machine under its load (one BLAS thread); the "
            "generated forward dynamics forms M, h = C q̇ and G in one call and solves densely, the engine's "
            "is its compiled recursive solver."
        ]
        failed = results[(results["group"] != "cost") & (results["relative_difference"] > analysis.tolerance)]
        if failed.empty:
            text.append(
                f"Every compared quantity agrees with the engine within {analysis.tolerance:g} (relative)."
            )
        else:
            listed = ", ".join(
                f"{label_of(r)} {r['quantity']} ({r['relative_difference']:.3g})"
                for _, r in failed.iterrows()
            )
            text.append(f"Above the tolerance {analysis.tolerance:g}: {listed}.")
        spectra = spectrum_text(results)
        if spectra:
            text.append(
                "At the configuration (flexible coordinates 0), from the generated equations: locked "
                "frequencies √eig(M_ff⁻¹K_ff) and zeros of the zero dynamics with the joint coordinates "
                "as outputs [rad/s] (conjugate pairs once):\n\n" + "\n".join(spectra)
            )
        for _, key in case_keys(results).iterrows():
            case = int(key["case"])
            eom = derive(
                arm,
                shape=str(key["shape"]),
                modes=Discretization.from_columns(key).size,
                constants=analysis.constants,
                symbols=analysis.parameters == "symbols",
            )
            lines = [f"### Case {case}: {label_of(key)}", "", f"Coordinates: {', '.join(eom.coordinates)}."]
            files = []
            latex = eom.latex() if analysis.latex or analysis.preview_characters else ""
            if analysis.latex:
                name = f"equations_{case}.tex"
                header = (
                    f"% Equations of motion M qdd + C qd + D qd + K q + G = B tau, case {case} "
                    f"({label_of(key)}), generated by amm.symbolic.\n% Coordinates: "
                    f"{', '.join(eom.coordinates)}. Needs amsmath.\n"
                )
                (folder / name).write_text(header + latex)
                files.append(f"LaTeX [`{name}`]({name})")
            if analysis.module and eom.functions:
                lines.append(
                    "No numpy module: the modal integrals of the length-following shapes are functions "
                    "of the free length, evaluated by the engine's series (the generated model calls them)."
                )
            elif analysis.module:
                name = f"eom_{case}.py"
                eom.to_python(folder / name)
                files.append(f"numpy module [`{name}`]({name})")
            if files:
                lines.append(f"Files: {', '.join(files)}.")
            if analysis.preview_characters:
                lines += ["", *preview(latex, analysis.preview_characters)]
            text.append("\n".join(lines))
        return text


def cost_table(results: pd.DataFrame) -> pd.DataFrame:
    """One row per case: sizes, derivation and build times, operation counts, and the generated
    and engine evaluation times with their ratio (generated / engine)."""
    import pandas as pd

    cost = results[results["group"] == "cost"]
    rows = []
    for case, group in cost.groupby("case", sort=True):
        values = group.set_index("quantity")
        first = group.iloc[0]
        size = Discretization.from_columns(first).spec.size_column  # "modes": the kind runs assumed modes
        row = {"case": case, "shape": first["shape"], size: first[size], "n_dof": first["n_dof"]}
        for name in COST[:5]:
            row[name] = values.loc[name, "generated"]
        for name in COST[5:]:
            ours, theirs = values.loc[name, "generated"], values.loc[name, "engine"]
            row[name] = ours
            row[f"{name}_engine"] = theirs
            row[f"{name.removesuffix('_us')}_ratio"] = ours / theirs
        rows.append(row)
    table = pd.DataFrame(rows)
    return table.dropna(axis=1, how="all")


def agreement_table(results: pd.DataFrame) -> pd.DataFrame:
    """Quantities as rows, cases as columns (labelled by their discretization): the largest
    relative difference from the engine; frequencies and zeros as the largest over the set."""
    compared = results[results["group"] != "cost"].copy()
    spectral = compared["group"].isin(["frequency", "zero"])
    compared.loc[spectral, "quantity"] = compared.loc[spectral, "group"].map(
        {"frequency": "locked frequencies", "zero": "zeros"}
    )
    order = [*AGREEMENT, "locked frequencies", "zeros"]
    labels = {
        int(k["case"]): f"case {int(k['case'])}: {label_of(k)}" for _, k in case_keys(results).iterrows()
    }
    wide = compared.pivot_table(
        index="quantity", columns="case", values="relative_difference", aggfunc="max", sort=False
    )
    wide = wide.reindex([q for q in order if q in wide.index])
    wide.columns = [labels[int(c)] for c in wide.columns]
    return wide.rename_axis("quantity").reset_index()


def spectrum_text(results: pd.DataFrame) -> list[str]:
    """Markdown list items: per case, the generated locked frequencies and zeros."""
    items = []
    for _, group in results.groupby("case", sort=True):
        frequencies = group[group["group"] == "frequency"]["generated"]
        zero_rows = group[group["group"] == "zero"].set_index("quantity")["generated"]
        if frequencies.empty:
            continue
        count = len(zero_rows) // 2
        zeros = np.array(
            [zero_rows[f"zero_{k}.real"] + 1j * zero_rows[f"zero_{k}.imag"] for k in range(1, count + 1)]
        )
        scale = 1e-9 * max(float(np.max(np.abs(zeros), initial=0.0)), 1e-300)
        zeros = np.where(np.abs(zeros.real) <= scale, 0.0, zeros.real) + 1j * np.where(
            np.abs(zeros.imag) <= scale, 0.0, zeros.imag
        )
        upper = [pair_text(z) for z in zeros if z.imag > 0 or (z.imag == 0 and z.real >= 0)]
        shown = ", ".join(dict.fromkeys(upper))  # a quadruple ±a ± bj has two zeros with Im > 0
        omegas = ", ".join(f"{w:.6g}" for w in frequencies)
        items.append(f"- {label_of(group.iloc[0])}: frequencies {omegas}; zeros {shown}")
    return items


def pair_text(z: complex) -> str:
    """A zero with Im ≥ 0 as ``±bj`` (imaginary axis), ``±a`` (real axis, a > 0) or ``±a ± bj``."""
    if z.imag == 0:
        return f"±{z.real:.6g}"
    if z.real == 0:
        return f"±{z.imag:.6g}j"
    return f"±{abs(z.real):.6g} ± {z.imag:.6g}j"


def preview(latex: str, characters: int) -> list[str]:
    """Markdown lines previewing the entries of M in ``latex`` (the text of
    :meth:`~amm.symbolic.SymbolicEOM.latex`): entries up to ``characters`` long in a
    display-math block, the others by their length."""
    block = latex.split("\\begin{align}\n", 1)[1].split("\n\\end{align}", 1)[0]
    entries = [line.removesuffix(" \\\\") for line in block.split("\n")]
    shown = [entry for entry in entries if len(entry) <= characters]
    long = [entry.split(" &= ", 1) for entry in entries if len(entry) > characters]
    lines = ["Mass matrix, lower triangle, non-zero entries:"]
    if shown:
        lines += ["", "$$", "\\begin{aligned}", " \\\\\n".join(shown), "\\end{aligned}", "$$"]
    if long:
        sizes = ", ".join(f"${name}$ ({len(expression):,} characters)" for name, expression in long)
        lines += ["", f"Longer than {characters} characters (see the LaTeX file): {sizes}."]
    return lines
