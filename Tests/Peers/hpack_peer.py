"""HPACK as the Python `hpack` library (python-hyper) does it, the independent peer for
HPACKInteropTests. Reads a JSON file: {"decode": [hex blocks], "encode": [[[name, value], ...], ...],
"table_size": n}. Decodes the blocks in order with one decoder, encodes the lists in order with
one encoder, and prints {"decoded": [[[name, value], ...], ...], "encoded": [hex blocks]}."""
import json
import sys

from hpack import Decoder, Encoder

with open(sys.argv[1]) as f:
    job = json.load(f)
decoder = Decoder()
decoder.max_allowed_table_size = job.get("table_size", 4096)
decoded = []
for block in job["decode"]:
    decoded.append([[n, v] for n, v in decoder.decode(bytes.fromhex(block))])
encoder = Encoder()
encoded = [encoder.encode([(n, v) for n, v in headers]).hex() for headers in job["encode"]]
print(json.dumps({"decoded": decoded, "encoded": encoded}))
