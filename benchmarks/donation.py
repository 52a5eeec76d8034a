"""Peak memory and time of an in-place update of a 256 MiB array, with and without donation.

Each configuration runs in a fresh process; a thread samples its resident memory every
millisecond while x = f(x) runs three times (f = x * 2 + 1, x: 64M f32), after a warm-up.
Without donation each call allocates a new 256 MiB result while x is alive; with it, the
result is written into x's buffer (ember-bufferize proves that safe). Run: `make bench`.
"""

from __future__ import annotations

import json
import subprocess
import sys

N = 64 << 20  # 64M float32 = 256 MiB

CHILD = r"""
import gc, json, os, sys, threading, time
import numpy as np
peer, donate, N = sys.argv[1], sys.argv[2] == "1", int(sys.argv[3])
if peer == "ember":
    import ember as lib
else:
    import jax as lib
PAGE = os.sysconf("SC_PAGE_SIZE")

def rss():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * PAGE

f = lib.jit(lambda x: x * 2 + 1, donate_argnums=(0,) if donate else ())
warm = f(lib.device_put(np.ones(N, np.float32)))  # compile and warm up, then free it all
warm.block_until_ready()
del warm
gc.collect()
x = lib.device_put(np.ones(N, np.float32))
x.block_until_ready()
peak, done = [0], threading.Event()

def sample():  # current RSS every millisecond: the peak during the calls
    while not done.is_set():
        peak[0] = max(peak[0], rss())
        time.sleep(0.001)

before = rss()
sampler = threading.Thread(target=sample)
sampler.start()
start = time.perf_counter()
for _ in range(3):
    x = f(x)
    x.block_until_ready()
elapsed = (time.perf_counter() - start) / 3
done.set()
sampler.join()
print(json.dumps({"ms": elapsed * 1e3, "growth_mb": (peak[0] - before) / 2**20,
                  "check": float(np.asarray(x)[0])}))
"""


def run(peer: str, donate: bool) -> dict | None:
    out = subprocess.run([sys.executable, "-c", CHILD, peer, "1" if donate else "0", str(N)],
                         capture_output=True, text=True)
    if out.returncode != 0:
        return None
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    print(f"| x = x * 2 + 1, {N * 4 >> 20} MiB f32 | time per call | peak RSS growth "
          f"during the calls |")
    print("| --- | ---: | ---: |")
    for peer in ("ember", "jax"):
        for donate in (False, True):
            r = run(peer, donate)
            label = f"{peer}, {'donated' if donate else 'not donated'}"
            if r is None:
                print(f"| {label} | (not available) | |")
                continue
            print(f"| {label} | {r['ms']:.1f} ms | {r['growth_mb']:.0f} MiB |")


if __name__ == "__main__":
    main()
