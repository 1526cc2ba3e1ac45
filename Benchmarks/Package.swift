// swift-tools-version:6.0
import PackageDescription

// Benchmarks live in their own package so that peers (swift-protobuf) can be compared
// in the same run without the product ever depending on them.
let package = Package(
    name: "SwitchboardBenchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "Switchboard", path: ".."),
        .package(url: "https://github.com/apple/swift-protobuf", exact: "1.39.0"),
        .package(url: "https://github.com/apple/swift-nio", exact: "2.101.2"),
        .package(url: "https://github.com/grpc/grpc-swift-2", exact: "2.4.3"),
        .package(url: "https://github.com/grpc/grpc-swift-nio-transport", exact: "2.9.2"),
        .package(url: "https://github.com/grpc/grpc-swift-protobuf", exact: "2.4.1"),
    ],
    targets: [
        // swift-protobuf's messages for the sample schema (make-peer-messages.sh writes them),
        // the peer the codec and gRPC benchmarks measure against.
        .target(
            name: "SignalChatPeerMessages",
            dependencies: [.product(name: "SwiftProtobuf", package: "swift-protobuf")]
        ),
        // The clock, percentiles and rounds the latency benchmarks share, and the epoll echo
        // (the event-loop raw floor) that ChatBenchmarks and WebSocketBenchmarks both measure.
        .target(
            name: "BenchmarkSupport",
            dependencies: [.target(name: "CEpoll", condition: .when(platforms: [.linux]))]
        ),
        .executableTarget(
            name: "CodecBenchmarks",
            dependencies: [
                .product(name: "SignalChat", package: "Switchboard"),
                .product(name: "SwitchboardRuntime", package: "Switchboard"),
                .product(name: "SwitchboardSchema", package: "Switchboard"),
                .product(name: "SwitchboardEmitter", package: "Switchboard"),
                .product(name: "SwitchboardDynamic", package: "Switchboard"),
                .product(name: "SwiftProtobuf", package: "swift-protobuf"),
                "SignalChatPeerMessages",
            ]
        ),
        .executableTarget(
            name: "WebSocketBenchmarks",
            dependencies: [
                "BenchmarkSupport",
                .product(name: "SwitchboardWebSocket", package: "Switchboard"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
            ]
        ),
        .executableTarget(
            name: "IdleConnectionsBenchmark",
            dependencies: [.product(name: "SwitchboardWebSocket", package: "Switchboard")]
        ),
        // Our gRPC path against our WebSocket path for the same typed call.
        .executableTarget(
            name: "GRPCBenchmarks",
            dependencies: [
                "BenchmarkSupport",
                .product(name: "SwitchboardGRPC", package: "Switchboard"),
                .product(name: "SwitchboardHTTP2", package: "Switchboard"),
                .product(name: "SwitchboardChat", package: "Switchboard"),
                .product(name: "SignalChat", package: "Switchboard"),
                .product(name: "SwitchboardRuntime", package: "Switchboard"),
                .product(name: "GRPCCore", package: "grpc-swift-2"),
                .product(name: "GRPCNIOTransportHTTP2", package: "grpc-swift-nio-transport"),
                .product(name: "GRPCProtobuf", package: "grpc-swift-protobuf"),
                .product(name: "SwiftProtobuf", package: "swift-protobuf"),
                "SignalChatPeerMessages",
            ]
        ),
        // Not a benchmark: N serial calls over our gRPC or WebSocket path with a synchronous
        // main, so valgrind can count instructions per call (it cannot run an async main).
        .executableTarget(
            name: "CallProfile",
            dependencies: [
                .product(name: "SwitchboardGRPC", package: "Switchboard"),
                .product(name: "SwitchboardChat", package: "Switchboard"),
                .product(name: "SignalChat", package: "Switchboard"),
                .product(name: "SwitchboardRuntime", package: "Switchboard"),
            ]
        ),
        // Not a benchmark: scripts/soak.sh runs it for minutes.
        .executableTarget(
            name: "SoakTest",
            dependencies: [
                .product(name: "SwitchboardChat", package: "Switchboard"),
                .product(name: "SignalChat", package: "Switchboard"),
                .product(name: "SwitchboardRuntime", package: "Switchboard"),
            ]
        ),
        // epoll for the benchmarks' own epoll echo, the event-loop raw floor.
        .target(name: "CEpoll", path: "Sources/CEpoll"),
        .executableTarget(
            name: "ChatBenchmarks",
            dependencies: [
                "BenchmarkSupport",
                .product(name: "SwitchboardChat", package: "Switchboard"),
                .product(name: "SignalChat", package: "Switchboard"),
                .product(name: "SwitchboardRuntime", package: "Switchboard"),
                .product(name: "SwitchboardWebSocket", package: "Switchboard"),
            ]
        ),
    ]
)
