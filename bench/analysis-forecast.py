#!/usr/bin/env python3
"""analysis-forecast.py — the plateau interval and until: plateau on the real recordings in tests/data, through heatcurvectl analyse.

For each recording's first load (its phase column): the final plateau is
`heatcurvectl analyse` on the whole load; the load is then cut at 20, 30,
... 100 % and each cut analysed alone, to see whether [low, high] covers
the final plateau and how wide it is; and cut every sample from 10 % on,
to find where until: plateau (plateau_reached) would first stop, with the
horizon the load's own length (the phase's max). A load counts as flat at
its end when the 30-s means of its last 40 % stay within 0.5 °C; on those
the rule must stop, within 0.5 °C of the final plateau.
Usage: bench/analysis-forecast.py [build/cli/heatcurvectl] [FILE ...]
"""
import csv, glob, gzip, io, json, os, statistics, subprocess, sys, tempfile

ctl = sys.argv[1] if len(sys.argv) > 1 else 'build/cli/heatcurvectl'
files = sys.argv[2:] or sorted(glob.glob('tests/data/*.csv') + glob.glob('tests/data/*.csv.gz'))
# one of a recording kept both ways: the compressed one
files = [f for f in files if not (f.endswith('.csv') and f + '.gz' in files)]


def read(path):
    raw = gzip.open(path, 'rt') if path.endswith('.gz') else open(path)
    with raw:
        text = raw.read()
    rows = list(csv.DictReader(io.StringIO(text)))
    return text.splitlines()[0], rows


def analyse(header, rows, horizon):
    with tempfile.NamedTemporaryFile('w', suffix='.csv', delete=False) as f:
        f.write(header + '\n')
        w = csv.DictWriter(f, fieldnames=header.split(','))
        w.writerows(rows)
        name = f.name
    try:
        r = subprocess.run([ctl, 'analyse', '--json', '--horizon', '%ds' % horizon, name],
                           capture_output=True, text=True)
    finally:
        os.unlink(name)
    return json.loads(r.stdout) if r.returncode == 0 else None


def flat_end(load):
    t = [float(r['elapsed_s']) for r in load]
    y = [float(r['temp_c']) for r in load]
    start = t[0] + 0.6 * (t[-1] - t[0])
    means = []
    for i, ti in enumerate(t):
        if ti >= start + 30:
            win = [y[k] for k in range(len(t)) if ti - 30 < t[k] <= ti]
            means.append(sum(win) / len(win))
    return bool(means) and max(means) - min(means) <= 0.5


def main():
    total = covered = 0
    widths, lines, misses = [], [], []
    for path in files:
        header, rows = read(path)
        a = next((i for i, r in enumerate(rows) if r['phase'] == 'stress'), None)
        if a is None:
            continue
        b = a
        while b < len(rows) and rows[b]['phase'] == 'stress':
            b += 1
        before, load = rows[:a], rows[a:b]
        dur = float(load[-1]['elapsed_s']) - float(load[0]['elapsed_s'])
        horizon = max(1, round(dur))
        final = analyse(header, before + load, horizon)
        truth = final and final['predicted_plateau_c']
        cov_here, w_here = [], []
        for pct in range(20, 101, 10):
            m = max(4, round(len(load) * pct / 100))
            d = analyse(header, before + load[:m], horizon)
            lo, hi = d and d['predicted_plateau_low_c'], d and d['predicted_plateau_high_c']
            ok = truth is not None and lo is not None and hi is not None and lo <= truth <= hi
            total += 1
            covered += ok
            cov_here.append('.' if ok else '!')
            if lo is not None and hi is not None:
                widths.append(hi - lo)
                w_here.append(hi - lo)
        stop = None
        for m in range(max(4, len(load) // 10), len(load)):       # at the last sample max stops it
            d = analyse(header, before + load[:m], horizon)
            if d and d['plateau_reached']:
                stop = (m, d['predicted_plateau_c'])
                break
        flat = flat_end(load)
        share = '%3.0f %%' % (100 * (float(load[stop[0] - 1]['elapsed_s']) - float(load[0]['elapsed_s'])) / dur) \
            if stop else 'no stop'
        err = '%+.2f' % (stop[1] - truth) if stop and truth is not None else '-'
        if flat and (not stop or abs(stop[1] - truth) > 0.5):
            misses.append(os.path.basename(path))
        lines.append('| %s | %.0f s | %s | %s | %s | %s | %s | %s |' % (
            os.path.basename(path), dur, '-' if truth is None else '%.2f' % truth, 'yes' if flat else 'no',
            ''.join(cov_here), '%.2f' % statistics.median(w_here) if w_here else '-', share, err))
    print('| recording | load | final plateau °C | last 40 % flat | covered at 20..100 % | median width °C '
          '| until: plateau stops at | its plateau − final °C |')
    print('|---|---|---|---|---|---|---|---|')
    print('\n'.join(lines))
    print('\ncoverage of [low, high]: %d/%d cuts (%.1f %%); median width %.2f °C' % (
        covered, total, 100.0 * covered / total, statistics.median(widths)))
    print('flat-ended loads where until: plateau did not stop within 0.5 °C of the final plateau: %s' % (
        ', '.join(misses) or 'none'))


main()
