#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""The Kubernetes manifests in contrib/kubernetes/, read as the API server
would get them (python3-yaml): what a host daemon that restores its
interface needs, and the pieces agreeing with each other. Writes the
ConfigMap's tlsd.conf to argv[2] for `tlsd --check-config`.
Usage: manifests_check.py CONTRIB_KUBERNETES_DIR CONF_OUT"""
import re
import sys

import yaml

errors = []


def need(cond, what):
    if not cond:
        errors.append(what)


d = sys.argv[1]
docs = {}
for f in ("tlsd-daemonset.yaml", "tlsd-servicemonitor.yaml"):
    for doc in yaml.safe_load_all(open(f"{d}/{f}")):
        docs[doc["kind"]] = doc
need(set(docs) == {"ConfigMap", "DaemonSet", "Service", "ServiceMonitor"},
     f"kinds: {sorted(docs)}")

ds = docs["DaemonSet"]
pod = ds["spec"]["template"]["spec"]
need(ds["spec"]["selector"]["matchLabels"].items() <= ds["spec"]["template"]["metadata"]["labels"].items(),
     "the selector does not match the pod's labels")
need(pod.get("hostNetwork") is True, "hostNetwork is not true")
need(pod.get("hostPID") is True, "hostPID is not true")
need(pod.get("priorityClassName") == "system-node-critical", "priorityClassName")
grace = pod.get("terminationGracePeriodSeconds", 30)
# tlsd's SIGTERM restore was measured at up to 0.11 s (tests/pkg/test_deb.sh)
need(5 <= grace <= 60, f"terminationGracePeriodSeconds {grace}: not 5 to 60")
(c,) = pod["containers"]
need(c.get("securityContext", {}).get("privileged") is True, "the container is not privileged")
probe = c.get("livenessProbe", {}).get("exec", {}).get("command", [])
need(any(a.endswith("tlsctl") for a in probe) and "status" in probe,
     f"liveness probe is not tlsctl status: {probe}")

mounts = {m["mountPath"]: m for m in c["volumeMounts"]}
vols = {v["name"]: v for v in pod["volumes"]}
for path in ("/sys/fs/bpf", "/sys/fs/cgroup", "/run/tlsd"):
    m = mounts.get(path)
    need(m is not None, f"nothing mounted at {path}")
    if m:
        hp = vols.get(m["name"], {}).get("hostPath", {}).get("path")
        need(hp == path, f"{path} is not the host's {path} ({hp})")
need(mounts.get("/sys/fs/bpf", {}).get("mountPropagation") == "Bidirectional",
     "/sys/fs/bpf without Bidirectional propagation")

cm = docs["ConfigMap"]
conf = cm["data"]["tlsd.conf"]
cmd = c["command"]
need("-c" in cmd, f"no -c in the command {cmd}")
cfg_path = cmd[cmd.index("-c") + 1] if "-c" in cmd else ""
cfg_mount = mounts.get(cfg_path.rsplit("/", 1)[0], {})
need(vols.get(cfg_mount.get("name"), {}).get("configMap", {}).get("name") == cm["metadata"]["name"]
     and cfg_path.rsplit("/", 1)[1] in cm["data"], f"{cfg_path} is not the ConfigMap's file")
sock = re.search(r'^\s*control_socket\s*=\s*"([^"]+)"', conf, re.M)
need(sock and sock.group(1) in probe and sock.group(1).startswith("/run/tlsd/"),
     "the probe's socket is not the configuration's control_socket under /run/tlsd")

listen = re.search(r'^\s*metrics_listen\s*=\s*"[^"]*:(\d+)"', conf, re.M)
need(listen is not None, "metrics_listen not set in the ConfigMap")
port = int(listen.group(1)) if listen else 0
ann = ds["spec"]["template"]["metadata"].get("annotations", {})
need(ann.get("prometheus.io/port") == str(port), f"prometheus.io/port is not {port}")
need([p["containerPort"] for p in c["ports"] if p["name"] == "metrics"] == [port],
     f"container port metrics is not {port}")
svc = docs["Service"]
need(svc["spec"]["selector"].items() <= ds["spec"]["template"]["metadata"]["labels"].items(),
     "the Service does not select the pods")
sp = {p["name"]: p for p in svc["spec"]["ports"]}
need(sp.get("metrics", {}).get("port") == port, "the Service's metrics port")
sm = docs["ServiceMonitor"]
need(sm["spec"]["selector"]["matchLabels"].items() <= svc["metadata"]["labels"].items(),
     "the ServiceMonitor does not select the Service")
(ep,) = sm["spec"]["endpoints"]
need(ep["port"] in sp and ep.get("honorLabels") is True,
     "the ServiceMonitor's endpoint: port name or honorLabels")

open(sys.argv[2], "w").write(conf)
for e in errors:
    print(f"  manifest: {e}")
print(f"  manifests: {len(docs)} objects, grace {grace} s, metrics port {port}, {len(errors)} problems")
sys.exit(1 if errors else 0)
