#!/usr/bin/env bash
# Applies the fixes `hwprof info` suggests, where you choose to (run as root).
#
#   scripts/enable-counters.sh [--paranoid N] [--persist] [--setcap PATH] [--rdpmc]
#
#   --paranoid N   set kernel.perf_event_paranoid to N (default 1: a user may count its own
#                  processes, kernel included; 0 also allows system-wide uncore/DRAM events;
#                  -1 removes every restriction)
#   --persist      also write /etc/sysctl.d/60-hwprof.conf so the setting survives a reboot
#   --setcap PATH  grant CAP_PERFMON to the hwprof binary at PATH instead of lowering the
#                  paranoid level for everyone (needs the setcap tool, package libcap2-bin)
#   --rdpmc        allow user-space rdpmc on counters a process opened itself
#                  (/sys/bus/event_source/devices/cpu/rdpmc = 1)
#
# Nothing helps in a VM that exposes no hardware PMU: `hwprof info` says so; ask for PMU
# passthrough (e.g. vPMU in KVM/VMware) or use a bare-metal machine.
set -euo pipefail

paranoid=1
persist=0
setcap_path=""
rdpmc=0
while [ $# -gt 0 ]; do
  case "$1" in
    --paranoid) paranoid="${2:?--paranoid needs a value}"; shift 2 ;;
    --persist) persist=1; shift ;;
    --setcap) setcap_path="${2:?--setcap needs the path of the hwprof binary}"; shift 2 ;;
    --rdpmc) rdpmc=1; shift ;;
    -h|--help) sed -n '2,20p' "$0"; exit 0 ;;
    *) echo "enable-counters.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
  esac
done
case "$paranoid" in -1|0|1|2|3|4) ;; *) echo "enable-counters.sh: --paranoid takes -1..4, got '$paranoid'" >&2; exit 2 ;; esac
if [ "$(id -u)" -ne 0 ]; then echo "enable-counters.sh: run as root (sudo)" >&2; exit 1; fi

if [ -n "$setcap_path" ]; then
  command -v setcap >/dev/null || { echo "enable-counters.sh: setcap not found: apt-get install libcap2-bin" >&2; exit 1; }
  setcap cap_perfmon+ep "$setcap_path"
  echo "granted CAP_PERFMON to $setcap_path"
else
  echo "kernel.perf_event_paranoid: $(cat /proc/sys/kernel/perf_event_paranoid) -> $paranoid"
  sysctl -q -w kernel.perf_event_paranoid="$paranoid"
  if [ "$persist" = 1 ]; then
    echo "kernel.perf_event_paranoid = $paranoid" > /etc/sysctl.d/60-hwprof.conf
    echo "wrote /etc/sysctl.d/60-hwprof.conf"
  fi
fi
if [ "$rdpmc" = 1 ]; then
  if [ -w /sys/bus/event_source/devices/cpu/rdpmc ]; then
    echo 1 > /sys/bus/event_source/devices/cpu/rdpmc
    echo "user-space rdpmc enabled"
  else
    echo "enable-counters.sh: no /sys/bus/event_source/devices/cpu/rdpmc (no hardware PMU exposed?)" >&2
  fi
fi
