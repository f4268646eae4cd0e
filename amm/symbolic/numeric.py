"""The numeric :class:`~core.dynamics.model.Model` of derived equations: their generated code,
lambdified or compiled with numba (:mod:`amm.symbolic.codegen`)."""

from __future__ import annotations

import time
from contextlib import contextmanager

import numpy as np
import sympy as sp

from amm.symbolic.codegen import MATH, NUMPY, cached_functions, lambdify, numba_module, reduce
from amm.symbolic.following import namespace
from core.arm import Arm
from core.dynamics.engine import COULOMB_VELOCITY
from core.dynamics.model import Model, coulomb_friction
from core.numerics import validation as check


class SymbolicModel(Model):
    """A :class:`core.dynamics.model.Model` evaluating the generated code of a
    :class:`~amm.symbolic.SymbolicEOM` ``eom`` (made by :meth:`~amm.symbolic.SymbolicEOM.to_numeric`).

    Three lambdified numpy functions, each with its common subexpressions shared
    (``sympy.cse``): the hot path of forward dynamics, M, h = C q̇ and G of
    (q, q̇) in one call (:meth:`nonlinear_forces`, :meth:`bias_forces`, then
    :meth:`mass_matrix` at the same q from the same call); M, G, the tip, the
    link frames and V of q; and ∂M/∂q, generated on the first
    :meth:`mass_matrix_derivatives` call (C, linearization) and evaluated only
    when asked. D and B are constant, K too except on a translating link (K(l), lambdified). The
    modal integrals of length-following shapes are calls of the engine model's series
    (:mod:`amm.symbolic.following`), whose ``"ode"`` roots are this model's auxiliary states. Coulomb friction follows the engine's
    smooth model (ε = ``coulomb_velocity``).

    ``compiled=True`` also writes the cse'd M, h, G and a Cholesky forward dynamics as a numba
    module (``njit(cache=True)``) into a cache folder keyed by a hash of its source
    (:func:`amm.symbolic.codegen.cache_folder`): compiled once per
    machine (16 s for the space arm), loaded later (< 1 s); :attr:`compile_seconds` says which.
    :meth:`forward_dynamics` (composite), :meth:`bias_forces` and :meth:`nonlinear_forces` (and
    :meth:`mass_matrix`, :meth:`gravity_forces` at the same q) then run it; everything else
    stays lambdified.
    """

    def __init__(self, eom, coulomb_velocity: float = COULOMB_VELOCITY, compiled: bool = False) -> None:
        self.eom = eom
        self.arm = eom.arm
        self.description = f"symbolic ({eom.description})"
        self.coulomb_velocity = float(coulomb_velocity)
        n = len(eom.q)
        frames = sp.Matrix([list(frame) for frame in eom.frames])
        # The parameters are arguments (their numbers passed at each call), not substituted:
        # rebuilding the large expressions with floats costs more than the cse itself.
        self._parameter_symbols = list(eom.values)
        self._parameters = np.array([eom.values[p] for p in self._parameter_symbols], dtype=float)
        self._parameter_list = self._parameters.tolist()
        # The hot path runs on Python floats with the math module (2-2.5× faster than numpy
        # scalars); the numpy twin, from the same cse, takes the states where math raises
        # (overflow, a domain error) and returns inf or nan as numpy does.
        arguments = [list(eom.q), list(eom.qd), self._parameter_symbols]
        # Length-following integrals: functions of the free length bound to the engine's series.
        bound = namespace(eom.functions, eom.model) if eom.functions else {}
        self._namespaces = (MATH | bound, NUMPY | bound)

        def dynamics():
            return reduce(eom, [eom.M, eom.h, eom.G])

        self._dynamics, self._dynamics_numpy = cached_functions(
            eom, "dynamics", arguments, dynamics, self._namespaces
        )
        static = [list(eom.q), self._parameter_symbols]
        self._terms_math, self._terms = cached_functions(
            eom,
            "static",
            static,
            lambda: reduce(eom, [eom.M, eom.G, eom.tip, frames, sp.Matrix([eom.V])]),
            self._namespaces,
        )
        self._derivatives = None  # ∂M/∂q, lambdified when first asked for
        self._inverse = self._inverse_numpy = None  # the inverse dynamics, generated when asked for
        self._forward = None  # the articulated-body forward dynamics, generated when asked for
        self._elastic = None  # K(q), ∂V_e/∂q, ∂²V_e/∂q² when K depends on q (a translating link)
        if eom.K.free_symbols & set(eom.q):
            if compiled:
                raise ValueError(
                    "compiled=True: the stiffness depends on q (a translating link, K(l) ∝ 1/l³); "
                    "use compiled=False"
                )
            qv = sp.Matrix(eom.q)
            energy = sp.Matrix([(qv.T * eom.K * qv)[0] / 2])
            forces = energy.jacobian(qv)
            hessian = forces.jacobian(qv)
            self._elastic = lambdify(static, [eom.K, forces.T, hessian], self._namespaces[1])
            self._K = np.zeros((n, n))
        else:
            self._K = np.array(eom.numeric(eom.K, closed=False).tolist(), dtype=float).reshape(n, n)
        self._D = np.array(eom.numeric(eom.D, closed=False).tolist(), dtype=float).reshape(n, n)
        self._B = np.array(eom.numeric(eom.B, closed=False).tolist(), dtype=float).reshape(n, eom.n_joints)
        self._coulomb = np.array([j.coulomb_friction for j in self.arm.joints], dtype=float)
        self._last: tuple = (None, None)  # (q, [M, G, tip, frames, V])
        self._last_dynamics: tuple = (None, None, None)  # (q, q̇, [M, h, G])
        self._last_derivatives: tuple = (None, None)  # (q, ∂M/∂q)
        #: Seconds to write, compile (or load from the cache) and first run the numba module.
        self.compile_seconds = 0.0
        self._compiled = None
        if compiled:
            start = time.perf_counter()
            articulated = reduce(eom, [eom.forward]) if eom.forward is not None else None
            module = numba_module(eom, self._parameter_symbols, dynamics(), articulated)
            self._compiled = module
            self._work = (np.zeros((n, n)), np.zeros(n), np.zeros(n))
            self._compile_forward(n)
            self.compile_seconds = time.perf_counter() - start

    def _compile_forward(self, n: int) -> None:
        """First calls of the compiled functions (numba compiles or loads them here)."""
        zeros = np.zeros(n)
        M, h, G = self._work
        self._compiled.forward(
            zeros,
            zeros,
            np.zeros(self.n_joints),
            self._parameters,
            self._B,
            self._D,
            self._K,
            M,
            h,
            G,
            zeros.copy(),
        )
        if self.eom.forward is not None:
            self._compiled.forward_articulated(
                zeros,
                zeros,
                np.zeros(self.n_joints),
                self._parameters,
                self._B,
                self._D,
                self._K,
                zeros.copy(),
                zeros.copy(),
            )

    def __repr__(self) -> str:
        return f"SymbolicModel({self.description})"

    def rebuild(self, arm: Arm) -> SymbolicModel:
        """The equations of ``arm`` derived with the same shapes and options
        (:meth:`amm.symbolic.SymbolicEOM.rebuild`), evaluated with this model's options
        (``compiled``, ``coulomb_velocity``: :meth:`core.dynamics.model.Model.replace`)."""
        return self.replace(eom=self.eom.rebuild(arm))

    # -- auxiliary states: the "ode" tracker's roots, shared with the engine model -----------
    @property
    def auxiliary_names(self) -> tuple[str, ...]:
        """The engine model's (``beta<i>_<k>``: roots of length-following shapes integrated with
        the motion), whose evaluation of the l-dependent integrals the generated code calls."""
        return self.eom.model.auxiliary_names if self.eom.functions else ()

    def auxiliary_initial(self, q) -> np.ndarray:
        return self.eom.model.auxiliary_initial(q) if self.eom.functions else np.zeros(0)

    def auxiliary_rates(self, q, qd, a) -> np.ndarray:
        return self.eom.model.auxiliary_rates(q, qd, a) if self.eom.functions else np.zeros(0)

    @contextmanager
    def auxiliary(self, a):
        """Evaluate with the roots ``a`` (:attr:`auxiliary_names`), set on the engine model's
        shapes that the generated code reads; the per-state caches are cleared on entry and exit."""
        if not self.eom.functions:
            yield
            return
        with self.eom.model.auxiliary(a):
            self._forget()
            try:
                yield
            finally:
                self._forget()

    def _forget(self) -> None:
        self._last = (None, None)
        self._last_dynamics = (None, None, None)
        self._last_derivatives = (None, None)

    @property
    def coordinates(self) -> tuple[str, ...]:
        """The engine's coordinates, the order of q in the generated code."""
        return self.eom.coordinates

    def _evaluate(self, q) -> list:
        """[M, G, tip, frames, V] at q (the last q's kept)."""
        q = np.asarray(q)
        if q.shape != (self.n_dof,):
            raise ValueError(f"q must have shape ({self.n_dof},), got {q.shape}")
        if np.iscomplexobj(q):  # a complex step (e.g. ∂G/∂q): the generated code is analytic
            return self._terms(q, self._parameters)
        q = q.astype(float)
        key = q.tobytes()
        if self._last[0] != key:  # G, the tip and V are asked for at the same q in a step
            try:
                terms = self._terms_math(q.tolist(), self._parameter_list)
            except (ArithmeticError, ValueError):  # math overflows where numpy gives inf (and warns)
                terms = self._terms(q, self._parameters)
            self._last = (key, terms)
        return self._last[1]

    def _evaluate_dynamics(self, q, qd) -> list:
        """[M, h, G] at (q, q̇) from the one generated function of the hot path."""
        q, qd = self._state(q, qd)
        key, rates = q.tobytes(), qd.tobytes()
        last = self._last_dynamics
        if (last[0] != key or last[1] != rates) and self._compiled is not None:
            n = self.n_dof
            terms = [np.zeros((n, n)), np.zeros(n), np.zeros(n)]
            self._compiled.terms(q, qd, self._parameters, *terms)
            self._last_dynamics = last = (key, rates, terms)
        elif last[0] != key or last[1] != rates:
            try:
                terms = self._dynamics(q.tolist(), qd.tolist(), self._parameter_list)
            except (ArithmeticError, ValueError):  # as in _evaluate: numpy's inf and its warning
                terms = self._dynamics_numpy(q, qd, self._parameters)
            self._last_dynamics = last = (key, rates, terms)
        return last[2]

    def _dynamics_at(self, q) -> list | None:
        """The [M, h, G] of the last (q, q̇) if it was at this q (M and G do not depend on q̇)."""
        last = self._last_dynamics
        if last[0] is not None and not np.iscomplexobj(q):
            q = np.asarray(q, dtype=float)
            if q.shape == (self.n_dof,) and q.tobytes() == last[0]:
                return last[2]
        return None

    def mass_matrix(self, q) -> np.ndarray:
        terms = self._dynamics_at(q)
        M = terms[0] if terms is not None else self._evaluate(q)[0]
        return np.array(M, dtype=float).reshape(self.n_dof, self.n_dof)

    def mass_matrix_derivatives(self, q) -> np.ndarray:
        n = self.n_dof
        q = np.asarray(q)
        if q.shape != (n,):
            raise ValueError(f"q must have shape ({n},), got {q.shape}")
        q = q.astype(float)
        key = q.tobytes()
        if self._last_derivatives[0] != key:
            if self._derivatives is None:
                derivatives = sp.Matrix.vstack(*self.eom.dM) if n else self.eom.M
                self._derivatives = lambdify(
                    [list(self.eom.q), self._parameter_symbols],
                    None,
                    self._namespaces[1],
                    reduce(self.eom, [derivatives]),
                )
            self._last_derivatives = (key, self._derivatives(q, self._parameters)[0])
        return np.array(self._last_derivatives[1], dtype=float).reshape(n, n, n)

    def bias_forces(self, q, qd) -> np.ndarray:
        """h(q, q̇) = C q̇ from the generated h (no ∂M/∂q, no C)."""
        return np.array(self._evaluate_dynamics(q, qd)[1], dtype=float).reshape(self.n_dof)

    def nonlinear_forces(self, q, qd) -> np.ndarray:
        """h + G from one call of the generated M, h, G (M kept for :meth:`mass_matrix`)."""
        _, h, G = self._evaluate_dynamics(q, qd)
        return (np.array(h, dtype=float) + np.array(G, dtype=float)).reshape(self.n_dof)

    def auto_solver(self) -> str:
        """``"recursive"`` (the generated articulated-body algorithm) in the recursive form,
        else ``"composite"`` (the generated M, h, G and a dense solve)."""
        return "recursive" if self.eom.forward is not None else "composite"

    def _articulated(self, q, qd, applied) -> np.ndarray:
        """q̈ of M q̈ + h + G = ``applied`` by the generated articulated-body algorithm."""
        if self._forward is None:
            eom = self.eom
            arguments = [list(eom.q), list(eom.qd), list(eom.applied), self._parameter_symbols]
            self._forward = cached_functions(
                eom, "articulated", arguments, lambda: reduce(eom, [eom.forward]), self._namespaces
            )
        try:
            out = self._forward[0](q.tolist(), qd.tolist(), applied.tolist(), self._parameter_list)
        except (ArithmeticError, ValueError):  # as in _evaluate: numpy's inf and its warning
            out = self._forward[1](q, qd, applied, self._parameters)
        return np.array(out[0], dtype=float).reshape(self.n_dof)

    def rates_function(self, solver: str = "auto"):
        """As :meth:`core.dynamics.model.Model.rates_function`; ``"recursive"`` (the default in
        the recursive form) runs the generated articulated-body algorithm."""
        if solver == "auto":
            solver = self.auto_solver()
        if solver != "recursive" or self.eom.forward is None:
            return super().rates_function("composite" if solver == "recursive" else solver)
        n = self.n_dof

        def rates(x: np.ndarray, tau: np.ndarray) -> np.ndarray:
            q, qd = self._state(x[:n], x[n : 2 * n])
            qdd = self._articulated(q, qd, self._applied(q, qd, tau))
            u = self._B.T @ qd
            dissipated = qd @ self._D @ qd - u @ self.friction_forces(q, qd)
            return np.concatenate([qd, qdd, [u @ tau, dissipated]])

        return rates

    def forward_dynamics(self, q, qd, tau, solver: str = "auto", *, friction: bool = True) -> np.ndarray:
        """As :meth:`core.dynamics.model.Model.forward_dynamics`. ``"recursive"`` (the default in the
        recursive form of :func:`amm.symbolic.derive`) runs the generated articulated-body
        algorithm (:mod:`amm.symbolic.articulated`: no M assembled); ``"composite"`` (the default
        in the closed form) is inlined: one call of the generated M, h, G and a dense solve of
        M q̈ = B(τ + τ_c) − D q̇ − K q − h − G (Cholesky in the numba module with ``compiled``)."""
        if solver == "auto":
            solver = self.auto_solver()
        if solver == "recursive" and self.eom.forward is not None:
            q, qd = self._state(q, qd)
            if self._compiled is not None:
                tau = self._torques(q, qd, tau, friction and self._coulomb.any())
                out = np.empty(self.n_dof)
                compiled = self._compiled
                compiled.forward_articulated(
                    q, qd, tau, self._parameters, self._B, self._D, self._K, self._work[1], out
                )
                return out
            return self._articulated(q, qd, self._applied(q, qd, tau, friction))
        if solver != "composite":
            return super().forward_dynamics(q, qd, tau, solver, friction=friction)
        q, qd = self._state(q, qd)
        tau = self._torques(q, qd, tau, friction and self._coulomb.any())
        if self._compiled is not None:
            out = np.empty(self.n_dof)
            M, h, G = self._work
            self._compiled.forward(q, qd, tau, self._parameters, self._B, self._D, self._K, M, h, G, out)
            return out
        M, h, G = self._evaluate_dynamics(q, qd)
        n = self.n_dof
        rhs = self._B @ tau - self._D @ qd - self.elastic_forces(q)
        rhs -= np.asarray(h, dtype=float).reshape(n) + np.asarray(G, dtype=float).reshape(n)
        return np.linalg.solve(np.asarray(M, dtype=float).reshape(n, n), rhs)

    def inertial_forces(self, q, qd, qdd) -> np.ndarray:
        """M q̈ + h + G from the generated Newton–Euler pass (recursive form: no M assembled; the
        closed form falls back to M q̈ + h + G of the generated M, h, G)."""
        if self.eom.inverse is None:
            return super().inertial_forces(q, qd, qdd)
        q, qd = self._state(q, qd)
        qdd = np.asarray(qdd, dtype=float)
        if qdd.shape != (self.n_dof,):
            raise ValueError(f"qdd must have shape ({self.n_dof},), got {qdd.shape}")
        if self._inverse is None:
            eom = self.eom
            arguments = [list(eom.q), list(eom.qd), list(eom.qdd), self._parameter_symbols]
            self._inverse, self._inverse_numpy = cached_functions(
                eom, "inverse", arguments, lambda: reduce(eom, [eom.inverse]), self._namespaces
            )
        try:
            out = self._inverse(q.tolist(), qd.tolist(), qdd.tolist(), self._parameter_list)
        except (ArithmeticError, ValueError):  # as in _evaluate: numpy's inf and its warning
            out = self._inverse_numpy(q, qd, qdd, self._parameters)
        return np.array(out[0], dtype=float).reshape(self.n_dof)

    def gravity_forces(self, q) -> np.ndarray:
        terms = self._dynamics_at(q)
        if terms is not None:
            return np.array(terms[2], dtype=float).reshape(self.n_dof)
        dtype = complex if np.iscomplexobj(q) else float
        return np.array(self._evaluate(q)[1], dtype=dtype).reshape(self.n_dof)

    def _stiffness_terms(self, q) -> list:
        """[K(q), ∂V_e/∂q, ∂²V_e/∂q²] of a q-dependent stiffness."""
        return self._elastic(np.asarray(q), self._parameters)

    def stiffness_matrix(self, q) -> np.ndarray:
        if self._elastic is not None:
            return np.array(self._stiffness_terms(q)[0], dtype=float).reshape(self.n_dof, self.n_dof)
        return self._K.copy()

    def elastic_forces(self, q) -> np.ndarray:
        if self._elastic is not None:
            return np.array(self._stiffness_terms(q)[1], dtype=float).reshape(self.n_dof)
        return self._K @ np.asarray(q)

    def elastic_stiffness(self, q) -> np.ndarray:
        if self._elastic is not None:
            return np.array(self._stiffness_terms(q)[2], dtype=float).reshape(self.n_dof, self.n_dof)
        return self._K.copy()

    def damping_matrix(self, q) -> np.ndarray:
        return self._D.copy()

    def input_matrix(self, q) -> np.ndarray:
        return self._B.copy()

    def friction_forces(self, q, qd) -> np.ndarray:
        return coulomb_friction(self._coulomb, self._B, qd, self.coulomb_velocity)

    def potential_energy(self, q) -> float:
        return float(np.asarray(self._evaluate(q)[4], dtype=float).reshape(-1)[0])

    def tip_position(self, q) -> np.ndarray:
        tip = np.asarray(self._evaluate(q)[2], dtype=float).reshape(-1)
        return np.array([*tip, 0.0]) if tip.size == 2 else tip

    def point_position(self, link: int, s: float, q) -> np.ndarray:
        link = check.link_number(link, self.arm.n_links)
        if self.arm.joints[link - 1].kind != "revolute":
            raise ValueError(
                f"link: points of translating link {link} are not evaluated by the symbolic model; "
                "use the engine's point_position"
            )
        length = self.arm.links[link - 1].length
        s = check.on_link(s, link, 0.0, length, length)
        frame = np.asarray(self._evaluate(q)[3], dtype=float).reshape(self.arm.n_links, -1)[link - 1]
        w = np.zeros(2)
        if link in self.eom.model.bases:
            engine = self.eom.model
            values, _ = engine.bases[link].evaluate(np.array([min(s, length)]))
            delta = np.asarray(q, dtype=float)[engine.flex_columns[link]]
            body = engine.bodies[link]
            w = np.array([float(values[:, 0] @ body.plane(delta, a)) for a in (0, 1)])
        if frame.size == 3:  # planar: (x, y, angle)
            x, y, angle = frame
            c, si = np.cos(angle), np.sin(angle)
            return np.array([x + c * s - si * w[0], y + si * s + c * w[0], 0.0])
        return frame[:3] + frame[3:].reshape(3, 3) @ np.array([s, w[0], w[1]])
