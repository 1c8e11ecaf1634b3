"""The model tier: the Anthropic client, judge and generator, and what they share.

The judge's per-rubric wire schema, the prompts, reading replies (and refusing the
ones that are not answers) and token usage. Importing this package does not import the
SDK; ``_anthropic`` gathers the public names and is imported lazily by ``gradeloop``.
"""
