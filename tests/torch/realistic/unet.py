"""A small UNet for two-class segmentation trained as a PyTorch user writes it: conv, batch
norm and ReLU blocks, max pooling down, bilinear F.interpolate up (once by scale_factor=, once
to size=), skip connections by concatenation, SGD with momentum, per-pixel cross-entropy.

Usage: unet.py [--steps 4]   (REALISTIC_TRUTH=FILE: see truth.py)
"""
import argparse

import torch
import torch.nn.functional as F
from torch import nn

from truth import Truth

truth = Truth()


def block(inputs, outputs):
    return nn.Sequential(nn.Conv2d(inputs, outputs, 3, padding=1, bias=False), nn.BatchNorm2d(outputs), nn.ReLU(inplace=True),
                         nn.Conv2d(outputs, outputs, 3, padding=1, bias=False), nn.BatchNorm2d(outputs), nn.ReLU(inplace=True))


class UNet(nn.Module):
    def __init__(self, channels, classes, width=8):
        super().__init__()
        self.down1 = block(channels, width)
        self.down2 = block(width, 2 * width)
        self.bottom = block(2 * width, 4 * width)
        self.pool = nn.MaxPool2d(2)
        self.up2 = block(4 * width + 2 * width, 2 * width)
        self.up1 = block(2 * width + width, width)
        self.out = nn.Conv2d(width, classes, 1)

    def forward(self, x):
        d1 = self.down1(x)
        d2 = self.down2(self.pool(d1))
        b = self.bottom(self.pool(d2))
        u = F.interpolate(b, scale_factor=2, mode="bilinear", align_corners=False)
        truth.bilinear(u)
        u = self.up2(torch.cat([u, d2], dim=1))
        u = F.interpolate(u, size=d1.shape[-2:], mode="bilinear", align_corners=False)
        truth.bilinear(u)
        u = self.up1(torch.cat([u, d1], dim=1))
        return self.out(u)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=4)
    args = parser.parse_args()
    torch.manual_seed(0)
    batch, size = 4, 48
    model = UNet(channels=3, classes=2)
    criterion = nn.CrossEntropyLoss()
    truth.watch(model, criterion, batch=batch)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    images = torch.randn(batch, 3, size, size)
    masks = (images.mean(dim=1) > 0).long()
    model.train()
    for _ in range(args.steps):
        optimizer.zero_grad(set_to_none=True)
        loss = criterion(model(images), masks)
        with truth.backward():
            loss.backward()
        optimizer.step()
        truth.step()
    print(f"unet: {args.steps} steps, last loss {loss.item():.4f}")


if __name__ == "__main__":
    main()
