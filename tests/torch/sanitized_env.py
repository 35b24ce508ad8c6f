"""The environment of the checks' runs in a sanitized build (tests/CMakeLists.txt preloads the
ASan runtime for every Python check of hwprof::torch)."""


def unsanitized(env):
    """`env` for a run without hwprof (plain python): only a process that loads hwprof's
    instrumented library needs the ASan runtime; without it the plain run starts 1.5 s sooner
    and runs at its own speed."""
    if "libasan" not in env.get("LD_PRELOAD", ""):
        return env
    return {k: v for k, v in env.items() if k not in ("LD_PRELOAD", "ASAN_OPTIONS")}
