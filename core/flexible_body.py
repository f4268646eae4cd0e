"""Inertia of one flexible link in the floating frame formulation.

A point of the beam (and each lumped mass) at material coordinate s sits at
ρ(s) = s e_x + Φ(s) δ in the beam frame, where the rows of Φ(s) (3 × m) are
0, φ(s)ᵀE_y and φ(s)ᵀE_z (E_y, E_z place the mode amplitudes of the two bending
planes into the link's coordinates δ). With the beam frame's velocity v and
angular velocity Ω (both in beam-frame axes), the kinetic energy is exactly

    T = ½ νᵀ M_b(δ) ν,   ν = (v, Ω, δ̇),

    M_b = [[ m I        −S̃₁(δ)     A      ],
           [ S̃₁(δ)      I_Ω(δ)     M_Ωδ(δ)],
           [ Aᵀ         M_Ωδᵀ      M_δδ   ]]

with the first moment S₁ = ∫ρ dm, the inertia I_Ω = ∫(ρᵀρ 1 − ρρᵀ) dm (quadratic
in δ: the second-order terms that stiffen M_rr), M_Ωδ = ∫ρ̃ Φ dm and
M_δδ = ∫ΦᵀΦ dm. Every integral follows from the basis data (∫φ, ∫sφ, ∫φφᵀ) and
the shape values at the lumped masses, so it is exact for both backends.

Lumped masses also carry rotary inertia J about the bending axes (tensor
diag(0, J, J) in the beam frame), turning with the cross-section by the small
rotation Ψ(s)δ = (0, −w_z'(s), w_y'(s)); that first-order rotation is what the
model keeps (the rotation of the inertia tensor itself is of higher order).
"""

from __future__ import annotations

import numpy as np

from core.arm import Link
from core.basis import BeamBasis
from core.rotations import cross, skew


def _plane_selectors(n: int, planes: int) -> tuple[np.ndarray, np.ndarray]:
    """E_y, E_z (n, n·planes): pick the in-plane and out-of-plane coordinates of
    a link's n·planes flexible coordinates (E_z is zero for one plane)."""
    E_y = np.zeros((n, n * planes))
    E_y[:, :n] = np.eye(n)
    E_z = np.zeros((n, n * planes))
    if planes == 2:
        E_z[:, n:] = np.eye(n)
    return E_y, E_z


class FlexibleBody:
    """Precomputed, δ-independent inertia data of one flexible link.

    Parameters
    ----------
    link : Link
        A flexible link.
    basis : BeamBasis
        Its basis (the same functions in both bending planes).
    planes : int
        1 (in-plane bending only) or 2 (also out-of-plane).
    """

    def __init__(self, link: Link, basis: BeamBasis, planes: int) -> None:
        n = basis.n
        m = n * planes
        self.n_coordinates = m
        self.planes = planes
        self.E = E_y, E_z = _plane_selectors(n, planes)
        rho = link.mass_per_length
        L = link.length
        lumped = link.lumped_masses
        positions = np.array([lm.position for lm in lumped], dtype=float)
        masses = np.array([lm.mass for lm in lumped], dtype=float)
        inertias = np.array([lm.inertia for lm in lumped], dtype=float)
        if lumped:
            values, slopes = basis.evaluate(positions)  # (n, k)
        else:
            values = slopes = np.zeros((n, 0))

        self.mass = rho * L + masses.sum()
        self.first_x = rho * L**2 / 2 + masses @ positions
        self.second_x = rho * L**3 / 3 + masses @ positions**2
        mode_first = rho * basis.first + values @ masses  # ∫φ dm, (n,)
        mode_moment = rho * basis.moment + values @ (masses * positions)  # ∫sφ dm
        mode_mass = rho * basis.mass + (values * masses) @ values.T  # ∫φφᵀ dm
        # A = ∫Φ dm and B = ∫sΦ dm, shape (3, m); row 0 (axial) is zero.
        self.A = np.vstack([np.zeros(m), mode_first @ E_y, mode_first @ E_z])
        self.B = np.vstack([np.zeros(m), mode_moment @ E_y, mode_moment @ E_z])
        # N[a][b] = ∫ Φ_aᵀ Φ_b dm for the bending rows a, b ∈ {y, z}.
        self.N = [[E_a.T @ mode_mass @ E_b for E_b in self.E] for E_a in self.E]
        # Rotary inertia of the lumped masses.
        self.rotary_ΩΩ = np.diag([0.0, inertias.sum(), inertias.sum()])
        psi_rows = [  # Ψ_k = (0, −w_z', w_y') rows for every lumped mass
            np.vstack([np.zeros(m), -slopes[:, k] @ E_z, slopes[:, k] @ E_y]) for k in range(len(lumped))
        ]
        self.rotary_Ωδ = sum(
            (np.diag([0.0, J, J]) @ psi for J, psi in zip(inertias, psi_rows, strict=True)), np.zeros((3, m))
        )
        self.rotary_δδ = sum(
            (psi.T @ np.diag([0.0, J, J]) @ psi for J, psi in zip(inertias, psi_rows, strict=True)),
            np.zeros((m, m)),
        )
        self.M_δδ = sum(self.N[a][a] for a in range(planes)) + self.rotary_δδ
        self._skew_x_B = skew(np.array([1.0, 0.0, 0.0])) @ self.B

    def first_moment(self, delta: np.ndarray) -> np.ndarray:
        """S₁(δ) = ∫ρ dm in the beam frame [kg m], shape (..., 3) for δ of shape (..., m)."""
        return np.array([self.first_x, 0.0, 0.0]) + delta @ self.A.T

    def mass_matrix(self, delta: np.ndarray) -> np.ndarray:
        """M_b(δ) in beam-frame axes, shape (B, 6 + m, 6 + m) for δ of shape (B, m)."""
        dtype = np.result_type(delta, float)
        batch, m = delta.shape[0], self.n_coordinates
        S1 = self.first_moment(delta)
        b = delta @ self.B.T  # ∫ s Φδ dm, (B, 3)
        Q = np.zeros((batch, 3, 3), dtype=dtype)  # ∫ρρᵀ dm
        Q[:, 0, 0] = self.second_x
        Q[:, 0, 1:] = b[:, 1:]
        Q[:, 1:, 0] = b[:, 1:]
        for a in range(2):
            for c in range(2):
                Q[:, 1 + a, 1 + c] = np.einsum("bi,ij,bj->b", delta, self.N[a][c], delta)
        trace = Q[:, 0, 0] + Q[:, 1, 1] + Q[:, 2, 2]
        inertia = trace[:, None, None] * np.eye(3) - Q + self.rotary_ΩΩ
        # ∫ (Φδ) × Φ dm: only the axial component survives (Φ has no axial row).
        coupling = np.broadcast_to(self._skew_x_B + self.rotary_Ωδ, (batch, 3, m)).astype(dtype)
        coupling[:, 0, :] += delta @ self.N[0][1] - delta @ self.N[1][0]
        M = np.zeros((batch, 6 + m, 6 + m), dtype=dtype)
        M[:, :3, :3] = self.mass * np.eye(3)
        M[:, :3, 3:6] = -skew(S1)
        M[:, 3:6, :3] = skew(S1)
        M[:, :3, 6:] = self.A
        M[:, 6:, :3] = self.A.T
        M[:, 3:6, 3:6] = inertia
        M[:, 3:6, 6:] = coupling
        M[:, 6:, 3:6] = np.swapaxes(coupling, 1, 2)
        M[:, 6:, 6:] = self.M_δδ
        return M

    def kinetic_gradient(self, delta: np.ndarray, nu: np.ndarray) -> np.ndarray:
        """∂T/∂δ at fixed body velocity ν = (v, Ω, δ̇), T = ½ νᵀ M_b(δ) ν, shape (m,).

        From the δ-dependent blocks of :meth:`mass_matrix` (one configuration,
        δ and ν of shapes (m,) and (6 + m,)), in O(m²): T holds δ through
        S₁ · (v × Ω), ½(tr Q |Ω|² − Ωᵀ Q Ω) and Ω_x δᵀ(N_yz − N_zy) δ̇, so

            ∂T/∂δ = Aᵀ(v × Ω) + |Ω|² (N_yy + N_zz) δ − Ω_x (Ω_y B_y + Ω_z B_z)
                    − ½ Σ_ac Ω_a Ω_c (N_ac + N_ca) δ + Ω_x (N_yz − N_zy) δ̇

        (a, c over the bending rows y, z; B_y, B_z the rows of ∫sΦ dm).
        """
        v, omega, rate = nu[:3], nu[3:6], nu[6:]
        gradient = self.A.T @ cross(v, omega)
        gradient -= omega[0] * (omega[1] * self.B[1] + omega[2] * self.B[2])
        for a in range(self.planes):
            for c in range(self.planes):
                N = self.N[a][c]
                pair = N @ delta + N.T @ delta
                gradient -= 0.5 * omega[1 + a] * omega[1 + c] * pair
            gradient += (omega @ omega) * (self.N[a][a] @ delta)
        if self.planes == 2:
            gradient += omega[0] * ((self.N[0][1] - self.N[1][0]) @ rate)
        return gradient

    def gravity_wrench(self, delta: np.ndarray, g_body: np.ndarray) -> np.ndarray:
        """Generalized gravity force conjugate to ν, shape (B, 6 + m), for δ (B, m), g_b (B, 3).

        V = −(m g·p + g_b·S₁(δ)); returns (m g_b, S₁ × g_b, Aᵀ g_b).
        """
        S1 = self.first_moment(delta)
        return np.concatenate([self.mass * g_body, np.cross(S1, g_body), g_body @ self.A], axis=1)


class TranslatingBody:
    """Inertia of a flexible link that slides through the hub of a prismatic joint.

    The beam frame sits at the hub exit (fixed in the previous link), x along
    the joint axis. The beam of total length L slides along x: its free part
    s ∈ [0, l] (l = the joint variable) bends, w(s) = ψ(s/l) δ; the part inside,
    s ∈ [−(L − l), 0], moves rigidly. Following SPEC §4, a point of the free
    part moves with

        v + Ω × ρ + Φ δ̇ + (e_x + Φ_l δ) l̇,   Φ_l = ∂Φ/∂l|_s = −(η/l) Ψ'(η),

    and a point inside with v + Ω × ρ + e_x l̇; the convective term l̇ ∂w/∂s of
    the moving-beam equation is neglected (valid while the extension speed is
    small against the group velocity √(EI/ρA)/l). So the body velocity is
    ν = (v, Ω, δ̇, l̇) and T = ½ νᵀ M_b(δ, l) ν; the blocks of
    :class:`FlexibleBody` gain the l̇ row

        M_vl = m e_x + A_l δ,          A_l = ∫Φ_l dm,
        M_Ωl = ∫ ρ × (e_x + Φ_l δ) dm,
        M_δl = ∫Φᵀ Φ_l dm δ,
        M_ll = m + δᵀ ∫Φ_lᵀ Φ_l dm δ,

    and every integral is a power of l times an η-integral of the basis.
    Lumped masses on a translating link are not modelled (they would slide
    through the hub); the arm validation rejects them.
    """

    def __init__(self, link: Link, basis, planes: int) -> None:
        n = basis.n
        m = n * planes
        self.n_coordinates = m
        self.planes = planes
        self.E = E_y, E_z = _plane_selectors(n, planes)
        self.basis = basis
        self.rho = link.mass_per_length
        self.L = link.length
        self.mass = self.rho * self.L
        rho = self.rho
        # Rows (axial, y, z) of the unit integrals; the axial row is zero.
        rows = lambda v: np.vstack([np.zeros(m), v @ E_y, v @ E_z])  # noqa: E731
        self.A0 = rho * rows(basis.first)  # A = l A0
        self.B0 = rho * rows(basis.moment)  # ∫sΦ dm = l² B0
        self.Al0 = -rho * rows(basis.slope_first)  # A_l (l-independent)
        self.Bl0 = -rho * rows(basis.slope_second)  # ∫sΦ_l dm = l Bl0
        self.N0 = [[rho * E_a.T @ basis.mass @ E_b for E_b in self.E] for E_a in self.E]  # × l
        P = -rho * basis.cross  # ∫φ φ_lᵀ dm (l-independent)
        self.P = [[E_a.T @ P @ E_b for E_b in self.E] for E_a in self.E]
        self.P_δl = sum(self.P[a][a] for a in range(planes))
        self.R0 = sum(rho * E_a.T @ basis.slope_mass @ E_a for E_a in self.E[:planes])  # × 1/l
        self.M_δδ0 = sum(self.N0[a][a] for a in range(planes))  # × l

    def M_δδ(self, l) -> np.ndarray:
        """∫ΦᵀΦ dm at free length l [m]."""
        return l * self.M_δδ0

    def first_moment(self, delta: np.ndarray, l) -> np.ndarray:
        """S₁(δ, l) = ∫ρ dm over the whole beam (inside part included), shape (..., 3)."""
        l = np.asarray(l)
        axial = self.mass * (l - self.L / 2)  # ρ(l² − (L − l)²)/2 without cancellation
        lateral = l[..., None] * (delta @ self.A0.T)
        return lateral + axial[..., None] * np.array([1.0, 0.0, 0.0])

    def first_moment_rate(self, delta: np.ndarray) -> np.ndarray:
        """∂S₁/∂l, shape (..., 3)."""
        return delta @ self.A0.T + self.mass * np.array([1.0, 0.0, 0.0])

    def mass_matrix(self, delta: np.ndarray, l: np.ndarray) -> np.ndarray:
        """M_b(δ, l) in beam-frame axes, shape (B, 7 + m, 7 + m) for δ (B, m) and l (B,)."""
        dtype = np.result_type(delta, l, float)
        batch, m = delta.shape[0], self.n_coordinates
        l = np.asarray(l)
        lc = l[:, None, None]
        S1 = self.first_moment(delta, l)
        b = l[:, None] ** 2 * (delta @ self.B0.T)  # ∫ s Φδ dm
        Q = np.zeros((batch, 3, 3), dtype=dtype)
        Q[:, 0, 0] = self.rho * (l**3 + (self.L - l) ** 3) / 3
        Q[:, 0, 1:] = b[:, 1:]
        Q[:, 1:, 0] = b[:, 1:]
        for a in range(2):
            for c in range(2):
                Q[:, 1 + a, 1 + c] = l * np.einsum("bi,ij,bj->b", delta, self.N0[a][c], delta)
        trace = Q[:, 0, 0] + Q[:, 1, 1] + Q[:, 2, 2]
        inertia = trace[:, None, None] * np.eye(3) - Q
        A = lc * self.A0
        coupling = (lc**2 * (skew(np.array([1.0, 0.0, 0.0])) @ self.B0)).astype(dtype)
        coupling[:, 0, :] += l[:, None] * (delta @ self.N0[0][1] - delta @ self.N0[1][0])
        # The l̇ column.
        Al_delta = delta @ self.Al0.T  # (B, 3)
        Bl_delta = l[:, None] * (delta @ self.Bl0.T)
        A_delta = l[:, None] * (delta @ self.A0.T)
        v_l = Al_delta.astype(dtype)
        v_l[:, 0] += self.mass
        w_l = np.zeros((batch, 3), dtype=dtype)
        w_l[:, 0] = np.einsum("bi,ij,bj->b", delta, self.P[0][1] - self.P[1][0], delta)
        w_l[:, 1] = -Bl_delta[:, 2] + A_delta[:, 2]
        w_l[:, 2] = Bl_delta[:, 1] - A_delta[:, 1]
        d_l = delta @ self.P_δl.T
        l_l = self.mass + np.einsum("bi,ij,bj->b", delta, self.R0, delta) / l
        size = 7 + m
        M = np.zeros((batch, size, size), dtype=dtype)
        M[:, :3, :3] = self.mass * np.eye(3)
        M[:, :3, 3:6] = -skew(S1)
        M[:, 3:6, :3] = skew(S1)
        M[:, :3, 6:-1] = A
        M[:, 6:-1, :3] = np.swapaxes(A, 1, 2)
        M[:, 3:6, 3:6] = inertia
        M[:, 3:6, 6:-1] = coupling
        M[:, 6:-1, 3:6] = np.swapaxes(coupling, 1, 2)
        M[:, 6:-1, 6:-1] = lc * self.M_δδ0
        for rows, column in ((slice(0, 3), v_l), (slice(3, 6), w_l), (slice(6, size - 1), d_l)):
            M[:, rows, -1] = column
            M[:, -1, rows] = column
        M[:, -1, -1] = l_l
        return M

    def gravity_wrench(self, delta: np.ndarray, l: np.ndarray, g_body: np.ndarray) -> np.ndarray:
        """Generalized gravity force conjugate to ν = (v, Ω, δ̇, l̇), shape (B, 7 + m).

        V = −(m g·p + g_b·S₁(δ, l)): (m g_b, S₁ × g_b, Aᵀ g_b, g_b·∂S₁/∂l).
        """
        S1 = self.first_moment(delta, l)
        A_T_g = np.asarray(l)[:, None] * (g_body @ self.A0)
        rate = np.einsum("bi,bi->b", g_body, self.first_moment_rate(delta))
        return np.concatenate([self.mass * g_body, np.cross(S1, g_body), A_T_g, rate[:, None]], axis=1)
