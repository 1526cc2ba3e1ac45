// EXPECT-SUCCESS
// The matching connection type compiles: the harness proves it can tell the difference.
import SignalChat
import SwitchboardChat
import SwitchboardRuntime

func allowed(authenticated: InProcessTransport<Authenticated>, unauthenticated: InProcessTransport<Unauthenticated>) {
    _ = KeysClient(transport: authenticated)
    _ = SealedSenderMessagesClient(transport: unauthenticated)
    _ = UsernamesClient(transport: unauthenticated)
}

func allowedOverChat(authenticated: ChatConnection<Authenticated>, unauthenticated: ChatConnection<Unauthenticated>) {
    _ = KeysClient(transport: authenticated)
    _ = UsernamesClient(transport: unauthenticated)
}
