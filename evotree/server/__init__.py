"""``evotree serve``: the trainer agent's verbs as an MCP server.

- :mod:`evotree.server.verbs` -- the verbs as plain functions returning the CLI's ``--json``
  documents, acting for a fixed principal (:class:`~evotree.server.verbs.Principal`);
- :mod:`evotree.server.tools` -- those verbs as tools of the MCP SDK's ``MCPServer`` (errors,
  worker threads, run progress); no promotion, approval, judge or policy tool;
- :mod:`evotree.server.transport` -- stdio, and MCP's line framing over a unix socket (server
  and client).

The application layer (with :mod:`evotree.api`); only :mod:`evotree.cli` imports it.
"""
