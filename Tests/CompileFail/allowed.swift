// EXPECT-SUCCESS
// The matching connection type compiles: the harness proves it can tell the difference.
import SignalChat
import SwitchboardRuntime

func allowed(authenticated: InProcessTransport<Authenticated>, unauthenticated: InProcessTransport<Unauthenticated>) {
    _ = KeysClient(transport: authenticated)
    _ = SealedSenderMessagesClient(transport: unauthenticated)
    _ = UsernamesClient(transport: unauthenticated)
}
