#!/usr/bin/env python3
"""A small CNN trained with PyTorch (torch.nn, torch.optim.SGD) on random data: a plain script,
with nothing of hwprof in it. Run it under hwprof.torch to get every module's forward and
backward, the optimizer's step and the ops outside modules, measured and placed on the roofline
(docs/torch.md):

    PYTHONPATH=build/release/python python3 -m hwprof.torch -o out examples/torch_train.py --steps 20
    build/release/bin/hwprof report out/profile.json --by module --depth 2

The same network as examples/torch_train.cpp (the libtorch example): conv(1->8, 5x5, padding 2),
batch norm, ReLU, 2x2 max pool; the same 8->16; a linear layer from 16*7*7 to 10 classes; for
28x28 inputs, batch 8. Its last line gives the mean time of a step after the first, for comparing
runs with and without hwprof.
"""
import argparse
import time

import torch
from torch import nn


class SmallCnn(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 8, 5, padding=2)
        self.bn1 = nn.BatchNorm2d(8)
        self.conv2 = nn.Conv2d(8, 16, 5, padding=2)
        self.bn2 = nn.BatchNorm2d(16)
        self.pool = nn.MaxPool2d(2)
        self.act = nn.ReLU()
        self.fc = nn.Linear(16 * 7 * 7, 10)

    def forward(self, x):
        x = self.pool(self.act(self.bn1(self.conv1(x))))
        x = self.pool(self.act(self.bn2(self.conv2(x))))
        return self.fc(torch.flatten(x, 1))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--batch", type=int, default=8)
    options = parser.parse_args()
    torch.manual_seed(0)
    model = SmallCnn()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    images = torch.randn(options.batch, 1, 28, 28)
    labels = torch.randint(0, 10, (options.batch,))
    times = []
    for _ in range(options.steps):
        start = time.perf_counter()
        optimizer.zero_grad()
        loss = nn.functional.cross_entropy(model(images), labels)
        loss.backward()
        optimizer.step()
        times.append(time.perf_counter() - start)
    later = times[1:] or times
    print(f"loss {loss.item():.4f}; mean step after the first: {1e3 * sum(later) / len(later):.3f} ms")


if __name__ == "__main__":
    main()
