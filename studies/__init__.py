"""Study runner, config schema, reports and the ``flexlink`` CLI (filled by the
study-runner issue). Nothing is implemented here yet.
"""
