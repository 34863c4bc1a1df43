package master

import (
	"os"
	"testing"

	"github.com/gtrain/gtrain/internal/testing/etcdtest"
)

// The tests share one embedded etcd (etcdtest.Fresh empties it per test).
func TestMain(m *testing.M) {
	os.Exit(etcdtest.Main(m))
}
