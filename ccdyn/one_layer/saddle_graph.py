"""The saddle database and its graph: distinct saddles, how each joins the optima, minimax barriers.

As in the landscape databases of molecular energy landscapes (pele's ``Database``: minima and transition
states, each transition state with the two minima it connects), every search (one string per pair and
starting path, :mod:`ccdyn.one_layer.studies.saddles`) adds the saddle it certifies to a list of distinct
saddles, each with the two optima its sides reach; a pair of optima can be joined by several. The graph
is built from all of them: union-find over the saddles in decreasing energy (Kruskal's maximum spanning
forest; pele's disconnectivity graphs with the energy axis reversed, since we climb E) keeps, for each
pair, the highest saddle joining it (its lowest barrier) and gives the minimax energy between any two
optima. Pure numpy.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["classify_kind", "distinct_saddles", "merge_tree", "barrier_matrix"]


def classify_kind(ends, pair, energy=None, end_energies=None) -> str:
    """How a saddle found for ``pair`` (i, j) joins optima: ``ends`` the optima its two ascending sides
    reach (-1: none matched). With ``energy`` and ``end_energies`` (E of the two ends), a saddle not
    strictly below both ends (a side matched to the wrong optimum) is named too: it never enters the graph,
    so no barrier is negative."""
    a, b = sorted(int(e) for e in ends)
    if a < 0:
        return "an end reaches no known optimum"
    if a == b:
        return "both ends reach the same optimum"
    if energy is not None and end_energies is not None and not energy < min(float(v) for v in end_energies):
        return "not below both optima it reaches"
    return "direct" if {a, b} == set(int(p) for p in pair) else "joins another pair"


def distinct_saddles(found, *, tol: float = 1e-7) -> list:
    """The distinct saddles among ``found`` [(w (d,), energy, (i, j) ends, search index)] (certified, both
    ends known): one per end pair and position (||w - w'|| <= tol), in the order first found. Each:
    ``w``, ``energy``, ``ends`` (sorted), ``found_by`` (the search indices that reached it)."""
    out: list[dict[str, Any]] = []
    for w, e, ends, k in found:
        w = np.asarray(w, np.float64)
        key = tuple(sorted(int(v) for v in ends))
        for s in out:
            if s["ends"] == key and np.linalg.norm(s["w"] - w) <= tol:
                s["found_by"].append(int(k))
                break
        else:
            out.append({"w": w, "energy": float(e), "ends": key, "found_by": [int(k)]})
    return out


def merge_tree(n: int, edges) -> list:
    """Union-find over ``edges`` [(energy, i, j)] in decreasing energy (Kruskal, maximum spanning forest):
    the merges [(energy, i, j, members of i's group, members of j's group)] that join two groups."""
    parent = list(range(n))
    members = {i: [i] for i in range(n)}

    def find(i):
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    merges = []
    for e, i, j in sorted(edges, key=lambda t: -t[0]):
        ri, rj = find(i), find(j)
        if ri == rj:
            continue
        merges.append((float(e), int(i), int(j), list(members[ri]), list(members[rj])))
        parent[rj] = ri
        members[ri] = members[ri] + members.pop(rj)
    return merges


def barrier_matrix(energies, edges) -> np.ndarray:
    """(n, n) minimax saddle energy between every two optima over paths through the saddles ``edges``
    [(energy, i, j)]: the largest e such that i and j are joined by saddles all at energy >= e (NaN: not
    joined by the saddles found); diagonal: the optima's energies. Barrier from i: E_i - B[i, j]. A pair
    joined by several saddles counts through its highest (its lowest barrier)."""
    e = np.asarray(energies, np.float64)
    n = e.size
    b = np.full((n, n), np.nan)
    np.fill_diagonal(b, e)
    for en, _, _, gi, gj in merge_tree(n, edges):
        for a in gi:
            for c in gj:
                b[a, c] = b[c, a] = en
    return b
