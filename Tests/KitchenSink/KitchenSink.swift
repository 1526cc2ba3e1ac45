/// A test-only SDK generated from `Tests/Schemas/kitchen_sink`, which uses every
/// construct of the schema language. Tests round-trip it through both codecs and
/// against protoc's bytes.
enum KitchenSinkSchema {}
