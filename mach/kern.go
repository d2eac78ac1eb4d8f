package mach

import (
	"errors"
	"fmt"
	"strings"

	"github.com/macprof/macprof/target"
)

// KernReturn is a kern_return_t (or a mach_msg_return_t / MIG error that
// the same calls return).
type KernReturn int32

// kern_return_t values (osfmk/mach/kern_return.h) and the message and MIG
// errors a MIG call can return (osfmk/mach/message.h, mig_errors.h).
const (
	KernSuccess               KernReturn = 0
	KernInvalidAddress        KernReturn = 1
	KernProtectionFailure     KernReturn = 2
	KernNoSpace               KernReturn = 3
	KernInvalidArgument       KernReturn = 4
	KernFailure               KernReturn = 5
	KernResourceShortage      KernReturn = 6
	KernNotReceiver           KernReturn = 7
	KernNoAccess              KernReturn = 8
	KernMemoryFailure         KernReturn = 9
	KernMemoryError           KernReturn = 10
	KernAborted               KernReturn = 14
	KernInvalidName           KernReturn = 15
	KernInvalidTask           KernReturn = 16
	KernInvalidRight          KernReturn = 17
	KernInvalidValue          KernReturn = 18
	KernInvalidCapability     KernReturn = 20
	KernInvalidSecurity       KernReturn = 35
	KernTerminated            KernReturn = 37
	KernNotSupported          KernReturn = 46
	KernOperationTimedOut     KernReturn = 49
	KernCodesignError         KernReturn = 50
	KernInsufficientBuffer    KernReturn = 52
	KernDenied                KernReturn = 53
	KernNotFound              KernReturn = 56
	MachSendInvalidDest       KernReturn = 0x10000003
	MachSendTimedOut          KernReturn = 0x10000004
	MachSendInterrupted       KernReturn = 0x10000007
	MigServerDied             KernReturn = -308
	MigArrayTooLarge          KernReturn = -307
	MigTypeError              KernReturn = -300
	MigReplyMismatch          KernReturn = -301
	MigBadArguments           KernReturn = -304
	kernReturnNameTableLength            = 57
)

var kernNames = [kernReturnNameTableLength]string{
	"KERN_SUCCESS", "KERN_INVALID_ADDRESS", "KERN_PROTECTION_FAILURE", "KERN_NO_SPACE",
	"KERN_INVALID_ARGUMENT", "KERN_FAILURE", "KERN_RESOURCE_SHORTAGE", "KERN_NOT_RECEIVER",
	"KERN_NO_ACCESS", "KERN_MEMORY_FAILURE", "KERN_MEMORY_ERROR", "KERN_ALREADY_IN_SET",
	"KERN_NOT_IN_SET", "KERN_NAME_EXISTS", "KERN_ABORTED", "KERN_INVALID_NAME",
	"KERN_INVALID_TASK", "KERN_INVALID_RIGHT", "KERN_INVALID_VALUE", "KERN_UREFS_OVERFLOW",
	"KERN_INVALID_CAPABILITY", "KERN_RIGHT_EXISTS", "KERN_INVALID_HOST", "KERN_MEMORY_PRESENT",
	"KERN_MEMORY_DATA_MOVED", "KERN_MEMORY_RESTART_COPY", "KERN_INVALID_PROCESSOR_SET", "KERN_POLICY_LIMIT",
	"KERN_INVALID_POLICY", "KERN_INVALID_OBJECT", "KERN_ALREADY_WAITING", "KERN_DEFAULT_SET",
	"KERN_EXCEPTION_PROTECTED", "KERN_INVALID_LEDGER", "KERN_INVALID_MEMORY_CONTROL", "KERN_INVALID_SECURITY",
	"KERN_NOT_DEPRESSED", "KERN_TERMINATED", "KERN_LOCK_SET_DESTROYED", "KERN_LOCK_UNSTABLE",
	"KERN_LOCK_OWNED", "KERN_LOCK_OWNED_SELF", "KERN_SEMAPHORE_DESTROYED", "KERN_RPC_SERVER_TERMINATED",
	"KERN_RPC_TERMINATE_ORPHAN", "KERN_RPC_CONTINUE_ORPHAN", "KERN_NOT_SUPPORTED", "KERN_NODE_DOWN",
	"KERN_NOT_WAITING", "KERN_OPERATION_TIMED_OUT", "KERN_CODESIGN_ERROR", "KERN_POLICY_STATIC",
	"KERN_INSUFFICIENT_BUFFER_SIZE", "KERN_DENIED", "KERN_MISSING_KC", "KERN_INVALID_KC",
	"KERN_NOT_FOUND",
}

var otherNames = map[KernReturn]string{
	MachSendInvalidDest: "MACH_SEND_INVALID_DEST",
	MachSendTimedOut:    "MACH_SEND_TIMED_OUT",
	MachSendInterrupted: "MACH_SEND_INTERRUPTED",
	MigTypeError:        "MIG_TYPE_ERROR",
	MigReplyMismatch:    "MIG_REPLY_MISMATCH",
	MigBadArguments:     "MIG_BAD_ARGUMENTS",
	MigArrayTooLarge:    "MIG_ARRAY_TOO_LARGE",
	MigServerDied:       "MIG_SERVER_DIED",
}

// String returns the constant's name, or the number in hex when it has none.
func (k KernReturn) String() string {
	if k >= 0 && int(k) < len(kernNames) {
		return kernNames[k]
	}
	if n, ok := otherNames[k]; ok {
		return n
	}
	return fmt.Sprintf("kern_return_t(%#x)", uint32(k))
}

// Errors a caller can test for with errors.Is.
var (
	// ErrPermission reports that the kernel refused the task port.
	ErrPermission = errors.New("not permitted to control the target")
	// ErrProtected reports a target protected by System Integrity
	// Protection, which no user (root included) may attach to.
	ErrProtected = errors.New("target is protected by System Integrity Protection")
	// ErrTranslated reports a target run by Rosetta 2 whose x86_64
	// registers the kernel does not give this (native arm64) macprof.
	ErrTranslated = errors.New("the target runs under Rosetta 2 and its x86_64 registers are refused to a native arm64 macprof")
)

// Error is a failed Mach call: the operation, its kern_return_t, the text
// mach_error_string gives for it, and what the user can do.
type Error struct {
	Op     string     // the call, e.g. "task_for_pid"
	Code   KernReturn // what it returned
	Desc   string     // mach_error_string(Code), when known
	Advice string     // what to do, when there is something to do
	// Kind is one of the sentinel errors above, or nil.
	Kind error
}

// Error formats e as "op: NAME (0xN, desc): advice".
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.Op)
	b.WriteString(": ")
	b.WriteString(e.Code.String())
	if e.Desc != "" && e.Desc != e.Code.String() {
		fmt.Fprintf(&b, " (%s)", e.Desc)
	}
	if e.Advice != "" {
		b.WriteString(": ")
		b.WriteString(e.Advice)
	}
	return b.String()
}

// Is matches e's Kind.
func (e *Error) Is(target error) bool { return e.Kind != nil && target == e.Kind }

// threadGone reports codes that a call on a thread port returns once the
// thread has terminated (or the port was never a thread).
func threadGone(k KernReturn) bool {
	switch k {
	case KernInvalidArgument, KernTerminated, MachSendInvalidDest, KernInvalidName, KernInvalidRight:
		return true
	}
	return false
}

// ThreadError builds the Error for a failed call on a thread of a target.
// taskAlive says whether the task itself still answers; desc is
// mach_error_string(code).
func ThreadError(op string, code KernReturn, desc string, taskAlive bool) *Error {
	e := &Error{Op: op, Code: code, Desc: desc}
	switch {
	case !taskAlive:
		e.Kind = target.ErrExited
		e.Advice = "the process exited"
	case threadGone(code):
		e.Kind = target.ErrNoThread
		e.Advice = "the thread exited"
	case code == KernInvalidAddress || code == KernProtectionFailure:
		e.Advice = "the memory is not mapped (or not readable) in the target"
	}
	return e
}

// AttachFacts is what is known about a failed attach, gathered by the
// darwin code so that the advice can be decided (and tested) here.
type AttachFacts struct {
	PID  int
	Op   string     // "task_read_for_pid" / "task_for_pid"
	Code KernReturn // what the last attempt returned
	Desc string     // mach_error_string(Code)
	// Exists is false when no process has PID (proc_pidpath failed with
	// ESRCH).
	Exists bool
	// Path is the target's executable, when known.
	Path string
	// Root is true when macprof runs with euid 0.
	Root bool
	// ReadErr is how task_read_for_pid, tried first, failed: its errno's
	// text, or "returned MACH_PORT_NULL".
	ReadErr string
	// NullPort says that the last attempt succeeded with MACH_PORT_NULL.
	NullPort bool
}

// SIPProtectedPath reports whether path lies where macOS keeps its own
// binaries, which System Integrity Protection guards: /System, /usr (but
// not /usr/local), /bin, /sbin and /Library/Apple. Apple apps in
// /Applications are protected too but are not recognised by path; they get
// the generic advice.
func SIPProtectedPath(path string) bool {
	switch {
	case path == "":
		return false
	case strings.HasPrefix(path, "/usr/local/"):
		return false
	case strings.HasPrefix(path, "/System/"), strings.HasPrefix(path, "/usr/"),
		strings.HasPrefix(path, "/bin/"), strings.HasPrefix(path, "/sbin/"),
		strings.HasPrefix(path, "/Library/Apple/"):
		return true
	}
	return false
}

// AttachError explains a failed attach and says what to do.
func AttachError(f AttachFacts) *Error {
	e := &Error{Op: f.Op, Code: f.Code, Desc: f.Desc}
	if f.ReadErr != "" {
		e.Op = fmt.Sprintf("%s (after task_read_for_pid: %s)", f.Op, f.ReadErr)
	}
	what := fmt.Sprintf("PID %d", f.PID)
	if f.Path != "" {
		what = fmt.Sprintf("PID %d (%s)", f.PID, f.Path)
	}
	switch {
	case !f.Exists:
		e.Kind = target.ErrExited
		e.Advice = fmt.Sprintf("no process %s: it exited, or the PID is wrong", what)
	case f.NullPort:
		e.Desc = "returned MACH_PORT_NULL"
		e.Advice = fmt.Sprintf("the kernel has no task port to give for %s: it is exiting or has not finished exec; try again", what)
	case SIPProtectedPath(f.Path):
		e.Kind = ErrProtected
		e.Advice = fmt.Sprintf("%s is an Apple system binary protected by System Integrity Protection; "+
			"no process may read its task port, root included. Profile a copy outside /System and /usr, "+
			"or a program of your own", what)
	case !f.Root:
		e.Kind = ErrPermission
		e.Advice = fmt.Sprintf("the kernel refused the task port of %s: run macprof with sudo, "+
			"or run 'macprof setup' once to sign macprof with the com.apple.security.cs.debugger entitlement; "+
			"then programs signed with get-task-allow, such as debug builds, can be profiled without sudo by a member "+
			"of the _developer group ('sudo dseditgroup -o edit -a $USER -t user _developer') once developer tools "+
			"are allowed to debug ('sudo DevToolsSecurity -enable')", what)
	default:
		e.Kind = ErrPermission
		e.Advice = fmt.Sprintf("the kernel refused the task port of %s even to root: the target is probably "+
			"signed with the hardened runtime and without the get-task-allow entitlement (most App Store and "+
			"notarized apps). Re-sign a copy for profiling (codesign --force --sign - --entitlements "+
			"get-task-allow.plist APP) or profile a debug build", what)
	}
	return e
}
