"""Build lorebasehq-herald from the full distribution's source, keeping only the modules Herald
imports: its own, the REST client, the contract, and the few shared modules those use.

There is one copy of the code, `src/lorebase` at the root of the repository. Built from the
repository (`pip wheel ./clients/herald`, `uv build clients/herald`), the modules are read from
there (../../src); the sdist carries a copy of them in its own `src/`, so that a wheel built from
the sdist (as `uv build` and pip do) has them too. tests/integration/test_herald_light.py builds
both, installs the wheel with pip and with pipx in fresh venvs and runs it, so a module missing here
fails there."""

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.command.sdist import sdist

HERE = Path(__file__).resolve().parent
# Inside an unpacked sdist the sources are beside this file; in the repository, two levels up.
SOURCE = "src" if (HERE / "src" / "lorebase").is_dir() else "../../src"

# package -> the modules it ships (None: all of them).
PACKAGES: dict[str, set[str] | None] = {
    "lorebase": {"__init__", "backoff", "canonical", "names", "problems"},
    "lorebase.clients": {"__init__"},
    "lorebase.clients.rest": None,
    "lorebase.contract": None,
    "lorebase.contract.answers": None,
    "lorebase.contract.examples": None,
    "lorebase.contract.memory": None,
    "lorebase.herald": None,  # server, problems, sdk, cli
    "lorebase.herald.tools": None,
    "lorebase.memory": {"__init__", "journal", "scope"},
}
# A package shipped whole ships its subpackages too (lorebase.contract.reads, ...): a package split
# later is not left out of the wheel.
for _package, _keep in list(PACKAGES.items()):
    if _keep is None:
        for _init in sorted((HERE / SOURCE / _package.replace(".", "/")).rglob("__init__.py")):
            PACKAGES.setdefault(".".join(_init.parent.relative_to(HERE / SOURCE).parts), None)


def _kept(package: str, module: str) -> bool:
    keep = PACKAGES.get(package)
    return keep is None or module in keep


class HeraldOnly(build_py):
    def find_package_modules(self, package: str, package_dir: str) -> list[tuple[str, str, str]]:
        return [m for m in super().find_package_modules(package, package_dir) if _kept(package, m[1])]


class WithSources(sdist):
    """The sdist with the kept modules copied into its `src/` (they live outside this directory)."""

    def make_release_tree(self, base_dir: str, files: list[str]) -> None:
        super().make_release_tree(base_dir, files)
        for package in PACKAGES:
            directory = HERE / SOURCE / package.replace(".", "/")
            target = Path(base_dir) / "src" / package.replace(".", "/")
            target.mkdir(parents=True, exist_ok=True)
            for module in sorted(directory.glob("*.py")):
                if _kept(package, module.stem):
                    shutil.copyfile(module, target / module.name)
            if (directory / "py.typed").exists():
                shutil.copyfile(directory / "py.typed", target / "py.typed")


setup(
    packages=list(PACKAGES),
    package_dir={"": SOURCE},
    cmdclass={"build_py": HeraldOnly, "sdist": WithSources},
)
