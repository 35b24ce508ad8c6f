#!/usr/bin/env bash
# Records this machine as a test fixture (tests/fixtures/machines/README.md): its sysfs cpu
# directory as text, its CPUID answers (Debian's `cpuid` tool, raw, first CPU), its sysconf
# cache sizes, and the triad sweeps of a full calibration.
#   scripts/record-machine-fixture.sh NAME [HWPROF]    (HWPROF default build/release/bin/hwprof)
# Writes tests/fixtures/machines/NAME/; review and write about.md by hand before committing.
set -euo pipefail
name="${1:?usage: record-machine-fixture.sh NAME [HWPROF]}"
hwprof="${2:-build/release/bin/hwprof}"
[ -x "$hwprof" ] || { echo "record-machine-fixture.sh: $hwprof not found; build the release preset first" >&2; exit 1; }
command -v cpuid >/dev/null || { echo "record-machine-fixture.sh: cpuid not found (apt-get install cpuid)" >&2; exit 1; }
dir="$(dirname "$0")/../tests/fixtures/machines/$name"
mkdir -p "$dir"
report="$(mktemp)"
trap 'rm -f "$report"' EXIT

# A full calibration for the sweeps; a contended one is kept and marked, and said below.
"$hwprof" calibrate -o "$report" --svg /dev/null --allow-contended >&2
taskset -c 0 cpuid -r -1 > "$dir/cpuid.raw"
getconf -a | awk '/CACHE_SIZE/ && NF == 2' > "$dir/sysconf.raw"

python3 - "$dir" "$report" "$(date -u +%Y-%m-%d)" <<'PY'
import json, os, re, sys
out, report, day = sys.argv[1], sys.argv[2], sys.argv[3]
root = "/sys/devices/system/cpu"
lines = []
for f in ("online", "possible", "present"):
    try:
        lines.append(f"{f}\t{open(f'{root}/{f}').read().strip()}")
    except OSError:
        pass
keep_topology = {"core_id", "physical_package_id", "die_id", "core_cpus_list", "thread_siblings_list", "cluster_id"}
keep_cache = {"level", "type", "size", "shared_cpu_list", "shared_cpu_map", "ways_of_associativity", "number_of_sets",
              "coherency_line_size", "id"}
cpus = sorted((d for d in os.listdir(root) if re.fullmatch(r"cpu\d+", d)), key=lambda d: int(d[3:]))
for cpu in cpus:
    for sub, keep in (("topology", keep_topology), ("cache", keep_cache)):
        base = f"{root}/{cpu}/{sub}"
        for dirpath, dirnames, files in sorted(os.walk(base)):
            dirnames.sort()
            for f in sorted(files):
                if f not in keep:
                    continue
                try:
                    value = open(os.path.join(dirpath, f)).read().strip()
                except OSError:
                    continue
                lines.append(f"{os.path.relpath(os.path.join(dirpath, f), root)}\t{value}")
with open(f"{out}/sysfs.txt", "w") as s:
    s.write(f"# {root} recorded {day} (topology and cache of every CPU): PATH<TAB>CONTENT\n" + "\n".join(lines) + "\n")
# cpuid -r: "   0x00000004 0x01: eax=0x... ebx=0x... ecx=0x... edx=0x..."
with open(f"{out}/cpuid.txt", "w") as c:
    c.write(f"# CPUID of CPU 0 recorded {day} with `cpuid -r -1`\n# LEAF SUBLEAF EAX EBX ECX EDX\n")
    for line in open(f"{out}/cpuid.raw"):
        m = re.match(r"\s*0x([0-9a-f]+) 0x([0-9a-f]+): eax=0x([0-9a-f]+) ebx=0x([0-9a-f]+) ecx=0x([0-9a-f]+) edx=0x([0-9a-f]+)", line)
        if m:
            leaf, sub, *regs = m.groups()
            c.write(f"{int(leaf, 16):08x} {int(sub, 16)} " + " ".join(f"{int(r, 16):08x}" for r in regs) + "\n")
os.remove(f"{out}/cpuid.raw")
with open(f"{out}/sysconf.txt", "w") as c:
    c.write(f"# getconf -a, recorded {day}\n" + open(f"{out}/sysconf.raw").read())
os.remove(f"{out}/sysconf.raw")
m = json.load(open(report))
for r in m["runs"]:
    points = [(p["bytes"], p["best_gbps"]) for p in r["sweep"] if p["kernel"] == "triad"]
    with open(f"{out}/sweep-{r['threads']}.csv", "w") as c:
        c.write(f"# triad best GB/s per working set, {r['threads']} thread(s) pinned one per core; recorded by hwprof "
                f"calibrate {m['hwprof_version']}, {day}{' (CONTENDED: see its evidence)' if m.get('contended') else ''}\n"
                "bytes,triad_gbps\n" + "".join(f"{b},{g:.2f}\n" for b, g in points))
print(f"wrote {out}: sysfs.txt, cpuid.txt, sysconf.txt, " + ", ".join(f"sweep-{r['threads']}.csv" for r in m["runs"]))
if m.get("contended"):
    print("note: the calibration was contended; record again on a quiet machine", file=sys.stderr)
PY
