import Foundation

/// A CA and certificates that `openssl` makes once per test run (Tests/Peers/make_test_certs.sh):
/// `ca.pem`, `good.pem`/`good.key`, `expired.*`, `selfsigned.*`...
public enum TestCertificates {
    /// Made on a thread of its own: key generation takes a while, and must not hold one of
    /// the cooperative threads that other tests' sockets resume on.
    static let directory = Task<URL, Never> {
        await withCheckedContinuation { continuation in
            Thread.detachNewThread {
                // make_test_certs.sh creates it.
                let directory = ScratchDirectory.reserve("switchboard-certs")
                let process = Process()
                process.executableURL = URL(fileURLWithPath: "/bin/bash")
                process.arguments = [PythonPeer.directory.appendingPathComponent("make_test_certs.sh").path, directory.path]
                process.standardOutput = FileHandle.nullDevice
                try? process.run()
                process.waitUntilExit()
                continuation.resume(returning: directory)
            }
        }
    }

    /// The path of a generated file: `good.pem`, `expired.key`...
    public static func file(_ name: String) async -> String {
        await directory.value.appendingPathComponent(name).path
    }
}
