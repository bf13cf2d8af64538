#!/usr/bin/env python3
"""On-demand benchmarks of whole clinv processes (not part of the test suite).

    python3 scripts/bench.py render [--runs N]
    python3 scripts/bench.py diff [--runs N]
    python3 scripts/bench.py completion [--runs N]
    python3 scripts/bench.py store2 [--runs N] [--records 1000000]
    python3 scripts/bench.py commit [--runs N]
    python3 scripts/bench.py push-https [--runs N]
    python3 scripts/bench.py ssh-push [--runs N]
    python3 scripts/bench.py oci-push [--runs N]
    python3 scripts/bench.py replay-all [--runs N] [--domains 1000] [--timeout 30]
    python3 scripts/bench.py addon-log [--runs N] [--domains 1000 10000] [--snapshots 100]
    python3 scripts/bench.py store-scale [--runs N] [--records 10000 100000 1000000]
    python3 scripts/bench.py store-scale --delivery [--runs N] [--records 10 1000000]
    python3 scripts/bench.py watch-recovery [--domains 1000] [--dark-seconds 660] [--spread 0]
    python3 scripts/bench.py backlog [--runs N] [--records 10 10000 100000 1000000]

replay-all gives issue #14's figure: `clinv replay --all` over a generated project of
1,000 domains, each queued and each routed (its own .kubeconfig/<name>.yaml) to its own
black-holed API server (a listening socket that never accepts: connections are never
answered), must end within its --timeout.

store2 gives issue #13's store figures (min/median/max wall, median CPU time, peak RSS,
OK/OVER against each target) on v1 stores it writes itself (independent of the format
clinv writes); the stores it reads (log, list) are migrated to v2 first.

Builds the release binary, then runs the command N times and reports the median and
p90 wall time and the peak RSS of each run (from wait4's rusage), so the figures are
for the whole process: exec, reading the project, rendering, writing stdout.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TARGET = os.environ.get("CARGO_TARGET_DIR") or os.path.join(REPO, "target")
# CLINV_BIN: a binary to measure instead of building the release one.
BIN = os.environ.get("CLINV_BIN") or os.path.join(TARGET, "release", "clinv")


def build():
    if os.environ.get("CLINV_BIN"):
        return
    subprocess.run(["cargo", "build", "--release", "--quiet"], cwd=REPO, check=True)


def peak_rss_kib(argv, env, runs=20, ok=(0,)):
    """Peak RSS of the command itself, read by GNU time. (wait4's rusage of a
    posix_spawn'ed child also counts the pages it shared with this Python process before
    exec, which would inflate the figure by ~10 MiB.)"""
    peaks = []
    for _ in range(runs):
        out = subprocess.run(["/usr/bin/time", "-f", "%M", *argv], env=env,
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        if out.returncode not in ok:
            sys.exit(f"{' '.join(argv)} exited {out.returncode}")
        peaks.append(int(out.stderr.strip().splitlines()[-1]))
    return peaks


def measure(argv, runs, env=None, ok=(0,)):
    """Runs argv `runs` times; returns (wall seconds list, peak RSS KiB list). Exit codes
    outside `ok` stop the benchmark (`clinv diff` exits 1 when the inputs differ)."""
    walls = []
    devnull = os.open(os.devnull, os.O_WRONLY)
    for _ in range(runs):
        start = time.perf_counter()
        pid = os.posix_spawn(argv[0], argv, env or os.environ,
                             file_actions=[(os.POSIX_SPAWN_DUP2, devnull, 1),
                                           (os.POSIX_SPAWN_DUP2, devnull, 2)])
        _, status = os.waitpid(pid, 0)
        walls.append(time.perf_counter() - start)
        if os.waitstatus_to_exitcode(status) not in ok:
            sys.exit(f"{' '.join(argv)} exited {os.waitstatus_to_exitcode(status)}")
    os.close(devnull)
    return walls, peak_rss_kib(argv, env or os.environ, ok=ok)


def report(name, walls, rss, target_ms=None, target_mb=None):
    walls_ms = sorted(w * 1000 for w in walls)
    median = statistics.median(walls_ms)
    p90 = walls_ms[int(len(walls_ms) * 0.9) - 1]
    peak = max(rss) * 1024 / 1e6  # GNU time reports KiB; the targets are in MB (10^6 bytes)
    verdict = []
    if target_ms is not None:
        verdict.append(f"wall {'OK' if median <= target_ms else 'OVER'} (≤ {target_ms} ms)")
    if target_mb is not None:
        verdict.append(f"RSS {'OK' if peak <= target_mb else 'OVER'} (≤ {target_mb} MB)")
    print(f"{name}: runs={len(walls)} median={median:.2f} ms p90={p90:.2f} ms "
          f"min={walls_ms[0]:.2f} ms peak RSS={peak:.1f} MB  {'; '.join(verdict)}")


def bench_render(args):
    env = dict(os.environ, SOURCE_DATE_EPOCH="1700000000")
    root = os.path.join(REPO, "examples", "acme")
    for domain in ["prod.acme.example", "lab.acme.example"]:
        argv = [BIN, "render", "--root", root, "--domain", domain]
        measure(argv, 5, env)  # warm the page cache
        walls, rss = measure(argv, args.runs, env)
        report(f"render {domain}", walls, rss, target_ms=5, target_mb=15)


def find_dyff():
    """dyff from PATH or `go install github.com/homeport/dyff/cmd/dyff@latest`."""
    import shutil
    for candidate in [shutil.which("dyff"), os.path.expanduser("~/go/bin/dyff")]:
        if candidate and os.path.exists(candidate):
            return candidate
    return None


def bench_diff(args):
    """`clinv diff` on two steps of the recorded history (14 changes), whole process, in
    each format; then dyff on the same two files."""
    history = os.path.join(REPO, "tests", "fixtures", "history", "prod.acme.example")
    a, b = os.path.join(history, "012.yaml"), os.path.join(history, "026.yaml")
    results = {}
    for fmt in ["text", "json", "markdown", "unified"]:
        argv = [BIN, "diff", a, b, "-o", fmt]
        measure(argv, 5, ok=(1,))  # warm the page cache
        walls, rss = measure(argv, args.runs, ok=(1,))
        report(f"clinv diff -o {fmt}", walls, rss, target_ms=5)
        results[fmt] = statistics.median(walls)
    walls, rss = measure([BIN, "diff", a, a], args.runs)
    report("clinv diff (identical files)", walls, rss, target_ms=5)
    dyff = find_dyff()
    if not dyff:
        print("dyff: not found (go install github.com/homeport/dyff/cmd/dyff@latest) — no comparison")
        return
    # `go install` builds report "(development)"; the module version is in the build info.
    version = subprocess.run([dyff, "version"], capture_output=True, text=True).stdout.strip()
    info = subprocess.run(["go", "version", "-m", dyff], capture_output=True, text=True).stdout
    mod = [l.split() for l in info.splitlines() if l.strip().startswith("mod\t") or l.strip().startswith("mod ")]
    if mod and len(mod[0]) >= 3:
        version = f"dyff {mod[0][2]}"
    for name, argv in [("dyff between", [dyff, "between", "--omit-header", a, b]),
                       ("dyff between -o brief", [dyff, "between", "--output", "brief", a, b])]:
        measure(argv, 5)
        walls, rss = measure(argv, args.runs)
        report(f"{name} ({version})", walls, rss)
        print(f"  ratio {name}/clinv diff -o text = {statistics.median(walls) / results['text']:.1f}x")


KUBECTL = next((k for k in ["/usr/lib/google-cloud-sdk/bin/kubectl.1.33"] if os.path.exists(k)), "kubectl")


def request_count(kubeconfig):
    """Requests the API server has served for our two resources (its own metrics)."""
    out = subprocess.run([KUBECTL, "--kubeconfig", kubeconfig, "get", "--raw", "/metrics"],
                         check=True, capture_output=True, text=True).stdout
    total = 0
    for line in out.splitlines():
        if line.startswith("apiserver_request_total{") and (
                'resource="clusterinventories"' in line or 'resource="customresourcedefinitions"' in line):
            total += int(float(line.rsplit(" ", 1)[1]))
    return total


def plane_kubeconfig():
    up = subprocess.run([os.path.join(REPO, "scripts", "control-plane"), "up"], check=True,
                        capture_output=True, text=True).stdout.strip().splitlines()[-1]
    return up.split("=", 1)[1]


def bench_publish(args):
    kc = plane_kubeconfig()
    env = dict(os.environ, SOURCE_DATE_EPOCH="1700000000", KUBECONFIG=kc)
    root = os.path.join(REPO, "examples", "acme")
    clinv = [BIN, "publish", "--root", root, "--domain", "prod.acme.example", "--strict"]
    measure(clinv, 3, env)  # create, then steady state
    before = request_count(kc)
    subprocess.run(clinv, env=env, check=True, capture_output=True)
    per_publish = request_count(kc) - before
    walls, rss = measure(clinv, args.runs, env)
    report("clinv publish (unchanged)", walls, rss)
    print(f"  HTTP requests per unchanged publish (apiserver_request_total delta): {per_publish}"
          f"  {'OK' if per_publish <= 3 else 'OVER'} (≤ 3)")

    # The sequence lok8s runs, on the same rendered files.
    tmp = os.path.join(REPO, "target", "bench-publish")
    subprocess.run([BIN, "render", "--root", root, "--domain", "prod.acme.example", "--out", tmp],
                   env=env, check=True, capture_output=True)
    crd, cr = os.path.join(tmp, "clusterinventory.crd.yaml"), os.path.join(tmp, "clusterinventory.yaml")
    seq = [
        [KUBECTL, "--kubeconfig", kc, "apply", "--server-side", "--field-manager=lok8s", "-f", crd],
        [KUBECTL, "--kubeconfig", kc, "wait", "--for=condition=Established",
         "crd/clusterinventories.lok8s.dev", "--timeout=30s"],
        [KUBECTL, "--kubeconfig", kc, "apply", "--server-side", "--field-manager=lok8s", "-f", cr],
    ]
    kubectl_walls = []
    for _ in range(max(10, args.runs // 10)):
        start = time.perf_counter()
        for step in seq:
            subprocess.run(step, check=True, capture_output=True)
        kubectl_walls.append(time.perf_counter() - start)
    k_med = statistics.median(kubectl_walls) * 1000
    c_med = statistics.median(walls) * 1000
    print(f"kubectl apply CRD + wait + apply CR: runs={len(kubectl_walls)} median={k_med:.1f} ms")
    print(f"  ratio kubectl/clinv = {k_med / c_med:.1f}x  {'OK' if k_med / c_med >= 10 else 'UNDER'} (≥ 10x)")

    # Connection refused: a port nobody listens on.
    import socket
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    dead = os.path.join(tmp, "kubeconfig-dead")
    with open(kc) as src, open(dead, "w") as dst:
        import re
        dst.write(re.sub(r"server: \S+", f"server: https://127.0.0.1:{port}", src.read()))
    walls, rss = measure([BIN, "publish", "--root", root, "--domain", "prod.acme.example",
                          "--kubeconfig", dead], args.runs, env)
    report("clinv publish (connection refused)", walls, rss, target_ms=50)


def store_objects(domain, root=None):
    """The store objects of `domain` as clinv keeps them, without asking clinv's store:
    the rendered CR without renderedAt and the CRD, compact JSON, each named by the
    sha256 of its bytes (verify checks exactly that). Returns (cr, crd, specHash,
    lok8sVersion)."""
    import json
    root = root or os.path.join(REPO, "examples", "acme")
    env = dict(os.environ, SOURCE_DATE_EPOCH="1700000000")
    cr = json.loads(subprocess.run([BIN, "render", "--root", root, "--domain", domain, "-o", "json"],
                                   env=env, check=True, capture_output=True, text=True).stdout)
    cr["spec"].pop("renderedAt", None)
    crd = json.loads(subprocess.run([BIN, "crd", "-o", "json"], env=env, check=True,
                                    capture_output=True, text=True).stdout)
    dump = lambda v: json.dumps(v, separators=(",", ":"), ensure_ascii=False)
    return dump(cr), dump(crd), cr["spec"]["specHash"], cr["spec"]["lok8sVersion"]


_OBJECTS = {}


def synth_store(store, domain, count, state="pending", base=1_700_000_000, distinct=False, root=None):
    """Builds a v1 store of `count` snapshots of `domain` the fast way, independent of
    the format clinv itself writes (v1 is what every version reads; a v2 binary migrates
    it on its first write): the two objects, then `<domain>/journal` with one
    `<sha256 of json> <json>` line per snapshot (fresh ids, recorded a second apart), and
    a state line per snapshot unless `state` is pending. `distinct`: every snapshot has a
    CR object of its own (a label numbers it), as a history of changed inventories has."""
    import hashlib, shutil
    shutil.rmtree(store, ignore_errors=True)
    env = dict(os.environ, CLINV_SNAPSHOTS=store, SOURCE_DATE_EPOCH="1700000000")
    if domain not in _OBJECTS:
        _OBJECTS[domain] = store_objects(domain, root)
    cr, crd, spec_hash, lok8s = _OBJECTS[domain]
    objects = os.path.join(store, domain, "objects")
    os.makedirs(objects, mode=0o700)
    ids = []
    for text in (cr, crd):
        oid = hashlib.sha256(text.encode()).hexdigest()
        ids.append(oid)
        path = os.path.join(objects, f"{oid}.json")
        with open(path, "w") as f:
            f.write(text)
        os.chmod(path, 0o600)
    head = ('{"kind":"snapshot","v":1,"id":"%s","at":"%s","domain":"' + domain + '","renderedAt":"%s",'
            '"specHash":"' + spec_hash + '","lok8sVersion":"' + lok8s + '","tool":"clinv 0.1.0",'
            '"cr":"%s","crd":"' + ids[1] + '",'
            '"target":{"server":"https://127.0.0.1:9","context":"offline"}}')
    if distinct:
        import json
        cr_value = json.loads(cr)
        labels = cr_value["metadata"].setdefault("labels", {})

    def cr_of(i):
        if not distinct:
            return ids[0]
        labels["bench.clinv.dev/n"] = str(i)
        text = json.dumps(cr_value, separators=(",", ":"), ensure_ascii=False)
        oid = hashlib.sha256(text.encode()).hexdigest()
        with open(os.path.join(objects, f"{oid}.json"), "w") as f:
            f.write(text)
        return oid
    st = '{"kind":"state","v":1,"id":"%s","at":"%s","state":"' + state + '"}'
    sha = hashlib.sha256
    path = os.path.join(store, domain, "journal")
    with open(path, "w", buffering=1 << 20) as f:
        for i in range(count):
            t = base + i
            stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t))
            sid = f"{i:012x}"
            text = head % (sid, stamp + ".000Z", stamp + "Z", cr_of(i))
            f.write(f"{sha(text.encode()).hexdigest()} {text}\n")
            if state != "pending":
                t2 = st % (sid, stamp + ".500Z")
                f.write(f"{sha(t2.encode()).hexdigest()} {t2}\n")
    os.chmod(path, 0o600)
    return env


def bench_store(args):
    root = os.path.join(REPO, "examples", "acme")
    tmp = os.path.join(REPO, "target", "bench-store")
    dead = os.path.join(REPO, "examples", "offline.kubeconfig")
    # Offline publish: connection refused, whole process, recording included.
    env = synth_store(os.path.join(tmp, "offline"), "prod.acme.example", 1)
    walls, rss = measure([BIN, "publish", "--root", root, "--domain", "prod.acme.example",
                          "--kubeconfig", dead], args.runs, env)
    report("publish, cluster unreachable (queued)", walls, rss, target_ms=30)
    # snapshots list over 1k and 10k.
    for n in (1_000, 10_000):
        env = synth_store(os.path.join(tmp, f"list{n}"), "prod.acme.example", n, state="applied")
        walls, rss = measure([BIN, "snapshots", "list", "--root", root], 20, env)
        report(f"snapshots list over {n} snapshots", walls, rss, target_ms=200)
    # replay of 1k and 10k pending snapshots of one domain, against the control plane.
    kc = plane_kubeconfig()
    for n in (1_000, 10_000):
        walls, reqs = [], []
        for run in range(5):
            # Later than anything live, and different every run, so each replay applies.
            base = 4_000_000_000 + int(time.time()) % 100_000 * 1000 + run * 20_000
            env = synth_store(os.path.join(tmp, f"replay{n}"), "prod.acme.example", n, base=base)
            env["KUBECONFIG"] = kc
            before = request_count(kc)
            start = time.perf_counter()
            subprocess.run([BIN, "replay", "--root", root, "--domain", "prod.acme.example", "--strict"],
                           env=env, check=True, capture_output=True)
            walls.append(time.perf_counter() - start)
            reqs.append(request_count(kc) - before)
        med = statistics.median(walls) * 1000
        print(f"replay of {n} pending: median={med:.1f} ms over {len(walls)} runs; API requests per "
              f"replay: {max(reqs)}  {'OK' if max(reqs) <= 3 else 'OVER'} (≤ 3)"
              + (f"; {'OK' if med <= 300 else 'OVER'} (≤ 300 ms)" if n == 1_000 else ""))


def timed_runs(argv, runs, env, fresh=None, ok=(0,), expect=None):
    """Runs argv `runs` times under GNU time; returns (wall seconds, peak RSS KiB) per
    run, both of the same run. `fresh()`, if given, runs (untimed) before each run."""
    walls, peaks, cpus = [], [], []
    for _ in range(runs):
        if fresh:
            fresh()
        start = time.perf_counter()
        out = subprocess.run(["/usr/bin/time", "-f", "%U %S %M", *argv], env=env,
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        walls.append(time.perf_counter() - start)
        if out.returncode not in ok:
            lines = [l for l in out.stderr.strip().splitlines()
                     if not l.startswith("Command exited")
                     and not l.replace(" ", "").replace(".", "").isdigit()]
            raise Failed(f"exit {out.returncode}: {(lines or [''])[-1][:300]}")
        if expect and expect not in out.stderr:
            raise Failed(f"exit 0 without {expect!r}: {out.stderr.strip().splitlines()[0][:300]}")
        user, system, peak = out.stderr.strip().splitlines()[-1].split()
        peaks.append(int(peak))
        cpus.append(float(user) + float(system))
    timed_runs.cpus = cpus
    return walls, peaks


class Failed(Exception):
    pass


# `--only TEXT`: run only the benchmarks whose name holds TEXT (store-scale).
ONLY = []


def bench(name, argv, runs, env, fresh=None, target_ms=None, target_mb=None, expect=None):
    """timed_runs + verdict; a failing command is reported (FAILED) and the others go on.
    `expect`: a text stderr must hold (a publish that exits 0 must have queued)."""
    if ONLY and not any(o in name for o in ONLY):
        return
    try:
        walls, peaks = timed_runs(argv, runs, env, fresh, expect=expect)
    except Failed as e:
        print(f"{name}: FAILED ({e})", flush=True)
        return
    verdict(name, walls, peaks, target_ms, target_mb)


def verdict(name, walls, peaks, target_ms=None, target_mb=None):
    ms = sorted(w * 1000 for w in walls)
    med = statistics.median(ms)
    peak = max(peaks) * 1024 / 1e6
    parts = []
    if target_ms is not None:
        parts.append(f"wall {'OK' if med <= target_ms else 'OVER'} (≤ {target_ms:g} ms)")
    if target_mb is not None:
        parts.append(f"RSS {'OK' if peak <= target_mb else 'OVER'} (≤ {target_mb:g} MB)")
    cpu = getattr(timed_runs, "cpus", None) or [0.0]
    print(f"{name}: runs={len(ms)} min={ms[0]:.1f} ms median={med:.1f} ms max={ms[-1]:.1f} ms "
          f"CPU (user+sys) median={statistics.median(cpu) * 1000:.0f} ms "
          f"peak RSS={peak:.1f} MB  {'; '.join(parts)}", flush=True)


def bench_store2(args):
    """Issue #13's store figures, whole process, on v1 stores built by synth_store (the
    first write of a v2 binary migrates them: timed once, separately, as `migration`)."""
    import shutil
    root = os.path.join(REPO, "examples", "acme")
    dead = os.path.join(REPO, "examples", "offline.kubeconfig")
    tmp = os.path.join(REPO, "target", "bench-store2")
    dom = "prod.acme.example"
    big, mid = args.records, 100_000
    runs = args.runs

    def store(name, n, state, distinct=False):
        path = os.path.join(tmp, name)
        t = time.perf_counter()
        env = synth_store(path, dom, n, state=state, distinct=distinct)
        print(f"  (synthesised {name}: {n} records in {time.perf_counter() - t:.1f} s)", flush=True)
        return path, env

    # Offline publish: append into a domain of 10k and of `big` records.
    for n in (10_000, big):
        path, env = store(f"publish{n}", n, "pending")
        publish = [BIN, "publish", "--root", root, "--domain", dom, "--kubeconfig", dead]
        queued = "recorded as pending snapshot"
        bench(f"first publish into {n} v1 records (migration, if any)", publish, 1, env,
              expect=queued)
        bench(f"offline publish into {n} records", publish, runs, env,
              target_ms=15 if n == big else None, expect=queued)
        shutil.rmtree(path, ignore_errors=True)
    # A history of changed inventories: a CR object per snapshot (an append that listed
    # `objects/` grew with it: 105 ms at 100,000).
    path, env = store(f"distinct{mid}", mid, "pending", distinct=True)
    bench(f"first publish into {mid} v1 records with {mid} distinct objects (migration)", publish, 1,
          env, expect=queued)
    bench(f"offline publish into {mid} records with {mid} distinct objects", publish, runs, env,
          target_ms=15, expect=queued)
    shutil.rmtree(path, ignore_errors=True)

    # Reads over applied histories: log and list, of v2 stores. The v1 journal is
    # migrated first by an offline publish (it becomes the sealed segment 000000.log,
    # one more snapshot queued); the first listing writes the sealed segments' summaries.
    path_mid, env_mid = store(f"applied{mid}", mid, "applied")
    path_big, env_big = store(f"applied{big}", big, "applied")
    publish = [BIN, "publish", "--root", root, "--domain", dom, "--kubeconfig", dead]
    for n, env in ((mid, env_mid), (big, env_big)):
        bench(f"migration of {n} v1 records (an offline publish)", publish, 1, env,
              expect="recorded as pending snapshot")
        bench(f"first snapshots list of {n} after migration (writes summaries)",
              [BIN, "snapshots", "list", "--root", root, "--domain", dom], 1, env)
    log = [BIN, "log", "--root", root, "--domain", dom]
    bench(f"log over {mid} records", log, runs, env_mid, target_ms=300, target_mb=64)
    bench(f"log over {big} records", log, max(3, runs // 4), env_big, target_ms=3000, target_mb=128)
    lst = [BIN, "snapshots", "list", "--root", root, "--domain", dom]
    bench(f"snapshots list of {mid}", lst, runs, env_mid)
    bench(f"snapshots list of {big}", lst, max(3, runs // 4), env_big, target_ms=1000)

    # gc --keep 20 of `big`: each run on a fresh copy (the copy is not timed).
    work = os.path.join(tmp, "gc")

    def fresh_gc():
        shutil.rmtree(work, ignore_errors=True)
        shutil.copytree(path_big, work)

    bench(f"gc --keep 20 of {big}", [BIN, "snapshots", "gc", "--keep", "20", "--root", root], 3,
          dict(env_big, CLINV_SNAPSHOTS=work), fresh_gc, target_ms=10_000)
    shutil.rmtree(work, ignore_errors=True)

    # export and import of `mid` records.
    tar = os.path.join(tmp, "export.tar")
    export = [BIN, "snapshots", "--domain", dom, "export", tar, "--root", root]
    bench(f"export of {mid}", export, max(3, runs // 4), env_mid, target_ms=5000)
    dest = os.path.join(tmp, "imported")
    if os.path.exists(tar):
        bench(f"import of {mid} into an empty store", [BIN, "snapshots", "import", tar, "--root", root],
              max(3, runs // 4), dict(env_mid, CLINV_SNAPSHOTS=dest),
              lambda: shutil.rmtree(dest, ignore_errors=True), target_ms=5000)
    else:
        print(f"import of {mid} into an empty store: not run (no export)")
    shutil.rmtree(tmp, ignore_errors=True)


def bench_log(args):
    root = os.path.join(REPO, "examples", "acme")
    tmp = os.path.join(REPO, "target", "bench-log")
    for n in (1_000, 10_000, 100_000):
        env = synth_store(os.path.join(tmp, f"log{n}"), "prod.acme.example", n, state="applied")
        runs = 5 if n == 100_000 else 20
        walls, rss = measure([BIN, "log", "--root", root, "--domain", "prod.acme.example", "-o", "json"], runs, env)
        report(f"log over {n} snapshots", walls, rss, **({"target_ms": 300, "target_mb": 50} if n == 10_000 else {}))


def bench_yaml_wide(args):
    """A YAML map of 24,000 keys merged into another (`<<: [*w, …]`) in an inventory file
    read by `clinv diff`: duplicate and merge keys are found in constant time each (they
    were found by scanning every earlier key: 60,000 keys took over four minutes). The
    YAML reader's unit test holds what it reads; how fast is measured here, on the release
    binary (target: 1 s)."""
    base = os.path.join(REPO, "tests", "fixtures", "history", "prod.acme.example", "012.yaml")
    out = os.path.join(REPO, "target", "bench-yaml")
    os.makedirs(out, exist_ok=True)
    text = open(base).read().rstrip("\n") + "\nwide: &w\n"
    text += "".join(f"  k{i}: {i}\n" for i in range(24_000))
    text += "use:\n  <<: [*w, {extra: 1, k7: merged}]\n  k5: explicit\n"
    path = os.path.join(out, "wide.yaml")
    with open(path, "w") as f:
        f.write(text)
    argv = [BIN, "diff", path, path]
    measure(argv, 1)  # warm the page cache
    walls, rss = measure(argv, args.runs)
    report("clinv diff of an inventory with a 24,000-key map merged into another", walls, rss,
           target_ms=1000)


def bench_completion(args):
    """Shell completion runs on every TAB: a subcommand, `--domain`, and the snapshot ids of
    a store of 10, 10,000 and 100,000 snapshots (10,000: ≤ 50 ms). The CLI tests hold what
    it does (no lock, no write, no network); how fast it answers is measured here, on the
    release binary (a debug build on a loaded machine says nothing about it)."""
    root = os.path.join(REPO, "examples", "acme")
    tmp = os.path.join(REPO, "target", "bench-completion")
    for n in (10, 10_000, 100_000):
        env = synth_store(os.path.join(tmp, f"c{n}"), "prod.acme.example", n, state="applied")
        env = dict(env, COMPLETE="bash", _CLAP_COMPLETE_COMP_TYPE="9",
                   _CLAP_COMPLETE_SPACE="true", _CLAP_IFS="\n")
        for words in (["clinv", "snaps"],
                      ["clinv", "--root", root, "render", "--domain", ""],
                      ["clinv", "--root", root, "snapshots", "show", "--domain", "prod.acme.example", ""]):
            e = dict(env, _CLAP_COMPLETE_INDEX=str(len(words) - 1))
            argv = [BIN, "--", *words]
            measure(argv, 3, e)  # warm the page cache
            walls, rss = measure(argv, args.runs, e)
            target = {"target_ms": 50} if n == 10_000 else {}
            typed = " ".join(words[1:]).replace(root, "ROOT")
            report(f"complete `{typed}` ({n} snapshots)", walls, rss, **target)


def bench_commit(args):
    """clinv commit of a changed inventory into a repository with 10,000 prior commits,
    versus `git add` + `git commit` of the same three files."""
    import shutil
    tmp = os.path.join(REPO, "target", "bench-commit")
    shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(tmp)
    repo = os.path.join(tmp, "repo")
    git = lambda *a, **kw: subprocess.run(["git", "-C", repo, *a], check=True, capture_output=True, **kw)
    subprocess.run(["git", "init", "-q", "-b", "main", repo], check=True)
    git("config", "user.name", "Bench")
    git("config", "user.email", "bench@example.invalid")
    # 10,000 prior commits, each touching an unrelated file, via fast-import.
    stream = []
    for i in range(10_000):
        data = f"line {i}\n"
        msg = f"prior commit {i}\n"
        stream.append(f"commit refs/heads/main\nmark :{i + 1}\ncommitter Bench <bench@example.invalid> {1_600_000_000 + i} +0000\n"
                      f"data {len(msg)}\n{msg}" + (f"from :{i}\n" if i else "") +
                      f"M 100644 inline notes/n{i % 100}.txt\ndata {len(data)}\n{data}\n")
    subprocess.run(["git", "-C", repo, "fast-import", "--quiet"], input="".join(stream).encode(), check=True)
    git("checkout", "-q", "-f", "main")
    root = os.path.join(tmp, "project")
    shutil.copytree(os.path.join(REPO, "examples", "acme"), root)
    chart = os.path.join(root, ".lok8s", "addons", "cilium", "chart.yaml")
    store = os.path.join(tmp, "store")
    env = dict(os.environ, CLINV_SNAPSHOTS=store)
    clinv_walls, git_walls = [], []
    for i in range(args.runs):
        # Untimed: a new, really different snapshot.
        text = open(chart).read().split("version:")[0] + f"version: 1.{20 + i}.0\n"
        open(chart, "w").write(text)
        subprocess.run([BIN, "publish", "--root", root, "--domain", "prod.acme.example", "--kubeconfig",
                        os.path.join(REPO, "examples", "offline.kubeconfig")],
                       env=dict(env, SOURCE_DATE_EPOCH=str(1_700_000_000 + i)), check=True, capture_output=True)
        start = time.perf_counter()
        subprocess.run([BIN, "commit", "--root", root, "--domain", "prod.acme.example", "--repo", repo],
                       env=env, check=True, capture_output=True)
        clinv_walls.append(time.perf_counter() - start)
        # The same three files, changed the same way, with the git CLI.
        folder = os.path.join(repo, "clusters", "prod.acme.example", "inventory")
        for name in os.listdir(folder):
            p = os.path.join(folder, name)
            open(p, "a").write(f"# git run {i}\n")
        start = time.perf_counter()
        git("add", "clusters/prod.acme.example/inventory")
        git("commit", "-q", "-m", f"inventory: git run {i}")
        git_walls.append(time.perf_counter() - start)
    c, g = statistics.median(clinv_walls) * 1000, statistics.median(git_walls) * 1000
    print(f"clinv commit (changed inventory, 10k prior commits): runs={len(clinv_walls)} median={c:.1f} ms")
    print(f"git add + git commit (same files): median={g:.1f} ms")
    print(f"  ratio clinv/git = {c / g:.2f}  {'OK' if c / g <= 1.0 else 'OVER'} (≤ 1.0)")

def bench_ssh_push(args):
    """clinv commit --push over SSH versus `git push` of the same commit, both through the
    system ssh (`GIT_SSH_COMMAND=ssh -F CONFIG`) to Debian's sshd on a loopback port with
    throwaway keys (apt-get install openssh-server). Each run: a changed inventory is
    published (untimed); `clinv commit --push` commits and pushes it to remote A (timed);
    clone B takes that very commit from A locally (untimed) and `git push` sends it to
    remote B on the same server (timed). Ratios are taken pair by pair.

    As root, the server side is what a Git server runs: a dedicated account whose login shell
    is git-shell (`clinv-bench`, created once with useradd), not root's interactive bash,
    whose rc files (pyenv here: 0.3-0.4 s) would run for every connection of both commands."""
    import getpass
    import shutil
    import socket
    tmp = os.path.join(REPO, "target", "bench-ssh")
    shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(tmp)
    run = lambda *a, **kw: subprocess.run(list(a), check=True, capture_output=True, **kw)
    for key in ("host_key", "id_ed25519"):
        run("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", os.path.join(tmp, key))
    shutil.copy(os.path.join(tmp, "id_ed25519.pub"), os.path.join(tmp, "authorized_keys"))
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    sshd_config = os.path.join(tmp, "sshd_config")
    open(sshd_config, "w").write(
        f"Port {port}\nListenAddress 127.0.0.1\nHostKey {tmp}/host_key\n"
        f"AuthorizedKeysFile {tmp}/authorized_keys\nPidFile none\nStrictModes no\nUsePAM no\n"
        "PasswordAuthentication no\nKbdInteractiveAuthentication no\nPermitRootLogin prohibit-password\n")
    os.makedirs("/run/sshd", exist_ok=True)
    server_user = getpass.getuser()
    if os.geteuid() == 0 and shutil.which("git-shell") and shutil.which("useradd"):
        server_user = "clinv-bench"
        if subprocess.run(["id", server_user], capture_output=True).returncode != 0:
            # `-p *`: no password, but not locked (sshd without PAM refuses a locked account).
            run("useradd", "--system", "--no-create-home", "--home-dir", "/nonexistent", "-p", "*",
                "--shell", shutil.which("git-shell"), server_user)
    sshd = subprocess.Popen(["/usr/sbin/sshd", "-D", "-e", "-f", sshd_config],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(200):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.05)
        kind, blob = open(os.path.join(tmp, "host_key.pub")).read().split()[:2]
        open(os.path.join(tmp, "known_hosts"), "w").write(f"[127.0.0.1]:{port} {kind} {blob}\n")
        ssh_config = os.path.join(tmp, "ssh_config")
        open(ssh_config, "w").write(
            f"Host gitserver\n  HostName 127.0.0.1\n  Port {port}\n  User {server_user}\n"
            f"  IdentityFile {tmp}/id_ed25519\n  IdentitiesOnly yes\n"
            f"  UserKnownHostsFile {tmp}/known_hosts\n  GlobalKnownHostsFile /dev/null\n")
        env = dict(os.environ, GIT_SSH_COMMAND=f"ssh -F {ssh_config}",
                   CLINV_SNAPSHOTS=os.path.join(tmp, "store"))
        repos = {}
        for side in ("a", "b"):
            bare = os.path.join(tmp, f"remote-{side}.git")
            run("git", "init", "-q", "--bare", "-b", "main", bare)
            if server_user != getpass.getuser():
                run("chown", "-R", server_user, bare)
            repo = os.path.join(tmp, f"repo-{side}")
            run("git", "init", "-q", "-b", "main", repo)
            run("git", "-C", repo, "config", "user.name", "Bench")
            run("git", "-C", repo, "config", "user.email", "bench@example.invalid")
            run("git", "-C", repo, "remote", "add", "origin", f"gitserver:{bare}")
            repos[side] = repo
        root = os.path.join(tmp, "project")
        shutil.copytree(os.path.join(REPO, "examples", "acme"), root)
        chart = os.path.join(root, ".lok8s", "addons", "cilium", "chart.yaml")
        kubeconfig = os.path.join(REPO, "examples", "offline.kubeconfig")
        clinv_walls, git_walls = [], []
        for i in range(args.runs + 1):  # the first pair is a warm-up
            text = open(chart).read().split("version:")[0] + f"version: 1.{20 + i}.0\n"
            open(chart, "w").write(text)
            run(BIN, "publish", "--root", root, "--domain", "prod.acme.example", "--kubeconfig", kubeconfig,
                env=dict(env, SOURCE_DATE_EPOCH=str(1_700_000_000 + i)))
            os.sync()  # each timed command starts with nothing of the untimed steps left to flush
            start = time.perf_counter()
            out = run(BIN, "commit", "--root", root, "--domain", "prod.acme.example", "--repo", repos["a"],
                      "--push", env=env, text=True)
            wall = time.perf_counter() - start
            if "pushed main to origin" not in out.stderr:
                sys.exit(f"clinv did not push: {out.stderr}")
            run("git", "-C", repos["b"], "fetch", "-q", repos["a"], "main", env=env)
            run("git", "-C", repos["b"], "reset", "-q", "--hard", "FETCH_HEAD", env=env)
            os.sync()
            start = time.perf_counter()
            run("git", "-C", repos["b"], "push", "-q", "origin", "main", env=env)
            git_wall = time.perf_counter() - start
            if i:
                clinv_walls.append(wall)
                git_walls.append(git_wall)
        tips = [run("git", "-c", "safe.directory=*", "-C", os.path.join(tmp, f"remote-{s}.git"),
                    "rev-parse", "main", text=True).stdout
                for s in ("a", "b")]
        if tips[0] != tips[1]:
            sys.exit(f"the remotes differ: {tips}")
    finally:
        sshd.kill()
        sshd.wait()
    ratios = sorted(c / g for c, g in zip(clinv_walls, git_walls))
    ms = lambda w: f"min={min(w) * 1000:.1f} median={statistics.median(w) * 1000:.1f} max={max(w) * 1000:.1f} ms"
    r = statistics.median(ratios)
    print(f"server account: {server_user} (login shell {'git-shell' if server_user == 'clinv-bench' else 'its own'})")
    print(f"clinv commit --push over SSH (commit + push): runs={len(clinv_walls)} {ms(clinv_walls)}")
    print(f"git push of the same commit over SSH:         runs={len(git_walls)} {ms(git_walls)}")
    low, high = median_interval(ratios)
    print(f"  ratio clinv/git pair by pair: min={ratios[0]:.3f} median={r:.3f} max={ratios[-1]:.3f}  "
          f"{'OK' if r <= 1.0 else 'OVER'} (≤ 1.0); 95% interval of the median {low:.3f}-{high:.3f}")


def median_interval(values, level=0.95):
    """A distribution-free confidence interval of the median: the order statistics whose
    ranks bound it with the binomial(n, 1/2) probability `level` (no resampling)."""
    from math import comb
    xs, n = sorted(values), len(values)
    # k: how many values lie below the interval; P(fewer than k+1 of n below the median)
    # stays within the tail.
    k, tail = 0, 0.0
    while k < n // 2 and tail + comb(n, k) / 2 ** n <= (1 - level) / 2:
        tail += comb(n, k) / 2 ** n
        k += 1
    return (xs[k - 1], xs[n - k]) if k else (xs[0], xs[-1])


def make_pki(srv):
    """A private CA (srv/ca.crt) and a server key and certificate for 127.0.0.1 and
    localhost signed by it (srv/server.key, srv/server.crt), as the tests make them."""
    ssl = lambda *a: subprocess.run(["openssl", *a], cwd=srv, check=True, capture_output=True)
    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"]
    ssl("req", "-x509", *ec, "-keyout", "ca.key", "-out", "ca.crt", "-days", "1", "-subj", "/CN=bench-ca",
        "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign")
    ssl("req", *ec, "-keyout", "server.key", "-out", "server.csr", "-subj", "/CN=localhost")
    open(os.path.join(srv, "server.ext"), "w").write(
        "basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=serverAuth\n"
        "subjectAltName=IP:127.0.0.1,DNS:localhost\n")
    ssl("x509", "-req", "-in", "server.csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial", "-days", "1",
        "-sha256", "-extfile", "server.ext", "-out", "server.crt")


def start_git_https_server(tmp, user, password):
    """Debian's nginx (TLS with a private CA made here, basic auth) in front of git
    http-backend through fcgiwrap, on a free loopback port, as tests/cli/git_https.rs
    starts it. Returns (URL base, CA path, repositories folder, stop function)."""
    import socket
    srv = os.path.join(tmp, "srv")
    os.makedirs(os.path.join(srv, "repos"))
    make_pki(srv)
    open(os.path.join(srv, "htpasswd"), "w").write(f"{user}:{{PLAIN}}{password}\n")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    backend = os.path.join(subprocess.run(["git", "--exec-path"], capture_output=True, text=True).stdout.strip(),
                           "git-http-backend")
    d = srv
    conf = f"""daemon off;
master_process off;
pid {d}/nginx.pid;
error_log {d}/error.log warn;
events {{ worker_connections 64; }}
http {{
  access_log off;
  client_body_temp_path {d}/tmp-body; fastcgi_temp_path {d}/tmp-fastcgi; proxy_temp_path {d}/tmp-proxy;
  uwsgi_temp_path {d}/tmp-uwsgi; scgi_temp_path {d}/tmp-scgi;
  client_max_body_size 0;
  server {{
    listen 127.0.0.1:{port} ssl;
    ssl_certificate {d}/server.crt; ssl_certificate_key {d}/server.key;
    location / {{
      auth_basic "git"; auth_basic_user_file {d}/htpasswd;
      include /etc/nginx/fastcgi_params;
      fastcgi_param SCRIPT_FILENAME {backend};
      fastcgi_param GIT_PROJECT_ROOT {d}/repos;
      fastcgi_param GIT_HTTP_EXPORT_ALL "";
      fastcgi_param PATH_INFO $uri;
      fastcgi_param REMOTE_USER $remote_user;
      fastcgi_pass unix:{d}/fcgi.sock;
    }}
  }}
}}
"""
    open(os.path.join(srv, "nginx.conf"), "w").write(conf)
    fcgi = subprocess.Popen(["fcgiwrap", "-c", "1", "-s", f"unix:{d}/fcgi.sock"], stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    nginx = subprocess.Popen(["nginx", "-p", srv, "-e", f"{d}/error.log", "-c", f"{d}/nginx.conf"],
                             stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 10
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            if os.path.exists(f"{d}/fcgi.sock"):
                break
        except OSError:
            pass
        if time.time() > deadline:
            sys.exit("nginx/fcgiwrap did not start: " + open(f"{d}/error.log").read())
        time.sleep(0.02)

    def stop():
        for p in (nginx, fcgi):
            p.kill()
            p.wait()
    return f"https://127.0.0.1:{port}", os.path.join(srv, "ca.crt"), os.path.join(srv, "repos"), stop


def bench_push_https(args):
    """clinv commit --push over HTTPS (a loopback nginx + git http-backend, private CA,
    basic auth through a git credential helper) versus `git push` of the same kind of
    commit, in a repository with 10,000 prior commits. Each run pushes a new commit: clinv
    renders, commits and pushes; git only pushes (its commit is made untimed)."""
    import shutil
    tmp = os.path.join(REPO, "target", "bench-push-https")
    shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(tmp)
    base, ca, repos, stop = start_git_https_server(tmp, "bench", "bench-token")
    try:
        home = os.path.join(tmp, "home")
        os.makedirs(home)
        env = dict(os.environ, HOME=home, GIT_CONFIG_NOSYSTEM="1", GIT_TERMINAL_PROMPT="0",
                   CLINV_SNAPSHOTS=os.path.join(tmp, "store"))
        # git's environment overrides its config (as in clinv): the repository's
        # http.sslCAInfo must be what both use.
        for k in ("HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy", "HTTP_PROXY", "http_proxy",
                  "GIT_SSL_CAINFO", "GIT_SSL_CAPATH", "GIT_SSL_NO_VERIFY"):
            env.pop(k, None)
        subprocess.run(["git", "init", "-q", "--bare", "-b", "main", os.path.join(repos, "inv.git")], check=True)
        repo = os.path.join(tmp, "repo")
        def git(*a):
            out = subprocess.run(["git", "-C", repo, *a], env=env, capture_output=True, text=True)
            if out.returncode:
                sys.exit(f"git {' '.join(a)}: {out.stderr}")
        subprocess.run(["git", "init", "-q", "-b", "main", repo], check=True, env=env)
        creds = os.path.join(tmp, "credentials")
        open(creds, "w").write(f"https://bench:bench-token@{base.split('://')[1]}\n")
        for k, v in (("user.name", "Bench"), ("user.email", "bench@example.invalid"), ("http.sslCAInfo", ca),
                     ("credential.helper", f"store --file={creds}")):
            git("config", k, v)
        git("remote", "add", "origin", f"{base}/inv.git")
        stream = []
        for i in range(10_000):
            data, msg = f"line {i}\n", f"prior commit {i}\n"
            stream.append(f"commit refs/heads/main\nmark :{i + 1}\ncommitter Bench <bench@example.invalid> {1_600_000_000 + i} +0000\n"
                          f"data {len(msg)}\n{msg}" + (f"from :{i}\n" if i else "") +
                          f"M 100644 inline notes/n{i % 100}.txt\ndata {len(data)}\n{data}\n")
        subprocess.run(["git", "-C", repo, "fast-import", "--quiet"], input="".join(stream).encode(), check=True)
        git("checkout", "-q", "-f", "main")
        git("push", "-q", "origin", "main")
        root = os.path.join(tmp, "project")
        shutil.copytree(os.path.join(REPO, "examples", "acme"), root)
        chart = os.path.join(root, ".lok8s", "addons", "cilium", "chart.yaml")
        clinv_walls, git_walls, commit_walls = [], [], []
        for i in range(args.runs):
            text = open(chart).read().split("version:")[0] + f"version: 1.{20 + i}.0\n"
            open(chart, "w").write(text)
            subprocess.run([BIN, "publish", "--root", root, "--domain", "prod.acme.example", "--kubeconfig",
                            os.path.join(REPO, "examples", "offline.kubeconfig")],
                           env=dict(env, SOURCE_DATE_EPOCH=str(1_700_000_000 + i)), check=True, capture_output=True)
            start = time.perf_counter()
            subprocess.run([BIN, "commit", "--root", root, "--domain", "prod.acme.example", "--repo", repo, "--push"],
                           env=env, check=True, capture_output=True)
            clinv_walls.append(time.perf_counter() - start)
            folder = os.path.join(repo, "clusters", "prod.acme.example", "inventory")
            for name in os.listdir(folder):
                open(os.path.join(folder, name), "a").write(f"# git run {i}\n")
            start = time.perf_counter()
            git("add", "clusters/prod.acme.example/inventory")
            git("commit", "-q", "-m", f"inventory: git run {i}")
            commit_walls.append(time.perf_counter() - start)
            start = time.perf_counter()
            git("push", "-q", "origin", "main")
            git_walls.append(time.perf_counter() - start)
        c = statistics.median(clinv_walls) * 1000
        g = statistics.median(git_walls) * 1000
        gc = statistics.median([a + b for a, b in zip(commit_walls, git_walls)]) * 1000
        print(f"clinv commit --push over HTTPS (new commit, 10k prior): runs={len(clinv_walls)} median={c:.1f} ms "
              f"min={min(clinv_walls) * 1000:.1f} max={max(clinv_walls) * 1000:.1f}")
        print(f"git push of a same-sized commit: median={g:.1f} ms min={min(git_walls) * 1000:.1f} "
              f"max={max(git_walls) * 1000:.1f}")
        print(f"git add + git commit + git push: median={gc:.1f} ms")
        print(f"  ratio clinv commit --push / git push = {c / g:.2f}  {'OK' if c / g <= 1.0 else 'OVER'} (≤ 1.0)")
        print(f"  ratio clinv commit --push / (git add + commit + push) = {c / gc:.2f}")
    finally:
        stop()


def start_registry(srv, user, password):
    """Debian's docker-registry (distribution 2.8) over TLS with a private CA and htpasswd
    basic auth on a free loopback port, as tests/cli/oci.rs starts it. Returns (host, CA
    path, request counter, stop function); the counter is the number of requests the
    registry has answered so far (its own log)."""
    import socket
    os.makedirs(srv, exist_ok=True)
    make_pki(srv)
    hashed = subprocess.run(["htpasswd", "-Bbn", user, password], check=True, capture_output=True).stdout
    open(os.path.join(srv, "htpasswd"), "wb").write(hashed)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    open(os.path.join(srv, "config.yml"), "w").write(
        f"version: 0.1\nlog:\n  level: info\nstorage:\n  filesystem:\n    rootdirectory: {srv}/data\n"
        f"http:\n  addr: 127.0.0.1:{port}\n  tls:\n    certificate: {srv}/server.crt\n    key: {srv}/server.key\n"
        f"auth:\n  htpasswd:\n    realm: bench\n    path: {srv}/htpasswd\n")
    log = os.path.join(srv, "registry.log")
    registry = subprocess.Popen(["docker-registry", "serve", os.path.join(srv, "config.yml")],
                                stdin=subprocess.DEVNULL, stdout=open(log, "w"), stderr=subprocess.STDOUT)
    deadline = time.time() + 20
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            if time.time() > deadline:
                sys.exit("docker-registry did not start: " + open(log).read())
            time.sleep(0.05)

    def requests():
        return sum(1 for l in open(log) if "response completed" in l)

    def stop():
        registry.kill()
        registry.wait()
    return f"127.0.0.1:{port}", os.path.join(srv, "ca.crt"), requests, stop


def oci_tools():
    """The folder of oras and crane (`scripts/oci-tools build`, or CLINV_OCI_TOOLS)."""
    if os.environ.get("CLINV_OCI_TOOLS"):
        return os.environ["CLINV_OCI_TOOLS"]
    out = subprocess.run([os.path.join(REPO, "scripts", "oci-tools"), "build"], check=True,
                         capture_output=True, text=True).stdout
    return out.strip().splitlines()[-1]


def bench_oci_push(args):
    """issue #27: `clinv push oci://` of a changed inventory versus `oras push` of the same
    artifact, pair by pair, to docker-registry over TLS with basic auth on loopback; then
    the unchanged re-push (≤ 50 ms). Each pair: the inventory is changed (untimed); clinv
    renders, records, packs and pushes it (timed) to one repository; oras (untimed) pulls
    that very layer, then pushes it (timed) to another repository with the same `{}`
    config, media types, annotations and two tags — the same blobs, requests and bytes
    on the wire, so the ratio is clinv's whole command against oras's transfer alone."""
    import shutil
    tmp = os.path.join(REPO, "target", "bench-oci-push")
    shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(tmp)
    tools = oci_tools()
    oras = os.path.join(tools, "oras")
    host, ca, served, stop = start_registry(os.path.join(tmp, "registry"), "bench", "bench-token")
    try:
        docker = os.path.join(tmp, "docker")
        os.makedirs(docker)
        os.makedirs(os.path.join(tmp, "home"))
        env = dict(os.environ, HOME=os.path.join(tmp, "home"), DOCKER_CONFIG=docker,
                   CLINV_SNAPSHOTS=os.path.join(tmp, "store"), REGISTRY_AUTH="bench:bench-token")
        for k in ("HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy", "HTTP_PROXY", "http_proxy"):
            env.pop(k, None)
        access = ["--ca-file", ca, "--registry-config", os.path.join(docker, "config.json")]
        subprocess.run([oras, "login", host, "-u", "bench", "--password-stdin", *access], input=b"bench-token",
                       env=env, check=True, capture_output=True)
        root = os.path.join(tmp, "project")
        shutil.copytree(os.path.join(REPO, "examples", "acme"), root)
        chart = os.path.join(root, ".lok8s", "addons", "cilium", "chart.yaml")
        clinv = [BIN, "push", f"oci://{host}/inv/clinv", "--root", root, "--domain", "prod.acme.example",
                 "--ca-file", ca, "--creds-env", "REGISTRY_AUTH", "-o", "json"]
        parts = os.path.join(tmp, "parts")
        open(os.path.join(tmp, "config.json"), "w").write("{}")

        def timed(argv, cwd=None, e=None):
            start = time.perf_counter()
            out = subprocess.run(argv, cwd=cwd, env=e or env, capture_output=True, text=True)
            wall = time.perf_counter() - start
            if out.returncode:
                sys.exit(f"{argv[0]} {argv[1]}: exit {out.returncode}: {out.stderr}")
            return wall, out.stdout, out.stderr

        clinv_walls, oras_walls, clinv_reqs, oras_reqs = [], [], [], []
        for i in range(args.runs + 1):  # the first pair warms up (config blob, caches)
            text = open(chart).read().split("version:")[0] + f"version: 1.{20 + i}.0\n"
            open(chart, "w").write(text)
            before = served()
            wall, out, err = timed(clinv, e=dict(env, SOURCE_DATE_EPOCH=str(1_700_000_000 + i)))
            clinv_reqs.append(served() - before)
            digest = json.loads(out)["digest"]
            manifest = json.loads(subprocess.run([oras, "manifest", "fetch", f"{host}/inv/clinv@{digest}", *access],
                                                 env=env, check=True, capture_output=True).stdout)
            shutil.rmtree(parts, ignore_errors=True)
            subprocess.run([oras, "pull", f"{host}/inv/clinv@{digest}", "-o", parts, *access], env=env,
                           check=True, capture_output=True)
            layer = manifest["layers"][0]
            title = layer["annotations"]["org.opencontainers.image.title"]
            notes = [a for k, v in manifest["annotations"].items() for a in ("--annotation", f"{k}={v}")]
            snapshot = "snapshot-" + err.split("pushed snapshot ")[1].split()[0]
            oras_push = [oras, "push", f"{host}/inv/oras:latest,{snapshot}", f"{title}:{layer['mediaType']}",
                         "--config", f"{os.path.join(tmp, 'config.json')}:{manifest['config']['mediaType']}",
                         *notes, *access]
            before = served()
            o_wall = timed(oras_push, cwd=parts)[0]
            oras_reqs.append(served() - before)
            if i:
                clinv_walls.append(wall)
                oras_walls.append(o_wall)
        same = subprocess.run([os.path.join(tools, "crane"), "digest", f"{host}/inv/oras:latest"],
                              env=dict(env, SSL_CERT_FILE=ca), check=True, capture_output=True, text=True)
        c, o = statistics.median(clinv_walls) * 1000, statistics.median(oras_walls) * 1000
        pairs = statistics.median(a / b for a, b in zip(clinv_walls, oras_walls))
        print(f"clinv push (changed inventory: render, record, pack, push): runs={len(clinv_walls)} "
              f"median={c:.1f} ms min={min(clinv_walls) * 1000:.1f} max={max(clinv_walls) * 1000:.1f}; "
              f"requests per push {statistics.median(clinv_reqs[1:]):g}")
        print(f"oras push of the same layer, config, annotations and tags: median={o:.1f} ms "
              f"min={min(oras_walls) * 1000:.1f} max={max(oras_walls) * 1000:.1f}; "
              f"requests per push {statistics.median(oras_reqs[1:]):g}; "
              f"same manifest as clinv's: {'yes' if same.stdout.strip() == digest else 'NO'}")
        print(f"  ratio clinv/oras = {c / o:.2f} (median of pairwise ratios {pairs:.2f})  "
              f"{'OK' if c / o <= 1.0 else 'OVER'} (≤ 1.0)")
        # The unchanged re-push: blobs and tags checked, nothing sent.
        e = dict(env, SOURCE_DATE_EPOCH=str(1_700_000_000 + args.runs))
        before = served()
        timed(clinv, e=e)
        requests = served() - before
        walls = [timed(clinv, e=e)[0] for _ in range(args.runs)]
        verdict_ms = statistics.median(walls) * 1000
        print(f"clinv push (unchanged: nothing uploaded): runs={len(walls)} median={verdict_ms:.1f} ms "
              f"min={min(walls) * 1000:.1f} max={max(walls) * 1000:.1f}; requests per push {requests}  "
              f"{'OK' if verdict_ms <= 50 else 'OVER'} (≤ 50 ms)")
    finally:
        stop()


def bench_replay_all(args):
    """issue #14: `replay --all` over N domains whose servers never answer ends within
    its one --timeout, every domain reported (probed, or not tried once the budget ran
    out) and still queued."""
    import resource
    import shutil
    import socket
    from concurrent.futures import ThreadPoolExecutor
    n = args.domains
    work = os.path.join(TARGET, "bench-replay-all")
    shutil.rmtree(work, ignore_errors=True)
    root, store = os.path.join(work, "project"), os.path.join(work, "snapshots")
    shutil.copytree(os.path.join(REPO, "examples", "acme", ".lok8s"), os.path.join(root, ".lok8s"))
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = min(hard, n + 256)
    if soft < want:
        resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))
    per_domain = want >= n + 256
    # Black holes: listening sockets with a backlog of one that nobody accepts from, so
    # the first connection completes and then waits for a TLS answer that never comes,
    # and later ones are never completed (their SYNs are dropped).
    holes = []
    for _ in range(n if per_domain else 1):
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        s.listen(1)
        holes.append(s)
    refused = socket.socket()
    refused.bind(("127.0.0.1", 0))
    refused_port = refused.getsockname()[1]
    refused.close()
    kubeconfig = ("apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n"
                  "    server: https://127.0.0.1:{port}\n    insecure-skip-tls-verify: true\n"
                  "users:\n- name: u\n  user:\n    token: bench\ncontexts:\n- name: c\n"
                  "  context: {{cluster: c, user: u}}\ncurrent-context: c\n")
    os.makedirs(os.path.join(root, ".kubeconfig"))
    domains = [f"d{i:04d}.bench.example" for i in range(n)]

    def aim(i, port):
        with open(os.path.join(root, ".kubeconfig", f"b{i:04d}.yaml"), "w") as f:
            f.write(kubeconfig.format(port=port))
    for i, d in enumerate(domains):
        os.makedirs(os.path.join(root, "clusters", d))
        with open(os.path.join(root, "clusters", d, "cluster.lok8s.yaml"), "w") as f:
            f.write(f"kind: Lo\nmetadata:\n  name: b{i:04d}\nspec:\n  kubernetes:\n    version: v1.32.3\n")
        aim(i, refused_port)
    env = dict(os.environ, SOURCE_DATE_EPOCH="1700000000", CLINV_SNAPSHOTS=store,
               HOME="/nonexistent", KUBECONFIG="/nonexistent/kubeconfig")
    # Queue one snapshot per domain through its own kubeconfig, refused while publishing
    # (publish records and queues at once); replay goes through the same file, which
    # then names the domain's black hole.
    def queue(d):
        subprocess.run([BIN, "publish", "--root", root, "--domain", d],
                       env=env, check=True, capture_output=True)
    start = time.perf_counter()
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        list(pool.map(queue, domains))
    for i in range(n):
        aim(i, holes[i if per_domain else 0].getsockname()[1])
    print(f"generated {n} domains, {'one black hole each' if per_domain else 'one shared black hole'}; "
          f"queued one snapshot each in {time.perf_counter() - start:.1f} s")
    for timeout in args.timeout:
        walls = []
        for _ in range(args.runs):
            argv = [BIN, "replay", "--all", "--root", root, "--timeout", str(timeout)]
            start = time.perf_counter()
            out = subprocess.run(argv, env=env, capture_output=True, text=True)
            walls.append(time.perf_counter() - start)
            if out.returncode != 0:
                sys.exit(f"replay --all exited {out.returncode}: {out.stderr[-2000:]}")
            rows = [l for l in out.stdout.splitlines()[1:] if l.strip()]
            queued = sum(1 for l in rows if "pending (unreachable)" in l)
            not_tried = out.stderr.count("not tried: the command's --timeout")
            if len(rows) != n or queued != n:
                sys.exit(f"{len(rows)} rows, {queued} pending (unreachable) of {n}:\n{out.stdout[:2000]}")
        med = statistics.median(walls)
        print(f"clinv replay --all, {n} black-holed domains, --timeout {timeout}: runs={len(walls)} "
              f"median={med:.2f} s max={max(walls):.2f} s; {n - not_tried} probed, {not_tried} not tried "
              f"(budget), all {n} reported pending (unreachable)  "
              f"{'OK' if max(walls) <= timeout else 'OVER'} (≤ {timeout} s)")
    for s in holes:
        s.close()


def make_fleet(work, n, snapshots, distinct=False):
    """A synthetic fleet (issue #25's generator): a project of `n` cluster domains
    (`dNNNN.fleet.example`, each with four of the example's addons, a quarter of them on
    cert-manager's per-cluster pin) and a store holding `snapshots` snapshots of each
    (built by synth_store, then moved into one store). Returns (root, store)."""
    import shutil
    shutil.rmtree(work, ignore_errors=True)
    root, store = os.path.join(work, "project"), os.path.join(work, "snapshots")
    example = os.path.join(REPO, "examples", "acme")
    shutil.copytree(os.path.join(example, ".lok8s"), os.path.join(root, ".lok8s"))
    pin = os.path.join(example, "clusters", "lab.acme.example", "addons")
    for i in range(n):
        d = os.path.join(root, "clusters", f"d{i:04d}.fleet.example")
        os.makedirs(d)
        certs = "./addons/cert-manager" if i % 4 == 0 else "cert-manager"
        if i % 4 == 0:
            shutil.copytree(pin, os.path.join(d, "addons"))
        with open(os.path.join(d, "cluster.lok8s.yaml"), "w") as f:
            f.write(f"kind: Lo\nmetadata:\n  name: f{i:04d}\nspec:\n  kubernetes:\n    version: v1.32.3\n"
                    f"  bootstrap:\n    - cilium\n    - {certs}\n    - metrics-server\n    - ingress-nginx\n")
    os.makedirs(store)
    for i in range(n):
        dom = f"d{i:04d}.fleet.example"
        one = os.path.join(work, "one")
        synth_store(one, dom, snapshots, state="applied", root=root, distinct=distinct)
        shutil.move(os.path.join(one, dom), os.path.join(store, dom))
    # One offline publish per domain: the store is migrated to version 2, as any write
    # does, and each domain's newest snapshot is that pending one.
    from concurrent.futures import ThreadPoolExecutor
    env = dict(os.environ, SOURCE_DATE_EPOCH="1700000000", CLINV_SNAPSHOTS=store,
               HOME="/nonexistent", KUBECONFIG="/nonexistent/kubeconfig")
    def publish(i):
        subprocess.run([BIN, "publish", "--root", root, "--domain", f"d{i:04d}.fleet.example"],
                       env=env, check=True, capture_output=True)
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        list(pool.map(publish, range(n)))
    return root, store


def bench_fleet(args):
    """issue #25: the fleet view at scale — `fleet` from the project and from the store,
    `log -A --since 30d`, `log -A --max-count 20`, `render -A --out` (every domain's two
    files, staged and fsynced), and `drift -A`/`status -A` against
    black-holed clusters — whole process, wall and peak RSS, at each size."""
    import socket
    for n in args.domains:
        work = os.path.join(TARGET, f"bench-fleet-{n}")
        start = time.perf_counter()
        root, store = make_fleet(work, n, args.snapshots)
        print(f"generated {n} domains × {args.snapshots} snapshots in {time.perf_counter() - start:.1f} s")
        env = dict(os.environ, SOURCE_DATE_EPOCH="1700000000", CLINV_SNAPSHOTS=store,
                   HOME="/nonexistent", KUBECONFIG="/nonexistent/kubeconfig")
        for name, argv, target_ms, target_mb in [
            ("fleet (project)", ["fleet", "--root", root], None, None),
            ("fleet --from store", ["fleet", "--from", "store", "--root", root],
             300 if n <= 1000 else 2000, 128 if n <= 1000 else 256),
            ("log -A --since 30d", ["log", "-A", "--since", "30d", "--root", root],
             1000 if n <= 1000 else 5000, None),
            ("log -A --max-count 20", ["log", "-A", "--max-count", "20", "--root", root], None, None),
            ("render -A --out", ["render", "-A", "--out", os.path.join(work, "rendered"), "--root", root],
             5000 if n <= 1000 else None, None),
            # issue 38: the textfile collector's cron job reads every domain's queue, never
            # a whole journal and never a cluster.
            ("status -A -o prometheus", ["status", "-A", "-o", "prometheus", "--root", root],
             1000 if n <= 1000 else 10000, 64 if n <= 1000 else 128),
        ]:
            walls, rss = measure([BIN] + argv, args.runs, env)
            report(f"{name}, {n} domains × {args.snapshots}", walls, rss, target_ms, target_mb)
        # Every domain's kubeconfig names one black hole (accepts one connection, answers
        # nothing); the commands must end within their one --timeout, every domain a row.
        hole = socket.socket()
        hole.bind(("127.0.0.1", 0))
        hole.listen(1)
        os.makedirs(os.path.join(root, ".kubeconfig"), exist_ok=True)
        for i in range(n):
            with open(os.path.join(root, ".kubeconfig", f"f{i:04d}.yaml"), "w") as f:
                f.write("apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n"
                        f"    server: https://127.0.0.1:{hole.getsockname()[1]}\n    insecure-skip-tls-verify: true\n"
                        "users:\n- name: u\n  user:\n    token: bench\ncontexts:\n- name: c\n"
                        "  context: {cluster: c, user: u}\ncurrent-context: c\n")
        for command in ("drift", "status", "fleet"):
            select = ["--from", "live"] if command == "fleet" else ["-A"]
            argv = [BIN, command, *select, "--root", root, "--timeout", str(args.timeout)]
            start = time.perf_counter()
            out = subprocess.run(argv, env=env, capture_output=True, text=True)
            wall = time.perf_counter() - start
            if command == "fleet":
                # No column is read; every domain is named on stderr (read or not tried).
                rows = [l for l in out.stderr.splitlines() if "not in the matrix" in l]
            else:
                rows = [l for l in out.stdout.splitlines()[1:] if l.strip()]
            tried = sum(1 for l in rows if "not tried" not in l)
            print(f"{command} {' '.join(select)}, {n} black-holed domains, --timeout {args.timeout}: {wall:.2f} s, exit "
                  f"{out.returncode}, {len(rows)} rows ({tried} read or refused, {len(rows) - tried} not tried)  "
                  f"{'OK' if wall <= args.timeout + 1 and len(rows) == n else 'OVER'} (≤ --timeout, every domain a row)")
        hole.close()


def bench_fleet_at(args):
    """issue #40: `fleet --at DATE` over a synthetic fleet (make_fleet: each domain's
    snapshots a second apart from 2023-11-14T22:13:20Z, then one offline publish now) —
    at a day (each domain's newest snapshot is its second newest row), at a time halfway
    through each domain's history (every domain reads past half its rows), and with
    --changed-since (two matrices read) — whole process, wall and peak RSS."""
    base = 1_700_000_000
    half = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(base + args.snapshots // 2))
    for n in args.domains:
        work = os.path.join(TARGET, f"bench-fleet-at-{n}")
        start = time.perf_counter()
        root, store = make_fleet(work, n, args.snapshots)
        print(f"generated {n} domains × {args.snapshots} snapshots in {time.perf_counter() - start:.1f} s")
        env = dict(os.environ, CLINV_SNAPSHOTS=store, HOME="/nonexistent",
                   KUBECONFIG="/nonexistent/kubeconfig")
        target_ms = 300 if n <= 1000 else 2000
        for name, argv in [
            ("fleet --at 2023-11-14", ["fleet", "--at", "2023-11-14", "--root", root]),
            (f"fleet --at {half}", ["fleet", "--at", half, "--root", root]),
            ("fleet --changed-since 2023-11-14", ["fleet", "--changed-since", "2023-11-14", "--root", root]),
        ]:
            walls, rss = measure([BIN] + argv, args.runs, env)
            report(f"{name}, {n} domains × {args.snapshots}", walls, rss, target_ms, 128)


def bench_fleet_report(args):
    """issue #40: the fleet report (`report -A --out`: the matrix and the grouped
    timeline of every step) and `log -A --oneline` over a synthetic fleet (make_fleet) —
    whole process, wall and peak RSS, and the page's size (< 5 MB). `--changing`: every
    step of every domain changes its inventory (a label, the same step across the fleet
    at the same second): a hundred events of the whole fleet, the page's worst case."""
    for n in args.domains:
        work = os.path.join(TARGET, f"bench-fleet-report-{n}")
        start = time.perf_counter()
        root, store = make_fleet(work, n, args.snapshots, distinct=args.changing)
        print(f"generated {n} domains × {args.snapshots} snapshots in {time.perf_counter() - start:.1f} s")
        env = dict(os.environ, CLINV_SNAPSHOTS=store, HOME="/nonexistent",
                   KUBECONFIG="/nonexistent/kubeconfig")
        page = os.path.join(work, "fleet.html")
        for name, argv, target_ms in [
            ("report -A --out", ["report", "-A", "--out", page, "--root", root], 2000 if n <= 1000 else None),
            ("log -A --oneline", ["log", "-A", "--oneline", "--root", root], None),
        ]:
            walls, rss = measure([BIN] + argv, args.runs, env)
            report(f"{name}, {n} domains × {args.snapshots}", walls, rss, target_ms, 128 if n <= 1000 else None)
        size = os.path.getsize(page)
        print(f"report -A page, {n} domains × {args.snapshots}: {size / 1e6:.2f} MB  "
              f"{'OK' if size < 5e6 else 'OVER'} (< 5 MB)")


def make_addon_fleet(work, n, snapshots):
    """A synthetic fleet with a recent history (issue #40's generator for `log -A --addon`):
    the project of make_fleet (a quarter of the domains on cert-manager's per-cluster pin,
    v1.18.0), and for each domain `snapshots` applied snapshots one a day up to yesterday
    (version 1 journals written here) — the pinned quarter on v1.17.0 until 20 days ago,
    v1.18.0 since: an upgrade inside a 30-day window. One `publish -A` (one process, every
    domain offline: pending) migrates every store to version 2. Returns (root, store)."""
    import hashlib, shutil
    from concurrent.futures import ThreadPoolExecutor
    shutil.rmtree(work, ignore_errors=True)
    root, store = os.path.join(work, "project"), os.path.join(work, "snapshots")
    example = os.path.join(REPO, "examples", "acme")
    shutil.copytree(os.path.join(example, ".lok8s"), os.path.join(root, ".lok8s"))
    pin = os.path.join(example, "clusters", "lab.acme.example", "addons")
    name = lambda i: f"d{i:05d}.fleet.example"
    for i in range(n):
        d = os.path.join(root, "clusters", name(i))
        os.makedirs(d)
        certs = "./addons/cert-manager" if i % 4 == 0 else "cert-manager"
        if i % 4 == 0:
            shutil.copytree(pin, os.path.join(d, "addons"))
        with open(os.path.join(d, "cluster.lok8s.yaml"), "w") as f:
            f.write(f"kind: Lo\nmetadata:\n  name: f{i:05d}\nspec:\n  kubernetes:\n    version: v1.32.3\n"
                    f"  bootstrap:\n    - cilium\n    - {certs}\n    - metrics-server\n    - ingress-nginx\n")
    # The objects of two domains (pinned, not), rendered once and relabelled for the others.
    templates = {0: store_objects(name(0), root), 1: store_objects(name(1), root)}
    day, now = 86_400, int(time.time())
    base = now - snapshots * day
    sha = lambda t: hashlib.sha256(t.encode()).hexdigest()

    def journal(i):
        cr, crd, spec_hash, lok8s = templates[0 if i % 4 == 0 else 1]
        t = name(0 if i % 4 == 0 else 1)
        cr = cr.replace(t, name(i)).replace(f"f{0 if i % 4 == 0 else 1:05d}", f"f{i:05d}")
        crs = [cr, cr.replace('"chartVersion":"v1.18.0"', '"chartVersion":"v1.17.0"')]
        objects = os.path.join(store, name(i), "objects")
        os.makedirs(objects, mode=0o700)
        for text in (*crs, crd):
            with open(os.path.join(objects, f"{sha(text)}.json"), "w") as f:
                f.write(text)
        lines = []
        for k in range(snapshots):
            at = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(base + k * day))
            old = i % 4 == 0 and k < snapshots - 20
            sid = f"{i * snapshots + k:012x}"
            rec = ('{"kind":"snapshot","v":1,"id":"%s","at":"%s.000Z","domain":"%s","renderedAt":"%sZ",'
                   '"specHash":"%s","lok8sVersion":"%s","tool":"clinv 0.1.0","cr":"%s","crd":"%s",'
                   '"target":{"server":"https://127.0.0.1:9","context":"offline"}}') % (
                sid, at, name(i), at, spec_hash, lok8s, sha(crs[1] if old else crs[0]), sha(crd))
            state = '{"kind":"state","v":1,"id":"%s","at":"%s.500Z","state":"applied"}' % (sid, at)
            lines += [f"{sha(rec)} {rec}\n", f"{sha(state)} {state}\n"]
        with open(os.path.join(store, name(i), "journal"), "w") as f:
            f.write("".join(lines))

    with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        list(pool.map(journal, range(n)))
    env = dict(os.environ, SOURCE_DATE_EPOCH="1700000000", CLINV_SNAPSHOTS=store,
               HOME="/nonexistent", KUBECONFIG="/nonexistent/kubeconfig")
    subprocess.run([BIN, "publish", "-A", "--root", root], env=env, check=True, capture_output=True)
    return root, store


def bench_addon_log(args):
    """issue #40: `log -A --addon cert-manager --since 30d` — the fleet's history of one
    addon over a recent history (make_addon_fleet), whole process, wall and peak RSS; beside
    it `log -A --since 30d` (every change) and the whole history of the addon. `--work
    /dev/shm` keeps the 1.2 GB of a 10,000-domain fleet off the disk (removed after)."""
    import shutil
    for n in args.domains:
        work = os.path.join(args.work or TARGET, f"bench-addon-log-{n}")
        start = time.perf_counter()
        root, store = make_addon_fleet(work, n, args.snapshots)
        print(f"generated {n} domains × {args.snapshots} daily snapshots in {time.perf_counter() - start:.1f} s")
        env = dict(os.environ, SOURCE_DATE_EPOCH="1700000000", CLINV_SNAPSHOTS=store,
                   HOME="/nonexistent", KUBECONFIG="/nonexistent/kubeconfig")
        events = subprocess.run([BIN, "log", "-A", "--addon", "cert-manager", "--since", "30d",
                                 "--root", root], env=env, check=True, capture_output=True, text=True)
        lines = len(events.stdout.splitlines())
        print(f"  log -A --addon cert-manager --since 30d: {lines} lines (expected {(n + 3) // 4}: "
              f"{'OK' if lines == (n + 3) // 4 else 'WRONG'})")
        for name, argv, target_ms in [
            ("log -A --addon cert-manager --since 30d",
             ["log", "-A", "--addon", "cert-manager", "--since", "30d"], 1500 if n > 1000 else None),
            ("log -A --since 30d", ["log", "-A", "--since", "30d"], None),
            ("log -A --addon cert-manager (whole history)", ["log", "-A", "--addon", "cert-manager"], None),
        ]:
            walls, rss = measure([BIN] + argv + ["--root", root], args.runs, env)
            report(f"{name}, {n} domains × {args.snapshots}", walls, rss, target_ms)
            cpu = subprocess.run(["/usr/bin/time", "-f", "%U %S", BIN, *argv, "--root", root], env=env,
                                 stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            user, system = cpu.stderr.strip().splitlines()[-1].split()
            print(f"  CPU (user+sys) of one more run: {float(user) + float(system):.2f} s", flush=True)
        shutil.rmtree(work, ignore_errors=True)


def make_fleet_repo(work, domains, commits):
    """A GitOps repository (issue #25's generator) of `domains` domain folders, each with
    commit's layout (clusters/<domain>/inventory/clusterinventory.yaml, the example's prod
    render relabelled), written by `commits` commits through git fast-import: the first
    adds every folder, each later one bumps one domain's cilium pin."""
    import shutil
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    render = subprocess.run([BIN, "render", "--root", os.path.join(REPO, "examples", "acme"),
                             "--domain", "prod.acme.example"], capture_output=True, text=True,
                            env=dict(os.environ, SOURCE_DATE_EPOCH="1700000000"), check=True).stdout
    def doc(i, pin):
        return (render.replace("prod.acme.example", f"d{i:05d}.fleet.example")
                .replace("chartVersion: 1.19.2", f"chartVersion: 1.19.{pin}"))
    subprocess.run(["git", "init", "-q", "-b", "main", work], check=True)
    lines, mark_time = [], 1700000000
    def commit(n, files):
        lines.append(f"commit refs/heads/main\ncommitter bench <b@x> {mark_time + n} +0000\n")
        msg = f"inventory {n}\n".encode()
        lines.append(f"data {len(msg)}\n{msg.decode()}")
        for path, text in files:
            data = text.encode()
            lines.append(f"M 100644 inline {path}\ndata {len(data)}\n{text}\n")
    path = lambda i: f"clusters/d{i:05d}.fleet.example/inventory/clusterinventory.yaml"
    commit(0, [(path(i), doc(i, 2)) for i in range(domains)])
    for n in range(1, commits):
        i = n % domains
        commit(n, [(path(i), doc(i, 3 + n // domains))])
    subprocess.run(["git", "-C", work, "fast-import", "--quiet"], input="".join(lines).encode(),
                   check=True)
    subprocess.run(["git", "-C", work, "reset", "-q", "--hard", "main"], check=True)
    return work


def bench_fleet_repo(args):
    """issue #25: `fleet --repo` over a GitOps repository of 1,000 domain folders and
    10,000 commits (target ≤ 2 s) — whole process, wall and peak RSS."""
    for n in args.domains:
        work = os.path.join(TARGET, f"bench-fleet-repo-{n}")
        start = time.perf_counter()
        make_fleet_repo(work, n, args.commits)
        print(f"generated {n} domain folders, {args.commits} commits in {time.perf_counter() - start:.1f} s")
        walls, rss = measure([BIN, "fleet", "--repo", work], args.runs)
        report(f"fleet --repo, {n} domains × {args.commits} commits", walls, rss,
               2000 if n <= 1000 else None, None)


def bench_documents(n, root, dom, runs, env):
    """Issue #39 (12): the documents, bounded like the text (stdout to /dev/null)."""
    lst = [BIN, "snapshots", "list", "--root", root, "--domain", dom]
    for fmt in ("json", "yaml"):
        bench(f"snapshots list -o {fmt} of {n}", lst + ["-o", fmt], runs, env, target_mb=128)
    bench(f"snapshots list -o wide of {n}", lst + ["-o", "wide"], runs, env, target_mb=128)
    bench(f"snapshots list -o jsonpath of {n}", lst + ["-o", "jsonpath={range [*]}{.id}{\"\\n\"}{end}"], runs, env,
          target_mb=128)
    bench(f"snapshots list --sort-by state -o json of {n}", lst + ["--sort-by", "state", "-o", "json"], runs,
          env, target_mb=128)
    bench(f"snapshots list --sort-by time of {n}", lst + ["--sort-by", "time"], runs, env, target_mb=128)
    log = [BIN, "log", "--root", root, "--domain", dom]
    for extra in (["-o", "json"], ["-o", "markdown"], ["--oneline"], ["--reverse", "-o", "json"],
                  ["--addon", "cilium"], ["-A"], ["-A", "-o", "json"], ["-A", "--oneline"]):
        argv = log[:4] + extra if "-A" in extra else log + extra
        bench(f"log {' '.join(extra)} of {n}", argv, runs, env, target_mb=128)
    out = os.path.join(REPO, "target", "bench-scale", "trail.json")
    bench(f"report -o json --out of {n}", [BIN, "report", "-o", "json", "--out", out, "--root", root,
          "--domain", dom], runs, env, target_mb=128)
    bench(f"report of {n}", [BIN, "report", "--root", root, "--domain", dom], runs, env,
          target_mb=128)
    bench(f"report -o json of {n}", [BIN, "report", "-o", "json", "--root", root, "--domain", dom],
          runs, env, target_mb=128)
    bench(f"gc --keep 20 --dry-run -o json of {n}",
          [BIN, "snapshots", "gc", "--keep", "20", "--dry-run", "-o", "json", "--root", root],
          runs, env, target_mb=128)


def plane_kubeconfig():
    """The real control plane's admin kubeconfig (`scripts/control-plane up`):
    CLINV_BENCH_KUBECONFIG, else this tree's target/control-plane/kubeconfig."""
    kc = os.environ.get("CLINV_BENCH_KUBECONFIG") or os.path.join(REPO, "target", "control-plane", "kubeconfig")
    return kc if os.path.isfile(kc) else None


def bench_delivery(n, root, dom, runs, env, tmp):
    """Issue #41 (1): every command that talks to a cluster, Git or a registry, against
    the real control plane (and a local repository, a loopback registry), on a store of
    `n` records — each against the 128 MB bound; the time is compared with the same
    command on a 10-record store (`--records 10 1000000`)."""
    import shutil
    kc = plane_kubeconfig()
    if kc is None:
        print("delivery: no control plane (scripts/control-plane up, or CLINV_BENCH_KUBECONFIG)")
        return
    # The plane is shared: what another domain left live would be refused as another's.
    subprocess.run(["kubectl", "--kubeconfig", kc, "delete", "clusterinventory", "cluster",
                    "--ignore-not-found"], capture_output=True)
    def cmd(*a):
        return [BIN, *a, "--root", root]

    # A kubeconfig path the queued snapshots record: unreachable when they are queued,
    # the plane's when `replay --all` (which goes where each snapshot was queued for) runs.
    aimed = os.path.join(tmp, "aimed.kubeconfig")

    import re
    dead = re.sub(r"server: \S+", "server: https://127.0.0.1:9", open(kc).read())

    def queue_one():
        with open(aimed, "w") as f:
            f.write(dead)
        out = subprocess.run(cmd("publish", "--domain", dom, "--kubeconfig", aimed), env=env,
                             capture_output=True, text=True)
        if "recorded as pending snapshot" not in out.stderr:
            raise SystemExit(f"could not queue a snapshot: {out.stderr}")
        shutil.copyfile(kc, aimed)

    online = ["--kubeconfig", kc]
    bench(f"publish, cluster reachable (applied), into {n}", cmd("publish", "--domain", dom, *online),
          runs, env, target_mb=128)
    bench(f"replay of one pending snapshot, {n}", cmd("replay", "--domain", dom, *online), runs, env,
          queue_one, target_mb=128)
    bench(f"replay with nothing pending, {n}", cmd("replay", "--domain", dom, *online), runs, env,
          target_mb=128)
    bench(f"replay --all (one pending snapshot), {n}", cmd("replay", "--all"), runs, env, queue_one,
          target_mb=128)
    bench(f"status, {n}", cmd("status", "--domain", dom, *online), runs, env, target_mb=128)
    bench(f"status --offline, {n}", cmd("status", "--domain", dom, "--offline"), runs, env, target_mb=128)
    bench(f"drift, {n}", cmd("drift", "--domain", dom, *online), runs, env, target_mb=128)
    bench(f"drift --offline, {n}", cmd("drift", "--domain", dom, "--offline"), runs, env, target_mb=128)
    repo = os.path.join(tmp, "repo")
    shutil.rmtree(repo, ignore_errors=True)
    subprocess.run(["git", "init", "-q", "-b", "main", repo], check=True)
    for k, v in (("user.name", "Bench"), ("user.email", "bench@example.invalid")):
        subprocess.run(["git", "-C", repo, "config", k, v], check=True)
    bench(f"commit (a local repository), {n}", cmd("commit", "--domain", dom, "--repo", repo), runs, env,
          target_mb=128)
    bench(f"commit --snapshot latest, {n}",
          cmd("commit", "--domain", dom, "--repo", repo, "--snapshot", "latest"), runs, env, target_mb=128)
    try:
        host, ca, _, stop = start_registry(os.path.join(tmp, "registry"), "bench", "bench-token")
    except Exception as e:  # no docker-registry here: said, the rest stands
        print(f"push: no registry ({e})")
        return
    try:
        penv = dict(env, REGISTRY_AUTH="bench:bench-token")
        for k in ("HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy", "HTTP_PROXY", "http_proxy"):
            penv.pop(k, None)
        bench(f"push oci:// (loopback registry), {n}",
              cmd("push", f"oci://{host}/inv/clinv", "--domain", dom, "--ca-file", ca,
                      "--creds-env", "REGISTRY_AUTH"), runs, penv, target_mb=128)
    finally:
        stop()


def bench_store_scale(args):
    """Issue #28: how each store command's time and peak RSS grow with the history
    (10k -> 100k -> 1M records): migration of a v1 journal (the first offline publish),
    snapshots list, log --max-count 5, gc --keep 20, export, import, offline publish;
    issue #39: the documents (snapshots list in every form, log in every form, report,
    gc --dry-run -o json), each against the 128 MB bound.
    Each size on a fresh synthetic v1 store of applied snapshots; gc on a copy."""
    import shutil
    root = os.path.join(REPO, "examples", "acme")
    dead = os.path.join(REPO, "examples", "offline.kubeconfig")
    tmp = os.path.join(REPO, "target", "bench-scale")
    dom = "prod.acme.example"
    for n in args.records:
        path = os.path.join(tmp, f"s{n}")
        t = time.perf_counter()
        env = synth_store(path, dom, n, state="applied")
        print(f"-- {n} records (synthesised in {time.perf_counter() - t:.1f} s)", flush=True)
        if args.documents:
            bench_documents(n, root, dom, args.runs, env)
            shutil.rmtree(path, ignore_errors=True)
            continue
        publish = [BIN, "publish", "--root", root, "--domain", dom, "--kubeconfig", dead]
        queued = "recorded as pending snapshot"
        bench(f"migration of {n} (first offline publish)", publish, 1, env, expect=queued, target_mb=128)
        bench(f"offline publish into {n}", publish, args.runs, env, expect=queued)
        if args.delivery:
            bench_delivery(n, root, dom, args.runs, env, tmp)
            shutil.rmtree(path, ignore_errors=True)
            continue
        lst = [BIN, "snapshots", "list", "--root", root, "--domain", dom]
        bench(f"first snapshots list of {n} (writes summaries)", lst, 1, env)
        bench(f"snapshots list of {n}", lst, args.runs, env)
        bench(f"log --max-count 5 of {n}", [BIN, "log", "--max-count", "5", "--root", root, "--domain", dom],
              args.runs, env)
        bench_documents(n, root, dom, args.runs, env)
        tar = os.path.join(tmp, "export.tar")
        bench(f"export of {n}", [BIN, "snapshots", "--domain", dom, "export", tar, "--root", root],
              args.runs, env, target_mb=128)
        dest = os.path.join(tmp, "imported")
        bench(f"import of {n} into an empty store", [BIN, "snapshots", "import", tar, "--root", root],
              args.runs, dict(env, CLINV_SNAPSHOTS=dest), lambda: shutil.rmtree(dest, ignore_errors=True),
              target_mb=128)
        # The imported store holds its history in rolled, ordered segments (a migrated one
        # keeps it in one 000000.log until a gc): the newest end answers without the rest.
        if not os.path.exists(dest):
            subprocess.run([BIN, "snapshots", "import", tar, "--root", root], env=dict(env, CLINV_SNAPSHOTS=dest),
                           check=True, capture_output=True)
        denv = dict(env, CLINV_SNAPSHOTS=dest)
        bench(f"first snapshots list of the imported {n} (writes summaries)", lst, 1, denv)
        bench(f"log --max-count 5 of the imported {n}",
              [BIN, "log", "--max-count", "5", "--root", root, "--domain", dom], args.runs, denv, target_ms=50)
        bench(f"snapshots show latest~3 of the imported {n}",
              [BIN, "snapshots", "--domain", dom, "show", "latest~3", "--root", root], args.runs, denv, target_ms=50)
        show = [BIN, "snapshots", "--domain", dom, "show", "--root", root]
        newest = subprocess.run([BIN, "snapshots", "list", "--domain", dom, "--limit", "4", "-o", "json", "--root", root],
                                env=denv, check=True, capture_output=True, text=True).stdout
        newest = json.loads(newest)[-1]
        bench(f"snapshots show ID (the 4th newest) of the imported {n}", show + [newest["id"]], args.runs, denv,
              target_ms=50)
        bench(f"snapshots show @DATE (the 4th newest) of the imported {n}", show + ["@" + newest["at"]], args.runs,
              denv, target_ms=50)
        bench(f"snapshots list --limit 20 of the imported {n}", lst + ["--limit", "20"], args.runs, denv,
              target_ms=50)
        bench(f"snapshots show latest~3 of the migrated {n}",
              [BIN, "snapshots", "--domain", dom, "show", "latest~3", "--root", root], args.runs, env)
        shutil.rmtree(dest, ignore_errors=True)
        work = os.path.join(tmp, "gc")

        def fresh_gc():
            shutil.rmtree(work, ignore_errors=True)
            shutil.copytree(path, work)

        bench(f"gc --keep 20 of {n}", [BIN, "snapshots", "gc", "--keep", "20", "--root", root], args.runs,
              dict(env, CLINV_SNAPSHOTS=work), fresh_gc, target_ms=10_000 if n >= 1_000_000 else None,
              target_mb=128)
        shutil.rmtree(work, ignore_errors=True)
        shutil.rmtree(path, ignore_errors=True)
    shutil.rmtree(tmp, ignore_errors=True)



def bench_backlog(args):
    """Issue #48, "a backlog at any size": N pending snapshots of one domain (a site dark
    for a long time: synth_store's v1 journal, migrated by an offline publish), then,
    against the real control plane, the first online publish (which supersedes the whole
    backlog), replay after it, snapshots list --limit 5 and status — each against the
    128 MB bound, the later ones compared with the same command on a 10-record store."""
    import shutil
    kc = plane_kubeconfig()
    if kc is None:
        sys.exit("backlog: no control plane (scripts/control-plane up, or CLINV_BENCH_KUBECONFIG)")
    root = os.path.join(REPO, "examples", "acme")
    dead = os.path.join(REPO, "examples", "offline.kubeconfig")
    tmp = os.path.join(REPO, "target", "bench-backlog")
    dom = "prod.acme.example"
    online = ["--kubeconfig", kc]
    for n in args.records:
        path = os.path.join(tmp, f"b{n}")
        t = time.perf_counter()
        env = synth_store(path, dom, n, state="pending")
        # The plane is shared: what another domain left live would be refused as another's.
        subprocess.run(["kubectl", "--kubeconfig", kc, "delete", "clusterinventory", "cluster",
                        "--ignore-not-found"], capture_output=True)
        subprocess.run([BIN, "publish", "--root", root, "--domain", dom, "--kubeconfig", dead],
                       env=env, check=True, capture_output=True)
        print(f"-- {n} pending snapshots (synthesised and migrated in {time.perf_counter() - t:.1f} s)",
              flush=True)
        bench(f"first online publish (supersedes {n})",
              [BIN, "publish", "--root", root, "--domain", dom, *online], 1, env, target_mb=128)
        print(f"   journal after it: {du(os.path.join(path, dom, 'segments'))}", flush=True)
        bench(f"replay after it, {n}", [BIN, "replay", "--root", root, "--domain", dom, *online],
              args.runs, env, target_mb=128)
        bench(f"snapshots list --limit 5, {n}",
              [BIN, "snapshots", "list", "--limit", "5", "--root", root, "--domain", dom],
              args.runs, env, target_mb=128)
        bench(f"status, {n}", [BIN, "status", "--root", root, "--domain", dom, *online],
              args.runs, env, target_mb=128)
        bench(f"status --offline, {n}", [BIN, "status", "--root", root, "--domain", dom, "--offline"],
              args.runs, env, target_mb=128)
        bench(f"publish again (applied), {n}",
              [BIN, "publish", "--root", root, "--domain", dom, *online], args.runs, env, target_mb=128)
        # The same backlog delivered by a replay instead (the newest pending applied,
        # the rest superseded by it).
        env = synth_store(path, dom, n, state="pending")
        subprocess.run(["kubectl", "--kubeconfig", kc, "delete", "clusterinventory", "cluster",
                        "--ignore-not-found"], capture_output=True)
        subprocess.run([BIN, "publish", "--root", root, "--domain", dom, "--kubeconfig", dead],
                       env=env, check=True, capture_output=True)
        bench(f"first replay (supersedes {n})",
              [BIN, "replay", "--root", root, "--domain", dom, *online], 1, env, target_mb=128)
        shutil.rmtree(path, ignore_errors=True)
    shutil.rmtree(tmp, ignore_errors=True)


def du(path):
    """Bytes under `path`, as text."""
    total = 0
    for folder, _, files in os.walk(path):
        for f in files:
            total += os.path.getsize(os.path.join(folder, f))
    return f"{total / 1e6:.1f} MB"


def watch_fleet(work, n, template_domain="edge.acme.example"):
    """A project of `n` domains `wNNNNN.watch.example`, each with one pending snapshot
    (a v1 journal line; the objects are `template_domain`'s, copied: the loop never
    delivers them, every cluster is unreachable) and its own .kubeconfig/<name>.yaml:
    even domains refused (a closed port), odd ones black-holed (one listening socket
    with a backlog of one that nobody accepts from: its SYNs are dropped, the probe
    times out). Returns (root, store, hole)."""
    import hashlib, shutil, socket
    shutil.rmtree(work, ignore_errors=True)
    root, store = os.path.join(work, "project"), os.path.join(work, "snapshots")
    shutil.copytree(os.path.join(REPO, "examples", "acme", ".lok8s"), os.path.join(root, ".lok8s"))
    os.makedirs(os.path.join(root, ".kubeconfig"))
    hole = socket.socket()
    hole.bind(("127.0.0.1", 0))
    hole.listen(1)
    refused = socket.socket()
    refused.bind(("127.0.0.1", 0))
    refused_port = refused.getsockname()[1]
    refused.close()
    if template_domain not in _OBJECTS:
        _OBJECTS[template_domain] = store_objects(template_domain)
    cr, crd, spec_hash, lok8s = _OBJECTS[template_domain]
    kubeconfig = ("apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n"
                  "    server: https://127.0.0.1:{port}\n    insecure-skip-tls-verify: true\n"
                  "users:\n- name: u\n  user:\n    token: bench\ncontexts:\n- name: c\n"
                  "  context: {{cluster: c, user: u}}\ncurrent-context: c\n")
    oids = [hashlib.sha256(t.encode()).hexdigest() for t in (cr, crd)]
    for i in range(n):
        d, name = f"w{i:05d}.watch.example", f"w{i:05d}"
        os.makedirs(os.path.join(root, "clusters", d))
        with open(os.path.join(root, "clusters", d, "cluster.lok8s.yaml"), "w") as f:
            f.write(f"kind: Lo\nmetadata:\n  name: {name}\nspec:\n  kubernetes:\n    version: v1.32.3\n")
        port = refused_port if i % 2 == 0 else hole.getsockname()[1]
        with open(os.path.join(root, ".kubeconfig", f"{name}.yaml"), "w") as f:
            f.write(kubeconfig.format(port=port))
        objects = os.path.join(store, d, "objects")
        os.makedirs(objects, mode=0o700)
        for oid, text in zip(oids, (cr, crd)):
            with open(os.path.join(objects, f"{oid}.json"), "w") as f:
                f.write(text)
        text = ('{"kind":"snapshot","v":1,"id":"%012x","at":"2026-12-01T00:00:00.000Z","domain":"%s",'
                '"renderedAt":"2026-12-01T00:00:00Z","specHash":"%s","lok8sVersion":"%s",'
                '"tool":"clinv 0.1.0","cr":"%s","crd":"%s"}') % (i, d, spec_hash, lok8s, oids[0], oids[1])
        with open(os.path.join(store, d, "journal"), "w") as f:
            f.write(f"{hashlib.sha256(text.encode()).hexdigest()} {text}\n")
    return root, store, hole


def proc_cpu_rss(pid):
    """(user+system CPU seconds, peak RSS in KiB) of a running process, from /proc."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    ticks = os.sysconf("SC_CLK_TCK")
    cpu = (int(fields[11]) + int(fields[12])) / ticks
    with open(f"/proc/{pid}/status") as f:
        hwm = next(int(l.split()[1]) for l in f if l.startswith("VmHWM:"))
    return cpu, hwm


def bench_watch_idle(args):
    """issue #38: `replay --watch -A` over N owed domains whose clusters are all
    unreachable (half refused, half black-holed), --backoff-cap 5m, for --minutes:
    average CPU (of one core) over the whole run and after the first minute, and the
    peak RSS (VmHWM). Targets: 1,000 domains ≤ 1 % and ≤ 48 MB; 10,000 ≤ 5 % and
    ≤ 128 MB."""
    import resource, signal
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 65536), hard))
    targets = {1000: (1.0, 48), 10000: (5.0, 128)}
    for n in args.domains:
        root, store, hole = watch_fleet(os.path.join(TARGET, "bench-watch-idle"), n)
        env = dict(os.environ, CLINV_SNAPSHOTS=store, HOME="/nonexistent",
                   KUBECONFIG="/nonexistent/kubeconfig")
        argv = [BIN, "replay", "--watch", "-A", "--root", root, "--backoff-cap", "5m", "-q"]
        proc = subprocess.Popen(argv, env=env, stderr=subprocess.PIPE, text=True)
        start = time.monotonic()
        samples = []
        while time.monotonic() - start < args.minutes * 60:
            time.sleep(5)
            if proc.poll() is not None:
                sys.exit(f"the loop ended ({proc.returncode}): {proc.stderr.read()[-2000:]}")
            samples.append((time.monotonic() - start, *proc_cpu_rss(proc.pid)))
        proc.send_signal(signal.SIGTERM)
        code = proc.wait(timeout=10)
        wall, cpu, hwm = samples[-1]
        warm = next((s for s in samples if s[0] >= 60), samples[0])
        after = (cpu - warm[1]) / (wall - warm[0]) * 100 if wall > warm[0] else float("nan")
        avg = cpu / wall * 100
        cpu_target, mb_target = targets.get(n, (None, None))
        ok = "" if cpu_target is None else (
            "  OK" if avg <= cpu_target and hwm / 1024 <= mb_target else "  OVER") + f" (≤ {cpu_target} %, ≤ {mb_target} MB)"
        print(f"replay --watch, {n} owed unreachable domains, {wall / 60:.1f} min: CPU {avg:.2f} % of a core "
              f"(after the first minute {after:.2f} %), {cpu:.1f} s in all; peak RSS {hwm / 1024:.1f} MB; "
              f"SIGTERM → exit {code}{ok}")
        hole.close()


def loop_events(proc_lines, lock):
    """The JSON events a loop wrote so far (a list filled by a reader thread)."""
    with lock:
        return [json.loads(l) for l in proc_lines if l.startswith("{")]


def start_loop(argv, env):
    """Starts a loop with --log-format json; returns (process, lines, lock): a thread
    gathers its stderr lines."""
    import threading
    proc = subprocess.Popen(argv + ["--log-format", "json", "-v"], env=env,
                            stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
    LOOPS.append(proc)
    lines, lock = [], threading.Lock()

    def read():
        for line in proc.stderr:
            with lock:
                lines.append(line)
    threading.Thread(target=read, daemon=True).start()
    return proc, lines, lock


def wait_event(lines, lock, pred, limit=60):
    end = time.monotonic() + limit
    while time.monotonic() < end:
        for e in loop_events(lines, lock):
            if pred(e):
                return e
        time.sleep(0.02)
    # The loop must not outlive the benchmark: it would hold the store for the next run.
    for proc in LOOPS:
        proc.kill()
    sys.exit("no such event within %s s: %s" % (limit, "".join(lines[-20:])))


LOOPS = []


def stamp(text):
    """Unix seconds of an RFC 3339 time with milliseconds (as clinv records them)."""
    import datetime
    return datetime.datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


def bench_watch_latency(args):
    """issue #38: from "the cluster answers" to "applied" under `replay --watch`, over
    --trials stops and starts of the real control plane's API server: the delay beyond
    the domain's backoff at that moment (target: ≤ backoff + 1 s)."""
    import random, re, shutil, signal
    kc = plane_kubeconfig()
    if not kc:
        sys.exit("no control plane: run scripts/control-plane up")
    cp = os.path.join(REPO, "scripts", "control-plane")
    work = os.path.join(TARGET, "bench-watch-latency")
    shutil.rmtree(work, ignore_errors=True)
    root, store = os.path.join(work, "project"), os.path.join(work, "snapshots")
    shutil.copytree(os.path.join(REPO, "examples", "acme"), root)
    spec = os.path.join(root, "clusters", "edge.acme.example", "cluster.lok8s.yaml")
    env = dict(os.environ, CLINV_SNAPSHOTS=store, HOME="/nonexistent", KUBECONFIG="/nonexistent/kubeconfig")
    base = ["--root", root, "--domain", "edge.acme.example"]
    proc, lines, lock = start_loop([BIN, "replay", "--watch", *base, "--kubeconfig", kc,
                                    "--backoff-base", args.base, "--backoff-cap", args.cap,
                                    "--take-over"], env)  # the test plane may hold another domain's object
    extra = []
    for trial in range(args.trials):
        subprocess.run([cp, "stop-apiserver"], check=True, capture_output=True)
        with open(spec) as f:
            text = re.sub(r"version: v1\.32\.\d+", f"version: v1.32.{10 + trial}", f.read())
        with open(spec, "w") as f:
            f.write(text)
        subprocess.run([BIN, "publish", *base, "--kubeconfig", kc], env=env, check=True, capture_output=True)
        seen = len(loop_events(lines, lock))
        # At least one failed attempt, then a random moment of the backoff.
        wait_event(lines, lock, lambda e: e["event"] == "unanswered" and loop_events(lines, lock).index(e) >= seen)
        time.sleep(random.uniform(0, 3))
        subprocess.run([cp, "start-apiserver"], check=True, capture_output=True)
        up = time.time()
        done = wait_event(lines, lock, lambda e: e["event"] == "delivered" and loop_events(lines, lock).index(e) >= seen)
        t = stamp(done["time"])
        # The domain's backoff when the server answered: set by its last failed attempt
        # (refused while down, or a 5xx while the API server was starting).
        evs = loop_events(lines, lock)
        failed = [e for e in evs[seen:evs.index(done)] if e["event"] in ("unanswered", "not-delivered")]
        at = stamp(failed[-1]["time"]) + failed[-1]["wait_seconds"]
        # Due at `at` (the backoff end) or now if that passed while the server started.
        extra.append(t - max(at, up))
        if os.environ.get("CLINV_BENCH_DEBUG"):
            print(f"trial {trial}: up {up:.2f} backoff end {at:.2f} delivered {t:.2f}")
            for e in loop_events(lines, lock)[seen:]:
                print("   ", e["time"], e["event"], e.get("wait_seconds", ""), e.get("reason", ""))
    proc.send_signal(signal.SIGTERM)
    proc.wait(timeout=10)
    extra.sort()
    q = lambda f: extra[min(len(extra) - 1, int(f * len(extra)))]
    print(f"replay --watch, {len(extra)} trials (--backoff-base {args.base}, --backoff-cap {args.cap}): "
          f"applied after its backoff ended (or the server answered, if later) by min {extra[0]:.2f} s, "
          f"median {q(0.5):.2f} s, p90 {q(0.9):.2f} s, max {extra[-1]:.2f} s  "
          f"{'OK' if extra[-1] <= 1.0 else 'OVER'} (≤ backoff + 1 s)")


def bench_watch_pickup(args):
    """issue #38: a snapshot recorded pending by another process while the loop runs,
    for a domain not in backoff: the time from its record to the loop's attempt (its
    probe's answer), over --trials domains of a 1,000-domain store (target ≤ 1 s)."""
    import signal
    root, store, hole = watch_fleet(os.path.join(TARGET, "bench-watch-pickup"), args.domains)
    # Nothing owed at the start: the journals are emptied of their pending snapshot by
    # marking none — simply start from an empty store and publish into it.
    import shutil
    shutil.rmtree(store)
    os.makedirs(store)
    env = dict(os.environ, CLINV_SNAPSHOTS=store, HOME="/nonexistent", KUBECONFIG="/nonexistent/kubeconfig",
               SOURCE_DATE_EPOCH="1700000000")
    proc, lines, lock = start_loop([BIN, "replay", "--watch", "-A", "--root", root], env)
    wait_event(lines, lock, lambda e: e["event"] == "started")
    delays = []
    for trial in range(args.trials):
        d = f"w{2 * trial:05d}.watch.example"  # even: refused, answered at once
        subprocess.run([BIN, "publish", "--root", root, "--domain", d], env=env, check=True, capture_output=True)
        out = subprocess.run([BIN, "snapshots", "list", "--domain", d, "-o", "json"], env=env, check=True,
                             capture_output=True, text=True).stdout
        recorded = stamp(json.loads(out)[0]["at"])
        e = wait_event(lines, lock, lambda e: e["event"] == "unanswered" and e.get("domain") == d, limit=10)
        delays.append(stamp(e["time"]) - recorded)
        time.sleep(0.3)
    proc.send_signal(signal.SIGTERM)
    proc.wait(timeout=10)
    hole.close()
    delays.sort()
    print(f"replay --watch over {args.domains} domains: a pending snapshot recorded by another process was "
          f"attempted after min {delays[0] * 1000:.0f} ms, median {statistics.median(delays) * 1000:.0f} ms, "
          f"max {delays[-1] * 1000:.0f} ms ({len(delays)} trials)  {'OK' if delays[-1] <= 1.0 else 'OVER'} (≤ 1 s)")

def proc_threads(pid):
    with open(f"/proc/{pid}/status") as f:
        return next(int(l.split()[1]) for l in f if l.startswith("Threads:"))


def bench_watch_drain(args):
    """issue #48: a reload (SIGHUP) while --domains attempts hang (each domain's API
    server its own loopback listener that takes connections and never answers TLS),
    --timeout 20 and --probe-timeout 20: the loop's CPU over the drain (target ≤ 2 % of a core)."""
    import re, signal, socket, ssl, tempfile, threading
    root, store, hole = watch_fleet(os.path.join(TARGET, "bench-watch-drain"), args.domains)
    hole.close()
    # Each API server completes the TLS handshake and then never answers (the probe and
    # the connection succeed; the request waits for --timeout).
    pki = tempfile.mkdtemp()
    crt, key = os.path.join(pki, "tls.crt"), os.path.join(pki, "tls.key")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                    "-nodes", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1", "-days", "1",
                    "-keyout", key, "-out", crt], check=True, capture_output=True)
    tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    tls.load_cert_chain(crt, key)
    held = []

    def serve(listener):
        while True:
            try:
                conn, _ = listener.accept()
                held.append(tls.wrap_socket(conn, server_side=True))
            except OSError:
                return
    holes = []
    for i in range(args.domains):
        h = socket.socket()
        h.bind(("127.0.0.1", 0))
        h.listen(128)
        threading.Thread(target=serve, args=(h,), daemon=True).start()
        holes.append(h)
        with open(os.path.join(root, ".kubeconfig", f"w{i:05d}.yaml")) as f:
            text = f.read()
        text = re.sub(r"127\.0\.0\.1:\d+", f"127.0.0.1:{h.getsockname()[1]}", text)
        with open(os.path.join(root, ".kubeconfig", f"w{i:05d}.yaml"), "w") as f:
            f.write(text)
    env = dict(os.environ, CLINV_SNAPSHOTS=store, HOME="/nonexistent", KUBECONFIG="/nonexistent/kubeconfig")
    argv = [BIN, "replay", "--watch", "-A", "--root", root, "--timeout", "20", "--probe-timeout", "20", "-q"]
    proc = subprocess.Popen(argv, env=env, stderr=subprocess.PIPE, text=True)
    time.sleep(3)
    proc.send_signal(signal.SIGHUP)
    before, _ = proc_cpu_rss(proc.pid)
    start, series, last = time.monotonic(), [], before
    while time.monotonic() - start < args.seconds:
        time.sleep(1)
        now, _ = proc_cpu_rss(proc.pid)
        series.append(round((now - last) * 1000))
        last = now
    after, hwm = proc_cpu_rss(proc.pid)
    wall = time.monotonic() - start
    proc.send_signal(signal.SIGTERM)
    proc.wait(timeout=10)
    for h in holes:
        h.close()
    pct = (after - before) / wall * 100
    print(f"replay --watch, SIGHUP with {args.domains} hanging attempts (--timeout 20): CPU {pct:.2f} % of a core "
          f"over {wall:.1f} s of drain (ms a second: {series}); peak RSS {hwm / 1024:.1f} MB  "
          f"{'OK' if pct <= 2 else 'OVER'} (≤ 2 %)")


def bench_watch_oci_hole(args):
    """issue #48: --pushes owed OCI pushes (one domain, a repository each) to a registry
    that takes connections and never answers, --parallel 16, --timeout 10, for
    --minutes: the loop's threads and peak RSS (targets: ≤ --parallel + 16 threads,
    ≤ 48 MB)."""
    import signal, socket
    root, store, hole = watch_fleet(os.path.join(TARGET, "bench-watch-oci"), 1)
    hole.close()
    env = dict(os.environ, CLINV_SNAPSHOTS=store, HOME="/nonexistent", KUBECONFIG="/nonexistent/kubeconfig")
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    for i in range(args.pushes):
        subprocess.run([BIN, "push", f"oci://127.0.0.1:{port}/inventories/r{i}", "--plain-http", "--root", root,
                        "--domain", "w00000.watch.example", "-q"], env=env, check=True, capture_output=True)
    black = socket.socket()
    black.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    black.bind(("127.0.0.1", port))
    black.listen(4096)
    argv = [BIN, "replay", "--watch", "-A", "--root", root, "--timeout", "10", "--parallel", "16", "-q"]
    proc = subprocess.Popen(argv, env=env, stderr=subprocess.PIPE, text=True)
    start, most = time.monotonic(), 0
    while time.monotonic() - start < args.minutes * 60:
        time.sleep(2)
        most = max(most, proc_threads(proc.pid))
    cpu, hwm = proc_cpu_rss(proc.pid)
    proc.send_signal(signal.SIGTERM)
    proc.wait(timeout=10)
    black.close()
    ok = most <= 32 and hwm / 1024 <= 48
    print(f"replay --watch, {args.pushes} owed OCI pushes to a black-holed registry, {args.minutes:g} min: "
          f"at most {most} threads, peak RSS {hwm / 1024:.1f} MB, CPU {cpu:.1f} s  "
          f"{'OK' if ok else 'OVER'} (≤ 32 threads, ≤ 48 MB)")


def bench_watch_recovery(args):
    """issue #48, "back within seconds": --domains owed domains, each delivering to the
    real control plane through a loopback port of its own (https://127.0.0.1:<port>,
    one port per domain, so the loop treats each as its own API server), all those
    ports served by one forwarder process (scripts/bench.d/links.py) that switches the
    links off and on. The links first flap for --flap-seconds (a connect succeeds, the
    attempt is reset: attempts reach the far end and fail, their backoff grows), then
    go dark for --dark-seconds (refused: only probes), then come back (at once, or each
    within --spread seconds). While dark: the loop's CPU (of one core) and peak RSS.
    After: per domain, link up → applied (the loop's `delivered` event: its snapshot
    was server-side applied to the live object, taken over from the domain applied
    before it) and link up → first attempt that reached the far end. Targets: p99 ≤
    15 s, ≤ 1 % of a core while dark."""
    import math, re, resource, shutil, signal, threading
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 65536), hard))
    kc = plane_kubeconfig_up()
    server = re.search(r"server: https://([^\s:]+):(\d+)", open(kc).read())
    upstream = f"{server.group(1)}:{server.group(2)}"
    n = args.domains
    subprocess.run([KUBECTL, "--kubeconfig", kc, "delete", "clusterinventory", "cluster", "--ignore-not-found"],
                   capture_output=True)
    root, store, hole = watch_fleet(os.path.join(TARGET, "bench-watch-recovery"), n)
    hole.close()
    shutil.rmtree(store)
    os.makedirs(store)
    # Each domain's kubeconfig: the plane's (its CA, its admin client certificate), the
    # server its own port on the forwarder.
    text = open(kc).read()
    for i in range(n):
        with open(os.path.join(root, ".kubeconfig", f"w{i:05d}.yaml"), "w") as f:
            f.write(re.sub(r"server: \S+", f"server: https://127.0.0.1:{args.first_port + i}", text))
    links = subprocess.Popen([sys.executable, os.path.join(REPO, "scripts", "bench.d", "links.py"),
                              "--upstream", upstream, "--first", str(args.first_port), "--count", str(n)],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    LOOPS.append(links)

    def link(cmd):
        links.stdin.write(cmd + "\n")
        links.stdin.flush()
        return json.loads(links.stdout.readline())
    assert json.loads(links.stdout.readline())["event"] == "ready"
    env = dict(os.environ, CLINV_SNAPSHOTS=store, HOME="/nonexistent", KUBECONFIG="/nonexistent/kubeconfig",
               SOURCE_DATE_EPOCH="1700000000")
    # The links are down: each publish records a pending snapshot (its own domain's inventory).
    out = subprocess.run([BIN, "publish", "-A", "--root", root, "-q"], env=env, capture_output=True, text=True)
    pending = len(os.listdir(store)) - sum(1 for e in os.listdir(store) if e.startswith("."))
    print(f"{n} domains published offline (exit {out.returncode}): {pending} domain stores", flush=True)
    argv = [BIN, "replay", "--watch", "-A", "--root", root, "--take-over", "--log-format", "json",
            "--backoff-cap", args.cap, "--probe-interval", args.probe_interval]
    proc = subprocess.Popen(argv, env=env, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
    LOOPS.append(proc)
    lines, lock = [], threading.Lock()

    def read():
        for line in proc.stderr:
            with lock:
                lines.append(line)
    threading.Thread(target=read, daemon=True).start()
    started = wait_event(lines, lock, lambda e: e["event"] == "started")
    print(f"loop started: {started.get('msg')}", flush=True)
    if args.flap_seconds > 0:
        link("reset")
        time.sleep(args.flap_seconds)
    failed_before = sum(1 for e in loop_events(lines, lock) if e["event"] == "not-delivered")
    dark = link("down")["time"]
    print(f"flapped {args.flap_seconds:g} s ({failed_before} attempts reached the far end and failed); "
          f"dark for {args.dark_seconds:g} s", flush=True)
    t0 = time.monotonic()
    cpu0, _ = proc_cpu_rss(proc.pid)
    warm = None
    while time.monotonic() - t0 < args.dark_seconds:
        time.sleep(min(5, max(0.0, args.dark_seconds - (time.monotonic() - t0))))
        if proc.poll() is not None:
            sys.exit(f"the loop ended ({proc.returncode}): {''.join(lines[-20:])}")
        if warm is None and time.monotonic() - t0 >= min(300, args.dark_seconds / 2):
            warm = (time.monotonic(), proc_cpu_rss(proc.pid)[0])
    cpu1, hwm_dark = proc_cpu_rss(proc.pid)
    t1 = time.monotonic()
    dark_cpu = (cpu1 - cpu0) / (t1 - t0) * 100
    late_cpu = (cpu1 - warm[1]) / (t1 - warm[0]) * 100
    late_from = warm[0] - t0
    seen = len(loop_events(lines, lock))
    ups = link(f"up {args.spread}")["times"]
    domains = [f"w{i:05d}.watch.example" for i in range(n)]
    up_at = dict(zip(domains, ups))
    end = time.monotonic() + args.limit
    applied, reached, raced, reasons, failed, attempts = {}, {}, {}, {}, set(), []
    while time.monotonic() < end and len(applied) < n:
        time.sleep(0.5)
        events = loop_events(lines, lock)
        fresh, seen = events[seen:], len(events)
        for e in fresh:
            d = e.get("domain")
            if d not in up_at or e["event"] not in ("delivered", "not-delivered"):
                continue
            t = stamp(e["time"])
            if t < up_at[d]:
                continue
            reached.setdefault(d, t - up_at[d])
            attempts.append(t)
            # In a fleet each domain has a cluster of its own; here all write one object,
            # and an attempt that lost the write race to another domain's (a conflict:
            # nothing else writes it) did all a delivery does against the real server.
            if e["event"] == "delivered" or e.get("reason") == "conflict":
                raced.setdefault(d, t - up_at[d])
            if e["event"] == "delivered":
                applied.setdefault(d, t - up_at[d])
            elif d not in applied:
                reasons[e.get("reason")] = reasons.get(e.get("reason"), 0) + 1
                failed.add(d)
    cpu2, hwm = proc_cpu_rss(proc.pid)
    stats = link("stats")
    # The loop's probe is the first connection a port takes once its link is up.
    found = {d: t - up_at[d] for d, t in zip(domains, stats.pop("first")) if t is not None}
    proc.send_signal(signal.SIGTERM)
    code = proc.wait(timeout=10)
    links.stdin.write("quit\n")
    links.stdin.close()
    links.wait(timeout=10)
    live = subprocess.run([KUBECTL, "--kubeconfig", kc, "get", "clusterinventory", "cluster", "-o",
                           "jsonpath={.metadata.labels.lok8s\\.dev/domain} {.metadata.resourceVersion}"],
                          capture_output=True, text=True).stdout

    def dist(values):
        v = sorted(values)
        if not v:
            return "none"
        q = lambda f: v[max(0, math.ceil(f * len(v)) - 1)]  # nearest rank
        return (f"min {v[0]:.2f} s, median {statistics.median(v):.2f} s, p90 {q(0.9):.2f} s, "
                f"p99 {q(0.99):.2f} s, max {v[-1]:.2f} s")
    p99 = sorted(applied.values())[max(0, math.ceil(0.99 * len(applied)) - 1)] if applied else float("inf")
    ok = len(applied) == n and p99 <= 15 and dark_cpu <= 1
    how = "at once" if args.spread == 0 else f"each at a random moment within {args.spread:g} s"
    print(f"replay --watch, {n} domains dark {args.dark_seconds / 60:.1f} min (--backoff-cap {args.cap}, "
          f"--probe-interval {args.probe_interval}), links back {how}:")
    print(f"  while dark: CPU {dark_cpu:.2f} % of a core ({late_cpu:.2f} % after the first {late_from:.0f} s); "
          f"peak RSS {hwm_dark / 1024:.1f} MB")
    print(f"  link up → applied ({len(applied)} of {n}): {dist(applied.values())}")
    print(f"  link up → applied or lost the write race to another domain's delivery: {dist(raced.values())}")
    print(f"  link up → found (the loop's probe connects) ({len(found)}): {dist(found.values())}")
    print(f"  link up → an attempt reached the far end: {dist(reached.values())}")
    print(f"  attempts not delivered after link up: {reasons or 'none'} ({len(failed)} domains); "
          f"forwarder: {stats}; live object (domain, resourceVersion): {live}")
    if attempts:
        span = max(attempts) - min(ups)
        print(f"  {len(attempts)} attempts reached the far end within {span:.1f} s of the first link up: "
              f"{len(attempts) / span:.0f} a second, all through the one API server")
    print(f"  recovery CPU {cpu2 - cpu1:.1f} s, peak RSS {hwm / 1024:.1f} MB; SIGTERM → exit {code}  "
          f"{'OK' if ok else 'OVER'} (p99 ≤ 15 s, ≤ 1 % while dark)")
    if os.environ.get("CLINV_BENCH_DEBUG"):
        slow = sorted(applied.items(), key=lambda x: -x[1])[:5]
        for d, t in slow:
            print("   slow", d, f"{t:.2f}", [(e["time"], e["event"], e.get("reason"), e.get("wait_seconds"))
                                        for e in loop_events(lines, lock) if e.get("domain") == d][-6:])


def plane_kubeconfig_up():
    """`scripts/control-plane up` (reusing a running one; CLINV_CP_* ports honoured):
    its admin kubeconfig."""
    up = subprocess.run([os.path.join(REPO, "scripts", "control-plane"), "up"], check=True,
                        capture_output=True, text=True).stdout.strip().splitlines()[-1]
    return up.split("=", 1)[1]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="bench", required=True)
    r = sub.add_parser("render", help="clinv render on the example project (≤ 5 ms, ≤ 15 MB)")
    r.add_argument("--runs", type=int, default=300)
    p = sub.add_parser("publish", help="publish vs lok8s's kubectl sequence; requests; refused case")
    p.add_argument("--runs", type=int, default=100)
    st = sub.add_parser("store", help="offline publish, snapshots list and replay at 1k/10k")
    st.add_argument("--runs", type=int, default=100)
    cm = sub.add_parser("commit", help="clinv commit vs git add + git commit, 10k prior commits")
    cm.add_argument("--runs", type=int, default=15)
    ph = sub.add_parser("push-https", help="clinv commit --push vs git push over HTTPS (loopback nginx + git http-backend)")
    ph.add_argument("--runs", type=int, default=15)
    op = sub.add_parser("oci-push", help="issue #27: clinv push oci:// vs oras push of the same artifact (≤ 1.0); "
                        "unchanged re-push (≤ 50 ms)")
    op.add_argument("--runs", type=int, default=21)
    co = sub.add_parser("completion", help="shell completion: a subcommand, --domain, snapshot ids of 10/10k/100k (10k: ≤ 50 ms)")
    co.add_argument("--runs", type=int, default=50)
    yw = sub.add_parser("yaml-wide", help="clinv diff of an inventory holding a 24,000-key YAML map merged into another (≤ 1 s)")
    yw.add_argument("--runs", type=int, default=5)
    lg = sub.add_parser("log", help="clinv log over 1k, 10k, 100k snapshots (10k: ≤ 300 ms, ≤ 50 MB)")
    lg.add_argument("--runs", type=int, default=20)
    s2 = sub.add_parser("store2", help="issue #13: publish into 1M, log 100k/1M, list 1M, gc 1M, export/import 100k")
    s2.add_argument("--runs", type=int, default=12)
    s2.add_argument("--records", type=int, default=1_000_000, help="the big history (default 1,000,000)")
    sp = sub.add_parser("ssh-push", help="clinv commit --push over SSH vs git push of the same commit (≤ 1.0)")
    sp.add_argument("--runs", type=int, default=101,
                    help="pairs (default 101: the difference is ~0.5%%, fewer pairs cannot tell it)")
    d = sub.add_parser("diff", help="clinv diff of two history steps in each format (≤ 5 ms), vs dyff")
    d.add_argument("--runs", type=int, default=300)
    ra = sub.add_parser("replay-all", help="issue #14: replay --all over 1,000 black-holed domains ends within --timeout")
    ra.add_argument("--runs", type=int, default=3)
    ra.add_argument("--domains", type=int, default=1000)
    ra.add_argument("--timeout", type=float, nargs="+", default=[30.0, 10.0])
    fl = sub.add_parser("fleet", help="issue #25: fleet, log -A, drift -A, status -A (also -o prometheus) over a synthetic fleet")
    fl.add_argument("--runs", type=int, default=5)
    fl.add_argument("--domains", type=int, nargs="+", default=[1000])
    fl.add_argument("--snapshots", type=int, default=100)
    fl.add_argument("--timeout", type=float, default=10.0)
    al = sub.add_parser("addon-log", help="issue #40: log -A --addon NAME --since 30d over a synthetic fleet (10,000: ≤ 1.5 s)")
    al.add_argument("--runs", type=int, default=5)
    al.add_argument("--domains", type=int, nargs="+", default=[1000, 10000])
    al.add_argument("--snapshots", type=int, default=100)
    al.add_argument("--work", help="where to generate the fleet (default: the target folder)")
    fr = sub.add_parser("fleet-repo", help="issue #25: fleet --repo over 1,000 domain folders and 10,000 commits")
    fr.add_argument("--runs", type=int, default=5)
    fr.add_argument("--domains", type=int, nargs="+", default=[1000])
    fr.add_argument("--commits", type=int, default=10_000)
    fa = sub.add_parser("fleet-at", help="issue #40: fleet --at DATE and --changed-since over a synthetic fleet (1,000: ≤ 300 ms; 10,000: ≤ 2 s; ≤ 128 MB)")
    fa.add_argument("--runs", type=int, default=5)
    fa.add_argument("--domains", type=int, nargs="+", default=[1000, 10000])
    fa.add_argument("--snapshots", type=int, default=100)
    fp = sub.add_parser("fleet-report", help="issue #40: report -A (matrix and grouped timeline) and log -A --oneline (1,000 × 100: ≤ 2 s, ≤ 128 MB, page < 5 MB)")
    fp.add_argument("--runs", type=int, default=5)
    fp.add_argument("--domains", type=int, nargs="+", default=[1000])
    fp.add_argument("--snapshots", type=int, default=100)
    fp.add_argument("--changing", action="store_true", help="every step changes the inventory")
    wi = sub.add_parser("watch-idle", help="issue #38: replay --watch over 1,000/10,000 owed unreachable domains: CPU and RSS")
    wi.add_argument("--domains", type=int, nargs="+", default=[1000, 10000])
    wi.add_argument("--minutes", type=float, default=10)
    wl = sub.add_parser("watch-latency", help="issue #38: replay --watch, from the API server answering to applied (needs scripts/control-plane up; stops and starts it)")
    wl.add_argument("--trials", type=int, default=20)
    wl.add_argument("--base", default="1s")
    wl.add_argument("--cap", default="8s")
    wp = sub.add_parser("watch-pickup", help="issue #38: replay --watch, a snapshot recorded by another process to its attempt")
    wp.add_argument("--trials", type=int, default=20)
    wp.add_argument("--domains", type=int, default=1000)
    wd = sub.add_parser("watch-drain", help="issue #48: replay --watch, CPU during a reload's drain with hanging attempts (≤ 2 %)")
    wd.add_argument("--domains", type=int, default=64)
    wd.add_argument("--seconds", type=float, default=15)
    wo = sub.add_parser("watch-oci-hole", help="issue #48: replay --watch, owed OCI pushes to a black-holed registry: threads and RSS")
    wo.add_argument("--pushes", type=int, default=300)
    wo.add_argument("--minutes", type=float, default=5)
    wr = sub.add_parser("watch-recovery", help="issue #48: replay --watch, 1,000 domains dark then back (real control plane "
                        "behind one forwarder): link up → applied (p99 ≤ 15 s), CPU while dark (≤ 1 %%)")
    wr.add_argument("--domains", type=int, default=1000)
    wr.add_argument("--flap-seconds", type=float, default=60,
                    help="first, attempts reach the far end and are reset (their backoff grows)")
    wr.add_argument("--dark-seconds", type=float, default=660,
                    help="then nothing answers (default 11 min: past the longest backoff of 5 min, twice)")
    wr.add_argument("--spread", type=float, default=0, help="links come back within this (default 0: at once)")
    wr.add_argument("--cap", default="5m", help="--backoff-cap")
    wr.add_argument("--probe-interval", default="10s")
    wr.add_argument("--first-port", type=int, default=24000, help="the forwarder's ports: this and the next --domains - 1")
    wr.add_argument("--limit", type=float, default=600, help="how long to wait for every delivery")
    bl = sub.add_parser("backlog", help="issue #48: N pending snapshots of one domain, then the first online publish "
                        "(supersedes them), replay, snapshots list --limit 5, status (≤ 128 MB; needs the control plane)")
    bl.add_argument("--runs", type=int, default=3)
    bl.add_argument("--records", type=int, nargs="+", default=[10, 10_000, 100_000, 1_000_000])
    sc = sub.add_parser("store-scale", help="issue #28: time and peak RSS of every store command at 10k/100k/1M")
    sc.add_argument("--runs", type=int, default=3)
    sc.add_argument("--records", type=int, nargs="+", default=[10_000, 100_000, 1_000_000])
    sc.add_argument("--only", action="append", default=[],
                    help="only the benchmarks whose name holds this text (repeatable)")
    sc.add_argument("--documents", action="store_true",
                    help="only the documents (snapshots list and log in every form, report, gc --dry-run -o json)")
    sc.add_argument("--delivery", action="store_true",
                    help="issue #41: after the migration, only the commands that talk to a cluster, Git or a "
                         "registry (publish applied, replay, replay --all, status, drift, commit, push) against "
                         "the real control plane (scripts/control-plane up); compare --records 10 1000000")
    args = parser.parse_args()
    ONLY.extend(getattr(args, "only", []))
    build()
    {"render": bench_render, "publish": bench_publish, "store": bench_store, "diff": bench_diff, "log": bench_log, "completion": bench_completion, "yaml-wide": bench_yaml_wide, "commit": bench_commit,
     "push-https": bench_push_https, "store2": bench_store2, "replay-all": bench_replay_all,
     "ssh-push": bench_ssh_push, "oci-push": bench_oci_push, "fleet": bench_fleet, "fleet-repo": bench_fleet_repo,
     "fleet-at": bench_fleet_at, "fleet-report": bench_fleet_report, "addon-log": bench_addon_log,
     "store-scale": bench_store_scale, "backlog": bench_backlog,
     "watch-idle": bench_watch_idle, "watch-latency": bench_watch_latency,
     "watch-pickup": bench_watch_pickup, "watch-drain": bench_watch_drain,
     "watch-oci-hole": bench_watch_oci_hole, "watch-recovery": bench_watch_recovery}[args.bench](args)


if __name__ == "__main__":
    main()
