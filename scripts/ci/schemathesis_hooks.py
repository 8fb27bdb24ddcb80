"""Schemathesis hooks for our NDJSON endpoint (POST /api/articles/import).

The OpenAPI document describes the request as a string of lines and each
answer line by a schema; schemathesis knows neither direction of NDJSON.
Loaded through SCHEMATHESIS_HOOKS by scripts/ci/schemathesis.sh.
"""
import json

import schemathesis


@schemathesis.serializer("application/x-ndjson")
def ndjson_request(ctx, value):
    # The generated body is the document's string (lines of JSON, or not: bad lines get their own 400 line).
    if isinstance(value, bytes):
        return value
    if isinstance(value, str):
        return value.encode("utf-8")
    return (json.dumps(value) + "\n").encode("utf-8")


@schemathesis.deserializer("application/x-ndjson")
def ndjson_response(ctx, response):
    """Every line must be JSON with the shape of a result line; the last (the summary) is validated against the schema."""
    lines = [line for line in response.content.decode("utf-8").split("\n") if line.strip()]
    if not lines:
        raise ValueError("an NDJSON answer without a single line (the summary line is always sent)")
    parsed = [json.loads(line) for line in lines]
    for item in parsed[:-1]:
        if not isinstance(item, dict) or "line" not in item or item.get("result") not in ("ok", "fail"):
            raise ValueError(f"not a result line: {item!r}")
    summary = parsed[-1]
    if not isinstance(summary, dict) or "line" in summary:
        raise ValueError(f"the last line is not the summary: {summary!r}")
    return summary
