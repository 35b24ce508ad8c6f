"""hwprof's Python side: `hwprof.torch` profiles a PyTorch program (docs/torch.md)."""
