package core

// Read-only views of the core, for the driver's tests: they check what the
// driver made of the core without reaching into its fields.

// Config returns the configuration the core was made with.
func (c *Core) Config() CoreConfig { return c.cfg }

// Counts returns the queue's task counts.
func (c *Core) Counts() Counts { return c.q.Counts() }

// Statuses returns every task's status, by ascending ID.
func (c *Core) Statuses() []TaskStatus { return c.q.Statuses() }

// TaskStatus returns task id's status; false for an unknown id.
func (c *Core) TaskStatus(id int) (TaskStatus, bool) { return c.q.Status(id) }

// Plan returns the current pass's plan (sync; nil in async mode).
func (c *Core) Plan() *PassPlan { return c.plan }

// State returns the state a checkpoint records.
func (c *Core) State() State { return c.state() }
