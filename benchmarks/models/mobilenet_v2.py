"""MobileNetV2 at width 1.0: a 3x3 stem, seventeen inverted residual blocks (1x1
expansion, 3x3 depthwise, linear 1x1 projection; a residual connection where stride is 1
and the channels match), a 1x1 convolution to 1280 channels, global average pooling and a
dropout + linear classifier, as torchvision's ``mobilenet_v2``."""

from __future__ import annotations

from . import classification_loss, image_batch, images_in_batch, init_cnn

NAME = "MobileNetV2"
UNIT = "images"
DEFAULTS = {
    "cpu": {"batch_size": 8, "image_size": 64},
    "cuda": {"batch_size": 128, "image_size": 224},
}

# (expansion t, output channels c, repeats n, first stride s); at width 1.0 every channel
# count is already a multiple of 8, so no rounding is needed
SETTINGS = ((1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2),
            (6, 96, 3, 1), (6, 160, 3, 2), (6, 320, 1, 1))  # fmt: skip


def build(lib, num_classes: int = 1000, dropout: float = 0.2, **_):
    nn = lib.nn

    def conv_bn(cin, cout, kernel, stride=1, groups=1, relu=True):
        layers = [
            nn.Conv2d(
                cin,
                cout,
                kernel,
                stride=stride,
                padding=(kernel - 1) // 2,
                groups=groups,
                bias=False,
            ),
            nn.BatchNorm2d(cout),
        ]
        if relu:
            layers.append(nn.ReLU6(inplace=True))
        return nn.Sequential(*layers)

    class InvertedResidual(nn.Module):
        def __init__(self, cin: int, cout: int, stride: int, expansion: int):
            super().__init__()
            hidden = cin * expansion
            self.use_residual = stride == 1 and cin == cout
            layers = [conv_bn(cin, hidden, 1)] if expansion != 1 else []
            layers += [
                conv_bn(hidden, hidden, 3, stride, groups=hidden),
                conv_bn(hidden, cout, 1, relu=False),
            ]
            self.conv = nn.Sequential(*layers)

        def forward(self, x):
            return x + self.conv(x) if self.use_residual else self.conv(x)

    class MobileNetV2(nn.Module):
        def __init__(self):
            super().__init__()
            layers, channels = [conv_bn(3, 32, 3, stride=2)], 32
            for t, c, n, s in SETTINGS:
                for i in range(n):
                    layers.append(InvertedResidual(channels, c, s if i == 0 else 1, t))
                    channels = c
            layers.append(conv_bn(channels, 1280, 1))
            self.features = nn.Sequential(*layers)
            self.pool = nn.AdaptiveAvgPool2d((1, 1))
            self.classifier = nn.Sequential(nn.Dropout(dropout), nn.Linear(1280, num_classes))

        def forward(self, x):
            return self.classifier(self.pool(self.features(x)).flatten(1))

    model = MobileNetV2()
    init_cnn(lib, model)
    return model


make_batch = image_batch
units = images_in_batch
loss = classification_loss
