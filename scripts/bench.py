#!/usr/bin/env python3
"""On-demand benchmarks of whole clinv processes (not part of the test suite).

    python3 scripts/bench.py render [--runs N]

Builds the release binary, then runs the command N times and reports the median and
p90 wall time and the peak RSS of each run (from wait4's rusage), so the figures are
for the whole process: exec, reading the project, rendering, writing stdout.
"""
import argparse
import os
import statistics
import subprocess
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.path.join(REPO, "target", "release", "clinv")


def build():
    subprocess.run(["cargo", "build", "--release", "--quiet"], cwd=REPO, check=True)


def peak_rss_kib(argv, env, runs=20):
    """Peak RSS of the command itself, read by GNU time. (wait4's rusage of a
    posix_spawn'ed child also counts the pages it shared with this Python process before
    exec, which would inflate the figure by ~10 MiB.)"""
    peaks = []
    for _ in range(runs):
        out = subprocess.run(["/usr/bin/time", "-f", "%M", *argv], env=env,
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, check=True)
        peaks.append(int(out.stderr.strip().splitlines()[-1]))
    return peaks


def measure(argv, runs, env=None):
    """Runs argv `runs` times; returns (wall seconds list, peak RSS KiB list)."""
    walls = []
    devnull = os.open(os.devnull, os.O_WRONLY)
    for _ in range(runs):
        start = time.perf_counter()
        pid = os.posix_spawn(argv[0], argv, env or os.environ,
                             file_actions=[(os.POSIX_SPAWN_DUP2, devnull, 1),
                                           (os.POSIX_SPAWN_DUP2, devnull, 2)])
        _, status = os.waitpid(pid, 0)
        walls.append(time.perf_counter() - start)
        if os.waitstatus_to_exitcode(status) != 0:
            sys.exit(f"{' '.join(argv)} exited {os.waitstatus_to_exitcode(status)}")
    os.close(devnull)
    return walls, peak_rss_kib(argv, env or os.environ)


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


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="bench", required=True)
    r = sub.add_parser("render", help="clinv render on the example project (≤ 5 ms, ≤ 15 MB)")
    r.add_argument("--runs", type=int, default=300)
    args = parser.parse_args()
    build()
    {"render": bench_render}[args.bench](args)


if __name__ == "__main__":
    main()
