"""How a harness calls metasearch: the CLI, the MCP server, the HTTP service, tool schemas and rendering."""
