"""The test suite is a package, so its folders import as ``tests.notebook``, ``tests.mcp`` and so on,
and never shadow an installed package of the same name (Jupyter's ``notebook``, the MCP SDK's
``mcp``) for the code under test."""
