"""Validates JSON documents against JSON Type Definitions (RFC 8927) with the reference
Python implementation (`jtd`), for the catalogue's exported definitions.

Reads lines `<definition-file> <base64 JSON document>` on standard input and answers each
with `ok` or `invalid <instance path>`; `ready` first.
"""
import base64
import json
import sys

import jtd

print("ready", flush=True)
schemas = {}
for line in sys.stdin:
    path, document = line.split()
    if path not in schemas:
        with open(path) as handle:
            schemas[path] = jtd.Schema.from_dict(json.load(handle))
    errors = jtd.validate(schema=schemas[path], instance=json.loads(base64.b64decode(document)))
    print("ok" if not errors else "invalid " + "/".join(errors[0].instance_path) + " " + "/".join(errors[0].schema_path), flush=True)
