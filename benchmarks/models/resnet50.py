"""ResNet-50: bottleneck blocks [3, 4, 6, 3] with the stride on the 3x3 convolution (as
torchvision's ``resnet50``), batch norm after every convolution, a 1x1 convolution with
batch norm on the shortcut where the shape changes."""

from __future__ import annotations

from . import classification_loss, image_batch, images_in_batch, init_cnn

NAME = "ResNet-50"
UNIT = "images"
DEFAULTS = {
    "cpu": {"batch_size": 8, "image_size": 64},
    "cuda": {"batch_size": 128, "image_size": 224},
}

BLOCKS = (3, 4, 6, 3)
EXPANSION = 4


def build(lib, num_classes: int = 1000, **_):
    nn = lib.nn

    class Bottleneck(nn.Module):
        def __init__(self, in_channels: int, width: int, stride: int):
            super().__init__()
            out_channels = width * EXPANSION
            self.conv1 = nn.Conv2d(in_channels, width, 1, bias=False)
            self.bn1 = nn.BatchNorm2d(width)
            self.conv2 = nn.Conv2d(width, width, 3, stride=stride, padding=1, bias=False)
            self.bn2 = nn.BatchNorm2d(width)
            self.conv3 = nn.Conv2d(width, out_channels, 1, bias=False)
            self.bn3 = nn.BatchNorm2d(out_channels)
            self.relu = nn.ReLU(inplace=True)
            self.downsample = None
            if stride != 1 or in_channels != out_channels:
                self.downsample = nn.Sequential(
                    nn.Conv2d(in_channels, out_channels, 1, stride=stride, bias=False),
                    nn.BatchNorm2d(out_channels),
                )

        def forward(self, x):
            out = self.relu(self.bn1(self.conv1(x)))
            out = self.relu(self.bn2(self.conv2(out)))
            out = self.bn3(self.conv3(out))
            shortcut = x if self.downsample is None else self.downsample(x)
            return self.relu(out + shortcut)

    class ResNet50(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(3, 64, 7, stride=2, padding=3, bias=False)
            self.bn1 = nn.BatchNorm2d(64)
            self.relu = nn.ReLU(inplace=True)
            self.maxpool = nn.MaxPool2d(3, stride=2, padding=1)
            channels = 64
            for i, (blocks, width) in enumerate(zip(BLOCKS, (64, 128, 256, 512))):
                stage = []
                for b in range(blocks):
                    stride = 2 if i > 0 and b == 0 else 1
                    stage.append(Bottleneck(channels, width, stride))
                    channels = width * EXPANSION
                setattr(self, f"layer{i + 1}", nn.Sequential(*stage))
            self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
            self.fc = nn.Linear(512 * EXPANSION, num_classes)

        def forward(self, x):
            x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
            x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
            return self.fc(self.avgpool(x).flatten(1))

    model = ResNet50()
    init_cnn(lib, model, linear_std=None)
    return model


make_batch = image_batch
units = images_in_batch
loss = classification_loss
