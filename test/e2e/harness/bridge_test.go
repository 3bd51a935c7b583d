package harness

import (
	"bufio"
	"context"
	"io"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// A forward from a Unix socket to TCP carries both directions, lets each
// side half-close, replaces a stale socket file, and Close ends the
// connections it holds and removes its socket.
func TestForwarder(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	// The far end: reads a line, answers it, then reads to EOF and says how
	// many bytes followed, proving the client's half-close arrived.
	backend, err := (&net.ListenConfig{}).Listen(ctx, netTCP, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer backend.Close()
	go func() {
		for {
			c, err := backend.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				r := bufio.NewReader(c)
				line, err := r.ReadString('\n')
				if err != nil {
					return
				}
				_, _ = io.WriteString(c, "echo "+line)
				rest, _ := io.ReadAll(r)
				_, _ = io.WriteString(c, string(rest)+" then EOF\n")
			}()
		}
	}()

	sock := filepath.Join(t.TempDir(), "f.sock")
	if err := os.WriteFile(sock, nil, 0o600); err != nil { // a stale file
		t.Fatal(err)
	}
	fw, err := listenForward(ctx, Forward{Listen: Endpoint{Network: netUnix, Address: sock}, Dial: Endpoint{Network: netTCP, Address: backend.Addr().String()}})
	if err != nil {
		t.Fatal(err)
	}

	c, err := (&net.Dialer{}).DialContext(ctx, netUnix, sock)
	if err != nil {
		t.Fatal(err)
	}
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(c, "hello\nmore"); err != nil {
		t.Fatal(err)
	}
	if err := c.(*net.UnixConn).CloseWrite(); err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(c)
	if err != nil {
		t.Fatal(err)
	}
	if want := "echo hello\nmore then EOF\n"; string(got) != want {
		t.Errorf("through the forward: %q, want %q", got, want)
	}
	_ = c.Close()

	// A connection still open when the forward closes is cut.
	held, err := (&net.Dialer{}).DialContext(ctx, netUnix, sock)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	if _, err := io.WriteString(held, "x\n"); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 7)
	if _, err := io.ReadFull(held, buf); err != nil {
		t.Fatal(err)
	}
	closed := make(chan struct{})
	go func() {
		fw.Close()
		close(closed)
	}()
	select {
	case <-closed:
	case <-time.After(forwardCloseWait + 5*time.Second):
		t.Fatal("Close did not return")
	}
	_ = held.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := held.Read(buf); err == nil {
		t.Error("a held connection still reads after Close")
	}
	fw.mu.Lock()
	left := len(fw.conns)
	fw.mu.Unlock()
	if left != 0 {
		t.Errorf("%d connections still tracked after Close", left)
	}
	if _, err := os.Stat(sock); !os.IsNotExist(err) {
		t.Errorf("the socket %s is still there after Close: %v", sock, err)
	}
}
