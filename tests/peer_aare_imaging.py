# SPDX-License-Identifier: BSD-3-Clause
"""peer_aare_imaging.py: aare's η functions and its Interpolator against
ours (docs/spec.md §7.3-§7.6) on clusterfind's flat-field runs.

usage: peer_aare_imaging.py LIBCLUSTERCORE FUNCTION SIZE CAL.clust CAL.eta
                            RUN.clust PHOTONS.npy IMAGE.npy SUBPIXELS
                            MAX_OTHER_SUBPIXEL MIN_WITHIN_ONE

FUNCTION is eta2, eta2full or eta3. CAL.clust and CAL.eta are a
calibration run's clusters and the η histogram clusterfind made of them;
RUN.clust, PHOTONS.npy and IMAGE.npy another run's clusters, positions and
interpolated image from that histogram with SUBPIXELS sub-pixels a pixel.

What is compared, and why it must agree (aare 2026.9.30's sources):

- η. aare's calculate_eta2 / calculate_full_eta2 / calculate_eta3 on the
  clusters as aare's ClusterFile reads them, and our cc_eta (through
  the clustercore package) on the same file, must give the same doubles, bit for bit, for
  every cluster we call interpolable, and the same 2x2 window. aare has no
  notion of an uninterpolable cluster: it leaves η at 0 where a
  denominator is 0, and takes negative denominators and η outside the
  range as they come. So our validity is predicted from aare's side: a
  cluster is ours to refuse exactly when its denominator (from aare's
  window for eta2, aare's `sum` for eta2full and eta3) is not positive or
  aare's η lies outside the range; that prediction must match ours.
- The histogram. Our H must be the histogram of aare's η of the
  calibration run's interpolable clusters, on our bins.
- Positions. aare's Interpolator is built from our H (as an (ηx, ηy,
  energy) cube with one energy bin spanning everything, and our bin edges)
  and interpolates the run's interpolable clusters with its own η. aare
  places a photon as we do (Interpolator.hpp: x = cx + 0.5 + dX + u for
  eta2 and eta2full, x = cx + u for eta3, the same for y, with x the
  column and pixel i spanning [i, i+1)), so the positions are compared
  without any conversion. The maps differ on purpose, though:
    * aare's u is a step: the table's value at the photon's bin
      (transform_eta_values, with bilinear interpolation commented out),
      where ours is linear in η within the bin;
    * aare's table is (C(i) - H0) / (T - H0) along the line, C the running
      sum, T the line's total and H0 its first bin, so that bin 0 maps to
      0 and the last to 1, where ours runs from C(i-1)/T to C(i)/T;
    * aare bins with last_smaller: bin i is (e_i, e_i+1], so an η exactly
      on an inner edge goes one bin lower than ours (and conditions the
      other axis on a neighbouring line);
    * aare maps a line of H that is empty to 0, ours to the identity.
  From the first two, for every photon off the edges and on a non-empty
  line:  -H[i]/T <= u_ours - u_aare <= H0/T, exactly. That is checked
  photon by photon; the sub-pixel figures are printed and bounded by the
  limits given.
- Energies: aare's photon energy (its η's `sum`: the 2x2 window's for
  eta2 and eta2full, the 3x3's for eta3) must be ours, clusterfind run
  with --energy sum2x2 or sum to match.
- The image: ours must be the sub-pixel histogram of our positions.
"""
import os
import sys

import numpy as np
import aare

FUNCTIONS = {'eta2': 0, 'eta2full': 1, 'eta3': 2}
RANGES = {'eta2': (0.0, 1.0), 'eta2full': (0.0, 1.0), 'eta3': (-0.5, 0.5)}
AARE_ETA = {'eta2': aare.calculate_eta2, 'eta2full': aare.calculate_full_eta2,
            'eta3': aare.calculate_eta3}
AARE_INTERPOLATE = {'eta2': 'interpolate', 'eta2full': 'interpolate_full_eta2',
                    'eta3': 'interpolate_eta3'}

ETA_HEADER = np.dtype([('magic', 'S8'), ('version', '<u4'), ('function', '<u4'),
                       ('bins', '<u4'), ('windowed', '<u4'),
                       ('window_energy', '<u4'), ('counts_crc', '<u4'),
                       ('low', '<f8'), ('high', '<f8'), ('window_low', '<f8'),
                       ('window_high', '<f8'), ('photons', '<u8'),
                       ('outside', '<u8'), ('uninterpolable', '<u8')])
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'python'))
import clustercore  # noqa: E402 (from the source tree)

failures = []


def check(ok, what):
    if not ok:
        failures.append(what)
        print("FAIL: " + what)


def read_clust(path, size):
    """Our .clust file as one structured array, in file order, each
    cluster's values flat."""
    table = clustercore.read_clust(path, size)
    flat = np.zeros(len(table), [('x', '<u2'), ('y', '<u2'), ('data', '<i4', size * size)])
    flat['x'], flat['y'] = table['x'], table['y']
    flat['data'] = table['data'].reshape(len(table), -1)
    return flat


def our_eta(function, path, size):
    """cc_eta of every cluster of a .clust file."""
    with clustercore.ClustReader(path, size) as reader:
        parts = [clustercore.eta(clusters, function) for clusters in reader]
    return np.concatenate(parts) if parts else np.zeros(0, clustercore.analysis.ETA_DTYPE)


def aare_clusters(path, size, mine):
    """aare's ClusterFile reading our file: the same records as ours."""
    cf = aare.ClusterFile(path, cluster_size=(size, size), dtype=np.int32)
    cv = cf.read_clusters(max(len(mine), 1))
    cf.close()
    theirs = np.array(cv)
    same = (len(theirs) == len(mine) and np.array_equal(theirs['x'], mine['x'])
            and np.array_equal(theirs['y'], mine['y'])
            and np.array_equal(theirs['data'].reshape(len(theirs), -1),
                               mine['data']))
    check(same, "aare's ClusterFile reads other clusters from %s" % path)
    return cv


def in_range(function, theirs):
    low, high = RANGES[function]
    return ((theirs['x'] >= low) & (theirs['x'] <= high)
            & (theirs['y'] >= low) & (theirs['y'] <= high))


def predicted_valid(function, size, data, theirs):
    """Where we must find an η: aare's η in range and every denominator
    positive (spec §7.3), the denominators taken from aare's side."""
    ok = in_range(function, theirs)
    if function != 'eta2':
        # eta2full: the 2x2 window's sum; eta3: the 3x3 sum (aare's `sum`).
        return ok & (theirs['sum'].astype(np.int64) > 0)
    # eta2: L + R in the centre's row, T + B in its column, of aare's window
    # (corner c: 0 top-left, 1 top-right, 2 bottom-left, 3 bottom-right).
    q = data.reshape(len(data), size, size).astype(np.int64)
    c, n = size // 2, np.arange(len(data))
    left = np.isin(theirs['c'], (0, 2))
    top = np.isin(theirs['c'], (0, 1))
    side = np.where(left, c - 1, c + 1)
    above = np.where(top, c - 1, c + 1)
    return ok & (q[n, c, c] + q[n, c, side] > 0) & (q[n, c, c] + q[n, above, c] > 0)


def compare_eta(function, size, path, mine):
    """Our η against aare's on one file; returns (aare's ClusterVector,
    aare's η, our η)."""
    cv = aare_clusters(path, size, mine)
    theirs = AARE_ETA[function](cv)
    eta = our_eta(function, path, size)
    check(len(eta) == len(theirs),
          "%d clusters through cc_eta, %d through aare" % (len(eta), len(theirs)))
    if len(eta) != len(theirs):
        return cv, theirs, eta
    valid = eta['valid'] == 1
    expect = predicted_valid(function, size, mine['data'], theirs)
    bits = lambda a: np.ascontiguousarray(a).view('<u8')
    same = (bits(eta['x']) == bits(theirs['x'])) & (bits(eta['y']) == bits(theirs['y']))
    if function == 'eta3':
        window = (eta['dx'] == 0) & (eta['dy'] == 0)
    else:
        window = ((eta['dx'] == np.where(np.isin(theirs['c'], (0, 2)), -1, 0))
                  & (eta['dy'] == np.where(np.isin(theirs['c'], (0, 1)), -1, 0)))
    n_valid = int(valid.sum())
    print("  %s η of %d clusters: %d interpolable, %d identical doubles to "
          "aare's, %d in the same 2x2 window; %d uninterpolable (aare: %d of "
          "them out of range, %d with a denominator <= 0 that aare takes)"
          % (function, len(eta), n_valid, int((same & valid).sum()),
             int((window & valid).sum()), len(eta) - n_valid,
             int((~valid & ~in_range(function, theirs)).sum()),
             int((~valid & in_range(function, theirs)).sum())))
    check(np.array_equal(valid, expect),
          "%d clusters interpolable by one side only (ours %d, expected %d)"
          % (int((valid != expect).sum()), n_valid, int(expect.sum())))
    check(bool((same & window)[valid].all()),
          "%d interpolable clusters differ in η or window, first %s"
          % (int((~(same & window) & valid).sum()),
             np.flatnonzero(~(same & window) & valid)[:5].tolist()))
    return cv, theirs, eta


def read_eta_file(path):
    raw = open(path, 'rb').read()
    assert ETA_HEADER.itemsize == 88
    header = np.frombuffer(raw, ETA_HEADER, 1)[0]
    bins = int(header['bins'])
    check(header['magic'] == b'CCETACAL' and header['version'] == 1
          and len(raw) == 88 + 8 * bins * bins,
          "%s: not a version 1 calibration of %d bins" % (path, bins))
    return header, np.frombuffer(raw, '<u8', bins * bins, 88).reshape(bins, bins)


def bins_of(eta, low, high, bins):
    """Three binnings of η on B bins: the spec's (bin ix covers
    [low + ix w, low + (ix+1) w), η = high in the last), the quotient
    floor((η - low) / (high - low) B), and aare's last_smaller on the
    same edges (bin i is (e_i, e_i+1], the first bin also below e_0)."""
    edges = low + np.arange(bins + 1) * ((high - low) / bins)
    spec = np.minimum(np.searchsorted(edges, eta, side='right') - 1, bins - 1)
    quotient = np.minimum(((eta - low) / (high - low) * bins).astype(np.int64),
                          bins - 1)
    theirs = np.minimum(np.searchsorted(edges[1:], eta, side='left'), bins - 1)
    return edges, spec, quotient, theirs


def main():
    (library, function, size, cal_clust, cal_eta, run_clust, photons_path,
     image_path, subpixels, max_other, min_within) = sys.argv[1:12]
    size, subpixels = int(size), int(subpixels)
    os.environ['CLUSTERCORE_LIBRARY'] = library
    max_other, min_within = float(max_other), float(min_within)
    low, high = RANGES[function]
    print("aare %s vs ours, %s at %dx%d:" % (aare.__version__, function, size, size))

    # --- the calibration run: η, then the histogram ---------------------
    cal = read_clust(cal_clust, size)
    _, cal_theirs, cal_eta_ours = compare_eta(function, size, cal_clust, cal)
    header, h = read_eta_file(cal_eta)
    bins = h.shape[0]
    check(header['function'] == FUNCTIONS[function] and header['low'] == low
          and header['high'] == high and header['windowed'] == 0,
          "%s records function %d on [%g, %g], windowed %d"
          % (cal_eta, header['function'], header['low'], header['high'],
             header['windowed']))
    cal_valid = cal_eta_ours['valid'] == 1
    check(int(header['photons']) == int(h.sum()) == int(cal_valid.sum())
          and int(header['uninterpolable']) == int((~cal_valid).sum())
          and int(header['outside']) == 0,
          "header counts photons %d, uninterpolable %d, outside %d; H holds "
          "%d; the run has %d interpolable of %d clusters"
          % (header['photons'], header['uninterpolable'], header['outside'],
             h.sum(), cal_valid.sum(), len(cal_valid)))
    ex, ey = cal_theirs['x'][cal_valid], cal_theirs['y'][cal_valid]
    _, sx, qx, _ = bins_of(ex, low, high, bins)
    _, sy, qy, _ = bins_of(ey, low, high, bins)
    h_spec = np.bincount(sx * bins + sy, minlength=bins * bins).reshape(bins, bins)
    h_quot = np.bincount(qx * bins + qy, minlength=bins * bins).reshape(bins, bins)
    moved = int(((sx != qx) | (sy != qy)).sum())
    h64 = h.astype(np.int64)
    print("  histogram: %d x %d bins, %d photons; aare's η on the spec's bins "
          "gives our H %s, on bins floor((η-lo)/(hi-lo)·B) %s"
          % (bins, bins, h.sum(),
             "exactly" if np.array_equal(h64, h_spec)
             else "but for %d photons" % (np.abs(h64 - h_spec).sum() // 2),
             "exactly" if np.array_equal(h64, h_quot)
             else "but for %d photons" % (np.abs(h64 - h_quot).sum() // 2)))
    check(np.array_equal(h64, h_spec),
          "our H is not aare's η on the spec's bins (docs/spec.md §7.4); "
          "%d photons lie where the spec's edges and the quotient differ"
          % moved)

    # --- the imaging run: η, positions, image ----------------------------
    run = read_clust(run_clust, size)
    cv, theirs, eta = compare_eta(function, size, run_clust, run)
    photons = np.load(photons_path)
    check(len(photons) == len(run), "%d photons for %d clusters"
          % (len(photons), len(run)))
    if failures:
        return 1
    valid = eta['valid'] == 1
    cx, cy = run['x'].astype(np.float64), run['y'].astype(np.float64)
    check(np.array_equal(photons['x'][~valid], cx[~valid] + 0.5)
          and np.array_equal(photons['y'][~valid], cy[~valid] + 0.5),
          "uninterpolable photons not at their centre pixel's middle")

    edges = low + np.arange(bins + 1) * ((high - low) / bins)
    cube = np.ascontiguousarray(h.astype(np.float64).reshape(bins, bins, 1))
    interpolator = aare.Interpolator(cube, edges, edges.copy(),
                                     np.array([-np.inf, np.inf]))
    # No conversion of coordinates: aare's Interpolator::interpolate
    # (Interpolator.hpp:269-277) gives x = cx + 0.5 + u + dX for eta2 and
    # eta2full (dX = -1 for a window left of the centre) and x = cx + u for
    # eta3, the same for y, with (cx, cy) the cluster's (x, y) as our
    # .clust file holds them (column, row); spec §7.6 is the same formula.
    # Only our interpolable clusters go in: aare throws past the last edge.
    mask = np.ascontiguousarray(valid, dtype=np.bool_)
    placed = np.array(getattr(interpolator, AARE_INTERPOLATE[function])(cv(mask)))
    mine = photons[valid]
    dx, dy = placed['x'] - mine['x'], placed['y'] - mine['y']

    # Photon by photon: the difference is aare's step map against our
    # linear one, off the edges (all binnings agree) and on lines of H
    # that are not empty.
    e = eta[valid]
    _, sx, qx, ax = bins_of(e['x'], low, high, bins)
    _, sy, qy, ay = bins_of(e['y'], low, high, bins)
    off_edge = (sx == qx) & (sx == ax) & (sy == qy) & (sy == ay)
    row_total = h.sum(axis=0).astype(np.float64)     # T of line iy, along ix
    column_total = h.sum(axis=1).astype(np.float64)  # T of line ix, along iy
    hf = h.astype(np.float64)
    lined = off_edge & (row_total[sy] > 0) & (column_total[sx] > 0)
    tol = 1e-9  # x near 400 is rounded to 6e-14, in another order than ours
    with np.errstate(divide='ignore', invalid='ignore'):
        ok_x = ((-dx >= -hf[sx, sy] / row_total[sy] - tol)
                & (-dx <= hf[0, sy] / row_total[sy] + tol))
        ok_y = ((-dy >= -hf[sx, sy] / column_total[sx] - tol)
                & (-dy <= hf[sx, 0] / column_total[sx] + tol))
    explained = ok_x & ok_y
    check(bool(explained[lined].all()),
          "%d photons differ from aare by more than the step of aare's map, "
          "first %s" % (int((~explained & lined).sum()),
                        np.flatnonzero(~explained & lined)[:5].tolist()))

    n = len(mine)
    s = float(subpixels)

    def other_subpixel(a, b):
        return ((np.floor(a['x'] * s) != np.floor(b['x'] * s))
                | (np.floor(a['y'] * s) != np.floor(b['y'] * s)))

    other = other_subpixel(placed, mine)
    within = (np.abs(dx) <= 1 / s) & (np.abs(dy) <= 1 / s)
    share_other = other.sum() / max(n, 1)
    share_within = within.sum() / max(n, 1)
    on_edge = (sx != ax) | (sy != ay)
    print("  positions of %d photons (and %d uninterpolable, at their centre "
          "pixel's middle): %.3g identical to aare's, %.4g within 1/%d pixel, "
          "%.3g in another of the %dx%d sub-pixels; max |dx| %.3g, |dy| %.3g, "
          "rms %.3g, %.3g pixel; energies %s"
          % (n, len(run) - n, ((dx == 0) & (dy == 0)).sum() / max(n, 1),
             share_within, subpixels, share_other, subpixels, subpixels,
             np.abs(dx).max(initial=0), np.abs(dy).max(initial=0),
             np.sqrt(np.mean(dx * dx)) if n else 0,
             np.sqrt(np.mean(dy * dy)) if n else 0,
             "identical" if np.array_equal(placed['energy'], mine['energy'])
             else "differ"))
    print("  within aare's step: %d photons; not checked: %d with η on an "
          "inner bin edge (aare bins them one lower), %d more where the "
          "quotient (η-lo)/(hi-lo)·B bins off the spec's edges, %d on an "
          "empty line of H"
          % (int(lined.sum()), int(on_edge.sum()),
             int((~off_edge & ~on_edge).sum()), int((off_edge & ~lined).sum())))
    # For comparison only: aare's rosenblatttransform takes the marginal CDF
    # of ηx (and ηy's given ηx), where the spec (§7.5) conditions both.
    rosenblatt = aare.Interpolator(edges, edges.copy(), np.array([-np.inf, np.inf]))
    rosenblatt.rosenblatttransform(cube)
    marginal = np.array(getattr(rosenblatt, AARE_INTERPOLATE[function])(cv(mask)))
    print("  (not checked) aare's rosenblatttransform map instead: %.3g in "
          "another sub-pixel, rms dx %.3g, dy %.3g pixel"
          % (other_subpixel(marginal, mine).sum() / max(n, 1),
             np.sqrt(np.mean((marginal['x'] - mine['x']) ** 2)) if n else 0,
             np.sqrt(np.mean((marginal['y'] - mine['y']) ** 2)) if n else 0))
    # aare's photon energy is its η's `sum`: the 2x2 window's for eta2 and
    # eta2full, the 3x3's for eta3 (run with --energy sum2x2 or sum).
    check(np.array_equal(placed['energy'], mine['energy']),
          "%d photons with another energy than aare's"
          % int((placed['energy'] != mine['energy']).sum()))
    check(n > 0 and share_other <= max_other,
          "more than %g of photons in another sub-pixel than aare's" % max_other)
    check(n > 0 and share_within >= min_within,
          "fewer than %g of photons within one sub-pixel of aare's" % min_within)

    # Our image: the photons' sub-pixels (spec §7.7), clipped to the image.
    image = np.load(image_path)
    rows, cols = image.shape
    col = np.clip(np.floor(photons['x'] * s), 0, cols - 1).astype(np.int64)
    row = np.clip(np.floor(photons['y'] * s), 0, rows - 1).astype(np.int64)
    expect = np.bincount(row * cols + col, minlength=rows * cols).reshape(rows, cols)
    check(np.array_equal(image.astype(np.int64), expect),
          "the image is not the histogram of the photons' sub-pixels "
          "(%d bins differ)" % int((image != expect).sum()))
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main())
