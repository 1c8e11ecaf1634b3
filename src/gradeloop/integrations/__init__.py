"""gradeloop inside other systems, one module each:

* :mod:`gradeloop.integrations.telemetry`: OpenTelemetry spans for loops, rounds,
  gradings, checkers and model calls (extra ``gradeloop[otel]``; without it, nothing
  under ``opentelemetry`` is imported);
* :mod:`gradeloop.integrations.mcp_server`: the four optimization tools served over MCP
  (extra ``gradeloop[mcp]``; ``gradeloop mcp`` on the command line);
* :mod:`gradeloop.integrations.ray`: grading on a cluster, Ray Data's ``map_batches``
  (and Spark's ``mapInPandas``, Dask's ``map_partitions``) with one global rate limit,
  resumable Parquet output and exactly merged figures (extra ``gradeloop[ray]``).

This package imports none of them: import the one you use by its name.
"""

__all__: list[str] = []
