"""The linear algebra of the batched fits: weighted Gram matrices, and ridge by Woodbury.

Every product here is one per fit (a stack of small products, or an elementwise reduction),
never one large product across fits: each fit's rounding is then its own, whatever else is
in its batch (single-threaded BLAS, as :func:`bayescv.cv._batched.batched_predictions` sets).

**Ridge of many K-fold training sets from one inverse (the Woodbury identity).**
A training set that leaves out the rows U (m × q) of the design has the normal equations
(A − UᵀU) β = c − Uᵀy_U, with A = XᵀX + P and c = Xᵀy those of all the rows. With M = A⁻¹
and the full fit β₀ = M c, the Woodbury identity gives its solution as

    β = β₀ − (U M)ᵀ (I − U M Uᵀ)⁻¹ (y_U − U β₀),

an m × m system per training set instead of a q × q one, and no Gram matrix per training set:
U M is a gather of the rows of X M, computed once. ``I − U M Uᵀ`` is I minus the left-out
rows' block of the ridge hat matrix, near singular when a left-out row has leverage near 1;
the training set's own system is then as ill-conditioned (tests/test_batched.py measures
both solutions equally close to scikit-learn's at leverage 1 − 1e-8). As a safety net every
solution is checked against its own normal equations, and a fit whose relative residual is
above :data:`MAX_RESIDUAL` is left to the direct solve. Fits are grouped by the
number of rows they leave out, so no system is padded and each fit's arithmetic depends on
its own rows only, never on the others in the batch.
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "MAX_RESIDUAL",
    "SLICE_BYTES",
    "gram",
    "left_out_index",
    "linear",
    "logistic_hessian",
    "ridge_by_woodbury",
    "rowdot",
    "training_gram",
]


def gram(weights: np.ndarray, A: np.ndarray) -> np.ndarray:
    """Weighted Gram matrices Aᵀ diag(w_b) A for each row w_b of `weights`.

    One matrix product per training set, of the same shape whatever the batch, run with a
    single BLAS thread (:func:`bayescv.cv._batched.batched_predictions` sets it): each
    fit's rounding depends neither on which folds share its batch nor on ``n_jobs``.
    """
    return np.matmul(A.T[None, :, :] * weights[:, None, :], A)


def training_gram(weights: np.ndarray, A: np.ndarray) -> np.ndarray:
    """Weighted Gram matrices, by downdating AᵀA when each training set leaves out few rows.

    A K-fold training set is all rows but its test rows: its Gram matrix is AᵀA less the
    test rows' own, (K−1)× less work than :func:`gram`. Used when every weight is 0 or 1
    and at most a third of the rows are left out; the full product and each fit's downdate
    do not depend on the batch, so neither does the result.
    """
    left_out = weights == 0
    n_out, row, start = left_out_index(left_out)
    width = int(n_out.max(initial=0))
    if not np.all(left_out | (weights == 1)) or 3 * width > A.shape[0]:
        return gram(weights, A)
    # Each fit's left-out rows in index order, padded with a row of zeros (index n).
    fit = np.repeat(np.arange(weights.shape[0]), n_out)
    order = np.full((weights.shape[0], width), A.shape[0])
    order[fit, np.arange(row.size) - start[fit]] = row
    rows = np.vstack([A, np.zeros((1, A.shape[1]))])[order]
    left = np.matmul(rows.transpose(0, 2, 1), rows)
    return np.subtract(A.T @ A, left, out=left)


def left_out_index(left_out: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each fit's left-out rows, fit by fit in index order: ``(n_out, rows, start)``.

    Fit b leaves out ``rows[start[b] : start[b] + n_out[b]]`` (`left_out` is (B, n) bool).
    """
    n_out = left_out.sum(axis=1)
    _, rows = np.nonzero(left_out)
    return n_out, rows, np.cumsum(n_out) - n_out


def rowdot(weights: np.ndarray, A: np.ndarray) -> np.ndarray:
    """Σ_n w_bn A_n· for each b: one matrix-vector product per row of `weights`."""
    return np.matmul(weights[:, None, :], A)[:, 0, :]


def linear(beta: np.ndarray, A: np.ndarray) -> np.ndarray:
    """Return A β_b for each row β_b of `beta`, shape (B, n): one product per fit."""
    return np.matmul(A, beta[:, :, None])[:, :, 0]


#: Bytes of the largest array of one slice in :func:`ridge_by_woodbury`: below glibc's
#: default threshold for serving an allocation by mmap (128 KiB).
SLICE_BYTES = 112 * 1024
#: Largest relative residual ‖(A − UᵀU)β − (c − Uᵀy_U)‖∞ / (‖A‖∞‖β‖∞ + ‖c‖∞) accepted.
MAX_RESIDUAL = 1e-10


def ridge_by_woodbury(
    Xa: np.ndarray, y: np.ndarray, left_out: np.ndarray, penalty: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Solve every training set's penalised least squares by downdating the full inverse.

    Parameters
    ----------
    Xa : ndarray of shape (n, q)
        Design; for an intercept, the features shifted by their means and a column of ones.
    y : ndarray of shape (n,)
        Targets, shifted by their mean for an intercept.
    left_out : ndarray of bool, shape (B, n)
        The rows each training set leaves out (every other row counts once).
    penalty : ndarray of shape (q,)
        Diagonal of P (0 for the intercept); A = XaᵀXa + diag(penalty) must be positive
        definite.

    Returns
    -------
    beta : ndarray of shape (B, q)
        Solutions; rows where `ok` is False are NaN.
    ok : ndarray of bool, shape (B,)
        Whether the solution passed the residual check.
    """
    B, q = left_out.shape[0], Xa.shape[1]
    A = Xa.T @ Xa + np.diag(penalty)
    c = Xa.T @ y
    M = np.linalg.inv(A)
    beta0 = M @ c
    XM, fitted = Xa @ M, Xa @ beta0
    beta = np.full((B, q), np.nan)
    ok = np.zeros(B, dtype=bool)
    n_out, row, start = left_out_index(left_out)
    scale_A = np.abs(A).sum(axis=1).max()
    # Groups by m, in slices whose largest arrays, (G, m, q), stay under SLICE_BYTES: such
    # arrays come from the heap and are reused by the next slice, where larger ones are
    # fresh memory the system must page in (a third of the time at n = 100, p = 20).
    slices = []
    for m in np.unique(n_out):
        same = np.flatnonzero(n_out == m)
        size = max(1, SLICE_BYTES // (8 * max(int(m), 1) * q))
        slices += [same[i : i + size] for i in range(0, same.size, size)]
    for group in slices:
        m = int(n_out[group[0]])
        order = row[start[group][:, None] + np.arange(m)]  # (G, m)
        U, W, y_U = Xa[order], XM[order], y[order]  # U, U M and y_U: (G, m, q), (G, m)
        H = -np.matmul(W, U.transpose(0, 2, 1))
        H[:, np.arange(m), np.arange(m)] += 1.0  # I − U M Uᵀ
        resid = y_U - fitted[order]
        v = np.linalg.solve(H, resid[..., None])[..., 0] if m else resid
        b = beta0 - np.matmul(W.transpose(0, 2, 1), v[..., None])[..., 0]
        # Each training set's own normal equations, (A − UᵀU) b − (c − Uᵀy_U), checked.
        Ub = np.matmul(U, b[..., None])[..., 0]
        r = (
            np.matmul(A, b[..., None])[..., 0]
            - c
            - np.matmul(U.transpose(0, 2, 1), (Ub - y_U)[..., None])[..., 0]
        )
        bound = MAX_RESIDUAL * (scale_A * np.abs(b).max(axis=1) + np.abs(c).max())
        good = np.abs(r).max(axis=1) <= bound
        beta[group[good]] = b[good]
        ok[group] = good
    return beta, ok


def logistic_hessian(Xa, w, prob, pen, weight, reg, start_curvature=None):
    """Penalised Hessians of the logistic objective, plus a 1e-12 relative ridge for safety.

    At the common start every fit's curvature p(1 − p) is the same vector, so the Hessians
    are one weighted Gram matrix downdated by each fit's left-out rows
    (:func:`~bayescv.cv._batched_algebra.training_gram`).
    """
    if start_curvature is None:
        H = gram(weight * w * prob * (1.0 - prob), Xa)
    else:
        H = training_gram(w, Xa * np.sqrt(start_curvature)[:, None])
        H *= weight
    diag = np.arange(Xa.shape[1])
    H[:, diag, diag] += reg * pen + 1e-12 * np.trace(H, axis1=1, axis2=2)[:, None] / diag.size
    return H
