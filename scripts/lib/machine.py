"""What the benchmarks say they ran on."""


def cpu_model():
    """The processor's model name from /proc/cpuinfo, or "unknown" where there is none."""
    try:
        with open("/proc/cpuinfo") as cpuinfo:
            return next(line.split(":", 1)[1].strip() for line in cpuinfo if line.startswith("model name"))
    except (OSError, StopIteration):
        return "unknown"
