"""Parses each hand-written input with Python protobuf and writes what it serializes back,
so tests can check that we keep and drop exactly what protobuf does (unknown fields, a known
number with the wrong wire type, a map entry's stray fields).

usage: protobuf_reserialize.py DESCRIPTOR_SET INPUT_DIR OUTPUT_DIR
Inputs are named <case>.<full.message.Name>.hex (hex digits, blanks ignored).
"""
import os
import sys

from protobuf_pool import load_pool, message_classes


def main() -> None:
    descriptor_set_path, input_dir, output_dir = sys.argv[1:4]
    pool = load_pool(descriptor_set_path)
    message_class_named = message_classes(pool)
    for name in sorted(os.listdir(input_dir)):
        base = name[: -len(".hex")]
        message_name = base.split(".", 1)[1]
        message_class = message_class_named(message_name)
        message = message_class()
        with open(os.path.join(input_dir, name), encoding="ascii") as handle:
            message.ParseFromString(bytes.fromhex("".join(handle.read().split())))
        with open(os.path.join(output_dir, base + ".binpb"), "wb") as handle:
            handle.write(message.SerializeToString(deterministic=True))


if __name__ == "__main__":
    main()
