package harness

import (
	"encoding/binary"
	"net"
	"os"
	"os/exec"
	"slices"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/crossplane/function-sdk-go/errors"
)

// EnvInNetns marks a process the harness started inside its private network
// namespace. A program that finds it set is the re-executed copy and must
// not re-execute again.
const EnvInNetns = "FIREBOLT_E2E_IN_NETNS"

// The address ranges that exist only inside the namespace, on its loopback:
// KWOK gives pods IPs from PodCIDR, and Services get ClusterIPs from
// ServiceCIDR. Both are ordinary global-unicast ranges, so the API server
// proxies to them (it refuses loopback pod IPs), yet every address in them is
// local to the namespace: a pods/proxy request reaches a fake engine server
// the test bound to the pod's IP, and nothing leaves the machine.
const (
	PodCIDR     = "10.244.0.0/16"
	ServiceCIDR = "10.96.0.0/16"
)

// podNet is PodCIDR parsed.
var podNet = func() *net.IPNet {
	_, n, err := net.ParseCIDR(PodCIDR)
	if err != nil {
		panic(err)
	}
	return n
}()

// InNetns reports whether this process is the re-executed copy.
func InNetns() bool { return os.Getenv(EnvInNetns) != "" }

// NetnsCommand returns a command that runs this same executable with args in
// a new network namespace holding only a loopback device. As root that is a
// plain CLONE_NEWNET; otherwise the child also gets a user namespace in which
// it is root, which is enough to own its network namespace. The child dies
// with its parent.
func NetnsCommand(args []string, env ...string) *exec.Cmd {
	// /proc/self/exe, not the path: it still runs a binary `go run` has
	// since deleted.
	cmd := exec.Command("/proc/self/exe", args...) //nolint:noctx // Its lifetime is Pdeathsig and the caller's SIGTERM, never a context's SIGKILL.
	cmd.Env = append(append(os.Environ(), EnvInNetns+"=1"), env...)
	attr := &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	inNewNetns(attr)
	cmd.SysProcAttr = attr
	return cmd
}

// inNewNetns makes a child start in a new network namespace: a plain
// CLONE_NEWNET as root (also as the root of the user namespace the harness
// itself may run in), else with a user namespace in which it is root.
func inNewNetns(attr *syscall.SysProcAttr) {
	attr.Cloneflags |= syscall.CLONE_NEWNET
	if os.Geteuid() != 0 {
		attr.Cloneflags |= syscall.CLONE_NEWUSER
		attr.UidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Geteuid(), Size: 1}}
		attr.GidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getegid(), Size: 1}}
		attr.GidMappingsEnableSetgroups = false
	}
}

// SetupLoopback brings the namespace's loopback up and puts the pod and
// service ranges on it. An address with a prefix on lo makes the kernel
// treat the whole prefix as local, so any pod IP can be bound.
func SetupLoopback() error {
	lo, nl, err := loopbackUp()
	if err != nil {
		return err
	}
	defer nl.close()
	for _, cidr := range []string{PodCIDR, ServiceCIDR} {
		ip, n, err := net.ParseCIDR(cidr)
		if err != nil {
			return errors.Wrapf(err, "cannot parse %s", cidr)
		}
		ones, _ := n.Mask.Size()
		// The network address itself plus one, e.g. 10.244.0.1/16.
		a := ip.To4()
		a[3]++
		if err := nl.addAddr(lo.Index, a, ones); err != nil {
			return errors.Wrapf(err, "cannot add %s/%d to lo", a, ones)
		}
	}
	return nil
}

// loopbackUp brings the namespace's loopback up and returns it with the
// netlink socket that did, which the caller closes.
func loopbackUp() (*net.Interface, *netlinkSock, error) {
	lo, err := net.InterfaceByName("lo")
	if err != nil {
		return nil, nil, errors.Wrap(err, "cannot find the loopback device")
	}
	nl, err := newNetlink()
	if err != nil {
		return nil, nil, err
	}
	if err := nl.linkUp(lo.Index); err != nil {
		nl.close()
		return nil, nil, err
	}
	return lo, nl, nil
}

// netlinkSock speaks just enough rtnetlink to bring a link up and add an
// IPv4 address, so the harness needs no iproute2.
type netlinkSock struct {
	fd  int
	seq uint32
}

func newNetlink() (*netlinkSock, error) {
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_RAW|unix.SOCK_CLOEXEC, unix.NETLINK_ROUTE)
	if err != nil {
		return nil, errors.Wrap(err, "cannot open a netlink socket")
	}
	if err := unix.Bind(fd, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		_ = unix.Close(fd)
		return nil, errors.Wrap(err, "cannot bind the netlink socket")
	}
	return &netlinkSock{fd: fd}, nil
}

func (s *netlinkSock) close() { _ = unix.Close(s.fd) }

func (s *netlinkSock) linkUp(index int) error {
	body := make([]byte, unix.SizeofIfInfomsg)
	body[0] = unix.AF_UNSPEC
	binary.NativeEndian.PutUint32(body[4:], uint32(index)) //nolint:gosec // An interface index.
	binary.NativeEndian.PutUint32(body[8:], unix.IFF_UP)
	binary.NativeEndian.PutUint32(body[12:], unix.IFF_UP)
	return errors.Wrap(s.request(unix.RTM_NEWLINK, 0, body), "cannot bring lo up")
}

func (s *netlinkSock) addAddr(index int, ip net.IP, prefix int) error {
	msg := make([]byte, unix.SizeofIfAddrmsg)
	msg[0] = unix.AF_INET
	msg[1] = byte(prefix)                                 //nolint:gosec // An IPv4 prefix length, 0-32, from IPMask.Size.
	binary.NativeEndian.PutUint32(msg[4:], uint32(index)) //nolint:gosec // An interface index.
	body := slices.Concat(msg, rtattr(unix.IFA_LOCAL, ip), rtattr(unix.IFA_ADDRESS, ip))
	return s.request(unix.RTM_NEWADDR, unix.NLM_F_CREATE|unix.NLM_F_EXCL, body)
}

func rtattr(typ uint16, data []byte) []byte {
	l := unix.SizeofRtAttr + len(data)
	b := make([]byte, (l+3)&^3)
	binary.NativeEndian.PutUint16(b[0:], uint16(l)) //nolint:gosec // Small.
	binary.NativeEndian.PutUint16(b[2:], typ)
	copy(b[unix.SizeofRtAttr:], data)
	return b
}

// request sends one message and waits for its acknowledgement.
func (s *netlinkSock) request(typ uint16, flags uint16, body []byte) error {
	s.seq++
	msg := make([]byte, unix.SizeofNlMsghdr, unix.SizeofNlMsghdr+len(body))
	binary.NativeEndian.PutUint32(msg[0:], uint32(unix.SizeofNlMsghdr+len(body))) //nolint:gosec // Small.
	binary.NativeEndian.PutUint16(msg[4:], typ)
	binary.NativeEndian.PutUint16(msg[6:], unix.NLM_F_REQUEST|unix.NLM_F_ACK|flags)
	binary.NativeEndian.PutUint32(msg[8:], s.seq)
	msg = append(msg, body...)
	if err := unix.Sendto(s.fd, msg, 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		return errors.Wrap(err, "cannot send a netlink request")
	}
	buf := make([]byte, 4096)
	for {
		n, _, err := unix.Recvfrom(s.fd, buf, 0)
		if err != nil {
			return errors.Wrap(err, "cannot read the netlink answer")
		}
		msgs, err := syscall.ParseNetlinkMessage(buf[:n])
		if err != nil {
			return errors.Wrap(err, "cannot parse the netlink answer")
		}
		for _, m := range msgs {
			if m.Header.Seq != s.seq || m.Header.Type != unix.NLMSG_ERROR {
				continue
			}
			code := int32(binary.NativeEndian.Uint32(m.Data[0:4])) //nolint:gosec // errno is negative int32.
			if code == 0 {
				return nil
			}
			return syscall.Errno(-code) //nolint:gosec // The kernel negates errno; -code is positive.
		}
	}
}
