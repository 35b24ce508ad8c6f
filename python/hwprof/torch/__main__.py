"""`python3 -m hwprof.torch [-o DIR] [options] script.py [args]`: runs an unmodified PyTorch
script (as `python3 -m cProfile` does) with every module and op measured, and writes DIR at
exit (docs/torch.md)."""

import argparse
import os
import runpy
import sys


def main():
    parser = argparse.ArgumentParser(prog="python3 -m hwprof.torch",
                                     description="Profile a PyTorch script's modules and ops with hwprof.")
    parser.add_argument("-o", "--output", default="hwprof-torch", help="folder for the reports (default: hwprof-torch)")
    parser.add_argument("--backend", choices=("auto", "perf", "papi", "timer"), help="counter backend (default: auto)")
    parser.add_argument("-e", "--events", help="counter events, comma-separated")
    parser.add_argument("--group", help="counter group (hwprof info lists them)")
    parser.add_argument("script", help="the Python script to run")
    parser.add_argument("args", nargs=argparse.REMAINDER, help="its arguments")
    options = parser.parse_args()
    os.environ["HWPROF_OUTPUT"] = options.output
    for key, value in (("HWPROF_BACKEND", options.backend), ("HWPROF_EVENTS", options.events), ("HWPROF_GROUP", options.group)):
        if value:
            os.environ[key] = value
    from hwprof import torch as hwprof_torch
    hwprof_torch.install()
    sys.argv = [options.script] + options.args
    sys.path.insert(0, os.path.dirname(os.path.abspath(options.script)))
    # The script's exit status is the program's; the reports are written at exit.
    runpy.run_path(options.script, run_name="__main__")


if __name__ == "__main__":
    main()
