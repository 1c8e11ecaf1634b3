"""gradeloop inside other systems, one module each:

* :mod:`gradeloop.integrations.telemetry`: OpenTelemetry spans for loops, rounds,
  gradings, checkers and model calls (extra ``gradeloop[otel]``; without it, nothing
  under ``opentelemetry`` is imported);
* :mod:`gradeloop.integrations.mcp_server`: the four optimization tools served over MCP
  (extra ``gradeloop[mcp]``; ``gradeloop mcp`` on the command line).

This package imports none of them: import the one you use by its name.
"""

__all__: list[str] = []
