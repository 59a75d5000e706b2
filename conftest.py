"""Loaded by pytest for every test path (tests/, book/, solutions/): whatever the suite runs,
kernels included, keeps its record of passed exercises in a throw-away file, never in the
maintainer's own ~/.rnnbook (see rnnbook/record.py); and nbval's kernels run in another numeric
environment than ``make execute``'s (tests/another_cpu.py); and xdist spreads a sweep's
exercises over the workers (:class:`_ByParameter`)."""
import os
import tempfile

from tests.another_cpu import patch_nbval

os.environ["RNNBOOK_PROGRESS"] = os.path.join(tempfile.mkdtemp(prefix="rnnbook-progress-"),
                                              "progress.json")
patch_nbval()


#: modules whose tests xdist may spread by parameter (each parameter's tests together, so a
#: sweep's per-exercise cache is filled once): a whole module on one worker left the other
#: idle at the end (test_sweep.py alone is half of the suite's time)
BY_PARAMETER = ("tests/test_sweep.py", "tests/test_release_names.py")


class _ByParameter:
    """xdist's scheduler hook, registered only where xdist is loaded (``.ci/as-user`` runs
    pytest without it, and pytest refuses a hook no plugin declares)."""

    @staticmethod
    def pytest_xdist_make_scheduler(config, log):
        """``--dist loadscope`` (pyproject's addopts), with :data:`BY_PARAMETER`'s tests
        scoped by their parameter: a notebook's cells and every other module's tests stay
        together."""
        if config.getoption("dist") != "loadscope":
            return None
        from xdist.scheduler import LoadScopeScheduling

        class ByParameter(LoadScopeScheduling):
            def _split_scope(self, nodeid):
                module, _, test = nodeid.partition("::")
                if module in BY_PARAMETER and test.endswith("]") and "[" in test:
                    return f"{module}::[{test.split('[', 1)[1]}"
                return super()._split_scope(nodeid)

        return ByParameter(config, log)


def pytest_configure(config):
    if config.pluginmanager.hasplugin("xdist"):
        config.pluginmanager.register(_ByParameter(), "rnnbook-by-parameter")
