"""Studies from a config file: schema (:mod:`studies.config`), the sweep's
discretizations (:mod:`studies.discretizations`), study kinds
(:mod:`studies.kinds`), the runner with its executors, reports and plots, and
the ``flexlink`` command line (:mod:`studies.cli`).
"""
