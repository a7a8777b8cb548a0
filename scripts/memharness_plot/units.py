"""How a metric or a sampled column is shown: its title, display unit and scale, as
the report declares them in its "metrics" manifest (written from the one metric
registry, harness/src/core/metrics.cpp). One convention everywhere: memory in MB = 10^6
bytes. Pure functions, no matplotlib.
"""
import fnmatch
from dataclasses import dataclass

from .report import ReportError, is_number

CONVENTION = "MB = 10^6 bytes"


@dataclass(frozen=True)
class Shown:
    title: str     # what to call it
    unit: str      # display unit, "" for a plain count
    scale: float   # multiply the stored value by this
    stored: str    # the unit of the stored value

    def label(self):
        return f"{self.title} ({self.unit})" if self.unit else self.title


def of_entry(entry):
    """How the metric of a comparison entry or a sweep's axis is shown: the display
    unit and scale the harness wrote beside it (from the registry, as a report's
    manifest has them); for a comparison written before it wrote them, the old
    format's rule."""
    name, stored = entry["metric"], entry.get("unit") or ""
    if "display_unit" not in entry:
        unit, scale = legacy_display_unit(stored)
        return Shown(name, unit, scale, stored)
    return Shown(name, entry["display_unit"], float(entry["display_scale"]), stored)


def legacy_display_unit(stored):
    """(display unit, scale) of a stored unit, only for files of an older format
    that do not say it: reports written before the "metrics" manifest, and
    comparisons written before their entries carried display_unit and
    display_scale (results/reference/compare-pins/comparison.json). It is the
    registry's rule as it was then (metrics.cpp display_unit); current files carry
    the unit they are shown in, and nothing reads this for them."""
    if stored == "KiB":
        return "MB", 1024 / 1e6
    if stored == "bytes":
        return "MB", 1e-6
    if stored in ("count", "bool", "", None):
        return "", 1.0
    return stored, 1.0


def convention_unit(name):
    """The stored unit by the naming rule of memharness.report/1 (results/SCHEMA.md:
    sizes `_kb` in KiB, times `_ms`): only for reports written before the manifest."""
    return "KiB" if name.endswith("_kb") else "ms" if name.endswith("_ms") else ""


def manifest_of(report):
    """The report's manifest, or None for a report written before there was one."""
    manifest = report.get("metrics")
    return manifest if isinstance(manifest, dict) else None


def _entry(manifest, name):
    if name in manifest:
        return manifest[name]
    for pattern, entry in manifest.items():
        if "*" in pattern and fnmatch.fnmatchcase(name, pattern):
            return entry
    return None


# The titles of the sampled columns, for a report written before its manifest
# named them: a raw column name ("rss_kb") on an axis reads as a unit of its own.
LEGACY_TITLES = {"rss_kb": "RSS", "anon_kb": "anonymous RSS", "file_kb": "file-backed RSS",
                 "heap_live_kb": "live heap", "minflt": "minor faults", "majflt": "major faults"}


def legacy_title(column):
    """A column's title without a manifest: its known name, else its words
    without the unit suffix."""
    if column in LEGACY_TITLES:
        return LEGACY_TITLES[column]
    stem, _, suffix = column.rpartition("_")
    return (stem if stem and suffix in ("kb", "ms", "us", "ns") else column).replace("_", " ")


def shown(report, name, path="report"):
    """How `name` (a metric, or a sampled column as "samples.rss_kb") of `report` is
    shown. ReportError when the manifest lacks it or declares it badly."""
    manifest = manifest_of(report)
    title = name.split(".", 1)[1] if name.startswith("samples.") else name
    if manifest is None:
        stored = convention_unit(title)
        return Shown(legacy_title(title) if name.startswith("samples.") else title,
                     *legacy_display_unit(stored), stored)
    entry = _entry(manifest, name)
    if entry is None:
        raise ReportError(path, f'the "metrics" manifest has no entry for {name}')
    unit, scale, stored = entry.get("display_unit"), entry.get("display_scale"), entry.get("unit")
    if not isinstance(unit, str) or not is_number(scale) or scale <= 0 or not isinstance(stored, str):
        raise ReportError(path, f'metrics["{name}"] needs unit and display_unit (strings) and a positive '
                                f'display_scale; it has {entry!r}')
    return Shown(entry.get("title") or title, unit, float(scale), stored)
