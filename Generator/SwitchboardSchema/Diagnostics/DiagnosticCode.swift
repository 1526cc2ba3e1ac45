/// A stable identifier for each kind of diagnostic, printed in brackets so that
/// scripts and tests can match a kind without matching its wording.
public enum DiagnosticCode: String, Sendable, CaseIterable {
    // Lexical
    case unexpectedCharacter = "unexpected-character"
    case unterminatedString = "unterminated-string"
    case unterminatedComment = "unterminated-comment"
    case invalidEscape = "invalid-escape"
    case integerTooLarge = "integer-too-large"
    // Syntax
    case expectedToken = "expected-token"
    case unknownDeclaration = "unknown-declaration"
    case nestingTooDeep = "nesting-too-deep"
    case danglingDocComment = "dangling-doc-comment"
    case unknownAttribute = "unknown-attribute"
    case misplacedAttribute = "misplaced-attribute"
    case unknownTimestampEncoding = "unknown-timestamp-encoding"
    // Package
    case missingPackage = "missing-package"
    case duplicatePackage = "duplicate-package"
    case conflictingPackage = "conflicting-package"
    case invalidPackageName = "invalid-package-name"
    // Names
    case invalidIdentifier = "invalid-identifier"
    case duplicateTypeName = "duplicate-type-name"
    case typeNameCaseCollision = "type-name-case-collision"
    case duplicateFieldName = "duplicate-field-name"
    case jsonNameCollision = "json-name-collision"
    case swiftKeyword = "swift-keyword"
    case generatedMemberCollision = "generated-member-collision"
    case oneofTypeCollision = "oneof-type-collision"
    // Keys
    case duplicateFieldKey = "duplicate-field-key"
    case fieldKeyOutOfRange = "field-key-out-of-range"
    case fieldKeyInProtobufRange = "field-key-in-protobuf-range"
    case reservedKeyUsed = "reserved-key-used"
    case reservedNameUsed = "reserved-name-used"
    case invalidReservedRange = "invalid-reserved-range"
    case overlappingReserved = "overlapping-reserved"
    // Types
    case unknownType = "unknown-type"
    case invalidMapKey = "invalid-map-key"
    case nestedCollection = "nested-collection"
    case optionalCollection = "optional-collection"
    case illegalRecursion = "illegal-recursion"
    case emptyOneof = "empty-oneof"
    case invalidOneofField = "invalid-oneof-field"
    // Enums
    case enumMissingZero = "enum-missing-zero"
    case duplicateEnumValue = "duplicate-enum-value"
    case duplicateEnumCase = "duplicate-enum-case"
    case enumValueOutOfRange = "enum-value-out-of-range"
    case enumCaseScopeCollision = "enum-case-scope-collision"
    case emptyEnum = "empty-enum"
    // Files
    case noSchemaFiles = "no-schema-files"
    case unreadableFile = "unreadable-file"
}
