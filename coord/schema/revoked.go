package schema

import "time"

// RevokedToken is one entry of the bearer-token deny-list (`gctl token
// revoke ID`): every agent watches the list and refuses a token with this
// id. Until is when every token with the id has expired (the revocation
// time plus the revoking agent's maximum token lifetime); the entry means
// nothing after it and is swept by a later revocation.
type RevokedToken struct {
	ID    string    `json:"id"`
	Until time.Time `json:"until"`
	By    string    `json:"by"` // the admin who revoked it
	At    time.Time `json:"at"`
}
