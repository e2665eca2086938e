"""Packaging for xai_geometry: every field is read from settings.ini (nbdev 2's single configuration)."""
from configparser import ConfigParser
from pathlib import Path

import setuptools

cfg = ConfigParser(delimiters=["="])
cfg.read(Path(__file__).parent / "settings.ini", encoding="utf-8")
cfg = cfg["DEFAULT"]

licenses = {"apache2": ("Apache Software License 2.0", "OSI Approved :: Apache Software License")}
statuses = ["1 - Planning", "2 - Pre-Alpha", "3 - Alpha", "4 - Beta", "5 - Production/Stable"]
lic = licenses[cfg["license"]]
readme = Path(__file__).parent / "README.md"

setuptools.setup(
    name=cfg["lib_name"],
    version=cfg["version"],
    description=cfg["description"],
    long_description=readme.read_text(encoding="utf-8") if readme.exists() else "",
    long_description_content_type="text/markdown",
    author=cfg["author"],
    author_email=cfg["author_email"],
    license=lic[0],
    url=cfg["git_url"],
    keywords=cfg["keywords"].split(),
    classifiers=[
        "Development Status :: " + statuses[int(cfg["status"]) - 1],
        "Intended Audience :: " + cfg["audience"],
        "License :: " + lic[1],
        "Natural Language :: " + cfg["language"],
        "Programming Language :: Python :: 3",
        "Topic :: Scientific/Engineering :: Artificial Intelligence",
    ],
    packages=setuptools.find_packages(include=[cfg["lib_name"], cfg["lib_name"] + ".*"]) + [cfg["lib_name"] + ".data"],
    include_package_data=True,
    package_data={cfg["lib_name"] + ".data": ["*.csv.gz", "SOURCES.md", "SHA256SUMS"]},  # the bundled data sets
    python_requires=">=" + cfg["min_python"],
    install_requires=cfg["requirements"].split(),
    # every `NAME_requirements` key of settings.ini is the extra NAME (dev, compare, cluster, qm9)
    extras_require={k[: -len("_requirements")]: v.split() for k, v in cfg.items()
                    if k.endswith("_requirements") and k != "requirements"},
    entry_points={"console_scripts": cfg["console_scripts"].split(), "nbdev": [f"{cfg['lib_name']}={cfg['lib_name']}._modidx:d"]},
    zip_safe=False,
    # an editable install puts the checkout on sys.path (a .pth entry), so that a folder named like the
    # package in the working directory (a clone of the repository, say) cannot shadow it as a namespace package
    options={"editable_wheel": {"mode": "compat"}},
)
