"""VGG-19 without batch norm (configuration "E": sixteen 3x3 convolutions in five stages,
a 7x7 adaptive average pool, three fully connected layers with dropout), as torchvision's
``vgg19``."""

from __future__ import annotations

from . import classification_loss, image_batch, images_in_batch, init_cnn

NAME = "VGG-19"
UNIT = "images"
DEFAULTS = {
    "cpu": {"batch_size": 4, "image_size": 64},
    "cuda": {"batch_size": 64, "image_size": 224},
}

# output channels of each 3x3 convolution; "M" is a 2x2 max pool
CONFIG = (64, 64, "M", 128, 128, "M", 256, 256, 256, 256, "M",
          512, 512, 512, 512, "M", 512, 512, 512, 512, "M")  # fmt: skip


def build(lib, num_classes: int = 1000, dropout: float = 0.5, **_):
    nn = lib.nn

    class VGG19(nn.Module):
        def __init__(self):
            super().__init__()
            layers, channels = [], 3
            for c in CONFIG:
                if c == "M":
                    layers.append(nn.MaxPool2d(2, stride=2))
                else:
                    layers += [nn.Conv2d(channels, c, 3, padding=1), nn.ReLU(inplace=True)]
                    channels = c
            self.features = nn.Sequential(*layers)
            self.avgpool = nn.AdaptiveAvgPool2d((7, 7))
            self.classifier = nn.Sequential(
                nn.Linear(512 * 7 * 7, 4096),
                nn.ReLU(inplace=True),
                nn.Dropout(dropout),
                nn.Linear(4096, 4096),
                nn.ReLU(inplace=True),
                nn.Dropout(dropout),
                nn.Linear(4096, num_classes),
            )

        def forward(self, x):
            return self.classifier(self.avgpool(self.features(x)).flatten(1))

    model = VGG19()
    init_cnn(lib, model)
    return model


make_batch = image_batch
units = images_in_batch
loss = classification_loss
