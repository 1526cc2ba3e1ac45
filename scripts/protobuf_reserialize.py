"""Parses each hand-written input with Python protobuf and writes what it serializes back,
so tests can check that we keep and drop exactly what protobuf does (unknown fields, a known
number with the wrong wire type, a map entry's stray fields).

usage: protobuf_reserialize.py DESCRIPTOR_SET INPUT_DIR OUTPUT_DIR
Inputs are named <case>.<full.message.Name>.hex (hex digits, blanks ignored).
"""
import os
import sys

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory


def main() -> None:
    descriptor_set_path, input_dir, output_dir = sys.argv[1:4]
    descriptor_set = descriptor_pb2.FileDescriptorSet()
    with open(descriptor_set_path, "rb") as handle:
        descriptor_set.ParseFromString(handle.read())
    pool = descriptor_pool.DescriptorPool()
    for file_proto in descriptor_set.file:
        pool.Add(file_proto)
    for name in sorted(os.listdir(input_dir)):
        base = name[: -len(".hex")]
        message_name = base.split(".", 1)[1]
        message_class = message_factory.GetMessageClass(pool.FindMessageTypeByName(message_name))
        message = message_class()
        with open(os.path.join(input_dir, name), encoding="ascii") as handle:
            message.ParseFromString(bytes.fromhex("".join(handle.read().split())))
        with open(os.path.join(output_dir, base + ".binpb"), "wb") as handle:
            handle.write(message.SerializeToString(deterministic=True))


if __name__ == "__main__":
    main()
