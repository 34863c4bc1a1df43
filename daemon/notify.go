package daemon

import (
	"errors"
	"fmt"
	"log/slog"
	"time"

	sd "github.com/coreos/go-systemd/v22/daemon"
)

// errUnresponsive means a part of the agent did not answer its health probe.
var errUnresponsive = errors.New("unresponsive")

// notifier speaks sd_notify to systemd (deploy/systemd: Type=notify,
// WatchdogSec=): READY=1 once the node is registered and the API serves,
// STOPPING=1 when the agent stops, and WATCHDOG=1 at half the watchdog
// interval while the agent is healthy, so that systemd restarts a hung
// agent and not only a dead one. Without NOTIFY_SOCKET it does nothing.
type notifier struct {
	log *slog.Logger
	// every is the period of WATCHDOG=1; 0 without a watchdog.
	every time.Duration
}

func newNotifier(log *slog.Logger) *notifier {
	n := &notifier{log: log}
	wd, err := sd.SdWatchdogEnabled(false)
	if err != nil {
		log.Warn("systemd watchdog settings unreadable; not feeding the watchdog", "err", err)
	}
	n.every = wd / 2
	return n
}

func (n *notifier) send(state string) {
	if _, err := sd.SdNotify(false, state); err != nil {
		n.log.Warn("cannot notify systemd", "state", state, "err", err)
	}
}

func (n *notifier) ready()    { n.send(sd.SdNotifyReady) }
func (n *notifier) stopping() { n.send(sd.SdNotifyStopping) }

// ticks is the channel of watchdog ticks (nil, never ready, without a
// watchdog) and the function that stops it.
func (n *notifier) ticks() (<-chan time.Time, func()) {
	if n.every <= 0 {
		return nil, func() {}
	}
	t := time.NewTicker(n.every)
	return t.C, t.Stop
}

// feed pings the watchdog if healthy says the agent is; a hung agent goes
// silent, and systemd kills and restarts it after WatchdogSec.
func (n *notifier) feed(healthy func() error) {
	if err := healthy(); err != nil {
		n.log.Warn("agent unhealthy; not feeding the systemd watchdog", "err", err)
		return
	}
	n.send(sd.SdNotifyWatchdog)
}

// probe asks whether a lock-holding part of the agent answers within a
// deadline. At most one probe is in flight: a wedged part keeps failing
// without piling up goroutines.
type probe struct {
	name    string
	timeout time.Duration
	pending chan struct{} // closed when the probe in flight got the lock
}

// check runs lockUnlock in the background and waits for it up to timeout.
func (p *probe) check(lockUnlock func()) error {
	if p.pending == nil {
		done := make(chan struct{})
		p.pending = done
		go func() {
			lockUnlock()
			close(done)
		}()
	}
	select {
	case <-p.pending:
		p.pending = nil
		return nil
	case <-time.After(p.timeout):
		return fmt.Errorf("%w: the %s did not answer within %s", errUnresponsive, p.name, p.timeout)
	}
}

// healthCheck is the agent's health as the watchdog sees it: the main loop
// runs it (a wedged loop sends nothing), and it asks the supervisor, which
// starts and stops the roles, to answer (supervisorAnswers returns once
// it does: Supervisor.Responsive).
func healthCheck(timeout time.Duration, supervisorAnswers func()) func() error {
	sup := &probe{name: "supervisor", timeout: timeout}
	return func() error {
		return sup.check(supervisorAnswers)
	}
}
