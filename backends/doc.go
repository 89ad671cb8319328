// Package backends is how planrun talks to a server it measures. It provides the
// Backend interface and the types every adapter shares: Config from the plan, the
// Request sent, the Chunks a stream decodes into, and the Sample measured, with its
// Error classes. Kind is what an adapter declares about its backend kind.
//
// Core is the one streaming timing core: it sends the request an Adapter built, stamps
// each response phase and every chunk's arrival (from the kernel's receive time where
// the connection has one) and enforces the phase timeouts. It is the only code that
// reads the clock for a request; adapters (ollama, openai, taotoken) only build
// requests and decode streams, so all backends are timed the same way.
package backends
