package checkpoint

import (
	"os"
	"testing"

	"github.com/gtrain/gtrain/internal/testing/etcdtest"
)

// The etcd tests share one embedded etcd, started only if one runs.
func TestMain(m *testing.M) {
	os.Exit(etcdtest.Main(m))
}
