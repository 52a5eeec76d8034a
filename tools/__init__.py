"""Command-line tools: ember-opt."""
