// Package rxstamp reads TCP connections with the kernel's software receive timestamp of
// the data each read returns (SO_TIMESTAMPNS, Linux only), allocating nothing per read.
// The timing core stamps response chunks with it (backends), so a busy client does not
// add its own scheduling delay to TTFT and TPOT; the mock server stamps its requests'
// arrivals with it (mockserver), so its own lateness in reading is not the client's.
package rxstamp
