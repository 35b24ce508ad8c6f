"""Prints the folder, relative to the prefix argv[1], where this Python finds packages installed
under that prefix: the first sys.path entry there that is a site-packages or dist-packages
folder (Debian: lib/python3/dist-packages under /usr, lib/python3.11/dist-packages under
/usr/local), else the prefix scheme's (lib/python3.11/site-packages: a prefix of one's own,
whose folder goes on PYTHONPATH). Run by python/CMakeLists.txt."""

import os
import sys
import sysconfig


def install_dir(prefix: str) -> str:
    prefix = os.path.normpath(os.path.abspath(prefix))
    for entry in sys.path:
        entry = os.path.normpath(entry)
        if os.path.basename(entry) not in ("site-packages", "dist-packages") or not entry.startswith(prefix + os.sep):
            continue
        relative = os.path.relpath(entry, prefix)
        if relative.split(os.sep, 1)[0] in ("lib", "lib64"):  # /usr/local/lib/... is /usr/local's, not /usr's
            return relative
    purelib = sysconfig.get_path("purelib", "posix_prefix", vars={"base": prefix, "platbase": prefix})
    return os.path.relpath(purelib, prefix)


if __name__ == "__main__":
    print(install_dir(sys.argv[1]))
