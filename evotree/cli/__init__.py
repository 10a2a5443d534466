"""The application layer's command line: one module per command group.

:mod:`evotree.cli.main` holds the ``evotree`` group and the console-script entry point;
:mod:`evotree.cli.common` the helpers every command module shares; :mod:`evotree.cli.render`
the text renderers. This package's ``__init__`` imports nothing, so that a command module's
import of :mod:`evotree.cli.common` does not pull in every other command.
"""
