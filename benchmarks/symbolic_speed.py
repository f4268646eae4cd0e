"""Generation time of amm.symbolic against brute force and Table 1 of the lumped-mass N-DOF paper
(docs/REFERENCES.md) (not a test).

    OPENBLAS_NUM_THREADS=1 python benchmarks/symbolic_speed.py [--n-max 6] [--brute-max 2] [--eval-max 4]

Rows:

* ``flexible``: planar arms of N clamped-free links, 2 modes per link, no gravity;
* ``lumped``: the lumped-mass N-DOF paper's N-link arm (the links of ``core.arm.presets.lumped_two_link``
  repeated, a 2.94 kg motor hub at every joint after the first, 0.343 kg payload,
  gravity), 2 modes per link;

``derive`` is :func:`amm.symbolic.derive` (M, ∂M/∂q, C, K, D, G, B with named
parameters and modal constants), ``numeric`` the cse + lambdify of
:meth:`amm.symbolic.SymbolicEOM.to_numeric`. ``brute`` derives the same Lagrangian
L = ½ q̇ᵀM(q)q̇ − V(q), handed over as one expanded scalar, with
``sympy.physics.mechanics.LagrangesMethod`` (mass matrix and forcing), the
"traditional" route of differentiating the energy. That paper (Table 1, i3-7100,
Mathematica) is printed beside: proposed 0.36 / 0.92 / 4.21 / 21.3 / 114.6 s,
traditional 41.63 / 106.28 / 212.57 / 365.28 / 1316.45 s for N = 1…5.

A second table (N ≤ ``--eval-max``) times the evaluation, in the same run: the
median µs of one ``mass_matrix`` and one ``forward_dynamics`` call of the
generated model (composite solver: M, h and G from the generated code, a
Cholesky solve) against the engine's compiled ``mass_matrix`` and
``forward_dynamics(..., solver="recursive")``, at fresh random states
(:func:`studies.kinds.timing.call_time`), and the ratio generated / engine of
the forward dynamics. A third table is the space arm (``space_arm_3link``, 15
coordinates, two bending planes per link): derive, ``to_numeric`` and numba
compile times (``to_numeric(compiled=True)``; a later run loads the cached
machine code) and the forward dynamics of the compiled and the lambdified code
against the engine's recursive and composite solvers, as ratios to the
engine's fastest. Run it with one BLAS thread.

Long chains (``--chains 4,8,12,16,20,25``): planar chains of N links, rigid (1 kg, 0.5 m),
mixed (rigid, flexible, …) and flexible (2 clamped-free modes), gravity: CPU seconds of
``derive`` (recursive form, ``cache=False``) and ``to_numeric``, beside ``KanesMethod``
deriving the N-link rigid pendulum (point masses on massless rods, the sympy.physics.mechanics
example) in the same run, and the evaluation of the generated M and forward dynamics against the
engine's. ``--compiled-max 6``: the numba-compiled generated forward dynamics
(``to_numeric(compiled=True)``) of 1…6 flexible links against the engine's recursive and
composite solvers.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import sympy as sp
from sympy.physics.mechanics import LagrangesMethod, dynamicsymbols

from amm.symbolic import derive
from core.arm import Arm, Joint, Link, Payload

PAPER_TABLE_1 = {  # N: (proposed, traditional) [s], Table 1 of the lumped-mass N-DOF paper
    1: (0.36, 41.63),
    2: (0.92, 106.28),
    3: (4.21, 212.57),
    4: (21.3, 365.28),
    5: (114.6, 1316.45),
}


def flexible_arm(n: int) -> Arm:
    """N identical clamped-free links: 0.5 m, 0.5 kg/m, EI = 10 N m²."""
    return Arm.planar([Link.flexible(0.5, 0.5, 10.0) for _ in range(n)])


def lumped_arm(n: int) -> Arm:
    """The lumped-mass N-DOF paper's arm with N links (the two links of ``lumped_two_link`` alternating)."""
    E = 2.06e11
    data = [(0.475, 0.374, 16e-11), (0.435, 0.29, 6.75e-11)]
    links = [Link.flexible(L, m / L, E * I) for L, m, I in (data[k % 2] for k in range(n))]
    joints = [Joint(hub_mass=2.94 if k else 0.0) for k in range(n)]
    return Arm.planar(links, joints=joints, payload=Payload(0.343), gravity=(0.0, -9.81))


def brute_force(eom) -> float:
    """Seconds for LagrangesMethod on L = ½ q̇ᵀMq̇ − V as one expanded scalar (same energy)."""
    start = time.perf_counter()
    qs = dynamicsymbols(" ".join(eom.coordinates)) if len(eom.q) > 1 else [dynamicsymbols(eom.coordinates[0])]
    to_time = {s: f for s, f in zip(eom.q, qs, strict=True)}
    to_time |= {s: f.diff() for s, f in zip(eom.qd, qs, strict=True)}
    qd = sp.Matrix(eom.qd)
    lagrangian = sp.expand(((qd.T * eom.M * qd)[0] / 2 - eom.V).xreplace(to_time))
    method = LagrangesMethod(lagrangian, qs)
    method.form_lagranges_equations()
    method.mass_matrix  # noqa: B018 — forces the evaluation, as a user would
    method.forcing  # noqa: B018
    return time.perf_counter() - start


def evaluation(model, engine, budget: float = 1.0) -> tuple[float, float, float, float]:
    """µs per call: generated M, engine M, generated forward dynamics, engine recursive one."""
    from studies.kinds.timing import call_time

    tau = np.zeros(engine.n_joints)
    out = []
    for function, timed in (
        (lambda q, qd: model.mass_matrix(q), model),
        (lambda q, qd: engine.mass_matrix(q), engine),
        (lambda q, qd: model.forward_dynamics(q, qd, tau), model),
        (lambda q, qd: engine.forward_dynamics(q, qd, tau, solver="recursive"), engine),
    ):
        function(timed.home(), np.zeros(timed.n_dof))  # first call: numba loading
        out.append(call_time(function, timed, np.random.default_rng(0), budget, calls=2000))
    return tuple(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n-max", type=int, default=6)
    parser.add_argument(
        "--brute-max", type=int, default=2, help="largest N for brute force (3 takes minutes)"
    )
    parser.add_argument("--eval-max", type=int, default=4, help="largest N whose evaluation is timed")
    parser.add_argument("--budget", type=float, default=1.0, help="seconds of timing per function")
    parser.add_argument("--no-space-arm", action="store_true", help="skip the space-arm row")
    parser.add_argument("--chains", default="4,8,12,16,20,25", help="long-chain sizes ('' to skip)")
    parser.add_argument("--kane-max", type=int, default=25, help="largest N for KanesMethod")
    parser.add_argument("--compiled-max", type=int, default=6, help="largest N of the compiled table")
    args = parser.parse_args()
    if args.chains:
        chains([int(n) for n in args.chains.split(",")], args.kane_max, args.budget)
    if args.compiled_max:
        compiled_table(args.compiled_max, args.budget)
    print(
        "| arm | N | coordinates | derive [s] | numeric [s] | brute force [s] | paper proposed / traditional [s] |"
    )
    print("|---|---|---|---|---|---|---|")
    for kind, factory in (("flexible", flexible_arm), ("lumped", lumped_arm)):
        for n in range(1, args.n_max + 1):
            eom = derive(factory(n), shape="clamped-free", modes=2)
            start = time.perf_counter()
            eom.to_numeric()
            numeric = time.perf_counter() - start
            brute = f"{brute_force(eom):.2f}" if n <= args.brute_max else "–"
            paper = "{} / {}".format(*PAPER_TABLE_1[n]) if kind == "lumped" and n in PAPER_TABLE_1 else "–"
            print(
                f"| {kind} | {n} | {len(eom.q)} | {eom.seconds:.2f} | {numeric:.2f} | {brute} | {paper} |",
                flush=True,
            )
    from amm import AssumedModesModel

    print()
    print(
        "| arm | N | coordinates | M generated / engine [µs] | forward dynamics generated / engine recursive [µs] | generated / engine |"
    )
    print("|---|---|---|---|---|---|")
    cases = [("flexible", n, flexible_arm(n)) for n in range(1, args.eval_max + 1)]
    cases.append(("lumped", 2, lumped_arm(2)))
    for kind, n, arm in cases:
        model = derive(arm, shape="clamped-free", modes=2).to_numeric()
        engine = AssumedModesModel(arm, shape="clamped-free", modes=2)
        m_gen, m_eng, fd_gen, fd_eng = evaluation(model, engine, args.budget)
        print(
            f"| {kind} | {n} | {model.n_dof} | {m_gen:.1f} / {m_eng:.1f} | {fd_gen:.1f} / {fd_eng:.1f} "
            f"| {fd_gen / fd_eng:.2f} |",
            flush=True,
        )
    if not args.no_space_arm:
        space_arm(args.budget)


def chain(kind: str, n: int) -> Arm:
    """N links: rigid (1 kg, 0.5 m), flexible (0.5 m, 0.5 kg/m, EI = 10 N m²) or mixed (rigid first)."""

    def link(k):
        if kind == "rigid" or (kind == "mixed" and k % 2 == 0):
            return Link.rigid(0.5, 1.0)
        return Link.flexible(0.5, 0.5, 10.0)

    return Arm.planar([link(k) for k in range(n)], gravity=(0.0, -9.81))


def kane_pendulum(n: int) -> float:
    """CPU seconds of KanesMethod deriving the n-link planar pendulum (point masses on massless
    rods: sympy.physics.mechanics' n-pendulum example) up to its mass matrix and forcing."""
    from sympy.physics.mechanics import KanesMethod, Particle, Point, ReferenceFrame

    start = time.process_time()
    q, u = dynamicsymbols(f"q:{n}"), dynamicsymbols(f"u:{n}")
    m, length = sp.symbols(f"m:{n}"), sp.symbols(f"l:{n}")
    g = sp.Symbol("g")
    A = ReferenceFrame("A")
    P = Point("P")
    P.set_vel(A, 0)
    particles, forces, kinematics = [], [], []
    for i in range(n):
        Ai = A.orientnew(f"A{i}", "Axis", [q[i], A.z])
        Ai.set_ang_vel(A, u[i] * A.z)
        Pi = P.locatenew(f"P{i}", length[i] * Ai.x)
        Pi.v2pt_theory(P, A, Ai)
        particles.append(Particle(f"Pa{i}", Pi, m[i]))
        forces.append((Pi, m[i] * g * A.x))
        kinematics.append(q[i].diff() - u[i])
        P = Pi
    method = KanesMethod(A, q_ind=q, u_ind=u, kd_eqs=kinematics)
    method.kanes_equations(particles, forces)
    method.mass_matrix_full  # noqa: B018 — forces the evaluation, as a user would
    method.forcing_full  # noqa: B018
    return time.process_time() - start


def chains(sizes: list[int], kane_max: int, budget: float) -> None:
    """The long-chain table (module docstring)."""
    from amm import AssumedModesModel

    print()
    print(
        "| chain | N | coordinates | derive [CPU s] | to_numeric [CPU s] | KanesMethod rigid pendulum [CPU s] "
        "| M generated / engine [µs] | forward dynamics generated / engine recursive [µs] |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for n in sizes:
        kane = f"{kane_pendulum(n):.2f}" if n <= kane_max else "–"
        for kind in ("rigid", "mixed", "flexible"):
            arm = chain(kind, n)
            start = time.process_time()
            eom = derive(arm, modes=2, form="recursive", cache=False)
            derived = time.process_time() - start
            start = time.process_time()
            model = eom.to_numeric()
            numeric = time.process_time() - start
            engine = AssumedModesModel(arm, modes=2)
            m_gen, m_eng, fd_gen, fd_eng = evaluation(model, engine, budget)
            print(
                f"| {kind} | {n} | {model.n_dof} | {derived:.2f} | {numeric:.2f} | {kane if kind == 'rigid' else ''} "
                f"| {m_gen:.1f} / {m_eng:.1f} | {fd_gen:.1f} / {fd_eng:.1f} |",
                flush=True,
            )


def compiled_table(n_max: int, budget: float) -> None:
    """Compiled generated forward dynamics of 1…n_max flexible links against the engine."""
    from amm import AssumedModesModel
    from studies.kinds.timing import call_time

    print()
    print(
        "| flexible links | coordinates | numba compile (or cache load) [s] | forward dynamics compiled / "
        "engine recursive / engine composite [µs] | compiled / engine fastest |"
    )
    print("|---|---|---|---|---|")
    for n in range(1, n_max + 1):
        arm = flexible_arm(n)
        compiled = derive(arm, modes=2, form="recursive").to_numeric(compiled=True)
        times = _forward_times(compiled, AssumedModesModel(arm, modes=2), budget, call_time)
        fastest = min(times["recursive"], times["composite"])
        print(
            f"| {n} | {compiled.n_dof} | {compiled.compile_seconds:.1f} | {times['compiled']:.1f} / "
            f"{times['recursive']:.1f} / {times['composite']:.1f} | {times['compiled'] / fastest:.2f} |",
            flush=True,
        )


def _forward_times(compiled, engine, budget: float, call_time) -> dict:
    """µs per forward dynamics call: compiled generated, engine recursive and composite."""
    tau = np.zeros(engine.n_joints)
    times = {}
    for name, function, timed in (
        ("compiled", lambda q, qd: compiled.forward_dynamics(q, qd, tau), compiled),
        ("recursive", lambda q, qd: engine.forward_dynamics(q, qd, tau, solver="recursive"), engine),
        ("composite", lambda q, qd: engine.forward_dynamics(q, qd, tau, solver="composite"), engine),
    ):
        function(timed.home(), np.zeros(timed.n_dof))
        times[name] = call_time(function, timed, np.random.default_rng(0), budget, calls=2000)
    return times


def space_arm(budget: float) -> None:
    """The space arm (``core.arm.presets.space_arm_3link``: 3 flexible links bending in and out of
    plane, 2 clamped-free modes per plane, 15 coordinates): generation, numba compilation and
    evaluation of the compiled forward dynamics against the engine's fastest path, one run."""
    from amm import AssumedModesModel
    from core.arm.presets import space_arm_3link

    arm = space_arm_3link()
    eom = derive(arm, shape="clamped-free", modes=2)
    start = time.perf_counter()
    lambdified = eom.to_numeric()
    numeric = time.perf_counter() - start
    compiled = eom.to_numeric(compiled=True)  # compile_seconds: write, compile or load, first call
    engine = AssumedModesModel(arm, shape="clamped-free", modes=2)
    tau = np.zeros(3)
    from studies.kinds.timing import call_time

    times = {}
    for name, function, timed in (
        ("compiled", lambda q, qd: compiled.forward_dynamics(q, qd, tau), compiled),
        ("lambdified", lambda q, qd: lambdified.forward_dynamics(q, qd, tau), lambdified),
        ("engine recursive", lambda q, qd: engine.forward_dynamics(q, qd, tau, solver="recursive"), engine),
        ("engine composite", lambda q, qd: engine.forward_dynamics(q, qd, tau), engine),
    ):
        function(timed.home(), np.zeros(timed.n_dof))
        times[name] = call_time(function, timed, np.random.default_rng(0), budget, calls=2000)
    fastest = min(times["engine recursive"], times["engine composite"])
    print()
    print(
        "| space arm (15 coordinates) | derive [s] | to_numeric [s] | numba compile (or cache load) [s] "
        "| forward dynamics compiled / lambdified / engine recursive / engine composite [µs] "
        "| compiled / engine fastest | lambdified / engine fastest |"
    )
    print("|---|---|---|---|---|---|---|")
    print(
        f"| space-arm-3link | {eom.seconds:.2f} | {numeric:.2f} | {compiled.compile_seconds:.2f} "
        f"| {times['compiled']:.1f} / {times['lambdified']:.1f} / {times['engine recursive']:.1f} / "
        f"{times['engine composite']:.1f} | {times['compiled'] / fastest:.2f} | {times['lambdified'] / fastest:.2f} |",
        flush=True,
    )


if __name__ == "__main__":
    main()
