#!/usr/bin/env python3
"""render_timeline.py — draw `lockstep trace export --format=perfetto` JSON as a PNG.

The README's timeline picture comes from here: ui.perfetto.dev is the real viewer of that JSON,
but a picture in the README must be made offline. One row per rank (the exported processes, in
their sort order), a slice per host call from enter to exit labelled `api #seq` (a call that
never returned is an open slice, hatched to the end of the trace), device completion as a thin
bar under it, lockstep's own events as markers, and the first divergence as a red line.

A hang makes a trace mostly idle: the time axis is cut where nothing happens for a long while
(a wide gap is shown as a break), and every panel between cuts is linear.

usage: render_timeline.py TIMELINE.json OUT.png [--title TEXT]
Needs matplotlib (Debian: python3-matplotlib); not needed to build or test lockstep.
"""
import argparse
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.patches import Rectangle  # noqa: E402

DEVICE_TID = 1000000000  # the exporter's "device completion" thread
PALETTE = ["#8fb8de", "#b5d99c", "#f4c27a", "#c9a7e0", "#9fd8d2", "#e6b0aa", "#d5d5a3", "#b0b7c6"]


def load(path):
    with open(path, encoding="utf-8") as f:
        data = json.load(f)
    return data["traceEvents"] if isinstance(data, dict) else data


def model(events):
    """Rows (ranks), their slices, markers and the divergence instants, times in µs."""
    names, order = {}, {}
    for e in events:
        if e.get("ph") == "M" and e.get("name") == "process_name":
            names[e["pid"]] = e["args"]["name"]
        if e.get("ph") == "M" and e.get("name") == "process_sort_index":
            order[e["pid"]] = e["args"]["sort_index"]
    pids = sorted(names, key=lambda p: (order.get(p, p), p))
    end = max((e.get("ts", 0) + e.get("dur", 0) for e in events if e.get("ph") != "M"), default=0)
    slices, device, markers, divergence = [], [], [], []
    open_async = {}
    for e in events:
        ph, pid, args = e.get("ph"), e.get("pid"), e.get("args") or {}
        if pid not in names:
            continue
        if ph in ("X", "B") and e.get("tid") == 0:  # lockstep's own events (side channel, watchdog)
            markers.append((pid, e["ts"], e["name"]))
        elif ph in ("X", "B"):
            label = e["name"] + (f" #{args['seq']}" if args.get("seq") is not None else "")
            dur = e["dur"] if ph == "X" else end - e["ts"]
            slices.append((pid, e["ts"], dur, label, ph == "B", args.get("call", e["name"])))
        elif ph == "b":
            open_async[(pid, e.get("id"))] = e["ts"]
        elif ph == "e" and (pid, e.get("id")) in open_async:
            t0 = open_async.pop((pid, e.get("id")))
            device.append((pid, t0, e["ts"] - t0))
        elif ph == "i":
            divergence.append((pid, e["ts"], e["name"], e.get("s")))
    for (pid, _), t0 in open_async.items():  # a device completion never observed
        device.append((pid, t0, end - t0))
    return pids, names, end, slices, device, markers, divergence


def panels(times, span):
    """Cut the axis at gaps longer than 5% of the run: [(lo, hi, weight)], each panel linear."""
    times = sorted(set(times))
    groups, cur = [], [times[0]]
    for t in times[1:]:
        if t - cur[-1] > 0.05 * span:
            groups.append(cur)
            cur = [t]
        else:
            cur.append(t)
    groups.append(cur)
    out = []
    for g in groups:
        lo, hi = g[0], g[-1]
        pad = max((hi - lo) * 0.12, 40.0)
        out.append((lo - pad, hi + pad, len(g)))
    return out


def px_width(ax):
    fig = ax.get_figure()
    return ax.get_position().width * fig.get_figwidth() * fig.dpi


def fmt_time(us):
    if us >= 1e6:
        return f"{us / 1e6:.3f} s"
    return f"{us / 1e3:.1f} ms"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("timeline")
    ap.add_argument("out")
    ap.add_argument("--title", default="")
    a = ap.parse_args()
    events = load(a.timeline)
    pids, names, end, slices, device, markers, divergence = model(events)
    if not pids:
        sys.exit(f"{a.timeline}: no processes in the timeline")
    times = [t for _, t, d, *_ in slices] + [t + d for _, t, d, _, o, _ in slices if not o]
    times += [t for _, t, _ in markers] + [t for _, t, _, _ in divergence] + [end]
    start = min(times)
    cuts = panels(times, end - start)
    weights = [max(1.0, w ** 0.5) for _, _, w in cuts]
    weights = [w * (2.5 if any(lo <= t <= hi for _, t, _, _ in divergence) else 1.0)
               for w, (lo, hi, _) in zip(weights, cuts)]

    row = {pid: i for i, pid in enumerate(pids)}
    height = 1.0 + 0.62 * len(pids)
    fig, axes = plt.subplots(1, len(cuts), sharey=True, figsize=(13, height + 1.2),
                             gridspec_kw={"width_ratios": weights, "wspace": 0.04})
    if len(cuts) == 1:
        axes = [axes]
    fig.subplots_adjust(left=0.13, right=0.99, top=0.88 if a.title else 0.95, bottom=0.2)
    colors = {}
    for _, _, _, label, _, _ in slices:
        api = label.split(" ")[0]
        colors.setdefault(api, PALETTE[len(colors) % len(PALETTE)])
    div_global = [d for d in divergence if d[3] == "g"]
    div_ranks = {(pid, t) for pid, t, _, s in divergence if s == "t"}

    for k, (ax, (lo, hi, _)) in enumerate(zip(axes, cuts)):
        ax.set_xlim(lo, hi)
        for pid, t, d, label, is_open, call in slices:
            if t + d < lo or t > hi:
                continue
            y = row[pid]
            diverged = (pid, t) in div_ranks
            ax.add_patch(Rectangle((t, y - 0.3), max(d, (hi - lo) * 0.004), 0.6,
                                   facecolor=colors[label.split(" ")[0]],
                                   edgecolor="#c0392b" if diverged else "#555555",
                                   linewidth=1.6 if diverged else 0.6,
                                   hatch="///" if is_open else None, clip_on=True))
            # A label only where it fits in the slice's visible part (about 6 px a character).
            x0, x1 = max(t, lo), min(t + d, hi)
            text = label if t >= lo else "… " + label
            if (x1 - x0) / (hi - lo) * px_width(ax) >= 6.2 * len(text) + 8:
                ax.text(x0 + (hi - lo) * 0.01, y, text, va="center", ha="left", fontsize=8,
                        clip_on=True)
        for pid, t, d in device:
            if t + d >= lo and t <= hi:
                ax.add_patch(Rectangle((t, row[pid] + 0.33), max(d, (hi - lo) * 0.004), 0.1,
                                       facecolor="#566573", edgecolor="none"))
        for pid, t, name in markers:
            if lo <= t <= hi:
                watchdog = "watchdog" in name
                ax.plot([t], [row[pid] - 0.42], marker="v" if watchdog else "D",
                        color="#7b241c" if watchdog else "#d68910", markersize=6, clip_on=False)
        for pid, t, name, _ in div_global:
            if lo <= t <= hi:
                ax.axvline(t, color="#c0392b", linestyle="--", linewidth=1.2)
                ax.text(t, -0.75, name, color="#c0392b", fontsize=9, ha="center", va="bottom",
                        fontweight="bold")
        ticks = [lo + (hi - lo) * f for f in (0.1, 0.5, 0.9)]
        ax.set_xticks(ticks)
        ax.set_xticklabels([fmt_time(x) for x in ticks], fontsize=7)
        ax.spines["top"].set_visible(False)
        if k > 0:
            ax.spines["left"].set_visible(False)
            ax.tick_params(left=False)
        if k < len(cuts) - 1:
            ax.spines["right"].set_visible(False)
            # the break: two slanted strokes on the axis line
            kw = dict(transform=ax.transAxes, color="k", clip_on=False, linewidth=1)
            ax.plot((1 - 0.015, 1 + 0.015), (-0.02, 0.02), **kw)
            axes[k + 1].plot((-0.015, 0.015), (-0.02, 0.02), transform=axes[k + 1].transAxes,
                             color="k", clip_on=False, linewidth=1)

    axes[0].set_ylim(len(pids) - 0.4, -1.0)
    axes[0].set_yticks(range(len(pids)))
    axes[0].set_yticklabels([names[p] for p in pids], fontsize=8)
    legend = [plt.Line2D([], [], color="#c0392b", linestyle="--", label="first divergence (compare)"),
              Rectangle((0, 0), 1, 1, facecolor="white", edgecolor="#555555", hatch="///",
                        label="call never returned"),
              plt.Line2D([], [], color="#d68910", marker="D", linestyle="none",
                         label="side channel: mismatch seen"),
              plt.Line2D([], [], color="#7b241c", marker="v", linestyle="none",
                         label="watchdog fired")]
    if device:
        legend.append(Rectangle((0, 0), 1, 1, facecolor="#566573", label="device completion"))
    fig.legend(handles=legend, loc="lower center", ncol=len(legend), fontsize=8, frameon=False)
    fig.text(0.5, 0.1,
             "time since the earliest trace start; the axis is cut (//) where no call starts or ends",
             ha="center", fontsize=7, color="#555555")
    if a.title:
        fig.suptitle(a.title, fontsize=10)
    fig.savefig(a.out, dpi=100)
    return 0


if __name__ == "__main__":
    sys.exit(main())
