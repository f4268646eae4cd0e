"""The compiled explicit path of :func:`~core.analysis.simulation.simulate`: a DOP853 run whose
every stage is compiled (:func:`core.dynamics.compiled.explicit.dop853`), taken where nothing
in the run needs Python between right-hand sides.

That is a run of ``method="DOP853"`` (given, or taken by ``"auto"``) on a model whose
right-hand side is one compiled call (:meth:`Model.rates_function
<core.dynamics.model.Model.rates_function>` with ``kernel_arguments``: the compiled chain
without translating links or auxiliary states), whose input is readable in compiled code
(:func:`input_series`: none, a feed-forward table, or joint PD on a tabulated reference), without a
``deflection_limit`` (a terminal event). Every other run goes through ``solve_ivp``;
``frame.attrs["integrator"]`` says which ran. The steps are SciPy's (the same controller, error
norm, first step and dense output); ``progress`` is called between chunks of
:data:`CHUNK` steps rather than per right-hand side.

Measured (2026-11-27, 2-core AMD EPYC, one BLAS thread, process time, warm caches): the
space-arm maneuver's AMM case (10 s at rtol 1e-7, feed-forward, 109 001 right-hand sides) takes
1.18 s against 2.26 s with ``solve_ivp`` — ~10.8 against ~20.7 µs per right-hand side, of which
the kernel is ~10 µs; the whole ``space-arm-maneuver`` example 12.0 → 8.2 CPU s. Joint PD on
the same maneuver (10 s, ``method="auto"``: DOP853): 0.34 s against 0.89–1.03 s. Loading the
compiled loop costs a process ~0.1 s more than loading the kernels alone.
"""

from __future__ import annotations

import functools
import importlib
import importlib.util
import sys
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

#: Accepted steps per compiled call: progress is reported between calls (~6 000 right-hand sides,
#: ~0.06 s of the space arm).
CHUNK = 500
#: solve_ivp's messages, reused so that a frame reads the same whichever integrator ran.
FINISHED_MESSAGE = "The solver successfully reached the end of the integration interval."
TOO_SMALL_MESSAGE = "Required step size is less than spacing between numbers."
#: SciPy's floor on rtol (it warns and raises a smaller one to it): 100 ε.
RTOL_FLOOR = 100 * np.finfo(float).eps


@dataclass
class Solution:
    """The fields of ``solve_ivp``'s result that :func:`simulate` reads."""

    t: np.ndarray
    y: np.ndarray
    nfev: int
    status: int
    message: str
    njev: int = 0
    nlu: int = 0
    t_events: Any = None
    y_events: Any = None

    @property
    def success(self) -> bool:
        return self.status >= 0


@functools.cache
def dop853_tableau() -> tuple[np.ndarray, ...]:
    """SciPy's DOP853 coefficients (A, C, B, E3, E5, D), read from the file of
    ``scipy.integrate._ivp.dop853_coefficients`` without importing ``scipy.integrate``: that
    package's import (quadrature, cubature and BVP modules and their docstrings) costs ~0.7 CPU s
    per process, and the compiled path needs nothing else of it (the study's workers each paid
    it). The usual import where the file is not where SciPy 1.x keeps it, or already imported."""
    import scipy

    name = "scipy.integrate._ivp.dop853_coefficients"
    path = Path(scipy.__file__).parent / "integrate" / "_ivp" / "dop853_coefficients.py"
    if name in sys.modules or not path.is_file():
        module = importlib.import_module(name)
    else:
        spec = importlib.util.spec_from_file_location("flexlink_dop853_coefficients", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    return tuple(np.asarray(getattr(module, key), dtype=float) for key in ("A", "C", "B", "E3", "E5", "D"))


def _no_series() -> tuple:
    return np.zeros(0), np.zeros((0, 0, 0)), np.zeros(0, dtype=np.int64), np.zeros(0)


def input_series(controller, trajectory, t_span: tuple[float, float], joints: int) -> tuple | None:
    """The input as the compiled loop reads it (:func:`core.dynamics.compiled.explicit.right_hand_side`:
    a series and the gains k_p, k_d), or None when it needs Python per right-hand side.

    No controller: no series. A :class:`~core.analysis.controllers.FeedForward` with a compiled
    table covering ``t_span``: its table (``series``). A :class:`~core.analysis.controllers.PD`
    with a trajectory: the reference (q_d, q̇_d)(t) tabulated over the span
    (:func:`core.analysis.time_table.tabulate`, checked to 1e-12 of its largest value) when
    every panel of the table converged — a reference whose rate has a kink (a parabolic blend's
    q̇_d) may leave panels evaluated directly, and then None. Any other controller, a subclass
    of PD included: None."""
    from core.analysis.controllers import PD, FeedForward
    from core.analysis.time_table import tabulate

    no_gains = np.zeros(joints)
    if controller is None:
        return (*_no_series(), no_gains, no_gains)
    if isinstance(controller, FeedForward):
        series, gains = controller.series, (no_gains, no_gains)
    elif type(controller) is PD and trajectory is not None:
        table = tabulate(lambda t: np.concatenate(trajectory.evaluate(t)[:2]), t_span)
        series = getattr(table.compiled(), "compiled_series", None)
        gains = tuple(np.ascontiguousarray(k, dtype=float) for k in controller.gains(joints))
    else:
        return None
    if series is None or not (series[0][0] <= t_span[0] and t_span[1] <= series[0][-1]):
        return None
    return (*series, *gains)


def dop853(
    arguments: tuple,
    series: tuple,
    t_span: tuple[float, float],
    x0: np.ndarray,
    *,
    rtol: float,
    atol: float,
    t_eval=None,
    progress: Callable[[float], Any] | None = None,
    failed: Callable[[float, np.ndarray], Any],
) -> Solution:
    """DOP853 from x0 over ``t_span`` on the compiled right-hand side ``arguments`` (the
    ``kernel_arguments`` of a compiled ``rates_function``: table, buffer, smax, (B, D, K,
    Coulomb, ε, gravity, composite)) with the input ``series`` (:func:`input_series`).

    ``t_eval``: the output times (default: every step, t0 first), checked as ``solve_ivp``
    checks them; ``progress(t)`` after every :data:`CHUNK` steps; ``failed(t, x)`` is called
    with the argument of a right-hand side that raised (the Python right-hand side evaluated
    there raises the same error with the cause named); if it returns, the kernel's own error
    propagates."""
    from core.dynamics.compiled import explicit

    t0, t1 = (float(v) for v in t_span)
    if rtol < RTOL_FLOOR:
        warnings.warn(f"rtol {rtol!r} is below 100 ε; setting rtol = {RTOL_FLOOR!r}", stacklevel=3)
        rtol = RTOL_FLOOR
    if t_eval is not None:
        t_eval = np.asarray(t_eval, dtype=float)
        if t_eval.ndim != 1:
            raise ValueError("`t_eval` must be 1-dimensional.")
        if np.any(t_eval < t0) or np.any(t_eval > t1):
            raise ValueError("Values in `t_eval` are not within `t_span`.")
        if np.any(np.diff(t_eval) <= 0):
            raise ValueError("Values in `t_eval` are not properly sorted.")
    table, buffer, smax, system = arguments
    tableau = dop853_tableau()
    y = np.array(x0, dtype=float)
    n = y.size
    K, point = np.zeros((explicit.EXTENDED, n)), np.empty(n)
    status = np.zeros(7)
    status[explicit.T] = t0
    every_step = t_eval is None
    if every_step:
        out_t, out_y, grid = np.empty(CHUNK), np.empty((CHUNK, n)), np.zeros(0)
        times, states = [np.array([t0])], [y[None].copy()]
    else:
        out_t, out_y, grid = np.empty(0), np.empty((t_eval.size, n)), t_eval
    arguments = (table, buffer, smax, system, series, tableau, t1, rtol, atol, grid, status, y, K, point)
    while True:
        try:
            explicit.dop853(*arguments, out_t, out_y, CHUNK)
        except Exception:  # the kernel's error, named by the Python right-hand side where it can
            failed(float(status[explicit.POINT_T]), point.copy())
            raise
        if every_step:
            written = int(status[explicit.WRITTEN])
            times.append(out_t[:written].copy())
            states.append(out_y[:written].copy())
        if progress is not None:
            progress(float(status[explicit.T]))
        code = status[explicit.CODE]
        if code != explicit.RUNNING:
            break
    if every_step:
        t_out, y_out = np.concatenate(times), np.concatenate(states)
    else:
        reached = int(status[explicit.NEXT])
        t_out, y_out = t_eval[:reached], out_y[:reached]
    finished = code == explicit.FINISHED
    return Solution(
        t=t_out,
        y=y_out.T.copy(),
        nfev=int(status[explicit.NFEV]),
        status=0 if finished else -1,
        message=FINISHED_MESSAGE if finished else TOO_SMALL_MESSAGE,
    )
