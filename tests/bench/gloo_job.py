#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""A real PyTorch parameter-server job over the gloo backend, for the testbed.

Rank 0 is the parameter server; ranks 1..W are its workers. Every iteration
the PS sends the model (a float32 tensor of SIZE bytes) to each worker with
point-to-point sends (torch.distributed.isend: gloo's own TCP pairs, on
ports gloo picks, from connections it opens itself), each worker computes
(sleeps COMPUTE_MS +- JITTER_MS, seeded) and sends a gradient of the same
size back, and the PS adds them into the model. The same JSON records as
psemu's (tests/bench/analyze.py reads both): the PS's JCT and iteration
times, each worker's wait for the model at every barrier.

    gloo_job.py ps     -N NAME -a PS_ADDR -p PORT -w WORKERS -s SIZE -n ITERS
                       --start-at UNIX_TIME -o OUT.json
    gloo_job.py worker -N NAME -a PS_ADDR -p PORT -w WORKERS -r RANK -s SIZE
                       -n ITERS -C COMPUTE_MS -j JITTER_MS --seed N -o OUT.json

PORT is the rendezvous (gloo's TCP store, on the PS). Exit 0 when all
iterations ran, 1 on an error (written to stderr), 2 on a usage error.
"""
import argparse
import json
import os
import random
import re
import sys
import time


def size_bytes(text):
    m = re.fullmatch(r"([0-9]+)([kMG]i?)?", text)
    if not m:
        raise argparse.ArgumentTypeError(f"size '{text}': want a number with k, M or G (e.g. 1500k)")
    unit = m.group(2) or ""
    base = 1024 if unit.endswith("i") else 1000
    power = {"": 0, "k": 1, "M": 2, "G": 3}[unit[:1]]
    n = int(m.group(1)) * base ** power
    if n < 4 or n > 1 << 31:
        raise argparse.ArgumentTypeError(f"size '{text}': want 4 bytes to 2 GiB")
    return n


def parse():
    ap = argparse.ArgumentParser(description="a PyTorch (gloo) parameter-server job")
    ap.add_argument("role", choices=["ps", "worker"])
    ap.add_argument("-N", "--name", required=True)
    ap.add_argument("-a", "--addr", required=True, help="the PS's address")
    ap.add_argument("-p", "--port", type=int, required=True, help="rendezvous port on the PS")
    ap.add_argument("-w", "--workers", type=int, required=True)
    ap.add_argument("-r", "--rank", type=int, default=0, help="a worker's rank, 1..WORKERS")
    ap.add_argument("-s", "--size", type=size_bytes, required=True)
    ap.add_argument("-n", "--iterations", type=int, required=True)
    ap.add_argument("-C", "--compute-ms", type=float, default=0.0)
    ap.add_argument("-j", "--jitter-ms", type=float, default=0.0)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--start-at", type=float, default=0.0,
                    help="PS: start the first iteration at this Unix time")
    ap.add_argument("-t", "--timeout", type=float, default=120.0, help="seconds for any one step")
    ap.add_argument("-o", "--output", required=True)
    a = ap.parse_args()
    if not 1 <= a.workers <= 64:
        ap.error(f"--workers {a.workers}: want 1 to 64")
    if a.role == "worker" and not 1 <= a.rank <= a.workers:
        ap.error(f"--rank {a.rank}: want 1 to --workers ({a.workers})")
    if a.iterations < 1:
        ap.error("--iterations: want at least 1")
    if not 0 < a.port < 65536:
        ap.error(f"--port {a.port}: want 1 to 65535")
    return a


def write(path, rec):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(rec, f, indent=2)
    os.rename(tmp, path)


def main():
    a = parse()
    import datetime
    import torch
    import torch.distributed as dist

    torch.set_num_threads(1)
    rank = 0 if a.role == "ps" else a.rank
    dist.init_process_group("gloo", init_method=f"tcp://{a.addr}:{a.port}", rank=rank,
                            world_size=a.workers + 1,
                            timeout=datetime.timedelta(seconds=a.timeout))
    n = a.size // 4
    rec = {"role": a.role, "name": a.name, "pid": os.getpid(), "framework": "pytorch-gloo",
           "torch": torch.__version__, "iterations": a.iterations, "size_bytes": n * 4,
           "workers": a.workers, "complete": False}
    cpu0 = time.process_time()
    if a.role == "ps":
        model = torch.zeros(n, dtype=torch.float32)
        grads = [torch.empty(n, dtype=torch.float32) for _ in range(a.workers)]
        dist.barrier()
        delay = a.start_at - time.time()
        if delay > 0:
            time.sleep(delay)
        t0 = time.time()
        its = []
        for _ in range(a.iterations):
            ti = time.time()
            for r in [dist.isend(model, dst=w) for w in range(1, a.workers + 1)]:
                r.wait()
            for r in [dist.irecv(grads[w - 1], src=w) for w in range(1, a.workers + 1)]:
                r.wait()
            for g in grads:
                model.add_(g, alpha=1e-3)
            its.append(time.time() - ti)
        t1 = time.time()
        rec.update({"start_unix": t0, "end_unix": t1, "jct_s": t1 - t0, "iteration_s": its,
                    "bytes_sent": a.iterations * a.workers * n * 4,
                    "bytes_received": a.iterations * a.workers * n * 4})
    else:
        rng = random.Random(a.seed)
        model = torch.empty(n, dtype=torch.float32)
        grad = torch.full((n,), 1.0, dtype=torch.float32)
        dist.barrier()
        t0 = time.time()
        waits = []
        for _ in range(a.iterations):
            tw = time.time()
            dist.recv(model, src=0)
            waits.append(time.time() - tw)
            c = a.compute_ms + rng.uniform(-a.jitter_ms, a.jitter_ms)
            time.sleep(max(c, 0.0) / 1000.0)
            dist.send(grad, dst=0)
        t1 = time.time()
        rec.update({"compute_ms": a.compute_ms, "jitter_ms": a.jitter_ms, "start_unix": t0,
                    "end_unix": t1, "jct_s": t1 - t0, "barrier_wait_s": waits,
                    "bytes_sent": a.iterations * n * 4, "bytes_received": a.iterations * n * 4})
    rec["cpu_s"] = time.process_time() - cpu0
    rec["complete"] = True
    write(a.output, rec)
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        sys.exit(1)
    except Exception as e:  # one line naming what failed, not a traceback
        print(f"gloo_job: {type(e).__name__}: {e}", file=sys.stderr)
        sys.exit(1)
