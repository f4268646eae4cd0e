"""Parameter studies: TOML config → validated schema → sweep cases → results, reports and the
``flexlink`` CLI.

Every kind of variant has one registry, and everything else (config validation, case
expansion, CSV columns, labels) derives from it:

=============== ========================================== =========================================
variant         registry                                   a new one is added in
=============== ========================================== =========================================
shape family    :data:`shapes.FAMILIES`                    its own module in ``shapes/`` (a subclass
                                                           of ``ShapeFamily`` with ``name``, ``frame``)
backend         :data:`studies.models.BACKENDS`            ``studies/models.py`` (``register_backend``)
controller      :data:`core.controllers.CONTROLLERS`       ``core/controllers.py`` (``from_gains``)
trajectory      :data:`core.trajectories.TRAJECTORIES`     ``core/trajectories.py`` (``from_config``)
study kind      :data:`studies.kinds.KINDS`                its own module in ``studies/kinds/``
=============== ========================================== =========================================

One sweep case is a :class:`studies.models.Case`: its number and a frozen
:class:`studies.models.Discretization` (backend, shape or frame, size per link).
"""
