"""Build lorebase-herald from the full distribution's source (../../src), keeping only the modules
Herald imports: its own, the REST client, the contract, and the few shared modules those use.
tests/integration/test_herald_light.py installs the wheel in a fresh venv and runs it, so a module
missing here fails there."""

from setuptools import setup
from setuptools.command.build_py import build_py

# package -> the modules it ships (None: all of them).
PACKAGES: dict[str, set[str] | None] = {
    "lorebase": {"__init__", "backoff", "canonical", "names", "problems"},
    "lorebase.clients": {"__init__"},
    "lorebase.clients.rest": None,
    "lorebase.contract": None,
    "lorebase.contract.answers": None,
    "lorebase.contract.examples": None,
    "lorebase.contract.memory": None,
    "lorebase.herald": None,  # server, tools, problems, sdk, cli
    "lorebase.memory": {"__init__", "journal", "scope"},
}


class HeraldOnly(build_py):
    def find_package_modules(self, package: str, package_dir: str) -> list[tuple[str, str, str]]:
        keep = PACKAGES.get(package)
        modules = super().find_package_modules(package, package_dir)
        return [m for m in modules if keep is None or m[1] in keep]


setup(
    packages=list(PACKAGES),
    package_dir={"": "../../src"},
    cmdclass={"build_py": HeraldOnly},
)
