"""AlexNet, the single-tower variant that torchvision ships (64-192-384-256-256 channels,
a 6x6 adaptive average pool, three fully connected layers with dropout)."""

from __future__ import annotations

from . import classification_loss, image_batch, images_in_batch

NAME = "AlexNet"
UNIT = "images"
DEFAULTS = {
    "cpu": {"batch_size": 16, "image_size": 64},  # below 63 pixels the last pool is empty
    "cuda": {"batch_size": 128, "image_size": 224},
}


def build(lib, num_classes: int = 1000, dropout: float = 0.5, **_):
    nn = lib.nn

    class AlexNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.features = nn.Sequential(
                nn.Conv2d(3, 64, 11, stride=4, padding=2),
                nn.ReLU(inplace=True),
                nn.MaxPool2d(3, stride=2),
                nn.Conv2d(64, 192, 5, padding=2),
                nn.ReLU(inplace=True),
                nn.MaxPool2d(3, stride=2),
                nn.Conv2d(192, 384, 3, padding=1),
                nn.ReLU(inplace=True),
                nn.Conv2d(384, 256, 3, padding=1),
                nn.ReLU(inplace=True),
                nn.Conv2d(256, 256, 3, padding=1),
                nn.ReLU(inplace=True),
                nn.MaxPool2d(3, stride=2),
            )
            self.avgpool = nn.AdaptiveAvgPool2d((6, 6))
            self.classifier = nn.Sequential(
                nn.Dropout(dropout),
                nn.Linear(256 * 6 * 6, 4096),
                nn.ReLU(inplace=True),
                nn.Dropout(dropout),
                nn.Linear(4096, 4096),
                nn.ReLU(inplace=True),
                nn.Linear(4096, num_classes),
            )

        def forward(self, x):
            return self.classifier(self.avgpool(self.features(x)).flatten(1))

    return AlexNet()


make_batch = image_batch
units = images_in_batch
loss = classification_loss
