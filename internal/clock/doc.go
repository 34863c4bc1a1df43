// Package clock is the one clock the project's roles are given: the wall
// time, a monotonic time, and the timers, tickers and sleeps they wait on.
// System is the real one; Fake is a manual one for tests, whose time moves
// only by Advance (and whose wall time alone by Jump), firing the timers it
// passes, so a test of a timeout neither sleeps nor races the scheduler.
//
// It owns nothing of the roles' logic; code that decides by time takes a
// Clock (or a time read from one) instead of calling package time.
package clock
