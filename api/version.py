"""The service's own version, as installed, for reports and the start-up line."""

from importlib.metadata import PackageNotFoundError, version

try:
    SOFTWARE_VERSION = version("casino-war")
except PackageNotFoundError:  # run from a checkout that was never installed
    SOFTWARE_VERSION = "0+unknown"
