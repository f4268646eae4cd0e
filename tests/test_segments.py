"""The finite-segment backend (fem.segments): rigid pieces joined by torsional springs.

References: the exact clamped–mass frequency roots of :mod:`shapes` (ω = β² √(EI/(ρA L⁴))), the
Hermite finite elements of :mod:`fem` (an independent discretization of the same beam, h⁴), and
the geometrically exact elastica of ``tests/exact_beam.py`` (a Hencky bar chain written without
flexlink, Richardson-extrapolated to the continuous beam).
"""

from __future__ import annotations

import dataclasses
import math
import textwrap

import numpy as np
import pandas as pd
import pytest

import shapes
from core.analysis.simulation import simulate
from core.arm import Arm, Damping, Joint, Link, LumpedMass, Payload, presets
from fem import FiniteElementModel
from fem.segments import MAX_SEGMENTS, FiniteSegmentModel
from studies import cli
from studies.discretizations import BACKENDS, Discretization
from studies.discretizations import MAX_SEGMENTS as CONFIG_MAX_SEGMENTS
from tests import exact_beam

LEVELS = (8, 16, 32, 64)


def fitted_rate(sizes, errors) -> float:
    """The slope of log(error) against log(1/N)."""
    return float(-np.polyfit(np.log(sizes), np.log(errors), 1)[0])


def relative_errors(arm: Arm, reference: np.ndarray, levels=LEVELS) -> np.ndarray:
    """|ω/reference − 1| of the lowest frequencies, one row per segment count."""
    count = reference.size
    return np.array(
        [
            np.abs(FiniteSegmentModel(arm, segments=n).natural_frequencies()[:count] / reference - 1)
            for n in levels
        ]
    )


def test_clamped_mass_frequencies_converge_at_second_order():
    """One link with a tip mass and rotary inertia against the exact clamped–mass roots β of
    shapes (ω = β² √(EI/(ρA L⁴))). Measured: rates 2.00, 2.00, 2.01 for modes 1–3, relative
    errors 3.5e-5, 7.1e-5, 2.9e-4 at 64 segments; asserted: rate in [1.7, 2.3] (the midpoint
    rule's h²) and error < 1e-3 at 64."""
    length, rho, EI, mu, j = 1.2, 0.7, 3.0, 0.5, 0.02
    link = Link.flexible(length, rho, EI, tip_payload=Payload(mu * rho * length, j * rho * length**3))
    arm = Arm.planar([link])
    beta = shapes.family("clamped-mass", mass_ratio=mu, inertia_ratio=j).betas(3)
    exact = beta**2 * math.sqrt(EI / (rho * length**4))
    errors = relative_errors(arm, exact)
    rates = [fitted_rate(LEVELS, errors[:, k]) for k in range(3)]
    assert all(1.7 <= rate <= 2.3 for rate in rates), rates
    assert errors[-1, 0] < 1e-3 and errors[-1].max() < 1e-3


def test_two_link_frequencies_agree_with_finite_elements_at_second_order():
    """The lumped two-link arm (hub mass, payload) without gravity, locked joints: the segments'
    first three frequencies against 32 Hermite elements per link (their own error ~1e-9, rate 4).
    Measured: rates 2.00, 2.00, 2.01, differences 6.9e-5, 2.4e-4, 3.3e-4 at 32 segments;
    asserted: rate >= 1.7 and difference < 1e-3 at 32."""
    arm = presets.lumped_two_link(gravity=False)
    reference = FiniteElementModel(arm, elements=32).natural_frequencies()[:3]
    levels = (8, 16, 32)
    errors = relative_errors(arm, reference, levels)
    assert all(fitted_rate(levels, errors[:, k]) >= 1.7 for k in range(3))
    assert errors[-1].max() < 1e-3


def test_a_lumped_mass_on_a_spring_point_converges_at_second_order():
    """A lumped mass with rotary inertia at mid-span (a spring point for every even N) against 64
    Hermite elements. Measured rates 2.00, 2.01, 1.96; asserted >= 1.7. (Off the spring points
    the error is still O(h²) but its constant changes with where the mass sits in its piece,
    so the errors of successive N do not fall monotonically: docs/SEGMENTS.md.)"""
    arm = Arm.planar([Link.flexible(1.0, 0.5, 2.0, lumped_masses=(LumpedMass(0.5, 0.2, 1e-3),))])
    reference = FiniteElementModel(arm, elements=64).natural_frequencies()[:3]
    errors = relative_errors(arm, reference)
    assert all(fitted_rate(LEVELS, errors[:, k]) >= 1.7 for k in range(3))


def test_a_lumped_mass_at_the_tip_is_the_tip_payload():
    """The same point mass and rotary inertia given as a lumped mass at s = L or as the tip
    payload: the same rigid piece, so the same frequencies to round-off (1e-12)."""
    lumped = Arm.planar([Link.flexible(1.0, 0.5, 2.0, lumped_masses=(LumpedMass(1.0, 0.2, 1e-3),))])
    payload = Arm.planar([Link.flexible(1.0, 0.5, 2.0)], payload=Payload(0.2, 1e-3))
    np.testing.assert_allclose(
        FiniteSegmentModel(lumped, segments=5).natural_frequencies(),
        FiniteSegmentModel(payload, segments=5).natural_frequencies(),
        rtol=1e-12,
    )


def test_the_sag_under_gravity_converges_to_the_elastica():
    """Rigid pieces are geometrically exact: the equilibrium tip of the lumped two-link arm at
    (45°, −45°) under gravity converges to the elastica of tests/exact_beam.py (an independent
    bar chain extrapolated to the continuous beam; its error estimate is 5e-16 m). Measured: tip
    errors 3.3e-5, 8.3e-6, 2.1e-6 m at 16, 32, 64 segments, rate 2.00; asserted: rate >= 1.7 and
    error < 1e-5 m at 64. For comparison the floating-frame FEM (32 elements, linear in the
    deflection) is 6.5e-3 m off at this tip motion of 9 cm, 4.0e-4 m with geometric stiffening."""
    angles = (math.pi / 4, -math.pi / 4)
    reference = exact_beam.lumped_two_link_reference(angles, count=0, bars=(32, 64, 128, 256))
    assert np.all(reference.tip_error < 1e-9)
    levels = (16, 32, 64)
    errors = []
    for n in levels:
        model = FiniteSegmentModel(presets.lumped_two_link(), segments=n)
        q = model.home()
        q[:2] = angles
        rest = model.equilibrium(q)
        errors.append(np.linalg.norm(model.tip_position(rest.q)[:2] - reference.tip))
    assert fitted_rate(levels, errors) >= 1.7, errors
    assert errors[-1] < 1e-5, errors


@pytest.mark.parametrize("preset", ["lumped_two_link", "azimuth_elevation"])
def test_mass_matrix_is_symmetric_positive_definite_and_kernels_match_the_oracle(preset):
    """M at a drawn configuration: symmetric to round-off, positive definite, and the compiled
    chain's M, h, G equal to the numpy oracle's (1e-10 of their size). The spatial arm bends in
    two planes (universal joints with their cardan bodies)."""
    arm = getattr(presets, preset)()
    model = FiniteSegmentModel(arm, segments=6)
    oracle = model.replace(compiled=False)
    rng = np.random.default_rng(7)
    q = 0.2 * rng.standard_normal(model.n_dof)
    qd = rng.standard_normal(model.n_dof)
    M = model.mass_matrix(q)
    assert np.abs(M - M.T).max() <= 1e-14 * np.abs(M).max()
    assert np.linalg.eigvalsh(M).min() > 0
    for name, args in (("mass_matrix", (q,)), ("bias_forces", (q, qd)), ("gravity_forces", (q,))):
        kernel, numpy = getattr(model, name)(*args), getattr(oracle, name)(*args)
        assert np.abs(kernel - numpy).max() <= 1e-10 * max(np.abs(numpy).max(), 1.0), name
    stiffness = model.gravity_stiffness(q)  # the chain's, reordered: its product along qd too
    assert (
        np.abs(model.gravity_stiffness_product(q, qd) - stiffness @ qd).max()
        <= 1e-12 * np.abs(stiffness).sum()
    )


def test_the_solvers_agree():
    """The chain's articulated bodies (``recursive``) and its composite solve give the same
    accelerations at a drawn state (1e-10 of their size)."""
    model = FiniteSegmentModel(presets.azimuth_elevation(), segments=4)
    rng = np.random.default_rng(3)
    q, qd = 0.2 * rng.standard_normal(model.n_dof), rng.standard_normal(model.n_dof)
    tau = rng.standard_normal(model.n_joints)
    recursive = model.forward_dynamics(q, qd, tau, "recursive")
    composite = model.forward_dynamics(q, qd, tau, "composite")
    assert np.abs(recursive - composite).max() <= 1e-10 * np.abs(composite).max()


def swinging_arm(damping: Damping | None = None) -> Arm:
    """Two soft links in a vertical plane, with hubs, a lumped mass and a payload; no friction."""
    links = [
        Link.flexible(0.5, 0.8, 2.0, damping=damping),
        Link.flexible(0.4, 0.6, 1.0, damping=damping, lumped_masses=(LumpedMass(0.2, 0.05, 1e-4),)),
    ]
    joints = [Joint(hub_inertia=1e-3), Joint(hub_mass=0.3)]
    return Arm.planar(links, payload=Payload(0.1, 1e-4), gravity=(0.0, -9.81), joints=joints)


def free_swing(model, t_end: float = 0.5) -> pd.DataFrame:
    q0 = model.home()
    q0[:2] = (0.5, 0.3)
    t_eval = np.linspace(0.0, t_end, 51)
    return simulate(
        model, (0.0, t_end), q0, np.zeros(model.n_dof), method="DOP853", rtol=1e-10, atol=1e-12, t_eval=t_eval
    )


def test_a_free_swing_conserves_energy():
    """No damping, no input: T + V stays at its start while ~8 J move between kinetic and
    potential energy. Measured drift 7e-15 J at rtol 1e-10 (2e-11 J at rtol 1e-6); asserted
    1e-8 of the energy exchanged."""
    model = FiniteSegmentModel(swinging_arm(), segments=4)
    frame = free_swing(model)
    names = list(model.coordinates)
    Q, QD = frame[names].to_numpy(float), frame[[f"{n}_dot" for n in names]].to_numpy(float)
    energy = np.array(
        [model.kinetic_energy(q, qd) + model.potential_energy(q) for q, qd in zip(Q, QD, strict=True)]
    )
    exchanged = frame["kinetic"].max()
    assert exchanged > 1.0 and np.abs(Q[:, 2:]).max() > 1e-3  # it swings and bends
    assert np.abs(energy - energy[0]).max() <= 1e-8 * exchanged


def test_link_damping_acts_on_the_springs():
    """Rayleigh β K is β times the spring stiffness (exact); modal ratios give each mode of a
    lone link, clamped at its locked joint, the damping 2ζω (1e-9); a damped swing loses energy
    exactly as its dissipation integral says (energy balance 1e-8 of the energy exchanged)."""
    beta = 1e-3
    model = FiniteSegmentModel(swinging_arm(Damping.rayleigh(0.0, beta)), segments=4)
    flex, q = model.flex, model.home()
    np.testing.assert_array_equal(
        model.damping_matrix(q)[flex, flex], beta * model.stiffness_matrix(q)[flex, flex]
    )
    frame = free_swing(model, t_end=0.3)
    assert frame["work_dissipated"].iloc[-1] > 0
    assert np.abs(frame["energy_balance_error"]).max() <= 1e-8 * frame["kinetic"].max()

    alone = FiniteSegmentModel(
        Arm.planar([Link.flexible(1.0, 0.5, 2.0, damping=Damping.modal(0.02))]), segments=6
    )
    omega, modes = alone.natural_frequencies(vectors=True)
    flex = alone.flex
    modal = modes[flex].T @ alone.damping_matrix(alone.home())[flex, flex] @ modes[flex]
    np.testing.assert_allclose(modal, np.diag(2 * 0.02 * omega), atol=1e-9 * omega.max())


def test_geometry_and_sign_conventions():
    """At home the points lie on the link axes; a positive in-plane spring angle lifts the tip
    along +y of the link (tip_w > 0), a positive out-of-plane one along +z (tip_v > 0), as the
    assumed modes and elements deflect."""
    arm = presets.azimuth_elevation()
    model = FiniteSegmentModel(arm, segments=4)
    fem = FiniteElementModel(arm, elements=2)
    q = model.home()
    np.testing.assert_allclose(model.tip_position(q), fem.tip_position(fem.home()), atol=1e-15)
    np.testing.assert_allclose(
        model.point_position(2, 0.3, q), fem.point_position(2, 0.3, fem.home()), atol=1e-15
    )
    for name, key in (("w2_4", "tip_w2"), ("v2_4", "tip_v2")):
        bent = q.copy()
        bent[model.coordinates.index(name)] = 1e-3
        deflections = model.tip_deflections(bent)
        assert deflections[key] > 0 and abs(deflections[key] - 1e-3 * arm.links[1].length / 8) < 1e-8


def test_state_space_outputs_follow_the_tip():
    """The linear model's tip rows (the chain's analytic tip Jacobian, reordered) equal
    Richardson-extrapolated central differences of tip_position (1e-8 of their size), and its
    tip-deflection rows differences of tip_deflections (the model has no basis to evaluate)."""
    from core.analysis.state_space import extrapolated_jacobian

    model = FiniteSegmentModel(presets.azimuth_elevation(), segments=3)
    q = model.home()
    q[:2] = (0.3, -0.2)
    rest = model.equilibrium(q)
    system = model.state_space(rest, outputs=("tip", "tip_deflection"))
    n = model.n_dof
    tip = extrapolated_jacobian(model.tip_position, rest.q)
    assert np.abs(system.C[:3, :n] - tip).max() <= 1e-8 * np.abs(tip).max()
    assert system.C.shape[0] == 3 + len(model.tip_deflections(rest.q))


def test_replace_and_rebuild_keep_the_options():
    """The Model contract: arguments recorded as given, replace changes one, rebuild on another
    arm equals a fresh model of it (M identical)."""
    arm = presets.lumped_two_link()
    model = FiniteSegmentModel(arm, segments={2: 3}, default_segments=2, compiled=False)
    assert model.arguments == {"arm": arm, "segments": {2: 3}, "default_segments": 2, "compiled": False}
    assert model.segments == {1: 2, 2: 3}
    finer = model.replace(segments=4)
    assert finer.segments == {1: 4, 2: 4} and finer.arguments["compiled"] is False
    heavier = dataclasses.replace(arm, payload=Payload(1.0))
    fresh = FiniteSegmentModel(heavier, segments={2: 3}, default_segments=2, compiled=False)
    q = 0.1 * np.arange(fresh.n_dof)
    np.testing.assert_array_equal(model.rebuild(heavier).mass_matrix(q), fresh.mass_matrix(q))


def test_geometric_stiffening_is_built_in():
    """Rigid pieces are geometrically exact: ``geometric_stiffening=True`` is accepted, recorded
    and gives the same model (documented in fem.segments)."""
    arm = presets.lumped_two_link()
    plain, stiffened = (
        FiniteSegmentModel(arm, segments=4),
        FiniteSegmentModel(arm, segments=4, geometric_stiffening=True),
    )
    assert stiffened.geometric_stiffening and stiffened.arguments["geometric_stiffening"] is True
    np.testing.assert_array_equal(plain.natural_frequencies(), stiffened.natural_frequencies())


@pytest.mark.parametrize(
    ("arm", "options", "message"),
    [
        (presets.rrp_translating(), {}, "link 3: a flexible link on a prismatic joint translates"),
        (presets.one_flexible_link(), {"segments": 0}, "link 1: segments must be an integer >= 1, got 0"),
        (presets.one_flexible_link(), {"segments": 2.5}, "link 1: segments must be an integer, got 2.5"),
        (
            presets.one_flexible_link(),
            {"segments": MAX_SEGMENTS + 1},
            f"segments must be at most {MAX_SEGMENTS}",
        ),
        (presets.one_flexible_link(), {"segments": {2: 4}}, "segments: links [2] are not flexible links"),
        (
            dataclasses.replace(presets.lumped_two_link(), tip_rotation="chord"),
            {},
            "tip_rotation: 'chord' turns what link 1 carries",
        ),
    ],
)
def test_what_a_chain_of_rigid_pieces_cannot_represent_is_refused(arm, options, message):
    with pytest.raises(ValueError, match=message.replace("[", r"\[").replace("]", r"\]")):
        FiniteSegmentModel(arm, **options)


def test_the_registry_counts_coordinates_without_building():
    """Discretization.coordinates (the registry's count) equals the model's, in one and two
    bending planes; the config limit mirrors the model's."""
    assert CONFIG_MAX_SEGMENTS == MAX_SEGMENTS == BACKENDS["segments"].size.limit
    for arm in (presets.lumped_two_link(), presets.space_arm_3link()):
        case = Discretization("segments", "clamped", 5)
        assert case.coordinates(arm) == case.build(arm).n_dof


STUDY = textwrap.dedent(
    """
    [study]
    name = "segments"
    kind = "frequencies"

    [arm]
    preset = "lumped-two-link"

    [sweep]
    backends = ["amm", "fem", "segments"]
    shapes = ["clamped-free"]
    modes = [4]
    elements = [8]
    segments = [16]

    [analysis]
    n_frequencies = 3

    [report]
    formats = ["csv"]
    plots = false
    """
)


def test_a_frequencies_study_pairs_segments_with_the_other_backends(tmp_path):
    """AMM, FEM and segments in one frequencies study, run from the CLI: the agreement table
    pairs the segments' modes with the reference (FEM, the highest-ranked backend's finest case)
    at MAC > 0.99 (measured 0.9947 to 0.9974 at 16 segments against 8 elements, each at its own
    equilibrium under gravity)."""
    study = tmp_path / "study.toml"
    study.write_text(STUDY)
    assert cli.main(["run", str(study), "--output", str(tmp_path / "out")]) == 0
    table = pd.read_csv(tmp_path / "out" / "agreement.csv")
    segments = table[table["backend"] == "segments"]
    assert segments["segments"].tolist() == [16] * 3
    assert (segments["paired_mode"] == segments["mode"]).all() and (segments["mac"] > 0.99).all()
    reference = table[table["backend"] == "fem"]
    np.testing.assert_allclose(reference["mac"], 1.0, rtol=1e-12)


@pytest.mark.parametrize(
    ("sizes", "message"),
    [
        ("[0]", "sweep.segments[1]: must be > 0, got 0"),
        ("[3000]", "sweep.segments[1]: must be <= 2000 (every segment is a rigid body of one dense chain)"),
        ("[2.5]", "sweep.segments[1]: input should be a valid integer, got 2.5"),
    ],
)
def test_the_sweep_validates_segment_counts(sizes, message, tmp_path, capsys):
    study = tmp_path / "study.toml"
    study.write_text(STUDY.replace("segments = [16]", f"segments = {sizes}"))
    assert cli.main(["show", str(study)]) == 2
    assert message in capsys.readouterr().err


def test_the_verify_kind_runs_segment_cases(tmp_path):
    """The shipped verify example (a spatial arm: EI_out, a lumped mass, a payload) with segment
    cases: every check passes at the kind's tolerances, and the energy, power and Ṁ − 2C skew
    identities hold to 1e-8 (measured at most 3.7e-10 at 1 and 2 segments)."""
    verify = cli.examples()["verify"].read_text()
    verify = verify.replace('backends = ["amm", "fem"]', 'backends = ["segments"]\nsegments = [1, 2]')
    (tmp_path / "verify.toml").write_text(verify + '\n[report]\nformats = ["csv"]\nplots = false\n')
    assert cli.main(["run", str(tmp_path / "verify.toml"), "--output", str(tmp_path / "verify")]) == 0
    checks = pd.read_csv(tmp_path / "verify" / "results.csv")
    assert set(checks["backend"]) == {"segments"} and set(checks["segments"]) == {1, 2}
    assert checks["passed"].all()
    identities = checks[checks["check"].isin(["energy", "power", "skew"])]
    assert len(identities) == 6 and (identities["worst"] <= 1e-8).all()
