# hwprof.torch._native (src/torch/python_calls.cpp): torch.nn.Module.__call__ in C.
from collections.abc import Callable
from typing import Any

def wrap(module_type: type, original: Callable[..., Any], describe: Callable[[Any], tuple[str, int]], region: int,
         enter: int, exit: int) -> Callable[..., Any]: ...
