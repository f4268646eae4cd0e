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
from core.rotations import skew


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
        E_y = np.zeros((n, m))
        E_y[:, :n] = np.eye(n)
        E_z = np.zeros((n, m))
        if planes == 2:
            E_z[:, n:] = np.eye(n)
        self.planes = planes
        self.E = (E_y, E_z)
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
            (np.diag([0.0, J, J]) @ psi for J, psi in zip(inertias, psi_rows)), np.zeros((3, m))
        )
        self.rotary_δδ = sum(
            (psi.T @ np.diag([0.0, J, J]) @ psi for J, psi in zip(inertias, psi_rows)), np.zeros((m, m))
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

    def gravity_wrench(self, delta: np.ndarray, g_body: np.ndarray) -> np.ndarray:
        """Generalized gravity force conjugate to ν, shape (B, 6 + m), for δ (B, m), g_b (B, 3).

        V = −(m g·p + g_b·S₁(δ)); returns (m g_b, S₁ × g_b, Aᵀ g_b).
        """
        S1 = self.first_moment(delta)
        return np.concatenate([self.mass * g_body, np.cross(S1, g_body), g_body @ self.A], axis=1)
