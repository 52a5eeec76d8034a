"""Where the packages live: each layer of the architecture is a folder of its own, mapped
into the `ember` package (see README, "How it fits together"); every package below a layer
is found, not listed (a listed tree once left out `ember.scipy`, and the wheel did not import)."""

from setuptools import find_namespace_packages, setup

LAYERS = {
    "ember": "python/ember",
    "ember.dialect": "dialect",
    "ember.compiler": "compiler",
    "ember.runtime": "runtime",
    "ember.tools": "tools",
}

packages = [*LAYERS]
for name, folder in LAYERS.items():
    packages += [f"{name}.{sub}" for sub in find_namespace_packages(
        folder, exclude=["__pycache__", "*.__pycache__"])]

setup(packages=packages, package_dir=LAYERS)
