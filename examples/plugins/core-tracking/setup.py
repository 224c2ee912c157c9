"""The compiled extension needs ember_plugin.h, which the installed ember-tensor-core ships
(``ember_tensor.get_include()``): build with ember-tensor-core installed, e.g.
``pip install --no-build-isolation .``."""

from setuptools import Extension, setup

import ember_tensor

setup(
    ext_modules=[
        Extension(
            "ember_core_tracking._native",
            ["src/ember_core_tracking/_native.c"],
            include_dirs=[ember_tensor.get_include()],
            extra_compile_args=["-std=c11", "-O2"],
        )
    ]
)
