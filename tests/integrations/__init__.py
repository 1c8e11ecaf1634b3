"""Tests of gradeloop.integrations: OpenTelemetry and the MCP server."""
