// swift-tools-version:6.1
import PackageDescription

// Switchboard: a schema-driven Swift SDK generator for chat servers.
// The product depends on no third-party package (the design card: Foundation, Dispatch and system C libraries only).
let package = Package(
    name: "Switchboard",
    platforms: [.macOS(.v13), .iOS(.v16), .tvOS(.v16), .watchOS(.v9)],
    products: [
        .library(name: "SwitchboardRuntime", targets: ["SwitchboardRuntime"]),
        .library(name: "SignalChat", targets: ["SignalChat"]),
        .library(name: "SwitchboardIO", targets: ["SwitchboardIO"]),
        .library(name: "SwitchboardWebSocket", targets: ["SwitchboardWebSocket"]),
        .library(name: "SwitchboardHTTP2", targets: ["SwitchboardHTTP2"]),
        .library(name: "SwitchboardGRPC", targets: ["SwitchboardGRPC"]),
        .library(name: "SwitchboardChat", targets: ["SwitchboardChat"]),
        .library(name: "SwitchboardSession", targets: ["SwitchboardSession"]),
        .library(name: "SwitchboardSchema", targets: ["SwitchboardSchema"]),
        .library(name: "SwitchboardEmitter", targets: ["SwitchboardEmitter"]),
        .library(name: "SwitchboardDynamic", targets: ["SwitchboardDynamic"]),
        // The string bridge for foreign cores: a C ABI (Sources/SwitchboardBridge/include/switchboard.h)
        // as a shared library, and the same bridge as a Swift library for hosts written in Swift.
        .library(name: "switchboard_bridge", type: .dynamic, targets: ["SwitchboardBridge"]),
        .library(name: "SwitchboardBridge", targets: ["SwitchboardBridge"]),
        .library(name: "SwitchboardCatalogue", targets: ["SwitchboardCatalogue"]),
        .executable(name: "switchboard", targets: ["switchboard"]),
        // Generates a target's SDK at build time from its *.sb files (or switchboard-config.json).
        .plugin(name: "SwitchboardGenerator", targets: ["SwitchboardGenerator"]),
        // `swift package generate-sdk [--check]`: writes committed SDKs into their targets.
        .plugin(name: "GenerateSDK", targets: ["GenerateSDK"]),
    ],
    targets: [
        // The syntax of HTTP fields (RFC 9110), shared by the runtime and every transport.
        .target(name: "SwitchboardHTTPSyntax", path: "Sources/SwitchboardHTTPSyntax"),
        // Runtime that generated code calls.
        .target(name: "SwitchboardRuntime", dependencies: ["SwitchboardHTTPSyntax"], path: "Sources/SwitchboardRuntime"),
        // A hand-written RFC 6455 client and server: sans-IO core plus socket I/O.
        // On Linux, TLS comes from the system OpenSSL (Debian libssl-dev) through a C shim;
        // Apple platforms need nothing extra.
        .target(
            name: "CSwitchboardOpenSSL",
            path: "Sources/CSwitchboardOpenSSL",
            linkerSettings: [
                .linkedLibrary("ssl", .when(platforms: [.linux])),
                .linkedLibrary("crypto", .when(platforms: [.linux])),
            ]
        ),
        // The I/O core: event loops on epoll (Linux) or kqueue (Apple platforms), each a task
        // executor, with timers; epoll and eventfd come through a module map of system headers.
        .target(name: "CSwitchboardIO", path: "Sources/CSwitchboardIO"),
        // Threads that report a refused start (Foundation's `Thread` does not on Linux).
        .target(name: "SwitchboardThreads", path: "Sources/SwitchboardThreads"),
        .target(
            name: "SwitchboardIO",
            dependencies: [
                "SwitchboardThreads",
                .target(name: "CSwitchboardIO", condition: .when(platforms: [.linux])),
                .target(name: "CSwitchboardOpenSSL", condition: .when(platforms: [.linux])),
            ],
            path: "Sources/SwitchboardIO"
        ),
        .target(
            name: "SwitchboardWebSocket",
            dependencies: ["SwitchboardIO", "SwitchboardHTTPSyntax", .target(name: "CSwitchboardOpenSSL", condition: .when(platforms: [.linux]))],
            path: "Sources/SwitchboardWebSocket"
        ),
        // A hand-written HTTP/2 (RFC 9113) with HPACK (RFC 7541): sans-IO core plus I/O on the loops.
        .target(name: "SwitchboardHTTP2", dependencies: ["SwitchboardIO", "SwitchboardHTTPSyntax"], path: "Sources/SwitchboardHTTP2"),
        // The generated clients and handlers over gRPC, on the hand-written HTTP/2; TCP and TLS
        // (ALPN h2) come from the shared opener in SwitchboardWebSocket.
        .target(
            name: "SwitchboardGRPC",
            dependencies: ["SwitchboardHTTP2", "SwitchboardHTTPSyntax", "SwitchboardIO", "SwitchboardRuntime"],
            path: "Sources/SwitchboardGRPC"
        ),
        // The Signal-style RPC transport: requests and pushes in the WebSocketMessage envelope.
        .target(
            name: "SwitchboardChat",
            dependencies: ["SwitchboardRuntime", "SwitchboardWebSocket", "SwitchboardIO"],
            path: "Sources/SwitchboardChat"
        ),
        // A reconnecting session: a pure lifecycle state machine and its driver.
        .target(
            name: "SwitchboardSession",
            dependencies: ["SwitchboardChat", "SwitchboardRuntime"],
            path: "Sources/SwitchboardSession"
        ),
        // `swift run session-demo`: a session's lifecycle against the local mock server.
        .executableTarget(
            name: "session-demo",
            dependencies: ["SwitchboardSession", "SwitchboardChat", "SwitchboardRuntime", "SignalChat"],
            path: "Examples/SessionDemo"
        ),
        // `file-drop-demo provider|consumer`: two processes exchanging requests through a
        // catalogue folder (scripts/file-drop-tests.sh kills and restarts them).
        .executableTarget(
            name: "file-drop-demo",
            dependencies: ["SwitchboardCatalogue", "SwitchboardRuntime", "SignalChat"],
            path: "Examples/FileDropDemo"
        ),
        // The SDK generated from schema/ (committed; `switchboard generate --check` keeps it fresh).
        // `swift package generate-sdk --target SignalChat` regenerates it as the README's command does.
        .target(name: "SignalChat", dependencies: ["SwitchboardRuntime"], path: "Sources/SignalChat", exclude: ["switchboard-config.json"]),

        // Generator: schema front end, Swift emitter, CLI.
        .target(name: "SwitchboardSchema", dependencies: ["SwitchboardHTTPSyntax", "SwitchboardThreads"], path: "Generator/SwitchboardSchema"),
        .target(name: "SwitchboardEmitter", dependencies: ["SwitchboardSchema"], path: "Generator/SwitchboardEmitter"),
        // Messages and endpoints typed by a schema read at run time, for `call`, `listen` and `mock-server`.
        .target(name: "SwitchboardDynamic", dependencies: ["SwitchboardSchema", "SwitchboardRuntime"], path: "Generator/SwitchboardDynamic"),
        // A provider's published service catalogue, the check of calls against it, and the
        // file-drop transport that carries requests as documents in the catalogue's folders.
        .target(name: "SwitchboardCatalogue", dependencies: ["SwitchboardRuntime"], path: "Sources/SwitchboardCatalogue"),
        // A schema's API as strings: REST-style commands in, JSON documents out, pushes queued.
        .target(
            name: "SwitchboardBridge",
            dependencies: ["SwitchboardDynamic", "SwitchboardSchema", "SwitchboardRuntime", "SwitchboardChat", "SwitchboardGRPC", "SwitchboardWebSocket",
                           "SwitchboardHTTPSyntax", "SwitchboardThreads"],
            path: "Sources/SwitchboardBridge",
            exclude: ["include"]
        ),
        // What both executables share: argument parsing, schema loading, generate and check.
        .target(name: "SwitchboardCLI", dependencies: ["SwitchboardSchema", "SwitchboardEmitter"], path: "Generator/SwitchboardCLI"),
        .executableTarget(
            name: "switchboard",
            dependencies: ["SwitchboardCLI", "SwitchboardSchema", "SwitchboardEmitter", "SwitchboardDynamic", "SwitchboardChat", "SwitchboardGRPC", "SwitchboardThreads"],
            path: "Generator/switchboard"
        ),
        // `switchboard generate` alone, the plugins' tool: it builds without the chat runtime or OpenSSL.
        .executableTarget(
            name: "switchboard-generate",
            dependencies: ["SwitchboardCLI", "SwitchboardEmitter"],
            path: "Generator/switchboard-generate"
        ),

        // SwiftPM plugins around the CLI (they share Plugins/Shared through symlinks).
        .plugin(
            name: "SwitchboardGenerator", capability: .buildTool(),
            dependencies: ["switchboard-generate"], path: "Plugins/SwitchboardGenerator"
        ),
        .plugin(
            name: "GenerateSDK",
            capability: .command(
                intent: .custom(verb: "generate-sdk", description: "Generate the Swift SDK of each target that has a Switchboard schema"),
                permissions: [.writeToPackageDirectory(reason: "Writes the generated SDK into the target's folder")]
            ),
            dependencies: ["switchboard-generate"], path: "Plugins/GenerateSDK"
        ),

        // A test-only SDK generated from Tests/Schemas/kitchen_sink: every construct of the language.
        .target(name: "KitchenSink", dependencies: ["SwitchboardRuntime"], path: "Tests/KitchenSink"),
        // Protobuf's conformance message (test_messages_proto3.proto), translated to the schema
        // language in Tests/Schemas/test_messages_proto3 and generated here.
        .target(name: "TestMessagesProto3", dependencies: ["SwitchboardRuntime"], path: "Tests/TestMessagesProto3"),
        // The testee protobuf's conformance runner drives (scripts/conformance.sh).
        .executableTarget(name: "conformance-testee", dependencies: ["SwitchboardDynamic", "SwitchboardRuntime", "SwitchboardSchema", "TestMessagesProto3"], path: "Tests/ConformanceTestee"),

        .testTarget(
            name: "SwitchboardSchemaTests",
            dependencies: ["SwitchboardSchema"],
            path: "Tests/SwitchboardSchemaTests",
            resources: [.copy("Diagnostics")]
        ),
        .testTarget(
            name: "SwitchboardEmitterTests",
            dependencies: ["SwitchboardSchema", "SwitchboardEmitter", "PeerSupport"],
            path: "Tests/SwitchboardEmitterTests"
        ),
        .testTarget(
            name: "SwitchboardBridgeTests",
            dependencies: ["SwitchboardBridge", "SignalChat", "SwitchboardRuntime", "SwitchboardSchema", "SwitchboardGRPC", "SwitchboardChat", "PeerSupport"],
            path: "Tests/SwitchboardBridgeTests"
        ),
        .testTarget(
            name: "SwitchboardCatalogueTests",
            dependencies: ["SwitchboardCatalogue", "SignalChat", "SwitchboardRuntime", "SwitchboardSchema", "SwitchboardEmitter", "PeerSupport"],
            path: "Tests/SwitchboardCatalogueTests"
        ),
        .testTarget(name: "SwitchboardIOTests", dependencies: ["SwitchboardIO", "SwitchboardThreads", "PeerSupport"], path: "Tests/SwitchboardIOTests"),
        .testTarget(
            name: "SwitchboardGRPCTests",
            dependencies: ["SwitchboardGRPC", "SignalChat", "SwitchboardChat", "SwitchboardSchema", "SwitchboardEmitter", "PeerSupport"],
            path: "Tests/SwitchboardGRPCTests"
        ),
        .testTarget(name: "SwitchboardHTTPSyntaxTests", dependencies: ["SwitchboardHTTPSyntax", "PeerSupport"], path: "Tests/SwitchboardHTTPSyntaxTests"),
        .testTarget(name: "SwitchboardHTTP2Tests", dependencies: ["SwitchboardHTTP2", "SwitchboardIO", "PeerSupport", "AllocationCounter"], path: "Tests/SwitchboardHTTP2Tests"),
        .testTarget(
            name: "SwitchboardWebSocketTests",
            dependencies: ["SwitchboardWebSocket", "SwitchboardIO", "SwitchboardRuntime", "PeerSupport"],
            path: "Tests/SwitchboardWebSocketTests"
        ),
        .testTarget(
            name: "SwitchboardChatTests",
            dependencies: ["SwitchboardChat", "SignalChat", "SwitchboardRuntime", "SwitchboardWebSocket",
                           "PeerSupport", "SwitchboardSchema", "SwitchboardEmitter", "AllocationCounter"],
            path: "Tests/SwitchboardChatTests"
        ),
        .testTarget(
            name: "SwitchboardSessionTests",
            dependencies: ["SwitchboardSession", "SwitchboardChat", "SwitchboardRuntime", "SignalChat"],
            path: "Tests/SwitchboardSessionTests"
        ),
        // Counts the Swift heap allocations of one thread, for tests that bound work without timing it.
        .target(name: "AllocationCounter", path: "Tests/AllocationCounter"),
        // Runs the independent Python peers in Tests/Peers for the conformance and interop tests.
        .target(name: "PeerSupport", path: "Tests/PeerSupport"),
        .testTarget(
            name: "SignalChatTests",
            dependencies: ["SignalChat", "SwitchboardRuntime", "SwitchboardChat", "PeerSupport"],
            path: "Tests/SignalChatTests"
        ),
        .testTarget(
            name: "SwitchboardRuntimeTests",
            dependencies: ["SwitchboardRuntime", "KitchenSink", "TestMessagesProto3", "SignalChat", "SwitchboardDynamic", "SwitchboardSchema", "SwitchboardEmitter", "AllocationCounter", "PeerSupport"],
            path: "Tests/SwitchboardRuntimeTests",
            resources: [.copy("Fixtures")]
        ),
    ]
)
