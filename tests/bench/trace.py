#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""Per job, what a testbed run's bands did to it (tests/bench/testbed.sh with
TRACE=1): for every run directory given (or every run of an OUTDIR),

  jobs        how many jobs the scheduler had (tlsd: its `jobs` list, every
              PS it discovered, ours and any other; TensorLights: its own)
  time        per job, the share of its life (first broadcast to last) it
              spent in each priority (tlsd: its band; TensorLights: its
              class's prio), from the samples
  bytes       per job, the bytes its PS's sockets had acked, split by the
              priority the job had at the start of each sample interval
  bursts      per job and iteration, the longest wait of its workers from
              their gradient sent to the next model held whole (the barrier
              and the broadcast): median, 90th percentile, largest, and the
              median by the priority the job had at the barrier (when the
              broadcast started)
  drops       per class, the packets the qdisc dropped (TensorLights: also
              the packets each rebuild threw away with the queues)
  rotations   when the order changed, in seconds from the first job's start
              (tlsd: its jobs' bands as sampled; TensorLights: its loop's
              log), and when each job ended

Python 3 standard library only.
"""
import argparse
import glob
import json
import os
import re
import statistics

BASE_PORT = 9000


def load(path):
    with open(path) as f:
        return json.load(f)


def parse_trace(path):
    """[(t, {classid: {...}}, {port: acked}, jobs-json or None)] in time order."""
    samples = []
    cur = None
    cls = None
    with open(path) as f:
        for line in f:
            if line.startswith("t "):
                cur = {"t": float(line.split()[1]), "classes": {}, "acked": {}, "jobs": None}
                samples.append(cur)
                continue
            if cur is None:
                continue
            w = line.split()
            if not w:
                continue
            if w[0] == "class" and len(w) > 2:
                cls = {"prio": None, "sent": 0, "dropped": 0, "backlog": 0}
                m = re.search(r" prio (\d+)", line)
                if m:
                    cls["prio"] = int(m.group(1))
                cur["classes"][w[2]] = cls
            elif w[0] == "Sent" and cls is not None:
                cls["sent"] = int(w[1])
                cls["dropped"] = int(w[6].rstrip(","))
            elif w[0] == "backlog" and cls is not None:
                cls["backlog"] = int(w[2].rstrip("p"))
            elif w[0] == "s" and len(w) >= 6:
                cur["acked"][int(w[1])] = int(w[2])
            elif w[0] == "J":
                try:
                    cur["jobs"] = json.loads(line[2:])["jobs"]
                except (ValueError, KeyError, TypeError):
                    cur["jobs"] = None
    return samples


def tl_rotations(log):
    """TensorLights' loop: [(time, shift)], and the queues its rebuilds dropped per class."""
    rot = [(0.0, 0)]
    dropped = {}
    with open(log) as f:
        for line in f:
            m = re.match(r"^(\d+\.\d+) rotation (\d+):", line)
            if m:
                rot.append((float(m.group(1)), int(m.group(2))))
            m = re.match(r"^rotation \d+ drops (\S+) (\d+)b (\d+)p (\d+)", line)
            if m:
                d = dropped.setdefault(m.group(1), [0, 0])
                d[0] += int(m.group(3))  # queued packets thrown away with the tree
                d[1] += int(m.group(4))  # dropped by the class since the last rebuild
    return rot, dropped


def broadcasts(d, j):
    """[(start, wait)] per iteration of job j after the first: the PS's barrier
    (the next broadcast's start) and the longest wait of its workers from their
    gradient sent to the model held whole (the job waits for the last one)."""
    ps = load(os.path.join(d, f"ps-{j}.json"))
    starts = [ps["start_unix"]]
    for x in ps["iteration_s"]:
        starts.append(starts[-1] + x)
    wait = {}
    for wp in glob.glob(os.path.join(d, f"wk-{j}-*.json")):
        for k, w in enumerate(load(wp)["barrier_wait_s"]):
            wait[k + 1] = max(wait.get(k + 1, 0), w)
    return [(starts[k], wait[k]) for k in sorted(wait) if k < len(starts)], ps


def analyze(d):
    meta_dir = os.path.dirname(os.path.dirname(d))
    meta = load(os.path.join(meta_dir, "meta.json"))
    run = load(os.path.join(d, "run.json"))
    out = {"run": os.path.basename(d), "policy": run["policy"], "jobs": {}}
    for h in run["hosts"]:
        tp = os.path.join(d, f"trace-h{h['host']}.txt")
        if not os.path.exists(tp):
            continue
        samples = parse_trace(tp)
        ours = h["jobs"]
        n = len(ours)
        tl = run["policy"] == "tensorlights"
        rot, rdrops = tl_rotations(os.path.join(d, f"sched-h{h['host']}.log")) if tl else ([], {})
        njobs = []
        pids = [load(os.path.join(d, f"ps-{j}.json"))["pid"] for j in ours]

        def prio_at(i, s):
            if tl:
                shift = 0
                for t, sh in rot:
                    if t <= s["t"] and t > 0:
                        shift = sh
                p = (i + n - shift % n) % n
                return min(p, 6)
            for x in s["jobs"] or []:
                if pids[i] in (x.get("pids") or []):
                    return x.get("band")
            return None

        for s in samples:
            if not tl and s["jobs"] is not None:
                njobs.append(len(s["jobs"]))
        t_first = min(load(os.path.join(d, f"ps-{j}.json"))["start_unix"] for j in ours)
        if tl:
            out["rotations"] = [t - t_first for t, _ in rot if t > 0]
        else:
            out["rotations"], prev = [], None
            for s in samples:
                if s["jobs"] is None:
                    continue
                v = [prio_at(i, s) for i in range(n)]
                if prev is not None and v != prev and any(x is not None for x in v):
                    out["rotations"].append(s["t"] - t_first)
                prev = v
        out["ends"] = {j: load(os.path.join(d, f"ps-{j}.json"))["end_unix"] - t_first
                       for j in ours}
        for i, j in enumerate(ours):
            bc, ps = broadcasts(d, j)
            t0, t1 = ps["start_unix"], ps["end_unix"]
            port = BASE_PORT + j
            tin, byb = {}, {}
            for a, b in zip(samples, samples[1:]):
                if b["t"] <= t0 or a["t"] >= t1:
                    continue
                p = prio_at(i, a)
                dt = min(b["t"], t1) - max(a["t"], t0)
                tin[p] = tin.get(p, 0) + dt
                da = b["acked"].get(port, 0) - a["acked"].get(port, 0)
                if da > 0:
                    byb[p] = byb.get(p, 0) + da
            by_prio = {}
            for st, dur in bc:
                s = max((x for x in samples if x["t"] <= st), key=lambda x: x["t"], default=None)
                p = prio_at(i, s) if s else None
                by_prio.setdefault(p, []).append(dur)
            durs = sorted(x for _, x in bc)
            life = sum(tin.values()) or 1
            tot = sum(byb.values()) or 1
            out["jobs"][j] = {
                "jct": ps["jct_s"],
                "time": {p: v / life for p, v in tin.items()},
                "bytes": {p: v / tot for p, v in byb.items()},
                "bursts": len(durs),
                "p50": statistics.median(durs) if durs else float("nan"),
                "p90": durs[int(0.9 * (len(durs) - 1))] if durs else float("nan"),
                "max": durs[-1] if durs else float("nan"),
                "by_prio": {p: (len(v), statistics.median(v)) for p, v in by_prio.items()},
            }
        last = samples[-1]["classes"] if samples else {}
        tcd = {}
        tcp = os.path.join(d, f"tc-h{h['host']}.txt")
        if os.path.exists(tcp):
            c = None
            with open(tcp) as f:
                for line in f:
                    w = line.split()
                    if w[:2] == ["class", "htb"]:
                        c = w[2]
                    elif w and w[0] == "Sent" and c:
                        tcd[c] = int(w[6].rstrip(","))
        out["drops"] = {c: (tcd.get(c, v["dropped"]), rdrops.get(c.split(":")[-1], [0, 0])[0])
                        for c, v in last.items()}
        out["rebuild_dropped"] = sum(x[0] for x in rdrops.values())
        out["class_dropped"] = sum(x[1] for x in rdrops.values()) + sum(tcd.values())
        out["njobs"] = (min(njobs), max(njobs)) if njobs else (n, n)
    return out


def fmt_shares(m):
    return " ".join(f"{'-' if p is None else p}:{100 * v:.0f}%" for p, v in sorted(
        m.items(), key=lambda x: (x[0] is None, x[0] or 0)) if v >= 0.005)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("dirs", nargs="+", help="run directories, or testbed OUTDIRs")
    a = ap.parse_args()
    runs = []
    for d in a.dirs:
        if os.path.isdir(os.path.join(d, "runs")):
            runs += sorted(glob.glob(os.path.join(d, "runs", "*")))
        else:
            runs.append(d)
    for d in runs:
        if not glob.glob(os.path.join(d, "trace-h*.txt")):
            continue
        try:
            r = analyze(d)
        except (OSError, ValueError, KeyError) as e:
            print(f"{d}: {e}")
            continue
        print(f"== {r['run']}: {r['policy']}, scheduler's jobs {r['njobs'][0]}-{r['njobs'][1]}, "
              f"packets dropped: by the classes {r['class_dropped']}, "
              f"with the queues at rebuilds {r['rebuild_dropped']}")
        print("order changed at (s): " + " ".join(f"{x:.2f}" for x in r.get("rotations", [])[:12])
              + "; jobs ended at: " + " ".join(f"j{j} {x:.2f}" for j, x in sorted(r["ends"].items())))
        print("job  JCT(s)  bursts p50/p90/max (ms)   time per prio          bytes per prio"
              "         median burst (ms) by prio at its start")
        for j, x in sorted(r["jobs"].items()):
            bp = " ".join(f"{'-' if p is None else p}:{1e3 * m:.0f}({c})" for p, (c, m) in sorted(
                x["by_prio"].items(), key=lambda y: (y[0] is None, y[0] or 0)))
            print(f"j{j}  {x['jct']:6.2f}  {1e3 * x['p50']:5.0f}/{1e3 * x['p90']:5.0f}/"
                  f"{1e3 * x['max']:5.0f}   {fmt_shares(x['time']):22s} {fmt_shares(x['bytes']):22s} {bp}")


if __name__ == "__main__":
    main()
